"""scripts/dagger_rounds.py: more DAgger rounds for a saved clone, with validation days carved out of
the training days (``--holdout``) and the round chosen under a waiting-time budget (``--budget``);
stopped by a signal, it chooses among the rounds validated."""
import json
import signal
import subprocess
import sys
import time
from importlib import util

import pytest

from batsched_py.agents.common.saved import load_agent
from batsched_py.agents.common.training import TrainConfig, train

from helpers.rl import PLATFORM, ROOT, TRAIN, tiny_day

SCRIPT = ROOT / "scripts" / "dagger_rounds.py"


def script_module():
    if str(SCRIPT.parent) not in sys.path:      # (as when it runs: its folder's scripts import each other)
        sys.path.insert(0, str(SCRIPT.parent))
    spec = util.spec_from_file_location("dagger_rounds", SCRIPT)
    module = util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_round_chosen_is_the_lowest_within_the_budget():
    choose = script_module().choose
    rounds = [{"round": 0, "clone_mean": 10.0, "budget_mean": 5.0, "budget_limit": 6.0, "budget_ok": True},
              {"round": 1, "clone_mean": 8.0, "budget_mean": 7.0, "budget_limit": 6.0, "budget_ok": False},
              {"round": 2, "clone_mean": 9.0, "budget_mean": 6.0, "budget_limit": 6.0, "budget_ok": True}]
    assert choose(rounds, budget=True) == 2
    assert choose(rounds, budget=False) == 1
    for r in rounds:
        r["budget_ok"] = False
    assert choose(rounds, budget=True) is None     # none within: none chosen


def test_a_bad_budget_is_named():
    module = script_module()
    with pytest.raises(Exception, match="FIGURE:FACTOR:BASELINE"):
        module.parse_budget("waiting_time:lots")


