"""Allocation-v0: spaces, the lockstep reward against the baseline, J=2, the predictor backend, errors."""
import json
from functools import partial

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import batsched_py.envs  # noqa: F401
from batsched_py.agents.allocation.cluster import ALLOCATORS
from batsched_py.agents.allocation.cluster_jobs import Jobs, JobsError, load_jobs
from batsched_py.agents.allocation.predictor import (PredictorError, load_predictor, record_telemetry,
                                                     save_predictor, train_predictor)
from batsched_py.emulator import EmulatorError
from batsched_py.envs import EnvError
from batsched_py.policies.agent import ActionError


def busy_jobs(n=300, seed=0, days=1.0):
    rng = np.random.default_rng(seed)
    return Jobs(np.sort(rng.uniform(0, days * 86400, n)), rng.integers(1, 7, n), rng.uniform(600, 3000, n))


def make(**kw):
    return gym.make("batsched_py/Allocation-v0", **{"jobs": busy_jobs(), "nb_processors": 4, **kw}).unwrapped


def play(env, choose):
    obs, _ = env.reset(options={"start": 0})
    total, done = 0.0, False
    while not done:
        obs, reward, done, _, info = env.step(choose(env, obs))
        total += reward
    return total, info


def test_check_env_and_spaces():
    env = make()
    check_env(env, skip_render_check=True)
    assert env.observation_space.shape == (4 * 4 + 1,) and env.action_space.n == 4
    assert make(J=2).action_space.n == 16


@pytest.mark.parametrize("bad,message", [(4, r"action 4 is outside Discrete\(4\): choose 0..3"),
                                         ([1, 2], r"action \[1, 2\] is not an integer in Discrete\(4\)")])
def test_a_refused_action_is_named_and_the_episode_goes_on(bad, message):
    def first_steps(refuse):
        env = make()
        env.reset(options={"start": 0})
        out = []
        for a in (0, 3, 1, 1, 2):
            if refuse:
                with pytest.raises(ActionError, match=message):
                    env.step(bad)
            obs, r, *_ = env.step(a)
            out.append((obs.tolist(), r))
        return out

    assert first_steps(True) == first_steps(False)


def test_the_baseline_itself_earns_nothing_and_consolidation_earns_power_and_degrees():
    rr, info = play(make(), lambda env, obs: ALLOCATORS["round_robin"](env.agent, env.agent.head_cores()))
    assert rr == pytest.approx(0, abs=1e-6)
    assert info["agent_power_W"] == pytest.approx(info["baseline_power_W"])
    greedy, info = play(make(), lambda env, obs: ALLOCATORS["greedy"](env.agent, env.agent.head_cores()))
    assert greedy > 0
    assert info["agent_power_W"] < info["baseline_power_W"]
    assert info["agent_temperature_C"] < info["baseline_temperature_C"]
    # against greedy consolidation, round robin loses
    rr_vs_greedy, _ = play(make(baseline="greedy"),
                           lambda env, obs: ALLOCATORS["round_robin"](env.agent, env.agent.head_cores()))
    assert rr_vs_greedy < 0


def test_interval_rewards_add_up_to_eq_3_1_over_time_and_a_burst_earns_nothing():
    greedy = lambda env, obs: ALLOCATORS["greedy"](env.agent, env.agent.head_cores())   # noqa: E731
    pairs, rewards = busy_jobs(150), {}
    for alpha in (0.0, 2.0):         # (jobs submitted two by two: half the decisions take no time)
        env = make(alpha=alpha, reward="interval",
                   jobs=Jobs(np.repeat(pairs.submit, 2), np.repeat(pairs.cores, 2), np.repeat(pairs.runtime, 2)))
        obs, _ = env.reset(options={"start": 0})
        rewards[alpha], times, done = [], [], False
        while not done:
            times.append(env.agent.now)
            obs, reward, done, _, info = env.step(greedy(env, obs))
            rewards[alpha].append(reward)
        times.append(env.agent.now)
    # the temperature term: alpha x (degrees cooler, averaged over time) x the episode in 10-minute steps
    cooler = info["baseline_temperature_C"] - info["agent_temperature_C"]
    assert sum(rewards[2.0]) - sum(rewards[0.0]) == pytest.approx(2.0 * cooler * env.agent.now / 600, rel=1e-6)
    assert cooler > 0
    burst = np.diff(times) == 0                # decisions in the same second
    assert burst.any() and not np.asarray(rewards[0.0])[burst].any()
    assert sum(rewards[0.0]) > 0               # greedy saves power against round robin
    with pytest.raises(EnvError, match="reward 'x'"):
        make(reward="x")


def test_two_head_jobs_per_decision_and_the_fallback_for_a_full_processor():
    pairs = busy_jobs(200)
    # jobs arriving two by two: the agent places both at one decision
    env = make(J=2, jobs=Jobs(np.repeat(pairs.submit, 2), np.repeat(pairs.cores, 2), np.repeat(pairs.runtime, 2)))
    obs, _ = env.reset(options={"start": 0})
    steps, done = 0, False
    while not done:
        obs, _, done, _, _ = env.step(0)        # both on processor 0: the second falls back when it is full
        steps += 1
        assert (env.agent.free >= 0).all()
    assert steps < 400                        # decisions that placed two jobs
    assert np.isfinite(env.agent.wait).all()


