"""``batsched-py serve`` over a REAL ZeroMQ socket, in a subprocess: golden replays and every way to die.

Each failure must give one line on stderr naming the cause, a non-zero exit code, a prompt end
(< 5 s) and a port that can be bound again.  Processes are killed by pid in ``ServeProcess.__exit__``.
"""
from __future__ import annotations

import json
import os
import socket
import time

import pytest
import zmq

from batsched_py.scheduler import available
from helpers import ServeProcess, port_is_free, read_transcript, replay_batsim_side, zmq_req
from helpers.messages import begins, message, submitted
from helpers.plugin import make_plugin

FCFS_CASES = ["fcfs_fast-e128-hpc250", "fcfs_fast-e128-samesubmit", "fcfs_fast-e128-semantics-E"]
EASY_CASES = ["easy_bf-e128-hpc250", "easy_bf-e128-walltime"]
PROMPT = 15.0   # (below serve's --timeout 20 s: a hang until it is told apart; above a loaded start)


def _error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    assert "Traceback" not in stderr
    return lines[0]


def _assert_clean_failure(server: ServeProcess, *words: str) -> str:
    t0 = time.monotonic()
    code = server.wait(PROMPT)
    assert time.monotonic() - t0 < PROMPT
    line = _error_line(server.stderr)
    assert code != 0, line
    for w in words:
        assert w in line, line
    assert port_is_free(server.endpoint), f"{server.endpoint} still bound after exit"
    return line


# --- golden replays ----------------------------------------------------------------------------

def _replay(policy, case, endpoint, *extra):
    transcript = read_transcript(case)
    with ServeProcess(policy, endpoint, *extra) as server:
        server.wait_listening()
        replies = replay_batsim_side(endpoint, transcript, timeout=10)
        code = server.wait(PROMPT)
        assert code == 0, server.stderr
    assert len(replies) == len(transcript) // 2
    assert "simulation ended" in server.stderr
    assert port_is_free(endpoint)


@pytest.mark.golden
@pytest.mark.parametrize("case", FCFS_CASES)
def test_fcfs_replays_golden(case, free_tcp_endpoint):
    _replay("fcfs", case, free_tcp_endpoint)


@pytest.mark.golden
@pytest.mark.parametrize("case", EASY_CASES)
def test_easy_replays_golden(case, free_tcp_endpoint):
    if "easy" not in available():
        pytest.skip("policy 'easy' is not registered yet (batsched_py/policies)")
    _replay("easy", case, free_tcp_endpoint)


@pytest.mark.golden
@pytest.mark.parametrize("busy_wait", ["0", "50000"])
def test_replays_golden_whatever_the_busy_wait(busy_wait, free_tcp_endpoint):
    # 0: always block in recv; 50 ms: nearly every request arrives while polling.
    _replay("fcfs", "fcfs_fast-e128-semantics-E", free_tcp_endpoint, "--busy-wait", busy_wait)


@pytest.mark.golden
def test_replays_golden_on_libzmq_transport(free_tcp_endpoint):
    _replay("easy", "easy_bf-e128-walltime", free_tcp_endpoint, "--transport", "libzmq")


@pytest.mark.golden
def test_replays_golden_over_ipc(tmp_path):
    path = tmp_path / "serve.sock"
    transcript = read_transcript("easy_bf-e128-walltime")
    with ServeProcess("easy", f"ipc://{path}", "--busy-wait", "1000") as server:
        replies = replay_batsim_side(f"ipc://{path}", transcript, timeout=10)   # (libzmq retries until bound)
        assert server.wait(PROMPT) == 0, server.stderr
    assert len(replies) == len(transcript) // 2
    assert not path.exists()


def _cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs Linux /proc")
def test_busy_wait_is_bounded_while_batsim_is_silent(free_tcp_endpoint):
    """Polling stops after --busy-wait: a Batsim that computes for a second costs no CPU here."""
    with ServeProcess("fcfs", free_tcp_endpoint, "--busy-wait", "2000") as server:
        server.wait_listening()
        sock = _begin(free_tcp_endpoint)
        try:
            before = _cpu_seconds(server.proc.pid)
            time.sleep(1.0)
            assert _cpu_seconds(server.proc.pid) - before < 0.2
            sock.send(json.dumps(message(1, submitted("w!1", 1, 1))).encode())
            reply = json.loads(sock.recv())
            assert [e["type"] for e in reply["events"]] == ["EXECUTE_JOB"]
        finally:
            sock.close(linger=0)


