"""`compare` on Ctrl-C or SIGTERM (issue 21): it stops at once, starts no other run, stops the running one
and keeps the runs already finished."""
import signal
import subprocess
import sys
import threading
import time

import pytest

from helpers.campaign import PLATFORM, slow_workload


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_stops_compare_promptly_and_keeps_the_finished_runs(tmp_path, signum):
    """SIGINT is Ctrl-C; SIGTERM is what a batch system sends at its time limit."""
    workload = slow_workload(tmp_path / "slow.json", 5000)
    (tmp_path / "cmp" / "fcfs").mkdir(parents=True)   # an earlier compare's, which looked current after
    (tmp_path / "cmp" / "fcfs" / "out_jobs.csv").write_text("job_id\n")
    (tmp_path / "cmp" / "comparison.csv").write_text("run\nfcfs\n")
    proc = subprocess.Popen([sys.executable, "-m", "batsched_py.cli", "compare", "-p", str(PLATFORM), "-w", str(workload),
                             "--schedulers", "easy,fcfs,conservative,sjf", "-j", "1", "-o", str(tmp_path / "cmp"),
                             "--no-plots"], stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        lines = [proc.stderr.readline()]
        while "done:" not in lines[-1] and lines[-1]:
            lines.append(proc.stderr.readline())
        proc.send_signal(signum)
        signalled = time.monotonic()
        rest = proc.stderr.read()
        proc.wait(timeout=30)
    finally:
        watchdog.cancel()
        proc.kill()
    err = "".join(lines) + rest
    assert time.monotonic() - signalled < 8, "compare did not stop promptly"   # (its runs take far longer)
    assert proc.returncode == 128 + signum, err      # SIGTERM was told as SIGINT, status 130
    assert f"batsched-py compare: interrupted by {signal.Signals(signum).name}" in err, err
    assert "  done: easy" in err
    assert f"compare: interrupted; 1 finished run kept in {tmp_path / 'cmp'} (easy); not finished: fcfs, conservative, sjf" in err
    assert (tmp_path / "cmp" / "easy" / "out_jobs.csv").stat().st_size > 100_000
    assert not (tmp_path / "cmp" / "fcfs" / "out_jobs.csv").exists()
    assert not (tmp_path / "cmp" / "conservative").exists()
    assert not (tmp_path / "cmp" / "comparison.csv").exists()
