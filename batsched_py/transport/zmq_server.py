"""The scheduler's ZeroMQ side: a REP endpoint that Batsim connects to, as a caller-driven
:class:`~.backend.Backend`, and ``serve``, which answers its requests through a Session."""
import math
import time
from typing import Callable, Optional

import zmq

from .. import protocol as p
from ..scheduler import Scheduler, Session
from .backend import drive
from .endpoints import RepEndpoint, bind_rep
from .polling import DEFAULT_BUSY_WAIT
from ..interrupts import WAIT_SLICE
from ..errors import BatschedError

DEFAULT_ENDPOINT = "tcp://127.0.0.1:28000"  # loopback: a scheduler is not a public service


class PeerTimeout(BatschedError, TimeoutError):
    """The peer (Batsim, or the scheduler for the emulator's REQ side) went silent for longer than
    the allowed timeout."""


class RepBackend:
    """Batsim connected to a REP endpoint bound here, driven request by request (a Backend).

    ``timeout`` (seconds, None = wait forever) bounds the wait for each request.
    ``watchdog`` is called while waiting (about twice a second); a launcher uses it to
    raise when the Batsim process it supervises has died, instead of waiting for a timeout.
    ``busy_wait`` (seconds) is how long to poll for the next request before blocking: it trades
    at most that much CPU per message for a shorter round trip (0 always blocks).
    ``transport`` picks the REP endpoint (:func:`.endpoints.bind_rep`): "auto" speaks ZMTP on a
    plain socket for tcp:// and ipc:// endpoints, "libzmq" uses pyzmq's REP socket.
    ``endpoint`` is where Batsim must connect, once bound: a port the system chose is the one it chose.
    """

    def __init__(self, endpoint: str = DEFAULT_ENDPOINT, *, timeout: Optional[float] = None,
                 busy_wait: float = DEFAULT_BUSY_WAIT, transport: str = "auto",
                 context: Optional[zmq.Context] = None, watchdog: Optional[Callable[[], None]] = None):
        if busy_wait < 0:
            raise ValueError(f"busy_wait must be >= 0, got {busy_wait}")
        self.timeout = timeout
        self.busy_wait = busy_wait if timeout is None else min(busy_wait, timeout)
        self.watchdog = watchdog
        self._rep = bind_rep(endpoint, transport, context)
        self.endpoint = self._rep.endpoint
        self._ending = False        # the last request held SIMULATION_ENDS: its answer is the last message

    def start(self) -> p.Message:
        return self._receive()

    def send(self, reply: p.Message) -> Optional[p.Message]:
        self._rep.send(p.encode_message(reply))
        if self._ending:
            return None
        return self._receive()

    def close(self) -> None:
        """Close the socket (idempotent), so nothing lingers."""
        self._rep.close()

    def _receive(self) -> p.Message:
        request = p.decode_message(_receive(self._rep, self.busy_wait, self.timeout, self.watchdog),
                                   sender=p.BATSIM)
        for event in request.events:
            if type(event) is p.SimulationEnds:
                self._ending = True
        return request


def serve(scheduler: Scheduler, endpoint: str = DEFAULT_ENDPOINT, timeout: Optional[float] = None,
          on_exchange: Optional[Callable[[p.Message, p.Message], None]] = None,
          context: Optional[zmq.Context] = None,
          watchdog: Optional[Callable[[], None]] = None,
          busy_wait: float = DEFAULT_BUSY_WAIT, transport: str = "auto",
          on_bound: Optional[Callable[[str], None]] = None) -> Session:
    """Serve one simulation; returns the finished session once SIMULATION_ENDS has been answered.

    ``timeout``, ``watchdog``, ``busy_wait``, ``transport``: see :class:`RepBackend`.
    The socket is closed on every way out, errors included, so nothing lingers.
    ``on_bound`` is called with the endpoint once bound (where Batsim must connect: a port the
    system chose is the one it chose); ``on_exchange(request, reply)`` after each reply is sent
    and the next request has arrived.
    """
    batsim = RepBackend(endpoint, timeout=timeout, busy_wait=busy_wait, transport=transport, context=context,
                        watchdog=watchdog)
    try:
        if on_bound is not None:
            on_bound(batsim.endpoint)
        session = Session(scheduler)
        drive(session.handle, batsim, on_exchange)
        return session
    finally:
        batsim.close()


def _receive(rep: RepEndpoint, busy_wait: float, timeout: Optional[float],
             watchdog: Optional[Callable[[], None]]) -> bytes:
    raw = rep.poll(busy_wait)
    if raw is not None:
        return raw
    deadline = math.inf if timeout is None else time.monotonic() + timeout - busy_wait
    while True:     # (in slices: signals and the watchdog are served between them)
        raw = rep.wait(min(WAIT_SLICE, deadline - time.monotonic()))
        if raw is not None:
            return raw
        if time.monotonic() >= deadline:
            raise PeerTimeout(f"no message from Batsim on {rep.endpoint} for {timeout:g} s")
        if watchdog is not None:
            watchdog()
