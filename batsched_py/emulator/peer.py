"""The ZeroMQ side of the emulator: a REQ socket connected to the scheduler's REP socket.

``ZmqPeer(endpoint, timeout, busy_wait)`` is an exchange callable: it encodes the request, sends
it, polls for the reply for ``busy_wait`` seconds, then sleeps until at most ``timeout`` seconds
have passed, and decodes it (scheduler -> Batsim events only). A silent or malformed peer raises
EmulatorError with one readable line.
"""
from __future__ import annotations

import zmq

from .. import protocol as p
from ..transport.polling import DEFAULT_BUSY_WAIT, recv_polling
from .errors import EmulatorError

__all__ = ["ZmqPeer"]


class ZmqPeer:
    def __init__(self, endpoint: str = "tcp://localhost:28000", timeout: float = 60.0,
                 busy_wait: float = DEFAULT_BUSY_WAIT):
        self.endpoint = endpoint
        self.timeout = timeout
        self.busy_wait = min(busy_wait, timeout)
        self._ctx: zmq.Context = zmq.Context.instance()
        self._sock = self._ctx.socket(zmq.REQ)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.connect(endpoint)
        self.index = 0

    def __call__(self, request: p.Message) -> p.Message:
        self.index += 1
        self._sock.send(p.encode_message(request))
        raw = recv_polling(self._sock, self.busy_wait)
        if raw is None:
            if not self._sock.poll(max(1, int((self.timeout - self.busy_wait) * 1000))):
                raise EmulatorError(f"message {self.index}: the scheduler at {self.endpoint} did not reply "
                                    f"within {self.timeout:g} s (is it running? --timeout to wait longer)")
            raw = self._sock.recv()
        try:
            return p.decode_message(raw, sender="scheduler")
        except p.ProtocolError as exc:
            raise EmulatorError(f"reply to message {self.index}: malformed: {exc}") from None

    def close(self) -> None:
        self._sock.close(0)

    def __enter__(self) -> "ZmqPeer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
