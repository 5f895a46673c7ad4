"""Elastic-v0 (Perez et al.): the Gymnasium contract, seeding, the pool's rules, the class
decisions, the measures, one semantics with the ``elastic-agent`` scheduler, and named errors."""
import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import batsched_py.envs  # noqa: F401  (registers the environments)
from batsched_py.envs import EnvError
from batsched_py.agents.elastic.responsiveness import class_figures, fairness, responsiveness
from batsched_py.policies.agent import ActionError
from batsched_py.agents.elastic.baselines import BASELINES as ELASTIC_BASELINES
from batsched_py.agents.elastic.scheduler import ElasticAgent
from batsched_py.policies.options import PolicyOptionError
from batsched_py.runner import run_simulation
from batsched_py.scheduler import HostState

from helpers.rl import ELASTIC_PLATFORM, ELASTIC_WORKLOAD

MODES = ("scheduling", "elastic")


def make(**kw):
    kw.setdefault("workloads", [ELASTIC_WORKLOAD])
    kw.setdefault("skip", 100)
    return gym.make("batsched_py/Elastic-v0", platform=str(ELASTIC_PLATFORM), **kw)


def play(env, policy, seed=0, on_step=None):
    """Run an episode with ``policy`` (a callable obs -> action, bound if it reads the scheduler)."""
    obs, info = env.reset(seed=seed)
    if hasattr(policy, "bind"):
        policy.bind(env.unwrapped.scheduler)
    trace, rewards, done = [obs], [], False
    while not done:
        obs, r, term, trunc, info = env.step(policy(obs))
        if on_step:
            on_step(env.unwrapped.scheduler)
        trace.append(obs)
        rewards.append(r)
        done = term or trunc
    return trace, rewards, info


@pytest.mark.parametrize("mode", MODES)
def test_check_env(mode):
    env = make(mode=mode)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_spaces_follow_the_mode_and_the_vos():
    assert make().action_space == gym.spaces.Discrete(8)
    env = make(mode="elastic", nb_vos=3, pool_steps=[-10, 0, 10])
    assert env.action_space == gym.spaces.MultiDiscrete([6, 3])
    assert env.observation_space.shape == (7 + 12 + 3,)
    assert env.unwrapped.options["vos"] == [1, 6, 3]       # the small window's busiest SWF groups (523, 380, 170 jobs)
    assert make(vos=[6, 1]).unwrapped.options["vos"] == [6, 1]     # (an agent's training VOs)


@pytest.mark.parametrize("mode", MODES)
def test_same_seed_same_episode(mode):
    def episode():
        env = make(mode=mode, max_time=100_000)
        env.action_space.seed(7)
        trace, rewards, info = play(env, lambda obs: env.action_space.sample(), seed=3)
        return trace, rewards, info
    a, b = episode(), episode()
    assert len(a[0]) == len(b[0]) > 300
    for x, y in zip(a[0], b[0]):
        np.testing.assert_array_equal(x, y)
    assert a[1] == b[1] and a[2] == b[2]


def test_scheduling_keeps_81_cores_and_switches_the_rest_off():
    pools, asleep = set(), []

    def look(s):
        pools.add(s.pool_size)
        asleep.append(s.platform.mask_in(HostState.SLEEPING).bit_count())

    play(make(max_time=50_000), ELASTIC_BASELINES["FCFS"](), on_step=look)
    assert pools == {81}
    assert max(asleep) == 140 - 81


def test_the_elastic_pool_keeps_its_rules():
    """Random pool levels: the pool changes only at decisions a period apart, never below 30 hosts
    nor the running jobs."""
    env = make(mode="elastic", max_time=150_000)
    env.action_space.seed(1)
    decisions, after = [], []

    def policy(obs):
        s = env.unwrapped.scheduler
        decisions.append((s.now, s.pool_size, bool(obs[5])))
        return env.action_space.sample()

    def look(s):
        after.append(s.pool_size)
        assert s.pool_size >= max(30, s.running_count()) and s.pool_mask.bit_count() == s.pool_size

    _, _, info = play(env, policy, on_step=look)
    due = [t for t, _, d in decisions if d]
    assert all(b - a >= 900 for a, b in zip(due, due[1:])) and len(due) > 100
    moved = [(t, d) for (t, before, d), size in zip(decisions, after) if size != before]
    assert len(moved) > 50 and all(d for _, d in moved)
    assert info["nb_switches"] > 200                                # hosts switched on and off


def test_an_action_starts_the_oldest_job_of_its_class():
    env = make()
    obs, _ = env.reset(seed=0)
    s = env.unwrapped.scheduler
    started = 0
    for _ in range(500):
        full = [c for c, q in enumerate(s.queues) if q]
        if not full:
            obs, _, term, trunc, _ = env.step(0)
        else:
            c = full[-1]
            oldest = s.queues[c][0]
            obs, _, term, trunc, _ = env.step(c)
            assert oldest.status.value != "QUEUED" and s.job_class[oldest.id] == c
            started += 1
        if term or trunc:
            break
    assert started > 400 and s.invalid_actions == 0


def test_measures():
    assert responsiveness(100, 0) == 1.0 and responsiveness(10, 30) == 0.25 and responsiveness(0, 0) == 1.0

    class Fake:
        nb_vos = 2

        class jobs:
            running = {"a": type("J", (), {"res": 1, "vo": 0})(), "b": type("J", (), {"res": 1, "vo": 0})()}

        @staticmethod
        def vo_slot(job):
            return job.vo

    assert fairness(Fake()) == pytest.approx(0.5)           # all on one VO of two: D = sqrt(1/2)
    assert fairness(Fake(), [1.0, 0.0]) == pytest.approx(1.0)


