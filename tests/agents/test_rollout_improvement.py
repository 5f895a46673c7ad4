"""scripts/rollout_improvement.py: replays of a day with one of the rule's decisions changed, the
labels they give, and the agent fitted on them; bad inputs are one line."""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from importlib import util

import numpy as np
import pytest

from batsched_py.agents.common.loading import trained_with
from batsched_py.agents.common.saved import load_agent
from batsched_py.agents.deepshutdown import config as settings

from helpers.rl import PLATFORM, ROOT, TRAIN

SCRIPT = ROOT / "scripts" / "rollout_improvement.py"
MODEL = ROOT / "models" / "deepshutdown-taurus.zip"


def script_module():
    spec = util.spec_from_file_location("rollout_improvement", SCRIPT)
    module = util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def finished(out, *args) -> dict:
    """Run the script with ``-o out`` and ``args``; it must succeed: its improvement.json."""
    done = run("--model", MODEL, "-p", PLATFORM, "-w", TRAIN, "-o", out, *args)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / "improvement.json").read_text())


def test_a_departure_is_labelled_where_it_pays_and_weighted_by_its_gain():
    labelled = script_module().labelled
    nan = np.nan
    actions = np.array([5, 5, 0, 7, 3])
    gains = np.array([[900.0, -100.0],      # one node more off pays 900
                      [-50.0, -300.0],      # nothing pays: the rule, by the smaller loss (50)
                      [400.0, nan],         # one more off pays (one fewer than 0 is outside the space: NaN)
                      [10.0, nan],          # pays 10: under a margin of 20, the rule
                      [nan, nan]])          # a state of the rule's own day: not replayed
    labels, weights, figures = labelled(actions, gains, margin=20.0)
    assert labels.tolist() == [6, 5, 1, 7, 3]
    assert figures == {"labelled_states": 5, "replayed_decisions": 4, "departures_that_pay": 2,
                       "median_gain_w_min": 400.0}     # (of 900, 50, 400: row 4 saved nothing)
    scale = figures["median_gain_w_min"]
    assert weights.tolist() == pytest.approx([1 + 900 / scale, 1 + 50 / scale, 1 + 400 / scale, 1.0 + 0.0, 1.0])


@pytest.mark.parametrize("player", ["rule", "agent"])
def test_a_replay_with_the_players_own_action_costs_what_the_day_cost_and_a_change_moves_it(player):
    """Whoever plays the day (the rule, or with --rollout agent the saved agent, its shield included)."""
    module = script_module()
    day = str(sorted(TRAIN.glob("*.json"))[0])
    env_kwargs = trained_with(str(MODEL), settings.TRAINED_OPTIONS)
    replays = module.Replays(str(PLATFORM), [day], env_kwargs, env_kwargs["advice"], env_kwargs["advice_options"],
                             str(MODEL) if player == "agent" else None)
    figures, seen, actions, rewards, open_steps = replays.play(day, record=True)     # (waste, mean wait)
    assert len(seen) == len(actions) == len(rewards) == 1440 and open_steps and figures[0] > 0
    t = open_steps[0]
    assert np.array_equal(replays.play(day, change=(t, actions[t])), figures)   # (the emulator replays a day exactly)
    moved = [replays.play(day, change=(s, 0 if actions[s] else 1)) for s in open_steps[:5]]
    assert any(not np.array_equal(m, figures) for m in moved)


def test_another_future_keeps_the_days_present_and_takes_the_rest_of_another_day():
    spliced = script_module().spliced
    day = {"nb_res": 158, "jobs": [{"id": "1", "subtime": 5, "profile": "a"}, {"id": "2", "subtime": 9, "profile": "b"}],
           "profiles": {"a": {"cpu": 1}, "b": {"cpu": 2}}}
    other = {"nb_res": 158, "jobs": [{"id": "1", "subtime": 9, "profile": "a"}, {"id": "2", "subtime": 10, "profile": "a"}],
             "profiles": {"a": {"cpu": 7}}}
    doc = spliced(day, other, 9)
    # (the decision at minute 9 has seen both of the day's jobs; the other day's job at 9 is not in this future)
    assert doc["jobs"] == [{"id": "1", "subtime": 5, "profile": "a"}, {"id": "2", "subtime": 9, "profile": "b"},
                           {"id": "f:2", "subtime": 10, "profile": "f:a"}]
    assert doc["profiles"] == {"a": {"cpu": 1}, "b": {"cpu": 2}, "f:a": {"cpu": 7}}
    assert doc["nb_jobs"] == 3 and doc["nb_profiles"] == 3 and doc["nb_res"] == 158
    assert spliced(day, other, 4)["jobs"] == [{"id": "f:1", "subtime": 9, "profile": "f:a"},
                                              {"id": "f:2", "subtime": 10, "profile": "f:a"}]