def test_timeout_shorter_than_busy_wait(free_tcp_endpoint):
    with ServeProcess("fcfs", free_tcp_endpoint, "--busy-wait", "5000000", timeout=0.5) as server:
        server.wait_listening()
        sock = _begin(free_tcp_endpoint)
        try:
            _assert_clean_failure(server, "no message from Batsim", "0.5 s")
        finally:
            sock.close(linger=0)


def test_negative_busy_wait(free_tcp_endpoint):
    with ServeProcess("fcfs", free_tcp_endpoint, "--busy-wait", "-1") as server:
        assert server.wait(PROMPT) == 2     # (argparse: the usage, then the error line)
        assert server.stderr.strip().splitlines()[-1] == \
            "batsched-py serve: error: argument --busy-wait: '-1' is negative"
        assert "Traceback" not in server.stderr


def test_quiet_success(free_tcp_endpoint):
    transcript = read_transcript("fcfs_fast-e128-samesubmit")
    with ServeProcess("fcfs", free_tcp_endpoint, "--quiet") as server:
        server.wait_listening()
        replay_batsim_side(free_tcp_endpoint, transcript)
        assert server.wait(PROMPT) == 0
    assert server.stderr == "" and server.stdout == ""


# --- robustness --------------------------------------------------------------------------------

def _begin(endpoint):
    sock = zmq_req(endpoint, timeout=PROMPT)
    sock.send(json.dumps(message(0, begins(4))).encode())
    assert json.loads(sock.recv()) == {"now": 0.0, "events": []}
    return sock


def test_peer_silent_beyond_timeout(free_tcp_endpoint):
    with ServeProcess("fcfs", free_tcp_endpoint, timeout=0.5) as server:
        server.wait_listening()
        sock = _begin(free_tcp_endpoint)
        try:
            _assert_clean_failure(server, "no message from Batsim", "0.5 s", free_tcp_endpoint)
        finally:
            sock.close(linger=0)


def test_silent_from_the_start(free_tcp_endpoint):
    with ServeProcess("fcfs", free_tcp_endpoint, timeout=0.3) as server:
        _assert_clean_failure(server, "no message from Batsim")


@pytest.mark.parametrize("payload, words", [
    (b"this is not JSON", ("not valid JSON",)),
    (b"\xff\xfe\x00", ("not UTF-8",)),
    (json.dumps({"now": 1, "events": [{"timestamp": 1, "type": "JOB_SUBMITTED",
                                       "data": {"job_id": "w!1", "job": {"id": "w!1", "res": "two",
                                                                         "profile": "p"}}}]}).encode(),
     ("message.events[0].data.job.res", "must be an integer")),
    (json.dumps({"now": 1, "events": [{"timestamp": 1, "type": "EXECUTE_JOB",
                                       "data": {"job_id": "w!1", "alloc": "0"}}]}).encode(),
     ("message.events[0].type", "never sent by the batsim")),
    (json.dumps({"now": 1, "events": [{"timestamp": 1, "type": "JOB_COMPLETED",
                                       "data": {"job_id": "w!1", "job_state": "COMPLETED_SUCCESSFULLY",
                                                "return_code": 0, "alloc": "3-1"}}]}).encode(),
     ("message.events[0].data.alloc", "'3-1'")),
])
def test_malformed_message(free_tcp_endpoint, payload, words):
    with ServeProcess("fcfs", free_tcp_endpoint) as server:
        server.wait_listening()
        sock = _begin(free_tcp_endpoint)
        try:
            sock.send(payload)
            # REQ/REP: no reply will come; the client must not hang (bounded poll), the server must exit.
            line = _assert_clean_failure(server, *words)
            assert line.startswith("batsched-py serve: error:")
            assert sock.poll(100) == 0
        finally:
            sock.close(linger=0)


