"""SIGINT and SIGTERM during `run` and `emulate`: the outputs are closed and marked
PREFIX_INCOMPLETE, saying which signal interrupted the run; the exit status is 128 + the signal.
During the converters (swf2json, platform, workload): each output is whole or absent."""
import json
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
        for _ in range(600):     # (short sleeps: a signal sent as one begins is served at its end)
            time.sleep(0.1)
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


# A command whose Nth file rename (the last step of writing a whole file) waits until a signal comes
HELD_WRITE = """
import os, sys, time
from pathlib import Path
real_replace, renames = os.replace, []
def held(src, dst):
    renames.append(dst)
    if len(renames) == int(sys.argv[2]):
        Path(sys.argv[1]).touch()
        for _ in range(600):     # (short sleeps: a signal sent as one begins is served at its end)
            time.sleep(0.1)
    real_replace(src, dst)
os.replace = held
from batsched_py.cli import main
sys.exit(main(sys.argv[3:]))
"""
TINY_SWF = ROOT / "tests" / "data" / "swf" / "tiny.swf"
BATSIM3_WORKLOAD = '{"nb_res": 1, "jobs": [], "profiles": {"p": {"type": "msg_par_hg", "cpu": 1, "com": 0}}}'


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
@pytest.mark.parametrize("args, held, left, said", [
    (["swf2json", str(TINY_SWF), "{out}/ep", "--split", "day", "--renumber", "-q"], 2, ["ep_1970-01-01.json"],
     "swf2json: interrupted by {}: 1 workload file written, whole; no other"),
    (["platform", "taurus", "{out}/p.xml"], 1, [], "platform: interrupted by {} (outputs are written whole or not at all)"),
    (["workload", "upgrade", "{src}", "{out}/w4.json"], 1, [],
     "workload: interrupted by {} (outputs are written whole or not at all)"),
], ids=["swf2json", "platform", "workload"])
def test_interrupted_converters_leave_whole_files_only(tmp_path, sig, args, held, left, said):
    """Ctrl-C or SIGTERM while a converter writes: one line, 128 + the signal, and each output is
    whole or absent (they were tracebacks, and a file cut short)."""
    started, out, source = tmp_path / "started", tmp_path / "out", tmp_path / "w3.json"
    source.write_text(BATSIM3_WORKLOAD)
    argv = [a.format(out=out, src=source) for a in args]
    proc = subprocess.Popen([sys.executable, "-c", HELD_WRITE, started, str(held), *argv], env=_env(), cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_for(started, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert (proc.returncode, err) == (128 + sig.value, said.format(sig.name) + "\n")
    assert sorted(p.name for p in out.iterdir()) == left        # (the held file's .part is gone too)
    for name in left:
        assert json.loads((out / name).read_text())["jobs"]
