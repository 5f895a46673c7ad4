"""Baselines in Elastic-v0's action space (which job class takes a free core; mode elastic: the
pool level too):

- ``FCFS`` (the stand-in for a grid site's native scheduler): the class holding the oldest job;
  the pool stays as it is.
- ``EDF``, earliest deadline first over the class heads (deadline: submission + runtime, the
  job's earliest possible end); the pool level nearest to the demand (running + queued jobs)
  plus the largest pool step (headroom: hosts take minutes to switch on).
"""
from __future__ import annotations

from typing import Any, Callable

from ...policies.agent.base import Bound
from .mdp import deadline


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


BASELINES: dict[str, Callable[[], Any]] = {"FCFS": ElasticFcfs, "EDF": ElasticEdf}
