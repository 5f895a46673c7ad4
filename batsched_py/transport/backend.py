"""One simulation driven by its caller, a request at a time: what serve, launch and the environments share.

A :class:`Backend` is where a simulation runs: the emulator in this process, a Batsim that
connects to a REP endpoint bound here (:class:`.zmq_server.RepBackend`), or a real Batsim run as
a supervised subprocess or container (:mod:`batsched_py.launcher`).  ``start()`` gives Batsim's
first request, ``send(reply)`` answers the last request and gives the next one (None once
SIMULATION_ENDS is answered), ``close()`` stops what is left, on every way out.

:func:`drive` answers every request with an exchange callable: a :class:`Session`'s ``handle``,
or Batsim's side of a scheduler elsewhere (the emulator's ZeroMQ peer); an environment answers
through a Session but stops at agent decision points (envs/core.py).
"""
from __future__ import annotations

from typing import Callable, Optional, Protocol

from .. import protocol as p
from ..scheduler.failure import policy_failure

#: A scheduler as its driver sees it: a request in, the reply out.
Exchange = Callable[[p.Message], p.Message]


class Backend(Protocol):
    def start(self) -> p.Message: ...
    def send(self, reply: p.Message) -> Optional[p.Message]: ...
    def close(self) -> None: ...


def drive(exchange: Exchange, backend: Backend,
          on_exchange: Optional[Callable[[p.Message, p.Message], None]] = None) -> None:
    """Answer each of ``backend``'s requests with ``exchange`` until the simulation ends.  A
    failure of the policy is raised as SchedulerFailure naming the time (:func:`policy_failure`).
    The caller closes ``backend``."""
    handle, send = exchange, backend.send
    request: Optional[p.Message] = backend.start()
    while request is not None:
        try:
            reply = handle(request)
        except Exception as exc:
            raise policy_failure(exc, request.now)
        following = send(reply)
        if on_exchange is not None:
            on_exchange(request, reply)
        request = following
