"""`batsched-py train`, `evaluate` and the saved-agent schedulers under a user's mistakes and
interruptions: a bad setting is one line naming it (not a traceback from SB3 or from an actor
process that died, not an option silently ignored, not a hang); SIGINT/SIGTERM stop them with the
checkpoints and finished days kept and OUT/_INCOMPLETE saying which signal; a checkpoint cut short
is not resumed from."""
import csv
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from batsched_py.cli.agents import train_main
from batsched_py.agents.common.checkpoints import latest_checkpoint
from batsched_py.agents.common.training import TrainConfig, TrainError, train

from helpers.rl import PLATFORM, TRAIN

ROOT = Path(__file__).resolve().parents[2]
DAY = sorted(TRAIN.glob("*.json"))[0]


def _train(tmp_path, *extra):
    return ["shutdown", "-p", str(PLATFORM), "-w", str(DAY), "-o", str(tmp_path / "out"), "--total-steps", "8",
            "--actors", "2", "--no-progress", *extra]


def _one_line_error(main, argv, capsys, command):
    """The last line of what ``main(argv)`` printed, checked to be batsched-py COMMAND's one-line
    error (status 2, from argparse or from the command, no traceback)."""
    try:
        code = main(argv)
    except SystemExit as exc:                  # (argparse)
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines()[-1].startswith(f"batsched-py {command}: ") and "Traceback" not in err, err
    return err.splitlines()[-1]


@pytest.mark.parametrize("extra,words", [
    (["--env", '{"bogus": 1}'], ["--env", "bogus"]),                        # in a subprocess actor before
    (["--vec-env", "dummy", "--hyper", '{"bogus": 1}'], ["--hyper", "bogus"]),
    (["--vec-env", "dummy", "--hyper", '{"n_steps": "x"}'], ["--hyper", "n_steps"]),
    (["--vec-env", "dummy", "--torch-threads", "0"], ["--torch-threads"]),
    (["--vec-env", "dummy", "--checkpoint-every", "-5"], ["--checkpoint-every"]),
    (["--vec-env", "ray", "--ray-address", "nohost:port"], ["--ray-address nohost:port", "cannot connect to Ray"]),
], ids=["env-key", "hyper-key", "hyper-type", "threads", "checkpoints", "ray-address"])
def test_bad_training_settings_are_named(tmp_path, capsys, extra, words):
    last = _one_line_error(train_main, _train(tmp_path, *extra), capsys, "train")
    assert all(w in last for w in words), last
    assert not (tmp_path / "out" / "_INCOMPLETE").exists()


@pytest.mark.parametrize("setting", [{"torch_threads": 0}, {"checkpoint_every": -5}], ids=str)
def test_bad_training_settings_are_named_by_the_api_too(tmp_path, setting):
    config = TrainConfig("shutdown", PLATFORM, [DAY], tmp_path, total_steps=8, actors=1, vec_env="dummy",
                         progress=False, **setting)
    with pytest.raises(TrainError, match=next(iter(setting)).replace("_", "-")):
        train(config)


@pytest.mark.parametrize("sig,vec", [(signal.SIGTERM, "subprocess"), (signal.SIGINT, "dummy")],
                         ids=["SIGTERM-subprocess", "SIGINT-dummy"])
