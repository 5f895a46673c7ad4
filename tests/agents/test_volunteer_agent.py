"""Forshaw & McGough's reward-history learner: its value (gaussian-weighted history, untried actions
worth 0), its choices (full choices removed, the 3am cut-off rule, epsilon raised on divergence), a
short learning run beating random placement, the ``volunteer-agent`` scheduler by name, and the
reproduction script."""
import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import batsched_py.envs  # noqa: F401  (registers the environments)
from batsched_py.agents.volunteer import RandomPlacement, RewardHistory, make_policy, run_episode
from batsched_py.platforms.volunteer import generate_pool, write_pool_platform
from batsched_py.agents.volunteer.scheduler import VolunteerAgent
from batsched_py.agents.volunteer.mdp import Outcome
from batsched_py.policies.options import PolicyOptionError
from batsched_py.runner import run_simulation
from batsched_py.scheduler.registry import create
from batsched_py.workloads.volunteer import generate_jobs, generate_logins, write_events

STATE = (10, 0, 0)


@pytest.fixture(scope="module")
def pool3w(tmp_path_factory):
    """40 PCs in 4 rooms, three weeks of logins and HTC jobs (some miscreants)."""
    d = tmp_path_factory.mktemp("pool")
    pool = generate_pool(40, 4, seed=1)
    write_pool_platform(pool, d / "pool.xml")
    write_events(generate_logins(pool, 21, seed=1), d / "events.jsonl", seed=1)
    (d / "jobs.json").write_text(json.dumps(generate_jobs(21, 40, jobs_per_hour=5, seed=1)))
    return {"platform": d / "pool.xml", "workloads": d / "jobs.json", "events": d / "events.jsonl"}


def test_value_is_a_gaussian_weighted_average_of_the_last_rewards():
    agent = RewardHistory(history=4, sigma=0.5)
    assert agent.value(STATE, 1) == 0.0                               # untried
    agent.learn([Outcome(STATE, 1, True, 1.0), Outcome(STATE, 1, False, 1.0)])
    w = np.exp(-np.arange(2) ** 2 / (2 * 2.0 ** 2))                    # newest first: -1, then 1
    assert agent.value(STATE, 1) == pytest.approx((w[0] * -1 + w[1] * 1) / w.sum())
    agent.learn([Outcome(STATE, 2, True, 0.5)] * 9)
    assert agent.value(STATE, 2) == pytest.approx(0.5 + 0.5 * 0.5)      # (1 - sigma) + sigma * efficiency
    assert len(agent.rewards[(STATE, 2)]) == 4                          # limited history


def test_greedy_choice_skips_full_choices_and_bad_values_and_waits_when_nothing_has_paid():
    agent = RewardHistory(epsilon=0.0, decay=0.0)
    agent.learn([Outcome(STATE, 0, False, 1.0), Outcome(STATE, 2, True, 1.0)])
    mask = np.array([True, True, True, True])
    assert agent.act(np.array(STATE), mask) == 2
    assert agent.act(np.array(STATE), np.array([True, True, False, True])) == 3   # untried (0) ties with queued
    assert agent.act(np.array(STATE), np.array([True, False, False, True])) == 3  # only -1 left: stay queued
    agent.learn([Outcome(STATE, 0, True, 1.0)] * 3)                              # room 0 now pays on average
    assert agent.act(np.array(STATE), np.array([True, True, False, True])) == 0
    assert agent.act(np.array((11, 0, 0)), mask) == 3                            # a state never seen: wait


def test_the_cut_off_rule_keeps_the_job_queued():
    agent = RewardHistory(epsilon=1.0)
    assert all(agent.act(np.array((3, 20, 1)), np.ones(5, bool)) == 4 for _ in range(20))


def test_epsilon_starts_high_decays_and_rises_when_rewards_diverge():
    agent = RewardHistory(epsilon=0.1, decay=0.5, boost=0.3)
    for _ in range(10):
        agent.act(np.array(STATE), np.ones(3, bool))
    assert agent.eps_now == 0.1
    agent.learn([Outcome(STATE, 0, True, 1.0)] * 19)
    agent.learn([Outcome(STATE, 0, False, 1.0)] * 3)   # evictions among completions: the history still holds
    assert agent.eps_now == 0.1
    agent.learn([Outcome(STATE, 0, False, 1.0)])       # the recent rewards now depart from the history's mean
    assert agent.eps_now == pytest.approx(0.4)


def test_a_job_explores_at_most_its_budget_then_waits_for_what_was_learnt():
    agent = RewardHistory(epsilon=1.0, explorations=2)                 # every draw explores, while it may
    mask = np.ones(4, bool)
    choices = [agent.act(np.array(STATE), mask, "w0!7") for _ in range(30)]
    assert agent.explored == {"w0!7": 2} and set(choices[2:]) == {3}   # then greedy: nothing paid, so it waits
    agent.act(np.array(STATE), mask, "w0!8")                           # another job has its own budget
    assert agent.explored["w0!8"] == 1
    unbounded = RewardHistory(epsilon=1.0, explorations=None, seed=1)
    assert sum(unbounded.act(np.array(STATE), mask, "w0!7") != 3 for _ in range(30)) > 10