def test_figures_leave_out_the_first_and_last_jobs():
    env = make(skip=0)
    _, _, everything = play(env, ELASTIC_BASELINES["FCFS"]())
    skipped = class_figures(env.unwrapped.scheduler, skip=500)
    assert everything["nb_jobs"] == 1200 and skipped["nb_jobs"] == 200
    assert skipped["interactive_jobs"] + skipped["batch_jobs"] == 200


def test_edf_serves_interactive_jobs_sooner_than_fcfs():
    results = {}
    for name in ("FCFS", "EDF"):
        _, _, info = play(make(pool=60), ELASTIC_BASELINES[name]())
        results[name] = info
    assert results["EDF"]["interactive_delay"] < results["FCFS"]["interactive_delay"] / 2
    assert results["EDF"]["interactive_W"] > results["FCFS"]["interactive_W"]


@pytest.mark.parametrize("mode", ["elastic"])
def test_the_environment_schedules_as_the_scheduler_through_run(tmp_path, mode):
    """EDF in Elastic-v0 and ``run --scheduler elastic-agent --config {policy: EDF}``: the same jobs.csv."""
    env = make(mode=mode, output_prefix=str(tmp_path / "env"))
    play(env, ELASTIC_BASELINES["EDF"]())
    env.close()
    options = {"policy": "EDF", "mode": mode, "runtimes": "oracle", "workload": str(ELASTIC_WORKLOAD),
               "vos": env.unwrapped.options["vos"]}
    run_simulation(ELASTIC_PLATFORM, [ELASTIC_WORKLOAD], "elastic-agent", options, export=str(tmp_path / "run"),
                   energy=True)
    assert (tmp_path / "env_jobs.csv").read_text() == (tmp_path / "run_jobs.csv").read_text()
    assert (tmp_path / "env_machine_states.csv").read_text() == (tmp_path / "run_machine_states.csv").read_text()


@pytest.mark.parametrize("mode,action,message", [
    ("scheduling", 8, r"action 8 is outside Discrete\(8\): choose 0..7"),
    ("elastic", 3, r"mode elastic takes \(class, pool level\), MultiDiscrete\(\[8, 5\]\)"),
    ("elastic", [0, 5], r"action 5 is outside Discrete\(5\)"),
    ("elastic", [[0], [1, 2]], r"mode elastic takes \(class, pool level\)"),
])
def test_bad_actions_are_named(mode, action, message):
    env = make(mode=mode)
    env.reset(seed=0)
    with pytest.raises(ActionError, match=message):
        env.step(action)


def test_a_refused_action_leaves_the_decision_point_open():
    def first_steps(refuse):
        env = make(mode="elastic")
        env.reset(seed=0)
        out = []
        for a in ([1, 2], [0, 4], [3, 0], [2, 2]):
            if refuse:
                for bad in ([0, 5], [[0], [1, 2]], "x"):
                    with pytest.raises(ActionError):
                        env.step(bad)
            obs, r, *_ = env.step(a)
            out.append((obs.tolist(), r))
        return out

    assert first_steps(True) == first_steps(False)


@pytest.mark.parametrize("kw,message", [
    ({"mode": "cloud"}, r"^mode: 'cloud' is not one of scheduling, elastic$"),
    ({"lam": 1.5}, r"^lam: 1.5 is not a number in \[0, 1\]$"),
    ({"second": "energy"}, r"^second: 'energy' is not one of fairness, utilisation$"),
    ({"nb_vos": 0}, r"^nb_vos: 0 is not a positive integer$"),
    ({"pool_steps": "up"}, r"^option pool_steps: \['u', 'p'\] is not a non-empty list of integers$"),
    ({"runtimes": "guess"}, r"^option runtimes: 'guess' is not 'oracle' or 'median'$"),
    ({"period": -5}, r"^option period: -5 is not a finite positive number$"),
    ({"vos": [1, 2, 3, 4, 5]}, r"^option vos: \[1, 2, 3, 4, 5\] is not a list of at most nb_vos=4 VO values$"),
])
def test_bad_arguments_are_named(kw, message):
    with pytest.raises(EnvError, match=message):
        make(**kw)


@pytest.mark.parametrize("options,message", [
    ({"policy": "EDF", "runtimes": "oracle"}, "option runtimes 'oracle' needs option workload"),
    ({"policy": "EDF", "pool": 200}, "option pool: 200 hosts, the platform has 140"),
    ({"policy": "EDF", "mode": "x"}, "option mode: 'x' is not one of scheduling, elastic"),
    ({"policy": "LIFO"}, "is neither a baseline (FCFS, EDF)"),
    ({"policy": "EDF", "colour": 1}, "unknown option(s) ['colour']"),
])
def test_bad_scheduler_options_are_one_line(tmp_path, capsys, options, message):
    from batsched_py.cli import main
    code = main(["run", "-p", str(ELASTIC_PLATFORM), "-w", str(ELASTIC_WORKLOAD), "-E", "--scheduler",
                 "elastic-agent", "--config", json.dumps(options), "-e", str(tmp_path / "o")])
    last = capsys.readouterr().err.strip().splitlines()[-1]      # (after the progress bar's lines)
    assert code == 2 and last.startswith("batsched-py run: error: ") and message in last


def test_a_scheduler_refuses_a_platform_without_sleep_states(tmp_path):
    from batsched_py.cli import main
    plain = tmp_path / "plain.xml"
    assert main(["platform", "cluster", "-n", "140", "--no-energy", str(plain)]) == 0
    with pytest.raises(PolicyOptionError, match="needs hosts with sleep pstates"):
        run_simulation(plain, [ELASTIC_WORKLOAD], ElasticAgent({"policy": "FCFS"}), export=str(tmp_path / "o"))
