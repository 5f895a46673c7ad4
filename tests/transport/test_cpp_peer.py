"""``serve`` against a C++ libzmq REQ peer (cppzmq, as Batsim uses), replaying golden transcripts.

pyzmq bundles its own libzmq; this peer links the system's (Debian's libzmq 4.3.4 here), so the
ZMTP endpoint meets a second build of the library Batsim links.  Skipped where g++ or the
cppzmq headers are missing (``apt-get install g++ cppzmq-dev``).
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import ServeProcess, check_reply, read_transcript

SOURCE = Path(__file__).with_name("cpp") / "req_client.cpp"


@pytest.fixture(scope="module")
def req_client(tmp_path_factory) -> Path:
    if shutil.which("g++") is None or not Path("/usr/include/zmq.hpp").exists():
        pytest.skip("needs g++ and the cppzmq headers (apt-get install g++ cppzmq-dev)")
    binary = tmp_path_factory.mktemp("cpp") / "req_client"
    built = subprocess.run(["g++", "-std=c++17", "-O1", str(SOURCE), "-o", str(binary), "-lzmq"],
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    return binary


@pytest.mark.golden
@pytest.mark.parametrize("policy, case, transport", [("easy", "easy_bf-e128-hpc250", "auto"),
                                                      ("fcfs", "fcfs_fast-e128-semantics-E", "auto"),
                                                      ("easy", "easy_bf-e128-walltime", "libzmq")])
def test_cpp_peer_replays_golden(req_client, policy, case, transport, free_tcp_endpoint):
    transcript = read_transcript(case)
    requests = [line["msg"] for line in transcript[0::2]]
    with ServeProcess(policy, free_tcp_endpoint, "--transport", transport) as server:
        done = subprocess.run([str(req_client), free_tcp_endpoint], capture_output=True, text=True, timeout=120,
                              input="".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests))
        assert done.returncode == 0, done.stderr
        assert server.wait(10) == 0, server.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(replies) == len(requests)
    for i, (request, reply) in enumerate(zip(requests, replies)):
        if 2 * i + 1 < len(transcript):
            check_reply(i, request, reply, transcript[2 * i + 1]["msg"])
