"""The emulator's exchange with a scheduler over ZeroMQ: Batsim's side (the socket: transport/req.py).

``ZmqPeer(endpoint, timeout, busy_wait)`` is an exchange callable: it encodes the request, sends
it, waits for the reply (see :class:`~batsched_py.transport.req.ReqEndpoint`) and decodes it
(scheduler -> Batsim events only).  A silent, lost or malformed peer raises EmulatorError with one
readable line (the outputs' INCOMPLETE marker quotes it).
"""
from __future__ import annotations

import math
import sys

from .. import protocol as p
from ..transport.endpoints import PeerClosed
from ..transport.polling import DEFAULT_BUSY_WAIT
from ..transport.req import ReqEndpoint
from ..transport.zmq_server import PeerTimeout
from ..models.errors import EmulatorError

__all__ = ["ZmqPeer"]


class ZmqPeer:
    def __init__(self, endpoint: str = "tcp://localhost:28000", timeout: float = 60.0,
                 busy_wait: float = DEFAULT_BUSY_WAIT):
        try:
            self._req = ReqEndpoint(endpoint, timeout, busy_wait, on_late=self._say_waiting)
        except OSError as exc:
            raise EmulatorError(str(exc)) from None

    def __call__(self, request: p.Message) -> p.Message:
        try:
            raw = self._req.request(p.encode_message(request))
        except (PeerTimeout, PeerClosed) as exc:
            raise EmulatorError(str(exc)) from None
        try:
            return p.decode_message(raw, sender="scheduler")
        except p.ProtocolError as exc:
            raise EmulatorError(f"reply to message {self._req.index}: malformed: {exc}") from None

    def _say_waiting(self) -> None:
        req = self._req
        limit = "no time limit" if req.timeout == math.inf else f"giving up after {req.timeout:g} s"
        print(f"batsched-py emulate: waiting for the scheduler at {req.endpoint} ({limit}, see --timeout)",
              file=sys.stderr, flush=True)

    def close(self) -> None:
        self._req.close()

    def __enter__(self) -> "ZmqPeer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
