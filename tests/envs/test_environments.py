"""The Gymnasium environments: the Gymnasium contract, seeding, vectorisation, both backends, and
one semantics with the schedulers that run through ``run``."""
import csv
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import batsched_py.envs  # noqa: F401  (registers the environments)
from batsched_py.envs import EnvError
from batsched_py.policies.agent import ActionError
from batsched_py.agents.deepscheduling.baselines import BASELINES as SCHEDULING_BASELINES
from batsched_py.agents.deepshutdown.baselines import BASELINES as SHUTDOWN_BASELINES
from batsched_py.runner import run_simulation

from helpers.rl import DAY, PLATFORM, TEST, TRAIN

NAMES = ("Shutdown", "Scheduling")


def make(name, **kw):
    kw.setdefault("workloads", [TRAIN])
    return gym.make(f"batsched_py/{name}-v0", platform=str(PLATFORM), **kw)


def rollout(env, actions, seed=0, options=None):
    """Observations and rewards of ``actions`` (a callable step -> action) from reset(seed)."""
    obs, info = env.reset(seed=seed, options=options)
    trace = [obs]
    rewards = []
    for i in range(10_000):
        obs, r, term, trunc, info = env.step(actions(i))
        trace.append(obs)
        rewards.append(r)
        if term or trunc:
            break
    return trace, rewards, info


def play(env, policy, seed=0):
    """A whole episode of a bound policy (a baseline reads the scheduler); (terminated, truncated, info)."""
    obs, info = env.reset(seed=seed)
    policy.bind(env.unwrapped.scheduler)
    term = trunc = False
    while not (term or trunc):
        obs, r, term, trunc, info = env.step(policy(obs))
    return term, trunc, info


def same_observations(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, dict):
            assert x.keys() == y.keys()
            for k in x:
                np.testing.assert_array_equal(x[k], y[k])
        else:
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", NAMES)
def test_check_env(name):
    env = make(name)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_shutdown_spaces_and_a_day_of_steps():
    env = make("Shutdown", workloads=[DAY])
    assert env.action_space == gym.spaces.Discrete(14 + 1)        # 168 hosts in nodes of 12
    assert env.observation_space.shape == (20, 5 + 1 + 1 + 1 + 2 + 14 * 2 + 5 * 10 + 1)
    trace, rewards, info = rollout(env, lambda i: 3)
    assert len(rewards) == 1440                                   # one step per minute, one day
    assert info["time"] == pytest.approx(1440.0 + 3.0, abs=0.01)  # (after a 3-minute warm-up: every node off)
    assert all(r <= 0 for r in rewards)
    for key in ("energy_waste", "nb_switches", "delay", "stretch", "slowdown", "waiting_time"):
        assert key in info
    # the waste is the idle and switching hosts' energy (W.min): what the time in states says
    assert info["energy_waste"] > 0 and info["nb_switches"] >= 3
    env.close()


def test_scheduling_runs_until_the_jobs_are_done():
    env = make("Scheduling", workloads=[DAY])
    assert env.action_space == gym.spaces.Discrete(21)
    term, trunc, _ = play(env, SCHEDULING_BASELINES["FF"]())
    assert term and not trunc
    s = env.unwrapped.scheduler
    assert not s.queue and not s.jobs.running and len(s.jobs.finished) == 23
    env.close()


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_episode(name):
    env = make(name)
    rng = np.random.default_rng(5)
    actions = rng.integers(0, env.action_space.n, 3000)
    a = rollout(env, lambda i: actions[i], seed=3)
    b = rollout(env, lambda i: actions[i], seed=3)
    same_observations(a[0], b[0])
    assert a[1] == b[1]
    workloads = {env.reset(seed=s)[1]["workload"] for s in range(12)}
    assert len(workloads) > 1                    # the seed draws the day
    env.close()


def test_reset_picks_the_workload_asked_for():
    env = make("Shutdown")
    _, info = env.reset(seed=0, options={"workload": str(DAY)})
    assert info["workload"] == str(DAY)
    with pytest.raises(EnvError, match="nope.json is not a workload file"):
        env.reset(options={"workload": "nope.json"})


