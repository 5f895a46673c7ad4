"""Perez et al.'s SARSA agent on Elastic-v0: the echo state network, a short learning run that
beats random choices, deployment as the ``elastic-agent`` scheduler, and bad model files."""
import json

import gymnasium as gym
import numpy as np
import pytest

import batsched_py.envs  # noqa: F401
from batsched_py.agents.elastic import Reservoir, SarsaAgent, run_episode
from batsched_py.cli import main
from batsched_py.runner import run_simulation

from helpers.rl import ELASTIC_PLATFORM, ELASTIC_WORKLOAD


def make(**kw):
    return gym.make("batsched_py/Elastic-v0", platform=str(ELASTIC_PLATFORM), workloads=[str(ELASTIC_WORKLOAD)],
                    skip=100, **kw)


def test_the_reservoir_is_the_papers():
    esn = Reservoir(10, "esn", seed=1)
    assert esn.w.shape == (100, 100)
    assert 0.08 < np.count_nonzero(esn.w) / esn.w.size < 0.12             # 10% connectivity
    assert max(abs(np.linalg.eigvals(esn.w))) == pytest.approx(0.9)
    u = np.linspace(0, 1, 10)
    first, second = esn.features(u), esn.features(u)
    assert np.all((first[:100] > 0) & (first[:100] < 1))                  # sigmoid neurons
    assert not np.allclose(first, second)                                  # a memory of earlier inputs
    ff = Reservoir(10, "ff", seed=1)
    assert np.allclose(ff.features(u), ff.features(u))                      # none without recurrence


def test_a_short_learning_run_beats_random_choices():
    """One EDF pre-training episode on 60 cores, then greedy: less interactive delay and more reward
    than uniformly random classes on the same jobs."""
    env = make(pool=60)
    env.action_space.seed(0)
    obs, _ = env.reset(seed=5)
    rewards, done = [], False
    while not done:
        obs, r, term, trunc, rand = env.step(env.action_space.sample())
        rewards.append(r)
        done = term or trunc
    agent = SarsaAgent(env.observation_space.shape[0], 8, seed=0)
    run_episode(env, agent, seed=0, teacher="EDF", epsilon=0.2)
    agent.refit_all()
    agent.learning = False
    learnt = run_episode(env, agent, seed=5, explore=False)
    assert learnt["mean_reward"] > np.mean(rewards)
    assert learnt["interactive_delay"] < 0.75 * rand["interactive_delay"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """An agent trained a little (a quarter of the window) in mode scheduling, saved."""
    env = make(max_time=100_000)
    agent = SarsaAgent(env.observation_space.shape[0], 8, seed=0)
    run_episode(env, agent, seed=0, teacher="EDF", epsilon=0.2)
    agent.refit_all()
    path = tmp_path_factory.mktemp("agent") / "sarsa.npz"
    agent.save(path)
    return path


def test_a_saved_agent_schedules_through_run_as_in_the_environment(saved, tmp_path):
    agent = SarsaAgent.load(saved)
    env = make(output_prefix=str(tmp_path / "env"))
    run_episode(env, agent, seed=0, explore=False)
    env.close()
    options = {"policy": str(saved), "runtimes": "oracle", "workload": str(ELASTIC_WORKLOAD),
               "vos": env.unwrapped.options["vos"]}
    run_simulation(ELASTIC_PLATFORM, [ELASTIC_WORKLOAD], "elastic-agent", options, export=str(tmp_path / "run"),
                   energy=True)
    assert (tmp_path / "env_jobs.csv").read_text() == (tmp_path / "run_jobs.csv").read_text()


def test_a_served_agent_decides_as_in_process(saved, tmp_path, batsim_process):
    """The saved agent through ``serve`` (ZeroMQ, a Batsim process: batsched-py emulate, then a real
    Batsim 4.2.1 where there is one) and in process: the same schedule and the same machine states
    (the elastic pool's switching)."""
    options = {"policy": str(saved), "mode": "scheduling", "runtimes": "oracle", "workload": str(ELASTIC_WORKLOAD)}
    outputs = {}
    for backend in ("emulator", "batsim"):
        prefix = run_simulation(ELASTIC_PLATFORM, [ELASTIC_WORKLOAD], "elastic-agent", options,
                                export=str(tmp_path / backend), energy=True, backend=backend)
        outputs[backend] = [(tmp_path / f"{backend}_{kind}.csv").read_text() for kind in ("jobs", "machine_states")]
        assert str(prefix).endswith(backend)
    assert outputs["emulator"] == outputs["batsim"]


@pytest.mark.parametrize("config,message", [
    ({"mode": "elastic"}, "trained for (observation size, classes, elastic) = (27, 8, False); this scheduler has "
                          "(27, 8, True)"),
    ({"nb_vos": 3}, "options nb_vos and mode must be those of training"),
])
def test_a_saved_agent_refuses_another_setting(saved, tmp_path, capsys, config, message):
    code = main(["run", "-p", str(ELASTIC_PLATFORM), "-w", str(ELASTIC_WORKLOAD), "-E", "--scheduler",
                 "elastic-agent", "--config", json.dumps({"policy": str(saved), **config}), "-e", str(tmp_path / "o")])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and message in last


@pytest.mark.parametrize("content,message", [
    (None, "no such file"),
    (b"not numpy", "not a SARSA agent saved by SarsaAgent.save"),
])
def test_bad_model_files_are_named(tmp_path, capsys, content, message):
    path = tmp_path / "bad.npz"
    if content is not None:
        path.write_bytes(content)
    code = main(["run", "-p", str(ELASTIC_PLATFORM), "-w", str(ELASTIC_WORKLOAD), "-E", "--scheduler",
                 "elastic-agent", "--config", json.dumps({"policy": str(path)}), "-e", str(tmp_path / "o")])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and f"model {path}: {message}" in last


def test_bad_learning_parameters_are_named():
    with pytest.raises(ValueError, match=r"^epsilon: 2 is not a number in \[0, 1\]$"):
        SarsaAgent(5, 2, epsilon=2)
    with pytest.raises(ValueError, match=r"^approximator 'lstm': choose one of esn, ff$"):
        SarsaAgent(5, 2, kind="lstm")
