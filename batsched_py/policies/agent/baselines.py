"""Rule-based policies expressed in the environments' action spaces, so that agents and baselines
run through the same code on the same inputs.  Each reads the scheduler it is bound to (as a
rule-based scheduler reads its view) and answers with an action.

Shutdown (how many nodes to keep off), the authors' agents:
- ``T0``, ``T1``, ``T5``, ``T10``: timeout policies.  Nodes idle for T time units (counted as
  the authors count, see Timeout) are kept off, and so are nodes already off, as long as the
  queued jobs that could start now (were every node on) keep enough free hosts.
- ``OR*``: the authors' off-reservation oracle.  It knows the real runtime of the running jobs and
  lets a job that could start now wait while the next real releases still let it start with a
  stretch (wait / walltime) below 0.5; otherwise it acts as T0.

Scheduling (which queued job starts now):
- ``FF``: first fit, the first queued job that fits now, else wait.
- ``EASY``: the head job if it fits; else the first job that fits now without delaying the
  head's reservation (computed from running jobs' walltimes).
- ``SAF``: EASY on the queue in smallest-area-first order.

Elastic (which job class takes a free core; mode elastic: the pool level too):
- ``FCFS`` (the stand-in for a grid site's native scheduler): the class holding the oldest job;
  the pool stays as it is.
- ``EDF``, earliest deadline first over the class heads (deadline: submission + runtime, the
  job's earliest possible end); the pool level nearest to the demand (running + queued jobs)
  plus the largest pool step (headroom: hosts take minutes to switch on).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

from ..power import read_runtimes
from .clock import EPS
from .elastic import deadline
from .nodes import NodeState


class Bound:
    """A policy that reads the scheduler it is bound to."""
    scheduler: Any = None

    def bind(self, scheduler: Any) -> None:
        self.scheduler = scheduler

    def __call__(self, obs: Any) -> int:
        if self.scheduler is None:
            raise RuntimeError(f"{type(self).__name__} reads the scheduler: bind(scheduler) it first")
        return self.act()

    def act(self) -> int:
        raise NotImplementedError


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
    and otherwise keeps off every idle node, as T0 does."""

    def __init__(self, max_stretch: float = 0.5):
        self.max_stretch = max_stretch

    def bind(self, scheduler: Any) -> None:
        super().bind(scheduler)
        self.runtimes: dict[str, float] = {}
        path = scheduler.options.get("workload") or getattr(scheduler, "workload_path", None)
        if path:
            self.runtimes = read_runtimes(str(path), float(scheduler.options.get("host_speed", 1e6)))

    def _next_releases(self) -> list[float]:
        """Time until each held host is released, by the real runtime (walltime when unknown)."""
        s, out = self.scheduler, []
        for job_id, hosts in s.alloc_masks.items():
            job = s.jobs[job_id]
            real = self.runtimes.get(job_id.split("!", 1)[-1], job.walltime)
            start = job.start_time if job.start_time is not None else s.now
            out += [start + (real if real is not None else math.inf) - s.now] * hosts.bit_count()
        return sorted(out)

    def act(self) -> int:
        s = self.scheduler
        releases = self._next_releases()

        def can_wait(job: Any) -> bool:
            if not job.walltime or s.stretch(job) >= self.max_stretch or not releases:
                return False
            start = s.now + releases[:job.res][-1]
            return (start - job.subtime) / job.walltime < self.max_stretch

        return _keep_off(s, _free_after_demand(s, can_wait), lambda i: True)


class FirstFit(Bound):
    def act(self) -> int:
        s = self.scheduler
        for i in range(min(len(s.queue), s.max_queue)):
            if s.fits(i):
                return i + 1
        return 0


class Easy(Bound):
    @staticmethod
    def order(job: Any) -> Optional[float]:
        """The queue order's key (None: submission order)."""
        return None

    def act(self) -> int:
        s = self.scheduler
        queue = s.queue[:s.max_queue]
        if not queue:
            return 0
        indices = list(range(len(queue)))
        if type(self).order is not Easy.order:
            indices.sort(key=lambda i: self.order(queue[i]) or 0.0)
        free = s.free_hosts().bit_count()
        head = queue[indices[0]]
        if head.res <= free:
            return indices[0] + 1
        # the head's reservation: when enough hosts free up, by walltime (a job still waiting for
        # its hosts to switch on: from now); extra hosts then
        shadow, extra = math.inf, 0
        avail = free
        ends = [(j.expected_end or math.inf, j.res) for j in s.jobs.running.values()]
        ends += [(s.now + (j.walltime or math.inf), j.res) for j, _, _ in s.pending.values()]
        for end, hosts in sorted(ends):
            avail += hosts
            if avail >= head.res:
                shadow, extra = end, avail - head.res
                break
        for i in indices[1:]:
            job = queue[i]
            if job.res <= free and (s.now + (job.walltime or math.inf) <= shadow or job.res <= extra):
                return i + 1
        return 0


class Saf(Easy):
    @staticmethod
    def order(job: Any) -> float:
        return (job.walltime or math.inf) * job.res


class ElasticFcfs(Bound):
    def act(self) -> Any:
        s = self.scheduler
        heads = [(q[0].subtime, q[0].id, c) for c, q in enumerate(s.queues) if q]
        return self.with_pool(min(heads)[2] if heads else 0)

    def with_pool(self, c: int) -> Any:
        s = self.scheduler
        if s.mode == "scheduling":
            return c
        return [c, min(range(len(s.pool_steps)), key=lambda k: abs(s.pool_steps[k]))]


class ElasticEdf(ElasticFcfs):
    def act(self) -> Any:
        s = self.scheduler
        heads = [(deadline(s, q[0]), q[0].subtime, c) for c, q in enumerate(s.queues) if q]
        return self.with_pool(min(heads)[2] if heads else 0)

    def with_pool(self, c: int) -> Any:
        s = self.scheduler
        if s.mode == "scheduling":
            return c
        demand = s.running_count() + s.queued_count() + max(s.pool_steps)   # (headroom: hosts take time to boot)
        return [c, min(range(len(s.pool_steps)), key=lambda k: abs(s.pool_size + s.pool_steps[k] - demand))]


BASELINES: dict[str, dict[str, Callable[[], Any]]] = {
    "shutdown": {"T0": lambda: Timeout(0), "T1": lambda: Timeout(1), "T5": lambda: Timeout(5),
                 "T10": lambda: Timeout(10), "OR*": OffReservationOracle},
    "scheduling": {"FF": FirstFit, "EASY": Easy, "SAF": Saf},
    "elastic": {"FCFS": ElasticFcfs, "EDF": ElasticEdf},
}
