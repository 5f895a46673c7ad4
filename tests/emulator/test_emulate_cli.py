"""The real command line over a real ZeroMQ socket, against a REP peer replaying a recording."""
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import zmq

from batsched_py.cli.emulate import main

from golden_replay import GOLDEN, meta, normalise, transcript

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ReplayServer(threading.Thread):
    """REP socket answering each request with the recorded reply; remembers what it got."""

    def __init__(self, lines, endpoint):
        super().__init__(daemon=True)
        self.replies = [l["msg"] for l in lines if l["from"] == "scheduler"]
        self.received = []
        self.sock = zmq.Context.instance().socket(zmq.REP)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.bind(endpoint)

    def run(self):
        for reply in self.replies:
            if not self.sock.poll(20000):
                break
            self.received.append(json.loads(self.sock.recv()))
            self.sock.send(json.dumps(reply).encode())
        self.sock.close(0)


@pytest.mark.golden
@pytest.mark.parametrize("case, busy_wait", [("killer-e128-semantics", "0"),
                                             ("pybatsim_fillerevents-e128-events", "0"),
                                             ("killer-e128-semantics", "100000")])
def test_cli_over_zmq(case, busy_wait, tmp_path):
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    lines = transcript(case)
    server = ReplayServer(lines, endpoint)
    server.start()
    args = meta(case)["batsim_args"] + ["-e", str(tmp_path / "out"), "-s", endpoint, "--timeout", "20",
                                        "--busy-wait", busy_wait]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "batsched_py.cli", "emulate", *args], cwd=GOLDEN / case,
                          env=env, capture_output=True, text=True, timeout=60)
    server.join(10)
    assert proc.returncode == 0, proc.stderr
    recorded = [l["msg"] for l in lines if l["from"] == "batsim"]
    assert normalise(server.received) == normalise(recorded)
    assert (tmp_path / "out_jobs.csv").exists()


def test_silent_scheduler_times_out(tmp_path, capsys):
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    sock = zmq.Context.instance().socket(zmq.REP)   # bound, never answers
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)
    case = GOLDEN / "killer-e128-semantics"
    try:
        code = main(["-p", str(case / "inputs/energy_platform_homogeneous_no_net_128.xml"),
                     "-w", str(case / "inputs/semantics_8.json"), "-e", str(tmp_path / "out"),
                     "-s", endpoint, "--timeout", "0.3"])
    finally:
        sock.close(0)
    err = capsys.readouterr().err
    assert code == 2
    assert "did not reply" in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "out_INCOMPLETE").exists()


def test_silent_scheduler_times_out_while_polling(tmp_path, capsys):
    # A polling budget longer than --timeout is cut to it: the error still comes after 0.3 s.
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    sock = zmq.Context.instance().socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)
    case = GOLDEN / "killer-e128-semantics"
    t0 = time.monotonic()
    try:
        code = main(["-p", str(case / "inputs/energy_platform_homogeneous_no_net_128.xml"),
                     "-w", str(case / "inputs/semantics_8.json"), "-e", str(tmp_path / "out"),
                     "-s", endpoint, "--timeout", "0.3", "--busy-wait", "5000000"])
    finally:
        sock.close(0)
    assert time.monotonic() - t0 < 3.0
    assert code == 2
    assert "did not reply within 0.3 s" in capsys.readouterr().err


def test_negative_busy_wait_is_refused(capsys):
    assert main(["-p", "x.xml", "-w", "w.json", "--busy-wait", "-5"]) == 2
    assert "argument --busy-wait: '-5' is negative" in capsys.readouterr().err


def test_unsupported_flag_is_refused(capsys):
    assert main(["-p", "x.xml", "-W", "wf.json"]) == 2
    assert "not supported" in capsys.readouterr().err


def test_disable_machine_state_tracing_writes_no_machine_states(tmp_path):
    from batsched_py.cli.emulate import emulate
    from batsched_py.scheduler import Session, create
    case = GOLDEN / "easy_bf-e128-hpc250" / "inputs"
    args = ["-p", str(case / "energy_platform_homogeneous_no_net_128.xml"),
            "-w", str(case / "example_workload_hpc_seed1_jobs250.json")]
    emulate([*args, "-e", str(tmp_path / "a")], Session(create("easy")).handle)
    emulate([*args, "-e", str(tmp_path / "b"), "-T"], Session(create("easy")).handle)
    assert (tmp_path / "a_machine_states.csv").stat().st_size > 1000
    assert not (tmp_path / "b_machine_states.csv").exists()
    assert (tmp_path / "a_jobs.csv").read_text() == (tmp_path / "b_jobs.csv").read_text()


@pytest.mark.parametrize("endpoint", ["bogus", "tcp://", "udp://127.0.0.1:5", "tcp://127.0.0.1:99999"])
def test_endpoint_libzmq_cannot_connect_to_is_named(tmp_path, capsys, endpoint):
    code = main(["-p", "x.xml", "-w", "w.json", "-e", str(tmp_path / "out"), "-s", endpoint])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"batsched-py emulate: error: cannot connect to the scheduler at {endpoint!r}: " in err


@pytest.mark.parametrize("timeout", ["0", "1e300"])
def test_timeout_zero_or_huge_waits_for_a_late_scheduler(tmp_path, capsys, timeout):
    """--timeout 0 waits for ever, as serve's and run's do (it gave up at once); so does a timeout
    too long for zmq_poll's milliseconds (an OverflowError traceback)."""
    case = GOLDEN / "killer-e128-semantics"
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    server = ReplayServer(transcript("killer-e128-semantics"), endpoint)
    late = threading.Timer(2.5, server.start)     # (after the 2 s notice, whose wait is cut short)
    late.start()
    try:
        code = main(["-p", str(case / "inputs/energy_platform_homogeneous_no_net_128.xml"),
                     "-w", str(case / "inputs/semantics_8.json"), "-e", str(tmp_path / "out"),
                     "-s", endpoint, "--timeout", timeout])
    finally:
        late.join()
        server.join(5)
    assert code == 0, capsys.readouterr().err
    assert not (tmp_path / "out_INCOMPLETE").exists()


def test_a_scheduler_that_dies_is_named_at_once(tmp_path, capsys):
    """The scheduler's connection closes with a request unanswered (it died): emulate stops at once,
    saying so, even with --timeout 0 (it waited for ever, or --timeout seconds)."""
    case = GOLDEN / "killer-e128-semantics"
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    sock = zmq.Context.instance().socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)

    def die_after_first_request():
        if sock.poll(20_000):
            sock.recv()
        sock.close(0)
    dying = threading.Thread(target=die_after_first_request)
    dying.start()
    t0 = time.monotonic()
    try:
        code = main(["-p", str(case / "inputs/energy_platform_homogeneous_no_net_128.xml"),
                     "-w", str(case / "inputs/semantics_8.json"), "-e", str(tmp_path / "out"),
                     "-s", endpoint, "--timeout", "0"])
    finally:
        dying.join()
    err = capsys.readouterr().err
    assert code == 2 and time.monotonic() - t0 < 10, err
    assert err.strip().splitlines()[-1] == (f"batsched-py emulate: error: message 1: the scheduler at {endpoint} "
                                            "closed the connection before replying (did it stop?)")
    assert (tmp_path / "out_INCOMPLETE").exists()
