"""Baselines in Scheduling-v0's action space (which queued job starts now):

- ``FF``: first fit, the first queued job that fits now, else wait.
- ``EASY``: the head job if it fits; else the first job that fits now without delaying the
  head's reservation (computed from running jobs' walltimes).
- ``SAF``: EASY on the queue in smallest-area-first order.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

from ...policies.agent.base import Bound


class FirstFit(Bound):
    def act(self) -> int:
        fitting = self.scheduler.fitting()
        return fitting[0] + 1 if fitting else 0


class Easy(Bound):
    @staticmethod
    def order(job: Any) -> Optional[float]:
        """The queue order's key (None: submission order)."""
        return None

    def duration(self, job: Any) -> float:
        """How long a job holds its hosts, as the rule plans (its walltime)."""
        return job.walltime or math.inf

    def ends_at(self, job: Any) -> float:
        """When a running job frees its hosts, as the rule plans (start + walltime)."""
        return job.expected_end or math.inf

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
        ends = [(self.ends_at(j), j.res) for j in s.jobs.running.values()]
        ends += [(s.now + self.duration(j), j.res) for j, _, _ in s.pending.values()]
        for end, hosts in sorted(ends):
            avail += hosts
            if avail >= head.res:
                shadow, extra = end, avail - head.res
                break
        for i in indices[1:]:
            job = queue[i]
            if job.res <= free and (s.now + self.duration(job) <= shadow or job.res <= extra):
                return i + 1
        return 0


class Saf(Easy):
    @staticmethod
    def order(job: Any) -> float:
        return (job.walltime or math.inf) * job.res


BASELINES: dict[str, Callable[[], Any]] = {"FF": FirstFit, "EASY": Easy, "SAF": Saf}