def _message_ends_serve(policy: str, endpoint: str, msg: dict, *words: str, env=None, begin: bool = True) -> str:
    """Serve ``policy``, send ``msg`` (after SIMULATION_BEGINS if ``begin``): serve must end at once
    with one line holding ``words``, which is returned."""
    with ServeProcess(policy, endpoint, env=env) as server:
        server.wait_listening()
        sock = _begin(endpoint) if begin else zmq_req(endpoint)
        try:
            sock.send(json.dumps(msg).encode())
            return _assert_clean_failure(server, *words)
        finally:
            sock.close(linger=0)


def test_protocol_sequencing_error(free_tcp_endpoint):
    _message_ends_serve("fcfs", free_tcp_endpoint, message(1, submitted("w!1", 1, 1)),
                        "first event must be SIMULATION_BEGINS", begin=False)


def test_sigint(free_tcp_endpoint):
    with ServeProcess("fcfs", free_tcp_endpoint) as server:
        server.wait_listening()
        sock = _begin(free_tcp_endpoint)
        try:
            server.interrupt()
            _assert_clean_failure(server, "interrupted")
            assert server.proc.returncode == 130
        finally:
            sock.close(linger=0)


def test_sigint_before_any_client(free_tcp_endpoint):
    with ServeProcess("fcfs", free_tcp_endpoint) as server:
        server.wait_listening()
        server.interrupt()
        _assert_clean_failure(server, "interrupted")


@pytest.fixture
def plugin_env(tmp_path):
    make_plugin(tmp_path / "plugin")
    return {"PYTHONPATH": os.pathsep.join([str(tmp_path / "plugin"), os.environ.get("PYTHONPATH", "")])}


def test_scheduler_exception(free_tcp_endpoint, plugin_env):
    _message_ends_serve("test-plugin-crash", free_tcp_endpoint, message(1, submitted("w!1", 1, 1)),
                        "at t=1", "KeyError", "'w!1'", "testplugin_policies.py:", env=plugin_env)


def test_scheduler_bad_decision(free_tcp_endpoint, plugin_env):
    with ServeProcess("test-plugin-bad-decision", free_tcp_endpoint, env=plugin_env) as server:
        server.wait_listening()
        sock = _begin(free_tcp_endpoint)
        try:
            sock.send(json.dumps(message(1, submitted("w!1", 2, 1))).encode())
            assert json.loads(sock.recv())["events"][0]["data"]["alloc"] == "0-1"
            sock.send(json.dumps(message(2, submitted("w!2", 1, 2))).encode())
            _assert_clean_failure(server, "EXECUTE_JOB w!2", "not free (computing)")
        finally:
            sock.close(linger=0)


def test_scheduler_decision_json_cannot_hold(free_tcp_endpoint, plugin_env):
    _message_ends_serve("test-plugin-unencodable", free_tcp_endpoint, message(1, submitted("w!1", 1, 1)),
                        "message.events[0]: cannot encode REGISTER_PROFILE",
                        "Object of type set is not JSON serializable", env=plugin_env)


def test_policy_constructor_refuses_config(free_tcp_endpoint, plugin_env):
    with ServeProcess("test-plugin-config", free_tcp_endpoint, env=plugin_env, config='{"quantum": -1}') as server:
        _assert_clean_failure(server, "test-plugin-config", "ValueError", "quantum")


def test_plugin_config_accepted(free_tcp_endpoint, plugin_env):
    with ServeProcess("test-plugin-config", free_tcp_endpoint, env=plugin_env, config='{"quantum": 3}') as server:
        server.wait_listening()
        sock = _begin(free_tcp_endpoint)
        sock.close(linger=0)
        assert server.proc.poll() is None


def test_unknown_scheduler(free_tcp_endpoint):
    with ServeProcess("no-such-policy", free_tcp_endpoint) as server:
        _assert_clean_failure(server, "unknown scheduler 'no-such-policy'", "available:", "fcfs")


