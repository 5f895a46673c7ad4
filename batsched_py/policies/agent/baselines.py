"""Rule-based policies expressed in the environments' action spaces, so that agents and baselines
run through the same code on the same inputs.  Each reads the scheduler it is bound to (as a
rule-based scheduler reads its view) and answers with an action.

Shutdown (how many nodes to keep off):
- ``T0``, ``T1``, ``T5``: timeout policies.  Nodes idle for at least T time units are switched
  off; nodes are woken (released) when queued jobs that could start now, were every node on,
  need more hosts than the idle ones on (a job waiting for running jobs to end wakes nothing).
- ``OR*``: the off-reservation oracle.  It knows each job's real runtime and when every job of
  the day will be submitted (read from the workload at the simulation's start), and keeps on
  exactly the nodes that the demand (hosts of running jobs until their real end, queued jobs
  that could start now, jobs submitted within the horizon) needs within the break-even horizon: the time a node must
  stay off for switching off and on again to cost less energy than idling (from the hosts'
  powers and switching times).

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
    def __init__(self, timeout: float):
        self.timeout = timeout

    def act(self) -> int:
        s = self.scheduler
        states = s.states()
        off = len(s.reserved)
        missing = _missing_nodes(s)
        if missing:
            return max(0, off - missing)
        idle_long = sum(1 for i, st in enumerate(states) if st is NodeState.IDLE and i not in s.reserved
                        and s.now - s.idle_since.get(i, s.now) >= self.timeout)
        return min(s.nb_nodes, off + idle_long)


def _missing_nodes(s: Any) -> int:
    """Nodes to wake: the hosts that queued jobs able to start now need beyond the idle hosts on."""
    free_on = _free_hosts_on(s)
    return math.ceil(max(0, _startable_hosts(s, free_on) - free_on) / s.cores)


def _free_hosts_on(s: Any) -> int:
    """Free hosts of the nodes not reserved."""
    return sum((m & s.platform.free_mask).bit_count() for i, m in enumerate(s.masks) if i not in s.reserved)


def _startable_hosts(s: Any, free_on: int) -> int:
    """Hosts of the queued jobs that could start now were every node on: first fit over the queue
    (in the base policy's order) into the hosts that no job runs on (``free_on``, the free hosts of
    the nodes not reserved, and the reserved nodes).  A job that must wait for running jobs anyway
    wakes nothing: its nodes would idle until it starts (Batsim schedulers with a timeout shutdown
    wake hosts when they allocate a job to them)."""
    room = free_on + sum(m.bit_count() for i, m in enumerate(s.masks) if i in s.reserved)
    demand = 0
    for job in s.queue:
        if demand + job.res <= room:
            demand += job.res
    return demand


class OffReservationOracle(Bound):
    def bind(self, scheduler: Any) -> None:
        super().bind(scheduler)
        self.arrivals: list[tuple[float, int]] = []
        self.runtimes: dict[str, float] = {}
        path = scheduler.options.get("workload") or getattr(scheduler, "workload_path", None)
        if path:
            self._read(str(path), scheduler)
        self.horizon = _break_even(scheduler)

    def _read(self, path: str, s: Any) -> None:
        from ..power import profile_runtime
        from ...workloads.document import read_workload_file
        _, profiles, jobs = read_workload_file(path)
        # (Batsim does not tell a scheduler host speeds: option host_speed, default Taurus' 1 Mflop/unit)
        speed = float(s.options.get("host_speed", 1e6))
        for job in jobs:
            self.arrivals.append((float(job.get("subtime", 0)), int(job.get("res", 0))))
            profile = profiles.get(job.get("profile"))
            if isinstance(profile, dict):
                runtime = profile_runtime(profile, speed)
                if runtime is not None:
                    self.runtimes[str(job["id"])] = runtime

    def act(self) -> int:
        s = self.scheduler
        now, end = s.now, s.now + self.horizon
        demand = _startable_hosts(s, _free_hosts_on(s))
        for job in s.jobs.running.values():
            real = self.runtimes.get(job.id.split("!", 1)[-1])
            if real is None or (job.start_time or now) + real > now:
                demand += job.res
        demand += sum(res for t, res in self.arrivals if now < t <= end)
        needed = math.ceil(min(len(s.platform), demand) / s.cores)
        return max(0, s.nb_nodes - needed)


def _break_even(s: Any) -> float:
    """Time a node must stay asleep for switching off and on to pay: from one host's powers."""
    r = next(iter(s.platform))
    pw, sleep = r.power, r.power.sleep[0]
    idle = pw.pstates[pw.compute_pstates[0]].idle
    asleep = pw.pstates[sleep.sleep].idle
    off_w, on_w = pw.pstates[sleep.switch_off].idle, pw.pstates[sleep.switch_on].idle
    off_t, on_t = s.options.get("switch_off_time", 3.0), s.options.get("switch_on_time", 1.0)
    # idle * x = off_w * off_t + on_w * on_t + asleep * (x - off_t - on_t)
    return max(off_t + on_t, (off_w * off_t + on_w * on_t - asleep * (off_t + on_t)) / max(idle - asleep, 1e-9))


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
        # the head's reservation: when enough hosts free up, by walltime; extra hosts then
        shadow, extra = math.inf, 0
        avail = free
        for job in sorted(s.jobs.running.values(), key=lambda j: j.expected_end or math.inf):
            avail += job.res
            if avail >= head.res:
                shadow, extra = (job.expected_end or math.inf), avail - head.res
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
        from .elastic import deadline
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
                 "OR*": OffReservationOracle},
    "scheduling": {"FF": FirstFit, "EASY": Easy, "SAF": Saf},
    "elastic": {"FCFS": ElasticFcfs, "EDF": ElasticEdf},
}
