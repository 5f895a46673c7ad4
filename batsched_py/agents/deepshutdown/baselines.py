"""The authors' baselines in Shutdown-v0's action space (how many nodes to keep off):

- ``T0``, ``T1``, ``T5``, ``T10``: timeout policies.  Nodes idle for T time units (counted as
  the authors count, see Timeout) are kept off, and so are nodes already off, as long as the
  queued jobs that could start now (were every node on) keep enough free hosts.
- ``OR*``: the authors' off-reservation oracle.  It knows the real runtime of the running jobs and
  lets a job that could start now wait while the next real releases still let it start with a
  stretch (wait / walltime) below 0.5; otherwise it acts as T0.
- ``QB``: queue batching (ours, not the authors').  A job starts at once on hosts already on; one
  that needs a node switched on waits until ``queue`` jobs are queued, its stretch reaches
  ``max_stretch`` or its wait ``max_wait``, and then wakes its nodes, one such job a decision,
  so that a few nodes run the queue back to back instead of each job paying a node's switch off
  and on.  Idle nodes are switched off as T0 does.  It knows nothing a deployed policy does not.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

from ...policies.agent.base import Bound
from ...policies.agent.clock import EPS
from ...policies.agent.nodes import NodeState
from ...scheduler import HostState
from ...policies.power import day_runtimes
from .releases import held, host_waits, wait_for_hosts


class Timeout(Bound):
    """Keep off the nodes idle for ``timeout`` and those already off; wake none that a queued job
    does not need (the authors' timeout agent).  A node's idle count grows by dt at each decision
    that finds it idle, the first included, as the authors' agent counts: T1 switches a node off at
    the first decision after its job ended (which comes right after that instant's events), T10
    nine minutes later; their per-day results show exactly this (docs/papers/deepshutdown.md)."""

    def __init__(self, timeout: float):
        self.timeout = timeout

    def act(self) -> int:
        s = self.scheduler
        return _keep_off(s, _free_after_demand(s, delay=None), lambda i: s.now - s.idle_since[i] + s.dt >= self.timeout - EPS)


def _free_after_demand(s: Any, delay: Optional[Callable[[Any], bool]]) -> int:
    """Free hosts (of every node, reserved ones included) less those the queued jobs that could
    start now would take, EASY's way over the plan order (``delay``: jobs an oracle lets wait)."""
    free = s.free_mask_of().bit_count()
    for job in s.startable():
        if delay is None or not delay(job):
            free -= job.res
    return free


def _keep_off(s: Any, available: int, timed_out: Callable[[int], bool]) -> int:
    """Nodes to keep off, in id order while ``available`` free hosts remain for them: those off or
    switching off, and idle ones whose ``timed_out`` holds."""
    states = s.states()
    keep = 0
    for i, m in enumerate(s.masks):
        size = m.bit_count()
        if available < size:
            break
        st = states[i]
        if st in (NodeState.OFF, NodeState.SWITCHING_OFF) or (i in s.idle_since and timed_out(i)):
            keep += 1
            available -= size
    return keep


class OffReservationOracle(Bound):
    """The authors' off-reservation oracle (``OffReservationAgent``, max stretch 0.5, timeout 0):
    it knows the real runtime of the running jobs, lets a job that could start now wait when the
    next real releases let it start before its stretch (wait / walltime) reaches ``max_stretch``,
    and otherwise keeps off every idle node, as T0 does.  With ``real_runtimes=False`` it reads the
    walltimes instead: the same rule on what a deployed policy knows."""

    def __init__(self, max_stretch: float = 0.5, real_runtimes: bool = True):
        self.max_stretch = max_stretch
        self.real_runtimes = real_runtimes

    def bind(self, scheduler: Any) -> None:
        super().bind(scheduler)
        self.runtimes = day_runtimes(scheduler) if self.real_runtimes else {}

    def _next_releases(self) -> list[float]:
        """Time until each held host is released, by the real runtime (walltime when unknown)."""
        s = self.scheduler
        return host_waits(held(s, self.runtimes), s.now)

    def can_wait(self, job: Any, releases: list[float]) -> bool:
        """Whether ``job``, startable now, may wait: the next real releases (``releases``, from now)
        would start it before its stretch reaches ``max_stretch``."""
        s = self.scheduler
        if not job.walltime or s.stretch(job) >= self.max_stretch or not releases:
            return False
        start = s.now + wait_for_hosts(job.res, releases)
        return (start - job.subtime) / job.walltime < self.max_stretch

    def free_hosts(self) -> int:
        """Free hosts left once the queued jobs that may not wait have theirs."""
        releases = self._next_releases()
        return _free_after_demand(self.scheduler, lambda job: self.can_wait(job, releases))

    def act(self) -> int:
        return _keep_off(self.scheduler, self.free_hosts(), lambda i: True)


class QueueBatch(Bound):
    """Queue batching (see the module's docstring): ``queue`` jobs queued, a job's stretch at
    ``max_stretch`` or its wait at ``max_wait`` (time units) wake the nodes of one more job a
    decision; jobs that fit on hosts already on start at once; idle nodes are switched off (T0)."""

    def __init__(self, queue: int = 6, max_stretch: float = 0.5, max_wait: float = math.inf):
        if queue < 1 or max_stretch <= 0 or max_wait <= 0:
            raise ValueError(f"QB: queue must be >= 1, max_stretch and max_wait > 0 (got {queue}, {max_stretch}, "
                             f"{max_wait})")
        self.queue = queue
        self.max_stretch = max_stretch
        self.max_wait = max_wait

    def act(self) -> int:
        s = self.scheduler
        on = (s.free_mask_of() & s.platform.mask_in(HostState.IDLE, HostState.SWITCHING_ON)).bit_count()
        woken = False

        def delay(job: Any) -> bool:
            nonlocal on, woken
            if job.res <= on:               # (on hosts already on: at once)
                on -= job.res
                return False
            if woken or (len(s.queue) < self.queue and s.stretch(job) < self.max_stretch
                         and s.now - job.subtime < self.max_wait):
                return True
            woken = True
            return False
        return _keep_off(s, _free_after_demand(s, delay), lambda i: True)


BASELINES: dict[str, Callable[[], Any]] = {"T0": lambda: Timeout(0), "T1": lambda: Timeout(1), "T5": lambda: Timeout(5),
                                           "T10": lambda: Timeout(10), "OR*": OffReservationOracle, "QB": QueueBatch}
