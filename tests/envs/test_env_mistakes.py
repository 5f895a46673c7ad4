"""The environments under a user's mistakes: a misspelt reset option, a NaN reward weight, a step
after close() or a bare workload number are named EnvErrors (not ignored, NaN rewards, a bare
AssertionError or a TypeError); an episode the environment truncates leaves its Batsim outputs
marked incomplete for that reason, not for an 'unknown error'."""
import math

import gymnasium as gym
import numpy as np
import pytest

import batsched_py.envs  # noqa: F401
from batsched_py.agents.allocation.cluster_jobs import Jobs
from batsched_py.envs import EnvError

from helpers.rl import DAY, PLATFORM


def shutdown(**kw):
    return gym.make("batsched_py/Shutdown-v0", **{"platform": str(PLATFORM), "workloads": [str(DAY)], **kw}).unwrapped


def allocation():
    rng = np.random.default_rng(0)
    jobs = Jobs(np.sort(rng.uniform(0, 86400, 50)), rng.integers(1, 7, 50), rng.uniform(600, 3000, 50))
    return gym.make("batsched_py/Allocation-v0", jobs=jobs, nb_processors=4).unwrapped


@pytest.mark.parametrize("make,options,words", [
    (shutdown, {"workoad": str(DAY)}, ["'workoad'", "'workload'"]),
    (shutdown, [str(DAY)], ["not a dict"]),
    (allocation, {"strat": 0}, ["'strat'", "'start'"]),
    (allocation, {"start": "noon"}, ["start", "'noon'"]),
], ids=["shutdown-key", "shutdown-list", "allocation-key", "allocation-start"])
def test_bad_reset_options_are_named(make, options, words):
    env = make()
    with pytest.raises(EnvError) as err:
        env.reset(options=options)
    assert all(w in str(err.value) for w in words), err.value


@pytest.mark.parametrize("kw,words", [({"energy_weight": math.nan}, ["energy_weight", "nan"]),
                                      ({"qos_weight": "1"}, ["qos_weight", "'1'"]),
                                      ({"workloads": None}, ["workloads", "None"])],
                         ids=["nan-weight", "text-weight", "no-workloads"])
def test_bad_arguments_are_named_at_construction(kw, words):
    with pytest.raises(EnvError) as err:
        shutdown(**kw)
    assert all(w in str(err.value) for w in words), err.value


def test_a_nan_scheduling_reward_weight_is_named():
    with pytest.raises(EnvError, match="rho: nan is not a finite number"):
        gym.make("batsched_py/Scheduling-v0", platform=str(PLATFORM), workloads=[str(DAY)], rho=math.nan)


@pytest.mark.parametrize("kw,words", [({"alpha": math.nan}, ["alpha", "nan"]),
                                      ({"max_temperature": 0}, ["max_temperature", "0"])], ids=["alpha", "max-temp"])
def test_bad_allocation_numbers_are_named(kw, words):
    with pytest.raises(EnvError) as err:
        gym.make("batsched_py/Allocation-v0", jobs=allocation().jobs, nb_processors=4, **kw)
    assert all(w in str(err.value) for w in words), err.value


def test_a_step_after_close_is_named():
    env = shutdown()
    env.reset()
    env.close()
    with pytest.raises(EnvError, match="after the episode ended"):
        env.step(0)


def test_a_truncated_episode_marks_its_outputs_truncated(tmp_path):
    env = shutdown(day=3.0, output_prefix=str(tmp_path / "out"))
    env.reset()
    steps = [env.step(0) for _ in range(3)]
    assert steps[-1][3], "the third step should truncate the episode"
    env.close()
    marker = (tmp_path / "out_INCOMPLETE").read_text()
    assert "ended the episode" in marker and "unknown" not in marker, marker
    assert (tmp_path / "out_jobs.csv").is_file()


def test_a_peer_that_dies_ends_the_episode_and_later_steps_say_so(emulate_as_batsim):
    from batsched_py.launcher import LaunchError
    env = shutdown(backend="batsim")
    env.reset()
    env.step(0)
    env.backend.peer.proc.kill()
    with pytest.raises(LaunchError, match="SIGKILL"):
        for _ in range(100):
            env.step(0)
    with pytest.raises(EnvError, match="call reset"):
        env.step(0)
    env.reset()                               # (a new episode starts a new peer)
    assert not env.step(0)[2]
    env.close()


@pytest.mark.parametrize("path,why", [(PLATFORM, "line 1: is it an SWF trace?"),
                                      (DAY, "a delay profile of delay > 0")], ids=["platform", "json-without-delays"])
def test_allocation_jobs_of_the_wrong_kind_say_why_none_ran(path, why):
    from batsched_py.agents.allocation.cluster_jobs import JobsError
    with pytest.raises(JobsError, match="holds no job that ran") as err:
        gym.make("batsched_py/Allocation-v0", jobs=str(path), nb_processors=4)
    assert why in str(err.value), err.value
