"""SIGINT and SIGTERM during `run` and `emulate`: the outputs are closed and marked
PREFIX_INCOMPLETE, saying which signal interrupted the run; the exit status is 128 + the signal."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zmq

from helpers import GOLDEN, free_tcp_endpoint

ROOT = Path(__file__).resolve().parents[1]
CASE = GOLDEN / "killer-e128-semantics"
PLATFORM = CASE / "inputs" / "energy_platform_homogeneous_no_net_128.xml"
WORKLOAD = CASE / "inputs" / "semantics_8.json"

# `run` with a policy that, at its first decision, says so (a file) and then takes forever
SLOW_RUN = """
import sys, time
from pathlib import Path
from batsched_py.scheduler import Scheduler, register
@register("slow-test")
class Slow(Scheduler):
    def schedule(self):
        Path(sys.argv[1]).touch()
        time.sleep(60)
from batsched_py.cli import main
sys.exit(main(["run", "-p", sys.argv[2], "-w", sys.argv[3], "--scheduler", "slow-test", "-E",
               "-e", sys.argv[4], "--no-progress"]))
"""


def _env():
    return dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _check_interrupted(proc: subprocess.Popen, sig: signal.Signals, prefix: Path) -> str:
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig.value, err
    assert f"interrupted by {sig.name}" in err and "Traceback" not in err, err
    marker = Path(f"{prefix}_INCOMPLETE").read_text()
    assert f"interrupted by {sig.name}" in marker
    assert Path(f"{prefix}_jobs.csv").exists() and Path(f"{prefix}_schedule.csv").exists()
    return err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_run_interrupted_marks_its_outputs(tmp_path, sig):
    started, prefix = tmp_path / "started", tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_RUN, started, PLATFORM, WORKLOAD, prefix],
                            env=_env(), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for(started, proc)
    _check_interrupted(proc, sig, prefix)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_emulate_waiting_for_a_scheduler_says_so_and_is_interruptible(tmp_path, sig):
    """A scheduler that receives Batsim's first request and never answers: emulate says it is
    waiting for it, then a signal stops it cleanly."""
    endpoint, prefix = free_tcp_endpoint(), tmp_path / "out"
    sock = zmq.Context.instance().socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "batsched_py.cli", "emulate", "-p", PLATFORM, "-w", WORKLOAD,
                                 "-e", prefix, "-s", endpoint, "--timeout", "60"],
                                env=_env(), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert sock.poll(30_000), "no request from the emulator"
        sock.recv()
        line = proc.stderr.readline()            # (after the 2 s notice delay)
        assert line.startswith("batsched-py emulate: waiting for the scheduler at " + endpoint), line
        _check_interrupted(proc, sig, prefix)
    finally:
        sock.close(0)
