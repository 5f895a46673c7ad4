"""EASY backfilling as one pure pass over host bitmasks: which queued jobs start now, on which hosts.

DeepShutdown's environment (the authors' GridGym ``OffReservationEnv``) plans the queue at each
decision with EASY: the priority job (the oldest) starts if enough hosts are free, else it gets a
reservation at the time enough hosts are released (by walltime); the other jobs, smallest area first,
start if they fit now and either end before that time or use only hosts the priority job leaves
over.  The same pass answers "what would start were the reservation lifted" (the blocked jobs of the
reward), so it takes the free hosts and the releases as arguments and changes nothing.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Optional, Sequence

from ...scheduler.view import lowest_bits

Chooser = Callable[[int, int], int]     # (free hosts mask, n) -> mask of n of them


def plan_order(queue: Sequence[Any], window: int) -> list[Any]:
    """The jobs EASY considers, in its order: the oldest first (the priority job), then the next
    ``window - 1`` by area (walltime x hosts; no walltime: last), as the authors' ``_get_queue``."""
    if not queue:
        return []
    rest = sorted(queue[1:window], key=lambda j: j.walltime * j.res if j.walltime is not None else math.inf)
    return [queue[0], *rest]


def easy_plan(jobs: Sequence[Any], free: int, releases: Iterable[tuple[float, int]], now: float,
              choose: Chooser = lowest_bits) -> tuple[list[tuple[Any, int]], Optional[float]]:
    """The jobs of ``jobs`` (plan order) that start now on ``free`` hosts, with their hosts, and the
    priority job's reserved start (None: it starts now or there is no job; inf: never, on these
    hosts).  ``releases``: (time, hosts) released later by the jobs that hold hosts now."""
    started: list[tuple[Any, int]] = []
    shadow: Optional[float] = None
    extra = 0
    for job in jobs:
        n = free.bit_count()
        if shadow is None:
            if job.res <= n:
                hosts = choose(free, job.res)
                free &= ~hosts
                started.append((job, hosts))
                continue
            shadow, extra = math.inf, 0
            count = n
            for t, k in sorted(releases):
                count += k
                if count >= job.res:
                    shadow, extra = max(t, now), count - job.res
                    break
            continue
        if job.res > n:
            continue
        ends_before = job.walltime is not None and now + job.walltime <= shadow
        if ends_before or job.res <= extra:
            if not ends_before:
                extra -= job.res
            hosts = choose(free, job.res)
            free &= ~hosts
            started.append((job, hosts))
    return started, shadow