def test_an_interrupted_training_keeps_its_checkpoints_and_says_so(tmp_path, sig, vec):
    out = tmp_path / "out"
    argv = _train(tmp_path, "--vec-env", vec, "--checkpoint-every", "64", "--hyper", '{"n_steps": 32}')
    argv[argv.index("--total-steps") + 1] = "1000000"
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    proc = subprocess.Popen([sys.executable, "-c", "from batsched_py.cli import command; command()",
                             "train", *argv], env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while latest_checkpoint(out / "checkpoints") is None:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no checkpoint in 120 s"
        time.sleep(0.1)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig.value, err
    assert f"interrupted by {sig.name}" in err and "--resume" in err and "Traceback" not in err, err
    assert f"interrupted by {sig.name}" in (out / "_INCOMPLETE").read_text()
    assert not (out / "model.json").exists()
    assert all(zipfile.is_zipfile(p) for p in (out / "checkpoints").glob("model_*_steps.zip"))


def test_resume_with_nothing_to_resume_says_so(tmp_path, capsys):
    assert train_main(_train(tmp_path, "--vec-env", "dummy", "--resume", "--hyper", '{"n_steps": 32}')) == 0
    assert "--resume: no checkpoint in" in capsys.readouterr().err
    assert (tmp_path / "out" / "model.zip").is_file() and not (tmp_path / "out" / "_INCOMPLETE").exists()


def test_resume_says_which_new_settings_the_checkpoint_overrides(tmp_path, capsys):
    first = _train(tmp_path, "--vec-env", "dummy", "--actors", "1", "--checkpoint-every", "32", "--hyper",
                   '{"n_steps": 32, "learning_rate": 0.001}')
    assert train_main(first) == 0
    again = _train(tmp_path, "--vec-env", "dummy", "--actors", "1", "--checkpoint-every", "32", "--resume",
                   "--hyper", '{"n_steps": 32, "learning_rate": 0.5}')
    again[again.index("--total-steps") + 1] = "64"
    assert train_main(again) == 0
    assert "the checkpoint's PPO settings are kept: learning_rate 0.001 (not 0.5)" in capsys.readouterr().err
    record = json.loads((tmp_path / "out" / "model.json").read_text())
    assert record["hyperparameters"]["learning_rate"] == 0.001 and record["resumed_from"]


def test_a_checkpoint_cut_short_is_not_resumed_from(tmp_path):
    with zipfile.ZipFile(tmp_path / "model_64_steps.zip", "w") as z:
        z.writestr("data", "{}")
    (tmp_path / "model_128_steps.zip").write_bytes(b"PK\x03\x04 cut")
    assert latest_checkpoint(tmp_path) == tmp_path / "model_64_steps.zip"


# a policy that says when it first decides (a file) and then takes forever
SLOW_POLICY = """
import time
from pathlib import Path
def slow(obs):
    Path(__file__).with_name("deciding").touch()
    for _ in range(600):     # (short sleeps: a signal sent as one begins is served at its end)
        time.sleep(0.1)
    return 0
def fails(obs):
    raise RuntimeError("a bug in the policy")
"""


def _evaluate(tmp_path, *extra):
    return ["--env", "shutdown", "-p", str(PLATFORM), "-w", str(DAY), "-o", str(tmp_path / "out"), "--no-figures",
            *extra]


@pytest.mark.parametrize("extra,words", [
    (["--policies", 'T0:{"deterministic": false}'], ["T0", "deterministic"]),       # was ignored
    (["--policies", 'OR*:{"max_strech": 0.3}'], ["OR*", "max_strech"]),
    (["--policies", 'QB:{"queue": 0}'], ["QB", "queue must be >= 1"]),                   # was a traceback
    (["--policies", 'os:getcwd:{"max_stretch": 0.3}'], ["os:getcwd", "max_stretch", "takes none"]),
    (["--policies", f'{ROOT / "models" / "deepshutdown-taurus.zip"}:{{"determinstic": false}}'],
     ["determinstic"]),
    (["--policies", f'{ROOT / "models" / "deepshutdown-taurus.zip"}:{{"deterministic": "no"}}'],
     ["deterministic", "true or false"]),
    (["--policies", f'{ROOT / "models" / "deepshutdown-taurus.zip"}:{{"env": 3}}'],
     ["env", "object of environment arguments"]),
    (["--policies", "T0", "-j", "-1"], ["--jobs"]),                                    # was a hang
    (["--policies", "T0", "-o", "{tmp}/a-file"], ["--out", "a-file", "exists"]),        # was a traceback
], ids=["baseline-options", "baseline-argument", "baseline-value", "callable-options", "unknown-option", "option-type", "env-type", "jobs", "out-is-a-file"])
def test_bad_evaluation_settings_are_named(tmp_path, capsys, extra, words):
    from batsched_py.cli.agents import evaluate_main
    (tmp_path / "a-file").touch()
    extra = [e.replace("{tmp}", str(tmp_path)) for e in extra]
    last = _one_line_error(evaluate_main, _evaluate(tmp_path, *extra), capsys, "evaluate")
    assert all(w in last for w in words), last


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_an_interrupted_evaluation_keeps_its_finished_days_and_says_so(tmp_path, sig):
    (tmp_path / "slowpolicy.py").write_text(SLOW_POLICY)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-c", "from batsched_py.cli import command; command()",
                             "evaluate", *_evaluate(tmp_path, "--policies", "T0,slowpolicy:slow", "-j", "1")],
                            env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (tmp_path / "deciding").exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the slow policy never decided"
        time.sleep(0.1)
    proc.send_signal(sig)
    t0 = time.monotonic()
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 10, "not stopped promptly"
    assert proc.returncode == 128 + sig.value, err
    assert f"interrupted by {sig.name}" in err and "Traceback" not in err, err
    assert f"interrupted by {sig.name}" in (out / "_INCOMPLETE").read_text()
    with open(out / "days.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["policy"] for r in rows] == ["T0"] and float(rows[0]["energy_waste"]) > 0


def test_a_saved_agent_scheduler_names_a_non_boolean_deterministic():
    from batsched_py.policies.options import PolicyOptionError
    from batsched_py.scheduler import create
    with pytest.raises(PolicyOptionError, match="deterministic must be true or false, not 'false'"):
        create("deepshutdown", {"model": str(ROOT / "models" / "deepshutdown-taurus.zip"), "deterministic": "false"})


def test_a_failed_evaluation_says_so_in_its_marker(tmp_path, capsys, monkeypatch):
    from batsched_py.cli.agents import evaluate_main
    (tmp_path / "slowpolicy.py").write_text(SLOW_POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert evaluate_main(_evaluate(tmp_path, "--policies", "T0,slowpolicy:fails", "-j", "1")) == 2
    assert "RuntimeError: a bug in the policy" in capsys.readouterr().err
    marker = (tmp_path / "out" / "_INCOMPLETE").read_text()
    assert marker.startswith("evaluation failed: slowpolicy:fails") and "a bug in the policy" in marker, marker
    with open(tmp_path / "out" / "days.csv") as f:
        assert [r["policy"] for r in csv.DictReader(f)] == ["T0"]
