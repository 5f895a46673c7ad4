"""LocalExecutor: every result back, failures reported by name, dead workers retried, and on
Ctrl-C or SIGTERM nothing new starts and running tasks stop."""
import os
import signal
import time

import pytest

from batsched_py.campaigns.executor import LocalExecutor, Task
from batsched_py.interrupts import signals_interrupt

from helpers.campaign import always_die, die_once, interrupt_once_started, sleep_and_record, square


def test_every_result_comes_back_and_a_failing_task_is_reported_by_name():
    outcomes = {o.name: o for o in LocalExecutor(2).run([Task(f"t{i}", square, (i,)) for i in range(5)])}
    assert {n: o.value for n, o in outcomes.items() if o.ok} == {"t0": 0, "t1": 1, "t3": 9, "t4": 16}
    assert outcomes["t2"].error == "ValueError: two is refused"


def test_a_task_whose_worker_dies_is_retried_and_the_others_are_kept(tmp_path):
    tasks = [Task("dies-once", die_once, (str(tmp_path / "marker"),))] + [Task(f"t{i}", square, (i,)) for i in (3, 4)]
    outcomes = {o.name: o for o in LocalExecutor(2, max_retries=1).run(tasks)}
    assert outcomes["dies-once"].value == "survived" and outcomes["dies-once"].attempts == 2
    assert (outcomes["t3"].value, outcomes["t4"].value) == (9, 16)


def test_a_task_whose_worker_always_dies_is_reported_after_the_retries():
    tasks = [Task("killer", always_die), Task("t3", square, (3,))]
    outcomes = {o.name: o for o in LocalExecutor(2, max_retries=2).run(tasks)}
    assert outcomes["killer"].error == "its worker process died 3 times (killed by SIGKILL)"
    assert outcomes["t3"].value == 9


def test_duplicate_task_names_are_refused():
    with pytest.raises(ValueError, match="repeated: a"):
        list(LocalExecutor(1).run([Task("a", square, (1,)), Task("a", square, (3,))]))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_stops_running_tasks_starts_no_more_and_keeps_finished_ones(tmp_path, signum):
    tasks = [Task("quick", sleep_and_record, (str(tmp_path), "quick", 0))]
    tasks += [Task(f"slow{i}", sleep_and_record, (str(tmp_path), f"slow{i}", 60)) for i in range(4)]
    finished = []
    sent = interrupt_once_started(tmp_path, 3, signum)     # quick, then two slow ones on the two workers
    with pytest.raises(KeyboardInterrupt), signals_interrupt():
        for outcome in LocalExecutor(2).run(tasks):
            finished.append(outcome.name)
    assert time.monotonic() - sent["at"] < 10, "the workers were not stopped promptly"   # (they sleep 60 s)
    assert finished == ["quick"]
    # quick, then two slow ones on the two workers; the other two never started
    assert sorted(p.name for p in tmp_path.iterdir()) == ["started-quick", "started-slow0", "started-slow1"]
    for name in ("slow0", "slow1"):
        pid = int((tmp_path / f"started-{name}").read_text())
        with pytest.raises(ProcessLookupError):   # stopped and reaped
            os.kill(pid, 0)


def test_a_task_that_cannot_be_pickled_is_reported_and_the_others_run():
    outcomes = {o.name: o for o in LocalExecutor(1).run([Task("lambda", lambda: 1), Task("t3", square, (3,))])}
    assert outcomes["lambda"].error.startswith("it cannot be sent to a worker (")
    assert outcomes["t3"].value == 9


def test_an_interrupted_sweep_hands_its_finished_rows_with_the_interrupt(tmp_path):
    """The rows of the combinations already trained were dropped with the KeyboardInterrupt."""
    from batsched_py.campaigns.sweep import run_sweep
    from helpers.campaign import sleep_setting
    sent = interrupt_once_started(tmp_path, 3)     # the quick one, then two slow ones on the two workers
    with pytest.raises(KeyboardInterrupt) as raised:
        run_sweep(sleep_setting, {"folder": [str(tmp_path)], "seconds": [0, 60, 61]}, executor=LocalExecutor(2))
    assert time.monotonic() - sent["at"] < 10     # (the slow ones sleep 60 s)
    assert [(r["seconds"], r["slept"], r["status"]) for r in raised.value.rows] == [(0, "0", "done")]