def test_in_another_future_the_rule_decides_as_on_the_day_up_to_the_replayed_step():
    module = script_module()
    day, other = (str(d) for d in sorted(TRAIN.glob("*.json"))[:2])
    env_kwargs = trained_with(str(MODEL), settings.TRAINED_OPTIONS)
    replays = module.Replays(str(PLATFORM), [day], env_kwargs, env_kwargs["advice"], env_kwargs["advice_options"])
    figures, _, actions, _, open_steps = replays.play(day, record=True)
    t = open_steps[len(open_steps) // 2]
    future = replays.future(day, other, t)
    saved = replays.saved_by(future, t, actions, [actions[t] + 1, actions[t] - 1])
    assert saved.shape == (2, 2) and np.all(np.isfinite(saved))
    assert not np.array_equal(replays.play(future), figures)          # (another future: another day)
    # the check is live: the other day itself is not this day's future
    with pytest.raises(AssertionError, match="depend on the future"):
        replays.saved_by(other, t, actions, [actions[t] + 1])


def test_how_much_a_label_rests_on_its_own_future():
    own_future = script_module().own_future
    nan = np.nan
    # (state, future: the day's own first, departure: one more off / one fewer, (waste, wait) saved)
    by_future = np.array([
        [[[900, 0], [nan, nan]], [[500, 0], [nan, nan]], [[300, 0], [nan, nan]]],     # pays in every future
        [[[900, 0], [nan, nan]], [[-500, 0], [nan, nan]], [[-100, 0], [nan, nan]]],   # pays on its own only
        [[[0, 0], [0, 0]], [[0, 0], [0, 0]], [[0, 0], [0, 0]]],                       # worth nothing anywhere
        [[[0, 1], [0, 0]], [[0, 1], [0, -1]], [[0, 0], [0, 0]]],                      # a minute of wait
        [[[nan, nan], [nan, nan]]] * 3])                                              # not replayed
    assert own_future(by_future, price=0.0, margin=0.0) == {"departures_worth_something": 2,
                                                            "own_future_agrees": pytest.approx(1 / 2)}
    # priced, the wait counts: the fourth state's first departure pays on its own future and on the others'
    # mean, its second pays in none (but costs a minute in one)
    assert own_future(by_future, price=1000.0, margin=0.0) == {"departures_worth_something": 4,
                                                               "own_future_agrees": pytest.approx(3 / 4)}
    assert own_future(by_future[:, :1], price=0.0, margin=0.0) == {}        # (one future: nothing to compare)


def test_it_labels_days_fits_the_agent_and_refits_from_its_labels(tmp_path):
    out = tmp_path / "a"
    record = finished(out, "--days", 2, "--points", 3, "--keep", 5, "--tail", 30, "--epochs", 1, "-j", 2)
    assert record["status"] == "finished" and record["rule"] == "QB" and record["days"] == 2
    assert record["rule_waste_w_min"] > 0 and record["price_w_min_per_min"] == 3500
    assert record["labelled_states"] == record["replayed_decisions"] + 2 * 5 and record["replayed_decisions"] <= 6
    with np.load(out / "labels.npz") as saved:
        assert saved["obs"].shape == (record["labelled_states"], 20, 104)
        replayed = ~np.all(np.isnan(saved["saved"]), axis=(1, 2))
        assert replayed.sum() == record["replayed_decisions"]
    agent = load_agent(str(out / "improved.zip"), "shutdown")
    assert agent.model.observation_space.shape == (20, 104)
    # its record carries the advice it sees, so that evaluate and the schedulers give it that
    assert trained_with(str(out / "improved.zip"), settings.TRAINED_OPTIONS)["advice"] == "QB"
    refit = finished(tmp_path / "b", "--labels", out / "labels.npz", "--margin", 1e12, "--price", 0, "--epochs", 1)
    assert refit["departures_that_pay"] == 0 and refit["labelled_states"] == record["labelled_states"]
    assert refit["price_w_min_per_min"] == 0 and refit["labels"] == str(out / "labels.npz")
    assert record["futures"] == refit["futures"] == 0


def test_with_futures_each_label_is_the_mean_over_other_days_of_the_group(tmp_path):
    out = tmp_path / "a"
    record = finished(out, "--days", 1, "--points", 2, "--keep", 2, "--tail", 30, "--epochs", 1, "--futures", 2)
    assert record["status"] == "finished" and record["futures"] == 2 and record["replayed_decisions"] == 2
    with np.load(out / "labels.npz") as saved:
        assert int(saved["futures"]) == 2 and saved["saved"].shape == (4, 2, 2)
        by_future = saved["by_future"]
        assert by_future.shape == (4, 3, 2, 2)
        np.testing.assert_allclose(np.nanmean(by_future[:2], axis=1), saved["saved"][:2], equal_nan=True)
    assert record["departures_worth_something"] <= 4 and "own_future_agrees" in record
    assert finished(tmp_path / "b", "--labels", out / "labels.npz", "--epochs", 1)["futures"] == 2
    # (TRAIN holds three days of one group: two other futures at most)
    done = run("--model", MODEL, "-p", PLATFORM, "-w", TRAIN, "-o", tmp_path / "c", "--days", 1, "--futures", 3)
    assert done.returncode == 2 and "--futures 3: -w holds 2 other days" in done.stderr, done.stderr[-2000:]


def test_with_rollout_agent_the_agent_plays_and_labels_its_own_action_where_no_departure_pays(tmp_path):
    out = tmp_path / "a"
    done = run("--model", MODEL, "-p", PLATFORM, "-w", TRAIN, "-o", out, "--days", 1, "--points", 2, "--keep", 4,
               "--tail", 30, "--epochs", 1, "--rollout", "agent", "--margin", 1e12)
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads((out / "improvement.json").read_text())
    assert record["status"] == "finished" and record["rollout"] == "agent" and record["agent_waste_w_min"] > 0
    assert "rule_waste_w_min" not in record and "to leave the agent" in done.stderr
    agent = load_agent(str(MODEL), "shutdown")
    with np.load(out / "labels.npz") as saved:
        # (the recorded actions are the agent's own, in the states it reached)
        assert [agent(obs) for obs in saved["obs"]] == saved["actions"].tolist()
    assert record["departures_that_pay"] == 0           # (under that margin: the agent's own action everywhere)
    # a refit from these labels knows who played them, and refuses to be told otherwise
    again = run("--model", MODEL, "-p", PLATFORM, "-w", TRAIN, "-o", tmp_path / "b", "--labels", out / "labels.npz",
                "--price", 0, "--epochs", 1)
    assert again.returncode == 0 and "to leave the agent" in again.stderr, again.stderr[-3000:]
    assert json.loads((tmp_path / "b" / "improvement.json").read_text())["rollout"] == "agent"
    wrong = run("--model", MODEL, "-p", PLATFORM, "-w", TRAIN, "-o", tmp_path / "c", "--labels", out / "labels.npz",
                "--rollout", "rule")
    assert wrong.returncode == 2 and "were played by the agent" in wrong.stderr and "Traceback" not in wrong.stderr


def test_bad_inputs_are_named_in_one_line(tmp_path):
    bare = tmp_path / "bare.zip"
    shutil.copyfile(MODEL, bare)          # (no record beside it: no advice to improve on)
    done = run("--model", bare, "-p", PLATFORM, "-w", TRAIN, "-o", tmp_path / "o")
    assert done.returncode == 2 and "names no advice" in done.stderr and "Traceback" not in done.stderr
    junk = tmp_path / "labels.npz"
    junk.write_text("not numpy")
    done = run("--model", MODEL, "-p", PLATFORM, "-w", TRAIN, "-o", tmp_path / "o", "--labels", junk)
    assert done.returncode == 2 and "not a labels.npz" in done.stderr and "Traceback" not in done.stderr
    narrow = tmp_path / "narrow.npz"      # (labels of an agent that saw other observations)
    np.savez(narrow, obs=np.zeros((1, 20, 7)), actions=np.zeros(1, int), saved=np.full((1, 2, 2), np.nan),
             returns=np.zeros(1), running=np.zeros(1), days=np.array(["d"]))
    done = run("--model", MODEL, "-p", PLATFORM, "-w", TRAIN, "-o", tmp_path / "o", "--labels", narrow)
    assert done.returncode == 2 and "observations (20, 7)" in done.stderr and "Traceback" not in done.stderr
    done = run("--model", MODEL, "-p", PLATFORM, "-w", TRAIN, "-o", tmp_path / "o", "--points", 0)
    assert done.returncode == 2 and "--points: 0" in done.stderr
    done = run("--model", MODEL, "-p", PLATFORM, "-w", TRAIN, "-o", tmp_path / "o", "--futures", -1)
    assert done.returncode == 2 and "--futures are at least 0" in done.stderr and "Traceback" not in done.stderr


def test_stopped_by_a_signal_it_keeps_the_days_finished_and_fits_nothing(tmp_path):
    out, log = tmp_path / "a", tmp_path / "stderr"
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, str(SCRIPT), "--model", str(MODEL), "-p", str(PLATFORM), "-w",
                                 str(TRAIN), "-o", str(out), "--days", "3", "--points", "30", "-j", "1"],
                                cwd=ROOT, stderr=err, text=True)
        deadline = time.time() + 300
        while "| 1/" not in log.read_text() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        status = proc.wait(timeout=60)
    record = json.loads((out / "improvement.json").read_text())
    assert status == 130 and "Traceback" not in log.read_text()
    assert record["status"].startswith("interrupted") and "nothing was fitted" in record["status"], record["status"]
    assert not (out / "improved.zip").exists()
    with np.load(out / "labels.npz") as saved:
        assert 1 <= len(set(saved["days"].tolist())) < 3
