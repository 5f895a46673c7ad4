"""The REQ side: a socket connected to a scheduler's REP endpoint, as Batsim's is (``batsched-py emulate``).

``ReqEndpoint(endpoint, timeout, busy_wait).request(data)`` sends a request, polls for the reply
for ``busy_wait`` seconds, then sleeps until at most ``timeout`` seconds (0: no limit) have
passed.  A silent peer raises PeerTimeout, a peer whose connection closed PeerClosed, both with
one readable line; ``on_late`` is called once when the first reply is slow to come (a scheduler
not started yet would otherwise look like a hung emulator).
"""
from __future__ import annotations

import math
import time
from typing import Callable, Optional

import zmq

from .endpoints import PeerClosed, tcp_port_fault
from .polling import DEFAULT_BUSY_WAIT, recv_polling
from ..interrupts import WAIT_SLICE
from .zmq_server import PeerTimeout

_FOREVER = 1e15     # seconds (30 million years): longer timeouts mean no limit


class ReqEndpoint:
    def __init__(self, endpoint: str = "tcp://localhost:28000", timeout: float = 60.0,
                 busy_wait: float = DEFAULT_BUSY_WAIT, on_late: Optional[Callable[[], None]] = None):
        """OSError saying why when ``endpoint`` cannot be connected to."""
        self.endpoint = endpoint
        # 0 waits for ever, as serve does; so does a timeout of more than 30 million years
        self.timeout = timeout if 0 < timeout < _FOREVER else math.inf
        self.busy_wait = min(busy_wait, self.timeout)
        self.on_late = on_late
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
            raise OSError(f"cannot connect to the scheduler at {endpoint!r}: {fault} (e.g. tcp://localhost:28000)")
        # A REP peer whose connection closes never answers the request it holds: said at once
        self._closed = self._sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._poller = zmq.Poller()
        self._poller.register(self._sock, zmq.POLLIN)
        self._poller.register(self._closed, zmq.POLLIN)
        self.index = 0
        self.late_after = 2.0     # seconds without a first reply before on_late

    def request(self, data: bytes) -> bytes:
        """The reply to ``data``."""
        self.index += 1
        self._sock.send(data)
        raw = recv_polling(self._sock, self.busy_wait)
        if raw is None:
            if not self._wait(self.timeout - self.busy_wait):
                raise PeerTimeout(f"message {self.index}: the scheduler at {self.endpoint} did not reply "
                                  f"within {self.timeout:g} s (is it running? --timeout to wait longer)")
            raw = self._sock.recv()
        return raw

    def _wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the reply; while the first one is late, say so (on_late)."""
        if self.index == 1 and self.on_late is not None and self.late_after < seconds:
            if self._poll(self.late_after):
                return True
            self.on_late()
            seconds -= self.late_after
        return self._poll(seconds)

    def _poll(self, seconds: float) -> bool:
        """Whether the reply came within ``seconds``; PeerClosed if the scheduler's connection closed."""
        deadline = time.monotonic() + seconds
        while True:     # (in slices: see WAIT_SLICE)
            left = deadline - time.monotonic()
            ready = dict(self._poller.poll(max(1, int(min(left, WAIT_SLICE) * 1000))))
            if self._sock in ready:
                return True
            if self._closed in ready:
                self._closed.recv_multipart()
                raise PeerClosed(f"message {self.index}: the scheduler at {self.endpoint} closed the connection "
                                 "before replying (did it stop?)")
            if left <= WAIT_SLICE:
                return False

    def close(self) -> None:
        self._sock.disable_monitor()
        self._closed.close(0)
        self._sock.close(0)
