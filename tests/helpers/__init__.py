"""Test helpers shared by the protocol, scheduler and transport tests.

- :func:`golden_cases` / :func:`read_transcript`: the golden recordings of real Batsim 4.2.1 runs
  (``tests/data/golden/<case>/transcript.jsonl[.gz]``); :func:`output_differences`: an output
  file against Batsim's, field for field as printed.
- :func:`free_tcp_endpoint`: a loopback endpoint on a port that is free right now.
- :func:`replay_batsim_side`: a ZeroMQ REQ client playing Batsim's side of a transcript;
  :func:`check_reply` compares one reply with the recorded one.
- :class:`ServeProcess`: ``batsched-py serve`` in a subprocess, always reaped.
"""
from .golden import GOLDEN, OUTPUTS, SHARED, golden_cases, output_differences, read_transcript, transcript_path
from .net import free_tcp_endpoint, port_is_free
from .replay import ReplayMismatch, check_reply, replay_batsim_side
from .serve import ServeProcess, zmq_req

__all__ = ["GOLDEN", "OUTPUTS", "SHARED", "golden_cases", "output_differences", "read_transcript", "transcript_path", "free_tcp_endpoint",
           "port_is_free", "replay_batsim_side", "check_reply", "ReplayMismatch", "ServeProcess", "zmq_req"]