@pytest.mark.parametrize("name", NAMES)
def test_emulator_and_batsim_backends_agree(name, batsim_process):
    """The same seed and actions over a whole day give the same observations, rewards and final
    figures with the emulator in this process and with a Batsim process over ZeroMQ (``batsched-py
    emulate``, then a real Batsim 4.2.1 where $BATSCHED_PY_BATSIM names one)."""
    rng = np.random.default_rng(1)
    actions = rng.integers(0, 21 if name == "Scheduling" else 15, 3000)
    runs = []
    for backend in ("emulator", "batsim"):
        env = make(name, workloads=[DAY], backend=backend)
        runs.append(rollout(env, lambda i: actions[i], seed=0))
        env.close()
    same_observations(runs[0][0], runs[1][0])
    assert runs[0][1] == runs[1][1]
    for key in ("energy_waste", "nb_switches", "waiting_time", "time"):
        assert runs[0][2][key] == runs[1][2][key], key


def test_vector_envs():
    from gymnasium.vector import AsyncVectorEnv
    fns = [lambda: make("Shutdown", workloads=[DAY]) for _ in range(2)]
    venv = AsyncVectorEnv(fns)
    obs, _ = venv.reset(seed=1)
    assert obs.shape == (2, 20, 89)
    for _ in range(5):
        obs, r, term, trunc, _ = venv.step(np.array([1, 2]))
    assert r.shape == (2,)
    venv.close()


def test_sixteen_sb3_subprocess_envs():
    from stable_baselines3.common.vec_env import SubprocVecEnv
    venv = SubprocVecEnv([lambda: make("Scheduling") for _ in range(16)], start_method="fork")
    venv.seed(0)
    obs = venv.reset()
    assert obs["queue"].shape == (16, 20, 3)
    for _ in range(20):
        obs, r, done, info = venv.step(np.zeros(16, dtype=int))
    assert r.shape == (16,)
    venv.close()


def read_jobs(prefix):
    with open(f"{prefix}_jobs.csv") as f:
        rows = list(csv.DictReader(f))
    return [{k: v for k, v in r.items() if k not in ("consumed_energy",)} for r in rows]


def test_a_policy_in_the_environment_schedules_as_through_run(tmp_path):
    """Scheduling-v0 with the SAF baseline gives the jobs.csv of ``run --scheduler scheduling-agent``
    (on the day the environment simulates: shifted by its warm-up, every node switched off first)."""
    env = make("Scheduling", workloads=[DAY], output_prefix=str(tmp_path / "env"))
    play(env, SCHEDULING_BASELINES["SAF"]())
    env.close()
    day, warmup = env.unwrapped.simulated_workload(DAY), env.unwrapped.warmup
    assert warmup > 0
    run_simulation(PLATFORM, [day], "scheduling-agent", {"policy": "SAF", "day_start": warmup},
                   export=str(tmp_path / "run"), energy=True)
    assert read_jobs(tmp_path / "env") == read_jobs(tmp_path / "run")


def test_shutdown_decisions_are_the_same_in_the_environment_and_through_run(tmp_path):
    """Shutdown-v0 with T5: the same observations and actions at the same times as the scheduler
    ``shutdown-agent`` that ``run`` drives, over the day."""
    seen = []

    class Logged:
        def __init__(self):
            self.inner = SHUTDOWN_BASELINES["T5"]()

        def bind(self, scheduler):
            self.scheduler = scheduler
            self.inner.bind(scheduler)

        def __call__(self, obs):
            action = self.inner(obs)
            seen.append((self.scheduler.now, action, obs.tobytes()))
            return action

    play(make("Shutdown", workloads=[DAY]), Logged())
    in_env, seen[:] = list(seen), []
    import batsched_py.agents.deepshutdown.mdp as sd
    from batsched_py.agents.deepshutdown.scheduler import ShutdownAgent
    from batsched_py.scheduler import registry
    from batsched_py.envs.warmup import shifted_workload
    sched = sd.ShutdownScheduler({"day_start": 3.0})       # (the environment's warm-up: its day shifted)
    sched.policy = Logged()
    run_simulation(PLATFORM, [str(shifted_workload(Path(DAY), 3.0, tmp_path))], sched,
                   export=str(tmp_path / "run"), energy=True)
    assert registry.available()["shutdown-agent"] is ShutdownAgent
    assert seen[:len(in_env)] == in_env and len(in_env) == 1440


