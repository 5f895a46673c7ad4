"""The same guarantees on a real local Ray (2 CPUs, loopback): campaign results byte-identical to
sequential runs, a killed worker retried, interrupts; RayVecEnv steps as DummyVecEnv; sweeps."""
import os
import signal
import time

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'batsched_py[ray]')")

from batsched_py.campaigns.campaign import run_campaign  # noqa: E402
from batsched_py.campaigns.executor import RayExecutor, Task  # noqa: E402
from batsched_py.interrupts import signals_interrupt  # noqa: E402
from batsched_py.campaigns.spec import load_campaign  # noqa: E402

from helpers.processes import alive, wait_until  # noqa: E402

from helpers.campaign import (REPO, always_die, cartpole_score, die_once, interrupt_once_started,  # noqa: E402
                              sequential_files, sleep_and_record, square, tree_bytes, write_campaign)


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    if ray.is_initialized():
        ray.shutdown()
    # Workers import this checkout's batsched_py and the tests' helpers.
    path = os.pathsep.join([str(REPO), str(REPO / "tests")])
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield
    ray.shutdown()


def test_a_campaign_on_ray_matches_sequential_runs_byte_for_byte(tmp_path):
    campaign = load_campaign(write_campaign(tmp_path))
    report = run_campaign(campaign, RayExecutor(), show_progress=False)
    assert len(report.done) == 8 and not report.failed
    assert tree_bytes(campaign.output / "runs") == sequential_files(campaign)


def test_a_killed_worker_loses_nothing_and_a_failing_task_is_reported(tmp_path):
    tasks = [Task("t1", square, (1,)), Task("dies-once", die_once, (str(tmp_path / "marker"),)),
             Task("t2", square, (2,)), Task("t3", square, (3,))]
    outcomes = {o.name: o for o in RayExecutor(max_retries=1).run(tasks)}
    assert (tmp_path / "marker").is_file()          # the worker really was killed once
    assert outcomes["dies-once"].value == "survived"
    assert (outcomes["t1"].value, outcomes["t3"].value) == (1, 9)
    assert outcomes["t2"].error == "ValueError: two is refused"


def test_a_task_whose_worker_always_dies_is_reported_by_name():
    outcomes = {o.name: o for o in RayExecutor(max_retries=1).run([Task("killer", always_die), Task("t3", square, (3,))])}
    assert outcomes["killer"].error.startswith("its worker died 2 times (")
    assert outcomes["t3"].value == 9


def test_interrupt_cancels_running_tasks_and_starts_no_more(tmp_path):
    tasks = [Task(f"slow{i}", sleep_and_record, (str(tmp_path), f"slow{i}", 60)) for i in range(4)]
    sent = interrupt_once_started(tmp_path, 2, signal.SIGTERM)        # both CPUs busy, two tasks queued
    with pytest.raises(KeyboardInterrupt) as raised, signals_interrupt():
        list(RayExecutor().run(tasks))
    # ray.wait turned the handler's exception into a bare KeyboardInterrupt: told as SIGINT, status 130
    assert getattr(raised.value, "signal", None) == "SIGTERM"
    interrupted = time.monotonic()
    assert interrupted - sent["at"] < 15, "the interrupt did not end the campaign promptly"   # (tasks sleep 60 s)
    records = sorted(p.name for p in tmp_path.iterdir())
    assert records == ["started-slow0", "started-slow1"]
    for record in records:
        pid = int((tmp_path / record).read_text())
        while alive(pid) and time.monotonic() < interrupted + 10:
            time.sleep(0.1)
        assert not alive(pid), f"{record}: its worker still runs"
    time.sleep(2)   # a queued task would have started by now on a freed CPU
    assert sorted(p.name for p in tmp_path.iterdir()) == records


