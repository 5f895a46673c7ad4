"""Play Batsim's side of a golden transcript against a scheduler bound on a ZeroMQ REP endpoint."""
from __future__ import annotations

import json
from typing import Callable, Optional

import zmq


class ReplayMismatch(AssertionError):
    """A reply differs from the recorded one; says at which exchange and how."""


def _first_difference(got, want, path="msg"):
    if type(got) is not type(want) and not (isinstance(got, (int, float)) and isinstance(want, (int, float))
                                             and not isinstance(got, bool) and not isinstance(want, bool)):
        return f"{path}: {got!r} != {want!r}"
    if isinstance(want, dict):
        if set(got) != set(want):
            return f"{path}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            d = _first_difference(got[k], want[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(want, list):
        if len(got) != len(want):
            return f"{path}: {len(got)} items != {len(want)} (got {json.dumps(got)[:300]})"
        for i, (g, w) in enumerate(zip(got, want)):
            d = _first_difference(g, w, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if got == want else f"{path}: {got!r} != {want!r}"


def check_reply(exchange: int, request: dict, reply: dict, recorded: dict) -> None:
    """Raise :class:`ReplayMismatch` if ``reply`` differs from the ``recorded`` one (as JSON values)."""
    diff = _first_difference(reply, recorded)
    if diff:
        raise ReplayMismatch(f"exchange {exchange} (transcript line {2 * exchange + 2}, Batsim now="
                             f"{request.get('now')}): {diff}")


def replay_batsim_side(endpoint: str, transcript: list[dict], timeout: float = 10.0,
                       compare: bool = True,
                       on_reply: Optional[Callable[[int, dict, dict], None]] = None) -> list[dict]:
    """Send each recorded Batsim request (REQ, connect), receive the reply, compare with the recording.

    Returns the decoded replies.  ``timeout`` bounds each receive, so a dead server fails the test
    instead of hanging it.  With ``compare``, the first reply whose JSON value differs from the
    recorded scheduler reply raises :class:`ReplayMismatch` naming the exchange and the field.
    """
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, int(timeout * 1000))
    sock.setsockopt(zmq.SNDTIMEO, int(timeout * 1000))
    replies = []
    try:
        sock.connect(endpoint)
        for i in range(0, len(transcript), 2):
            request, recorded = transcript[i], transcript[i + 1] if i + 1 < len(transcript) else None
            assert request["from"] == "batsim", f"transcript line {i + 1} is not a Batsim request"
            sock.send(json.dumps(request["msg"]).encode())
            try:
                raw = sock.recv()
            except zmq.Again:
                raise ReplayMismatch(f"exchange {i // 2}: no reply within {timeout} s") from None
            reply = json.loads(raw)
            replies.append(reply)
            if on_reply is not None:
                on_reply(i // 2, request["msg"], reply)
            if compare and recorded is not None:
                check_reply(i // 2, request["msg"], reply, recorded["msg"])
    finally:
        sock.close(linger=0)
    return replies
