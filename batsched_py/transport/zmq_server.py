"""The scheduler's ZeroMQ side: bind a REP socket, answer Batsim's requests through a Session."""
import math
import time
from typing import Callable, Optional

import zmq

from .. import protocol as p
from ..scheduler import DecisionError, Scheduler, Session, SessionError
from .polling import DEFAULT_BUSY_WAIT, recv_polling

DEFAULT_ENDPOINT = "tcp://127.0.0.1:28000"  # loopback: a scheduler is not a public service


class PeerTimeout(TimeoutError):
    """Batsim went silent for longer than the allowed timeout."""


class SchedulerFailure(RuntimeError):
    """The policy raised while handling a message; ``__cause__`` holds the original exception."""


def serve(scheduler: Scheduler, endpoint: str = DEFAULT_ENDPOINT, timeout: Optional[float] = None,
          on_exchange: Optional[Callable[[p.Message, p.Message], None]] = None,
          context: Optional[zmq.Context] = None,
          watchdog: Optional[Callable[[], None]] = None,
          busy_wait: float = DEFAULT_BUSY_WAIT) -> Session:
    """Serve one simulation; returns the finished session once SIMULATION_ENDS has been answered.

    ``timeout`` (seconds, None = wait forever) bounds the wait for each request.
    The socket is closed on every way out, errors included, so nothing lingers.
    ``watchdog`` is called while waiting (about twice a second); a launcher uses it to
    raise when the Batsim process it supervises has died, instead of waiting for a timeout.
    ``busy_wait`` (seconds) is how long to poll for the next request before blocking: it trades
    at most that much CPU per message for a shorter round trip (0 always blocks).
    """
    if busy_wait < 0:
        raise ValueError(f"busy_wait must be >= 0, got {busy_wait}")
    if timeout is not None:
        busy_wait = min(busy_wait, timeout)
    ctx = context or zmq.Context.instance()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        sock.bind(endpoint)
    except zmq.ZMQError as exc:
        sock.close()
        raise OSError(f"cannot bind {endpoint}: {exc}") from None
    # Waiting happens inside recv, in slices, so Ctrl-C and the watchdog are served promptly:
    # one call per request instead of poll + recv keeps the round trip short.
    slice_ms = _SLICE_MS if timeout is None else max(1, min(_SLICE_MS, int(timeout * 1000)))
    sock.setsockopt(zmq.RCVTIMEO, slice_ms)
    session = Session(scheduler)
    try:
        while not session.ended:
            raw = _receive(sock, timeout, slice_ms / 1000, endpoint, watchdog, busy_wait)
            request = p.decode_message(raw, sender=p.BATSIM)
            try:
                reply = session.handle(request)
            except (DecisionError, SessionError):
                raise  # already say what and where
            except Exception as exc:
                raise SchedulerFailure(_describe(exc)) from exc
            sock.send(p.encode_message(reply))
            if on_exchange is not None:
                on_exchange(request, reply)
    finally:
        sock.close(linger=0)
    return session


_SLICE_MS = 500


def _receive(sock: zmq.Socket, timeout: Optional[float], slice_s: float, endpoint: str,
             watchdog: Optional[Callable[[], None]], busy_wait: float) -> bytes:
    raw = recv_polling(sock, busy_wait)
    if raw is not None:
        return raw
    deadline = None
    while True:
        try:
            return sock.recv()
        except zmq.Again:
            pass
        now = time.monotonic()
        if deadline is None:
            deadline = math.inf if timeout is None else now + timeout - slice_s - busy_wait
        if now >= deadline:
            raise PeerTimeout(f"no message from Batsim on {endpoint} for {timeout:g} s") from None
        if watchdog is not None:
            watchdog()


def _describe(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" (at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno})" if tb is not None else ""
    return f"{type(exc).__name__}: {exc}{where}"
