"""The scheduler's ZeroMQ side: bind a REP endpoint, answer Batsim's requests through a Session."""
import math
import time
from typing import Callable, Optional

import zmq

from .. import protocol as p
from ..scheduler import Scheduler, Session
from ..scheduler.failure import SchedulerFailure, policy_failure
from .endpoints import RepEndpoint, bind_rep
from .polling import DEFAULT_BUSY_WAIT
from ..errors import BatschedError

DEFAULT_ENDPOINT = "tcp://127.0.0.1:28000"  # loopback: a scheduler is not a public service


class PeerTimeout(BatschedError, TimeoutError):
    """Batsim went silent for longer than the allowed timeout."""


def serve(scheduler: Scheduler, endpoint: str = DEFAULT_ENDPOINT, timeout: Optional[float] = None,
          on_exchange: Optional[Callable[[p.Message, p.Message], None]] = None,
          context: Optional[zmq.Context] = None,
          watchdog: Optional[Callable[[], None]] = None,
          busy_wait: float = DEFAULT_BUSY_WAIT, transport: str = "auto",
          on_bound: Optional[Callable[[str], None]] = None) -> Session:
    """Serve one simulation; returns the finished session once SIMULATION_ENDS has been answered.

    ``timeout`` (seconds, None = wait forever) bounds the wait for each request.
    The socket is closed on every way out, errors included, so nothing lingers.
    ``watchdog`` is called while waiting (about twice a second); a launcher uses it to
    raise when the Batsim process it supervises has died, instead of waiting for a timeout.
    ``busy_wait`` (seconds) is how long to poll for the next request before blocking: it trades
    at most that much CPU per message for a shorter round trip (0 always blocks).
    ``transport`` picks the REP endpoint (:func:`.endpoints.bind_rep`): "auto" speaks ZMTP on a
    plain socket for tcp:// and ipc:// endpoints, "libzmq" uses pyzmq's REP socket.
    ``on_bound`` is called with the endpoint once bound (where Batsim must connect: a port the
    system chose is the one it chose).
    """
    if busy_wait < 0:
        raise ValueError(f"busy_wait must be >= 0, got {busy_wait}")
    if timeout is not None:
        busy_wait = min(busy_wait, timeout)
    rep = bind_rep(endpoint, transport, context)
    session = Session(scheduler)
    try:
        if on_bound is not None:
            on_bound(rep.endpoint)
        while not session.ended:
            raw = _receive(rep, busy_wait, timeout, watchdog)
            request = p.decode_message(raw, sender=p.BATSIM)
            try:
                reply = session.handle(request)
            except Exception as exc:
                raise policy_failure(exc, request.now)
            rep.send(p.encode_message(reply))
            if on_exchange is not None:
                on_exchange(request, reply)
    finally:
        rep.close()
    return session


#: Longest sleep between checks of Ctrl-C, the watchdog and the timeout (seconds).
_SLICE = 0.5


def _receive(rep: RepEndpoint, busy_wait: float, timeout: Optional[float],
             watchdog: Optional[Callable[[], None]]) -> bytes:
    raw = rep.poll(busy_wait)
    if raw is not None:
        return raw
    deadline = math.inf if timeout is None else time.monotonic() + timeout - busy_wait
    while True:
        raw = rep.wait(min(_SLICE, deadline - time.monotonic()))
        if raw is not None:
            return raw
        if time.monotonic() >= deadline:
            raise PeerTimeout(f"no message from Batsim on {rep.endpoint} for {timeout:g} s")
        if watchdog is not None:
            watchdog()