@pytest.mark.parametrize("kw, message", [
    (dict(epsilon=1.5), r"epsilon: 1.5 is not a number in \[0, 1\]"),
    (dict(sigma=-1), r"sigma: -1 is not a number in \[0, 1\]"),
    (dict(history=0), "history: 0 is not a positive integer"),
    (dict(explorations=0), "explorations: 0 is not a positive integer"),
])
def test_bad_agent_parameters_are_named(kw, message):
    with pytest.raises(ValueError, match=message):
        make_policy("bandit", **kw)


def test_a_short_learning_run_beats_random_placement(pool3w):
    def total(level, agent):
        env = gym.make("batsched_py/VolunteerPool-v0", **pool3w, level=level).unwrapped
        return run_episode(env, agent, seed=1)
    random = total("system", RandomPlacement(1))
    learnt = total("cluster", RewardHistory(epsilon=0.1, seed=1))
    # jobs still complete: the exploration budget holds back a few long jobs that look like miscreants
    assert random["completed"] > 400 and learnt["completed"] >= 0.99 * random["completed"]
    assert learnt["total_mwh"] < 0.85 * random["total_mwh"]
    assert learnt["wasted_mwh"] < random["wasted_mwh"]


def test_the_scheduler_runs_by_name_and_learns_online(pool3w, tmp_path):
    agent = create("volunteer-agent", {"policy": "bandit", "level": "cluster", "epsilon": 0.1,
                                       "events": str(pool3w["events"])})
    assert isinstance(agent, VolunteerAgent) and isinstance(agent.policy, RewardHistory)
    run_simulation(pool3w["platform"], [pool3w["workloads"]], agent, export=str(tmp_path / "run"), energy=True,
                   events=[pool3w["events"]])
    rows = (tmp_path / "run_jobs.csv").read_text().splitlines()
    assert any("#" in r.split(",")[0] for r in rows[1:])             # resubmitted copies (job ids 7#1...) ran
    assert len(agent.policy.rewards) > 20 and agent.figures()["completed"] > 400
    assert agent.policy.explored and max(agent.policy.explored.values()) <= 2    # the budget, per job


def test_the_scheduler_names_bad_options_and_missing_flags(pool3w, tmp_path):
    with pytest.raises(PolicyOptionError, match="policy: 'greedy' is not one of random, bandit"):
        VolunteerAgent({"policy": "greedy"})
    with pytest.raises(PolicyOptionError, match="level: 'rack' is not one of"):
        VolunteerAgent({"level": "rack"})
    with pytest.raises(PolicyOptionError, match="option events: 'nowhere.jsonl' is not a file"):
        VolunteerAgent({"events": "nowhere.jsonl"})
    with pytest.raises(PolicyOptionError, match="option switch_on_time: -1 is not a finite positive number"):
        VolunteerAgent({"switch_on_time": -1})
    bad = tmp_path / "bad_events.jsonl"
    bad.write_text('{"timestamp": 5, "type": "machine_unavailable", "resources": "99"}\n')
    with pytest.raises(PolicyOptionError, match=r"option events: events file .*bad_events.jsonl, line 1: resources 99 "
                                                r"out of range 0-39"):
        run_simulation(pool3w["platform"], [pool3w["workloads"]], VolunteerAgent({"events": str(bad)}),
                       export=str(tmp_path / "b"), events=[pool3w["events"]])
    agent = VolunteerAgent({"policy": "random"})
    agent.batsim_flags = ()                         # as a Batsim started without them
    with pytest.raises(PolicyOptionError, match="run Batsim with --enable-dynamic-jobs --acknowledge-dynamic-jobs"):
        run_simulation(pool3w["platform"], [pool3w["workloads"]], agent, export=str(tmp_path / "o"),
                       events=[pool3w["events"]])


def test_the_reproduction_script_runs_the_headline_cases(tmp_path):
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "scripts/reproduce_volunteer.py", "--out", str(tmp_path), "--pcs", "20",
                           "--clusters", "2", "--days", "4", "--jobs-per-hour", "3", "--headline"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=900)   # (a hang guard)
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "volunteer.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["policy"], r["epsilon"]) for r in rows] == [("random", ""), ("bandit", "0.01"), ("bandit", "0.1")]
    assert all(float(r["total_mwh"]) == pytest.approx(float(r["good_mwh"]) + float(r["wasted_mwh"])) for r in rows)
    assert "epsilon 0.1: total energy cut" in done.stdout and not (tmp_path / "volunteer.png").exists()


def test_the_reproduction_script_names_a_bad_pool_and_keeps_the_runs_done_when_stopped(tmp_path):
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    script = [sys.executable, "scripts/reproduce_volunteer.py", "--out", str(tmp_path), "--clusters", "2",
              "--days", "4", "--jobs-per-hour", "3"]
    done = subprocess.run(script + ["--pcs", "0"], cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == "reproduce_volunteer: nb_pcs: 0 is not a positive integer", done.stderr
    proc = subprocess.Popen(script + ["--pcs", "20"], cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        # the first run's line, printed once its row is in the file: stop the study in the second run
        assert "random" in proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=900)      # (a hang guard: a busy machine is slow to start)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM and "interrupted by SIGTERM" in err, err
    with open(tmp_path / "volunteer.csv") as f:
        assert [r["policy"] for r in csv.DictReader(f)][:1] == ["random"]
