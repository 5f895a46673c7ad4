"""What Shutdown-v0's critic may know and its actor may not (for :mod:`..common.guided`).

The actor sees walltimes; what a node's future costs depends on the real runtimes, which only
an oracle knows.  So the critic reads, each in [0, 1]:

- for each node, the time until the jobs holding its hosts release them by their real runtimes,
  / ``horizon`` (capped; 0 when no job holds it);
- for the ``queue_features`` jobs of the plan order, real runtime / walltime (0: no job there);
- the authors' oracle's action (OR*: how many nodes it keeps off) / G.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...policies.agent.easy_plan import plan_order
from ...policies.power import real_runtime
from .baselines import OffReservationOracle
from .releases import held, node_waits


class RealRuntimes:
    """The features above for a platform of ``nb_nodes`` nodes (``horizon``: in its time unit)."""

    def __init__(self, nb_nodes: int, queue_features: int, horizon: float = 60.0):
        self.nb_nodes, self.k, self.horizon = nb_nodes, queue_features, horizon
        self.size = nb_nodes + queue_features + 1
        self.oracle = OffReservationOracle()

    @classmethod
    def of(cls, env: Any) -> "RealRuntimes":
        """Sized for a Shutdown-v0 environment."""
        return cls(int(env.action_space.n) - 1, int(env.unwrapped.options["queue_features"]))

    def bind(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        self.oracle.bind(scheduler)
        self.runtimes = self.oracle.runtimes     # (the day's file, read once)

    def __call__(self) -> np.ndarray:
        s = self.scheduler
        out = np.zeros(self.size, np.float32)
        for i, left in enumerate(node_waits(held(s, self.runtimes), s.masks, s.now)):
            out[i] = min(1.0, max(0.0, left / self.horizon))
        for j, job in enumerate(plan_order(s.queue, self.k)):
            real = real_runtime(self.runtimes, job.id)
            if real is not None and job.walltime:
                out[self.nb_nodes + j] = min(1.0, real / job.walltime)
        out[-1] = self.oracle.act() / self.nb_nodes
        return out
