"""Queue orders shared by every queue-based policy (option ``"queue_order"``).

An order is a sort key on :class:`~batsched_py.scheduler.Job`; sorting is
stable, so jobs the key cannot tell apart stay in submission order (which is
exactly FCFS, batsched's default).  Jobs without a walltime count as infinitely
long for the walltime-based orders.
"""
from typing import Callable, Optional

from ..scheduler import Job
from .options import PolicyOptionError

INF = float("inf")


def _walltime(job: Job) -> float:
    return INF if job.walltime is None else job.walltime


ORDERS: dict[str, Optional[Callable[[Job], float]]] = {
    "fcfs": None,                                   # submission order: nothing to sort
    "lcfs": lambda j: -j.subtime,                   # last come, first served
    "saf": lambda j: _walltime(j) * j.res,          # smallest area first
    "laf": lambda j: -_walltime(j) * j.res,         # largest area first
    "sjf": _walltime,                               # shortest (requested) job first
    "ljf": lambda j: -_walltime(j),                 # longest job first
    "smallest": lambda j: j.res,                    # fewest hosts first
    "largest": lambda j: -j.res,                    # most hosts first
}


class QueueOrderError(PolicyOptionError):
    """An unknown ``queue_order`` option value."""


def order_key(name: str) -> Optional[Callable[[Job], float]]:
    """The sort key of order ``name`` (None for FCFS, where the queue is already in order)."""
    try:
        return ORDERS[name]
    except (KeyError, TypeError):   # (TypeError: a list or an object, unhashable)
        raise QueueOrderError(f"option queue_order: unknown order {name!r}; known: {', '.join(ORDERS)}") from None
