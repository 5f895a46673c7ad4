"""``batsched_py/Scheduling-v0``: DeepScheduling -- which queued job starts now.

Action ``Discrete(max_queue + 1)``: 0 lets ``dt`` pass, ``i`` starts the i-th queued job now; a job
that does not fit lets time pass too (or use ``action_masks()`` with sb3-contrib's MaskablePPO).
Time is frozen while the agent schedules; with an empty queue the simulation goes on to its next
event (see :mod:`batsched_py.policies.agent.scheduling` for the observation).  An episode runs until
the workload's jobs are all done (terminated), or ``max_time`` time units (truncated).

Reward after each action, at the next decision point:
``-rho * idle nodes / G + sigma * sum over queued jobs of (-1 / walltime) + tau * utilisation``
(utilisation: the share of hosts computing).  ``info`` at the end: energy waste (W x time unit),
node switches, mean waiting time, delay, stretch and slowdown.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
from gymnasium import spaces

from ..policies.agent import SchedulingScheduler
from ..policies.agent.nodes import NodeState, node_masks, node_states
from ..scheduler import HostState
from .core import BatsimEnv, EnvError, node_size, weight
from .meter import job_figures


class SchedulingEnv(BatsimEnv):
    def __init__(self, platform: "str | Path", workloads: "str | Path | Sequence[str | Path]", *,
                 backend: str = "emulator", dt: float = 1.0, day: float = 1440.0,
                 cores_per_node: Optional[int] = None, timeout: float = 5.0, max_queue: int = 20,
                 max_running: int = 20, history: int = 20, confidence_jobs: int = 5, rho: float = 1.0,
                 sigma: float = 1.0, tau: float = 0.2, max_time: float = 14400.0,
                 output_prefix: Optional[str] = None):
        super().__init__(platform, workloads, backend, output_prefix)
        if cores_per_node is None:
            cores_per_node = int(self.zone_properties.get("cores_per_node", 12))
        cores_per_node = node_size(cores_per_node, self.nb_hosts)
        self.options = {"dt": dt, "day": day, "cores_per_node": cores_per_node, "timeout": timeout,
                        "max_queue": max_queue, "max_running": max_running, "history": history,
                        "confidence_jobs": confidence_jobs}
        self.make_scheduler()
        if not isinstance(max_time, (int, float)) or not max_time > 0:
            raise EnvError(f"max_time: {max_time!r} is not a positive number")
        self.rho, self.sigma, self.tau = weight("rho", rho), weight("sigma", sigma), weight("tau", tau)
        self.max_time = max_time
        self.masks = node_masks(self.nb_hosts, cores_per_node)
        self.action_space = spaces.Discrete(max_queue + 1)
        self.observation_space = spaces.Dict({
            "queue": spaces.Box(0.0, 1.0, (max_queue, 3), np.float32),
            "running": spaces.Box(0.0, 1.0, (max_running, 3), np.float32),
            "snapshots": spaces.Box(0.0, 1.0, (history, 8), np.float32)})

    def make_scheduler(self) -> SchedulingScheduler:
        try:
            return SchedulingScheduler(self.options)
        except ValueError as exc:
            raise EnvError(str(exc)) from None

    def truncated(self) -> bool:
        return self.scheduler.now >= self.max_time

    def action_masks(self) -> np.ndarray:
        """The actions that start a job now (and 0): for sb3-contrib's MaskablePPO."""
        if self.scheduler is None:
            raise EnvError("action_masks() before reset(): the mask depends on the queue, call reset() first")
        return self.scheduler.action_mask()

    def reward(self) -> float:
        s = self.scheduler
        idle = sum(1 for st in node_states(s.platform, self.masks) if st is NodeState.IDLE)
        queued = sum(-1.0 / j.walltime for j in s.queue if j.walltime)
        utilisation = s.platform.mask_in(HostState.COMPUTING).bit_count() / self.nb_hosts
        return -self.rho * idle / len(self.masks) + self.sigma * queued + self.tau * utilisation

    def info(self) -> dict[str, Any]:
        return {**super().info(), "energy_waste": self.meter.waste, "nb_switches": self.scheduler.switches,
                "invalid_actions": self.scheduler.invalid_actions}

    def episode_info(self) -> dict[str, Any]:
        return job_figures(self.scheduler, self.scheduler.now)