def test_held_out_validation_days_are_never_labelled_and_the_chosen_round_is_saved(tmp_path):
    days = sorted(TRAIN.glob("*.json"))
    config = TrainConfig("shutdown", PLATFORM, days[:1], tmp_path / "clone", total_steps=64, actors=1, seed=0,
                         progress=False, vec_env="dummy", imitate="T0", imitate_episodes=1, imitate_epochs=2,
                         imitate_rounds=1, hyperparameters={"n_steps": 64, "batch_size": 64, "learning_rate": 1e-6})
    model = train(config, ["train", "shutdown", "--imitate", "T0"])
    out = tmp_path / "dagger"
    done = subprocess.run([sys.executable, str(SCRIPT), "--agent", "shutdown", "--no-masks", "--teacher", "OR*",
                           "--teacher-options", '{"max_stretch": 0.25}', "--figure", "energy_waste",
                           "--model", str(model), "-p", str(PLATFORM), "-w", str(TRAIN), "-o", str(out),
                           "--days", "1", "--holdout", "--scout", "1", "--hard", "1", "--fresh", "1",
                           "--rounds", "1", "--epochs", "1", "--budget", "waiting_time:1.5:T5"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    record = json.loads((out / "rounds.json").read_text())
    assert done.returncode == (0 if record["chosen"] is not None else 1), done.stderr[-3000:]
    validation = set(record["validation"])
    assert len(validation) == 1 and record["labelled_pool"] == len(days) - 1
    assert record["teacher"] == "OR*" and record["teacher_options"] == {"max_stretch": 0.25} and record["env_kwargs"] == {}
    assert [r["round"] for r in record["rounds"]] == [0, 1]
    assert record["rounds"][0]["held_out"] and not validation & set(record["rounds"][0]["hard_days"])
    for r in record["rounds"]:
        assert r["budget_figure"] == "waiting_time" and r["budget_ok"] == (r["budget_mean"] <= r["budget_limit"])
    assert record["chosen"] == script_module().choose(record["rounds"], budget=True)
    if record["chosen"] is None:          # no round within the budget on this day: none is chosen
        assert "no round within the budget" in done.stderr and not (out / "chosen.zip").exists()
    else:
        assert "chosen: round" in done.stderr
        load_agent(str(out / "chosen.zip"), "shutdown")       # (a saved agent of the paper)


def test_a_teacher_that_is_not_a_baseline_is_named(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--agent", "shutdown", "--teacher", "T7", "--model", "x.zip",
                           "-p", str(PLATFORM), "-w", str(TRAIN), "-o", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "T0, T1, T5, T10, OR*, QB" in done.stderr


@pytest.mark.parametrize("options, words", [('{"timeout": 3}', "T0 does not take them"),
                                            ("[1]", "is not a JSON object"), ("{oops", "not JSON")])
def test_teacher_options_the_teacher_does_not_take_are_named(tmp_path, options, words):
    done = subprocess.run([sys.executable, str(SCRIPT), "--agent", "shutdown", "--teacher", "T0", "--teacher-options",
                           options, "--model", "x.zip", "-p", str(PLATFORM), "-w", str(TRAIN), "-o", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("flags, words", [(["--figure", "wait"], "--figure wait: not a figure of"),
                                          (["--budget", "waste:1:T5"], "--budget waste: not a figure of")])
def test_a_figure_the_environment_does_not_report_is_named(tmp_path, flags, words):
    # (the figures are known once the teacher has played the first validation day: a short day here)
    (tmp_path / "days").mkdir()
    tiny_day(tmp_path / "days" / "day.json")
    done = subprocess.run([sys.executable, str(SCRIPT), "--agent", "shutdown", "--no-masks", "--teacher", "T0",
                           "--model", str(ROOT / "models" / "deepshutdown-taurus.zip"), "-p", str(PLATFORM),
                           "-w", str(tmp_path / "days"), "-o", str(tmp_path / "out"), *flags],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and words in done.stderr and "energy_waste" in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr


def test_environment_arguments_the_model_was_not_trained_with_are_named(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--agent", "shutdown", "--no-masks", "--teacher", "T0",
                           "--model", str(ROOT / "models" / "deepshutdown-taurus.zip"), "-p", str(PLATFORM),
                           "-w", str(TRAIN), "-o", str(tmp_path / "out"), "--env", '{"release_features": false}'],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "trained on observations (20, 104)" in done.stderr and "(20, 80)" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_signal_stops_the_rounds_and_the_choice_is_among_those_validated(tmp_path):
    (tmp_path / "days").mkdir()
    tiny_day(tmp_path / "days" / "a.json")
    tiny_day(tmp_path / "days" / "b.json", jobs=((5, 24, 20), (50, 48, 30)))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "--agent", "shutdown", "--no-masks", "--teacher", "T0",
                             "--figure", "energy_waste", "--model", str(ROOT / "models" / "deepshutdown-taurus.zip"),
                             "-p", str(PLATFORM), "-w", str(tmp_path / "days"), "-o", str(out), "--rounds", "1000",
                             "--hard", "1", "--fresh", "1", "--epochs", "1"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not (out / "rounds.json").exists() or len(json.loads((out / "rounds.json").read_text())["rounds"]) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    record = json.loads((out / "rounds.json").read_text())
    assert proc.returncode == 128 + signal.SIGTERM, err[-3000:]
    assert record["status"].startswith("interrupted by SIGTERM during round"), record["status"]
    validated = [r["round"] for r in record["rounds"]]
    assert validated == list(range(len(validated))) and 2 <= len(validated) < 1000
    assert record["chosen"] == script_module().choose(record["rounds"], budget=False) is not None
    assert f"chosen: round {record['chosen']}" in err and "Traceback" not in err
    load_agent(str(out / "chosen.zip"), "shutdown")
    for saved in out.glob("clone_round*.zip"):       # (each whole: a cut fit saves nothing; its record beside it)
        load_agent(str(saved), "shutdown")
        assert "env_kwargs" in json.loads(saved.with_suffix(".json").read_text())
    assert not list(out.glob("*.part"))