@pytest.mark.parametrize("name,action,message", [
    ("Shutdown", 15, r"action 15 is outside Discrete\(15\): choose 0..14"),
    ("Shutdown", -1, r"action -1 is outside Discrete\(15\)"),
    ("Shutdown", "x", r"action 'x' is not an integer in Discrete\(15\)"),
    ("Scheduling", 21, r"action 21 is outside Discrete\(21\): choose 0..20"),
    ("Scheduling", 2.5, r"action 2.5 is not an integer"),
])
def test_bad_actions_are_named(name, action, message):
    env = make(name, workloads=[DAY])
    env.reset(seed=0)
    with pytest.raises(ActionError, match=message):
        env.step(action)


@pytest.mark.parametrize("name,bad", [("Shutdown", 15), ("Shutdown", "x"), ("Scheduling", 21), ("Scheduling", 0.5)])
def test_a_refused_action_changes_nothing_and_the_episode_goes_on(name, bad):
    actions = [3, 0, 5, 1, 2, 0, 7, 4, 1, 1, 6, 0]
    want, want_rewards, _ = rollout(make(name, workloads=[DAY]), lambda i: actions[i % len(actions)])
    env = make(name, workloads=[DAY])

    def refused_then(i):
        if i < 40:
            # the env wrappers' checks are off: the scheduler itself refuses, before any change
            with pytest.raises(ActionError, match=f"action {bad!r}"):
                env.step(bad)
        return actions[i % len(actions)]

    got, rewards, _ = rollout(env, refused_then)
    same_observations(got, want)
    assert rewards == want_rewards


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(EnvError, match="backend 'k8s': choose one of emulator, batsim, docker"):
        make("Shutdown", backend="k8s")
    with pytest.raises(EnvError, match="workloads: .*missing is neither a workload file nor a folder"):
        make("Shutdown", workloads=[tmp_path / "missing"])
    with pytest.raises(EnvError, match=r"workloads: folder .* holds no \*.json workload"):
        make("Shutdown", workloads=[tmp_path])
    with pytest.raises(EnvError, match="platform: .*nowhere.xml is not a file"):
        gym.make("batsched_py/Shutdown-v0", platform=str(tmp_path / "nowhere.xml"), workloads=[DAY])
    with pytest.raises(EnvError, match="cores_per_node: 0 is not a positive integer"):
        make("Shutdown", cores_per_node=0)
    with pytest.raises(EnvError, match="option history: -3 is not a positive integer"):
        make("Shutdown", history=-3)
    with pytest.raises(EnvError, match="dt: 0 is not a positive number"):
        make("Shutdown", dt=0)
    bad = tmp_path / "bad.xml"
    bad.write_text("<platform version='4.1'><zone")
    with pytest.raises(EnvError, match="platform: "):
        gym.make("batsched_py/Shutdown-v0", platform=str(bad), workloads=[DAY])
    env = make("Shutdown", workloads=[DAY]).unwrapped     # (gym.make's wrapper says it first)
    with pytest.raises(EnvError, match=r"step\(\) after the episode ended \(or before reset\(\)\)"):
        env.step(0)


def test_a_platform_without_sleep_states_is_named(tmp_path):
    from batsched_py.cli import main
    plain = tmp_path / "plain.xml"
    assert main(["platform", "cluster", "-n", "24", "--no-energy", str(plain)]) == 0
    awake = tmp_path / "awake.xml"      # an energy model, but no sleep_pstates
    awake.write_text(PLATFORM.read_text().replace('<prop id="sleep_pstates" value="0:3:2" />', ""))
    for name in NAMES:
        with pytest.raises(EnvError, match="plain.xml: host 'master_host': no wattage_per_state property"):
            gym.make(f"batsched_py/{name}-v0", platform=str(plain), workloads=[DAY])
        with pytest.raises(EnvError, match=r"awake.xml: the environments need hosts with sleep pstates .*168 "
                                           r"host\(s\) have none, e.g. 0"):
            gym.make(f"batsched_py/{name}-v0", platform=str(awake), workloads=[DAY])
    # and the schedulers, run without an environment, say the same
    from batsched_py.emulator import simulate
    from batsched_py.policies.options import PolicyOptionError
    with pytest.raises(PolicyOptionError, match="needs hosts with sleep pstates"):
        simulate(awake, [DAY], ShutdownAgentWithT5(), energy=True)


def ShutdownAgentWithT5():
    from batsched_py.scheduler import create
    return create("shutdown-agent", {"policy": "T5"})


def test_test_days_are_left_for_evaluation():
    # (a guard for the data shipped with the repository: no test day among the training days)
    assert not {p.name for p in TRAIN.glob("*.json")} & {p.name for p in TEST.glob("*.json")}