@pytest.mark.parametrize("config, words", [
    ("{not json", ("--config", "invalid JSON")),
    ("[1, 2]", ("neither a JSON object nor an existing file",)),
    ("/no/such/file.json", ("neither a JSON object nor an existing file",)),
])
def test_bad_config(free_tcp_endpoint, config, words):
    with ServeProcess("fcfs", free_tcp_endpoint, config=config) as server:
        _assert_clean_failure(server, *words)


def test_bad_config_file(free_tcp_endpoint, tmp_path):
    path = tmp_path / "opts.json"
    path.write_text("[1]")
    with ServeProcess("fcfs", free_tcp_endpoint, config=str(path)) as server:
        _assert_clean_failure(server, str(path), "must be a JSON object")


def test_unknown_policy_option(free_tcp_endpoint):
    with ServeProcess("fcfs", free_tcp_endpoint, config='{"no_such_option": 1}') as server:
        _assert_clean_failure(server, "no_such_option")


def test_batsim_lost_mid_simulation(free_tcp_endpoint):
    with ServeProcess("fcfs", free_tcp_endpoint) as server:
        server.wait_listening()
        _begin(free_tcp_endpoint).close(linger=0)
        _assert_clean_failure(server, "lost after 1 requests", "closed the connection")


@pytest.mark.parametrize("transport", ["zmtp", "libzmq"])
def test_a_stray_that_is_not_zeromq_is_ignored_and_batsim_served(free_tcp_endpoint, transport):
    """An HTTP probe on serve's port, left open: serve drops it and serves the simulation of a
    real libzmq REQ peer replaying Batsim's side, with either transport."""
    host, port = free_tcp_endpoint[len("tcp://"):].rsplit(":", 1)
    transcript = read_transcript("fcfs_fast-e128-semantics-E")
    with ServeProcess("fcfs", free_tcp_endpoint, "--transport", transport) as server:
        server.wait_listening()
        with socket.create_connection((host, int(port))) as conn:
            conn.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n" + bytes(40))
            time.sleep(0.2)
            replies = replay_batsim_side(free_tcp_endpoint, transcript, timeout=10)
            assert server.wait(PROMPT) == 0, server.stderr
    assert len(replies) == len(transcript) // 2 and "simulation ended" in server.stderr


def test_unbindable_endpoint_for_zmtp():
    with ServeProcess("fcfs", "inproc://x", "--transport", "zmtp") as server:
        assert server.wait(PROMPT) != 0
        assert "zmtp transport serves tcp" in _error_line(server.stderr)


def test_endpoint_already_bound(free_tcp_endpoint):
    ctx = zmq.Context.instance()
    holder = ctx.socket(zmq.REP)
    holder.setsockopt(zmq.LINGER, 0)
    holder.bind(free_tcp_endpoint)
    try:
        with ServeProcess("fcfs", free_tcp_endpoint) as server:
            code = server.wait(PROMPT)
            line = _error_line(server.stderr)
            assert code != 0 and "cannot bind" in line and free_tcp_endpoint in line
    finally:
        holder.close(linger=0)


def test_bad_endpoint():
    with ServeProcess("fcfs", "nonsense://x") as server:
        code = server.wait(PROMPT)
        assert code != 0 and "cannot bind" in _error_line(server.stderr)


@pytest.mark.golden
@pytest.mark.parametrize("endpoint, transport", [("tcp://127.0.0.1:0", "auto"), ("tcp://127.0.0.1:*", "auto"),
                                                 ("tcp://127.0.0.1:0", "libzmq")])
def test_a_port_the_system_chooses_is_told(endpoint, transport):
    """Port 0 (or libzmq's '*') lets the system choose one: serve says which, or Batsim could never
    find it (it said nothing)."""
    with ServeProcess("fcfs", endpoint, "--transport", transport) as server:
        line = server.proc.stderr.readline()
        assert line.startswith("batsched-py serve: listening on tcp://127.0.0.1:"), line
        bound = line.split()[-1]
        assert bound.rpartition(":")[2].isdigit() and bound.rpartition(":")[2] != "0", line
        transcript = read_transcript(FCFS_CASES[0])
        assert len(replay_batsim_side(bound, transcript, timeout=10)) == len(transcript) // 2
        assert server.wait(PROMPT) == 0, server.stderr