def test_ray_vec_env_steps_exactly_as_dummy_vec_env():
    gym = pytest.importorskip("gymnasium")
    np = pytest.importorskip("numpy")
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import DummyVecEnv
    from batsched_py.campaigns.ray_vec_env import RayVecEnv
    fns = [lambda: gym.make("CartPole-v1") for _ in range(2)]
    ours, reference = RayVecEnv(fns), DummyVecEnv(fns)
    try:
        for venv in (ours, reference):
            venv.seed(7)
        obs, expected = ours.reset(), reference.reset()
        np.testing.assert_array_equal(obs, expected)
        episodes_ended = 0
        for step in range(60):
            actions = np.array([step % 2, (step // 3) % 2])
            got, want = ours.step(actions), reference.step(actions)
            for a, b in zip(got[:3], want[:3]):
                np.testing.assert_array_equal(a, b)
            for info_a, info_b in zip(got[3], want[3]):
                assert info_a.keys() == info_b.keys()
                if "terminal_observation" in info_b:
                    episodes_ended += 1
                    np.testing.assert_array_equal(info_a["terminal_observation"], info_b["terminal_observation"])
        assert episodes_ended >= 2        # auto-reset inside the actors was exercised
        assert ours.get_attr("spec")[0].id == "CartPole-v1" and ours.env_is_wrapped(gym.Wrapper) == [True, True]
    finally:
        ours.close()
        reference.close()


def test_a_ray_vec_env_whose_step_raised_closes_and_kills_its_actors():
    """The error of a step stayed pending: close() (in a training's `finally`) raised it again
    and never killed the actors."""
    gym = pytest.importorskip("gymnasium")
    np = pytest.importorskip("numpy")
    from batsched_py.campaigns.ray_vec_env import RayVecEnv
    venv = RayVecEnv([lambda: gym.make("CartPole-v1") for _ in range(2)])
    venv.reset()
    with pytest.raises(AssertionError):     # CartPole refuses an action outside its space
        venv.step(np.array([0, 5]))
    ray.kill(venv.actors[0])                # and an actor that died: close() raised RayActorError
    venv.close()
    # ray.kill only asks Ray to kill: a call sent at once may still reach the actor first (it did on
    # a busy machine), so each actor is asked until it is found dead
    for actor in venv.actors:
        assert wait_until(lambda: _dead(actor), 180), f"{actor}: still alive 180 s after close()"


def _dead(actor) -> bool:
    try:
        ray.get(actor.spaces.remote(), timeout=60)
    except ray.exceptions.RayActorError:
        return True
    except ray.exceptions.GetTimeoutError:
        pass
    return False


def test_a_sweep_of_two_settings_returns_two_rows_in_grid_order():
    pytest.importorskip("gymnasium")
    from batsched_py.campaigns.sweep import run_sweep
    rows = run_sweep(cartpole_score, {"gain": [1.0, -1.0], "episodes": [3]})
    assert [(r["gain"], r["status"], r["error"]) for r in rows] == [(1.0, "done", ""), (-1.0, "done", "")]
    assert rows[0]["mean_length"] > rows[1]["mean_length"]   # pushing toward the fall ends sooner
    assert all(r["pid"] != os.getpid() for r in rows)


def test_compare_on_ray_writes_the_same_files_as_local_processes(tmp_path, capsys):
    """On a cluster address the inputs travel inside the tasks; the files come out the same."""
    from batsched_py.cli import main
    from helpers import GOLDEN
    inputs = GOLDEN / "fcfs_fast-e128-semantics-E" / "inputs"
    args = ["compare", "-p", str(inputs / "energy_platform_homogeneous_no_net_128.xml"), "-w",
            str(inputs / "semantics_8.json"), "-E", "--schedulers", 'easy,T0:timeout={"timeout":0}', "--no-plots"]
    assert main([*args, "-o", str(tmp_path / "local")]) == 0
    assert main([*args, "-o", str(tmp_path / "ray"), "--address", "auto"]) == 0   # the fixture's Ray
    assert "compare: 2 runs on Ray (auto, 2 CPUs)" in capsys.readouterr().err
    assert tree_bytes(tmp_path / "ray") == tree_bytes(tmp_path / "local")
    assert len(tree_bytes(tmp_path / "ray")) == 2 * 5 + 1     # two runs' files and comparison.csv