def test_bad_arguments_and_jobs_too_big_for_a_processor(tmp_path):
    for kw, words in [({"J": 3}, "J: 3"), ({"baseline": "fifo"}, "baseline 'fifo'"),
                      ({"backend": "x"}, "backend 'x'"), ({"nb_processors": 0}, "nb_processors"),
                      ({"alpha": -1}, "alpha"), ({"thermal": {"leakage_modle": "x"}}, "thermal: 'leakage_modle'"),
                      ({"thermal": {"cores": 12}}, "thermal: 'cores'")]:
        with pytest.raises(EnvError, match=words):
            make(**kw)
    with pytest.raises(EmulatorError, match="leakage_model 'cubic'"):
        make(thermal={"leakage_model": "cubic"})
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 48, "profiles": {"d": {"type": "delay", "delay": 10}},
                                    "jobs": [{"id": "7", "subtime": 0, "res": 30, "profile": "d"}]}))
    with pytest.raises(JobsError, match="job 7 asks for 30 cores; a processor has 24"):
        load_jobs(workload, 24)
    with pytest.raises(JobsError, match="is not a file"):
        load_jobs(tmp_path / "none.swf", 24)


def test_predictor_backend_and_its_file_errors(tmp_path):
    telemetry = record_telemetry(busy_jobs(days=0.5), 4)
    saved, _ = train_predictor(telemetry, "tandem", l=3, hidden=8, epochs=1)
    path = tmp_path / "p.pt"
    save_predictor(saved, path)
    env = make(backend="predictor", predictor=partial(load_predictor, str(path)))
    check_env(env, skip_render_check=True)
    start = env.reset(options={"start": 0})[0]
    _, info = play(env, lambda env, obs: 0)
    # (a one-epoch predictor is poor: only that it drives the state, and the run completes)
    assert np.isfinite(list(info.values())).all()
    assert not np.allclose(env.agent.model.temperature, start[1::4][:4] * 100)
    with pytest.raises(EnvError, match="needs predictor"):
        make(backend="predictor")
    with pytest.raises(EnvError, match="is not callable"):
        make(backend="predictor", predictor=str(path))
    with pytest.raises(PredictorError, match="no such file"):
        make(backend="predictor", predictor=partial(load_predictor, str(tmp_path / "missing.pt")))
    with pytest.raises(PredictorError, match="trained on processors of 24 cores, these have 12"):
        make(backend="predictor", predictor=partial(load_predictor, str(path)), cores=12, jobs=busy_jobs())
    with pytest.raises(PredictorError, match="trained on telemetry of the linear leakage model, this model has "
                                             "exponential leakage"):
        make(backend="predictor", predictor=partial(load_predictor, str(path)), thermal={"leakage_model": "exponential"})
    (tmp_path / "junk.pt").write_text("not torch")
    with pytest.raises(PredictorError, match="not a saved predictor"):
        make(backend="predictor", predictor=partial(load_predictor, str(tmp_path / "junk.pt")))


def test_the_fallback_takes_the_coolest_processor_with_room_when_the_choice_would_overheat():
    from batsched_py.agents.allocation.cluster import Cluster, guarded
    cluster = Cluster(busy_jobs(), 4)
    model = cluster.model                      # racks at 18, 21, 24, 27 C
    fits = np.array([True, True, True, True])
    assert guarded(model, fits, 3, 24, limit=200.0) == 3
    assert guarded(model, fits, 3, 24, limit=60.0) == 0          # 24 cores at 27 C settle above 60 C
    assert guarded(model, np.array([False, True, True, True]), 3, 24, limit=60.0) == 1
    assert guarded(model, fits, 9, 1, limit=200.0) == 0          # no such processor: the coolest


def test_spare_cores_in_the_state_are_those_that_do_not_overheat():
    from batsched_py.agents.allocation.cluster import Cluster, observation, overheats, room
    cluster = Cluster(busy_jobs(), 4)                 # racks at 18, 21, 24, 27 C, all idle
    model = cluster.model
    spare = room(model, 60.0)
    assert spare[0] > spare[3] and spare[0] < 24       # at 60 C even the coolest rack cannot be filled
    for p in range(4):
        assert not overheats(model, p, int(spare[p]), 60.0) and overheats(model, p, int(spare[p]) + 1, 60.0)
    assert (room(model, 200.0) == 24).all()
    assert np.allclose(observation(model, [3], 60.0)[3::4][:4], spare / 24)


def test_under_exponential_leakage_consolidation_still_earns_and_full_processors_have_less_room():
    from batsched_py.agents.allocation.cluster import room
    exponential = make(thermal={"leakage_model": "exponential"})
    check_env(exponential, skip_render_check=True)
    total, info = play(exponential, lambda env, obs: ALLOCATORS["greedy"](env.agent, env.agent.head_cores()))
    assert total > 0 and info["agent_power_W"] < info["baseline_power_W"]
    linear = make()
    for env in (linear, exponential):
        env.reset(options={"start": 0})
    # at 85 C: a full processor of the warmest rack settles at 88.6 C (linear) or 94.1 C (exponential)
    cool, warm = room(exponential.agent.model, 85.0), room(linear.agent.model, 85.0)
    assert (cool <= warm).all() and cool[3] < warm[3]
