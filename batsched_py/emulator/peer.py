"""The ZeroMQ side of the emulator: a REQ socket connected to the scheduler's REP socket.

``ZmqPeer(endpoint, timeout, busy_wait)`` is an exchange callable: it encodes the request, sends
it, polls for the reply for ``busy_wait`` seconds, then sleeps until at most ``timeout`` seconds
(0: no limit) have passed, and decodes it (scheduler -> Batsim events only). A silent or malformed peer raises
EmulatorError with one readable line.
"""
from __future__ import annotations

import math
import sys

import zmq

from .. import protocol as p
from ..transport.endpoints import tcp_port_fault
from ..transport.polling import DEFAULT_BUSY_WAIT, recv_polling
from ..models.errors import EmulatorError

__all__ = ["ZmqPeer"]

_FOREVER = 1e15     # seconds (30 million years): longer timeouts mean no limit


class ZmqPeer:
    def __init__(self, endpoint: str = "tcp://localhost:28000", timeout: float = 60.0,
                 busy_wait: float = DEFAULT_BUSY_WAIT):
        self.endpoint = endpoint
        # 0 waits for ever, as serve does; so does a timeout beyond zmq_poll's milliseconds (a C long)
        self.timeout = timeout if 0 < timeout < _FOREVER else math.inf
        self.busy_wait = min(busy_wait, self.timeout)
        self._ctx: zmq.Context = zmq.Context.instance()
        self._sock = self._ctx.socket(zmq.REQ)
        self._sock.setsockopt(zmq.LINGER, 0)
        fault = tcp_port_fault(endpoint)
        try:
            if fault is None:
                self._sock.connect(endpoint)
        except zmq.ZMQError as exc:
            fault = exc.strerror
        if fault is not None:
            self._sock.close(0)
            raise EmulatorError(f"cannot connect to the scheduler at {endpoint!r}: {fault} "
                                "(e.g. tcp://localhost:28000)")
        # A REP peer whose connection closes never answers the request it holds: said at once
        self._closed = self._sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._poller = zmq.Poller()
        self._poller.register(self._sock, zmq.POLLIN)
        self._poller.register(self._closed, zmq.POLLIN)
        self.index = 0
        self.notice_after = 2.0     # seconds without a first reply before saying we wait

    def __call__(self, request: p.Message) -> p.Message:
        self.index += 1
        self._sock.send(p.encode_message(request))
        raw = recv_polling(self._sock, self.busy_wait)
        if raw is None:
            if not self._wait(self.timeout - self.busy_wait):
                raise EmulatorError(f"message {self.index}: the scheduler at {self.endpoint} did not reply "
                                    f"within {self.timeout:g} s (is it running? --timeout to wait longer)")
            raw = self._sock.recv()
        try:
            return p.decode_message(raw, sender="scheduler")
        except p.ProtocolError as exc:
            raise EmulatorError(f"reply to message {self.index}: malformed: {exc}") from None

    def _wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the reply; while the first one is late, say what we wait for
        (a scheduler not started yet would otherwise look like a hung emulator)."""
        if self.index == 1 and self.notice_after < seconds:
            if self._poll(self.notice_after):
                return True
            limit = "no time limit" if self.timeout == math.inf else f"giving up after {self.timeout:g} s"
            print(f"batsched-py emulate: waiting for the scheduler at {self.endpoint} ({limit}, see --timeout)",
                  file=sys.stderr, flush=True)
            seconds -= self.notice_after
        return self._poll(seconds)

    def _poll(self, seconds: float) -> bool:
        """Whether the reply came within ``seconds``; EmulatorError if the scheduler's connection closed."""
        ready = dict(self._poller.poll(None if seconds == math.inf else max(1, int(seconds * 1000))))
        if self._sock in ready:
            return True
        if self._closed in ready:
            self._closed.recv_multipart()
            raise EmulatorError(f"message {self.index}: the scheduler at {self.endpoint} closed the connection "
                                "before replying (did it stop?)")
        return False

    def close(self) -> None:
        self._sock.disable_monitor()
        self._closed.close(0)
        self._sock.close(0)

    def __enter__(self) -> "ZmqPeer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
