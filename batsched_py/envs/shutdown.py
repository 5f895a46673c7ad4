"""``batsched_py/Shutdown-v0``: DeepShutdown (Casagrande et al., "Don't Hurry Be Green").

Action ``Discrete(G + 1)``: how many of the platform's G nodes to keep reserved and off, every
``dt`` time units; SAF-ordered EASY backfilling schedules the other nodes (see
:mod:`batsched_py.policies.agent.shutdown` for the decision and the observation).  An episode is
one day: ``day / dt`` steps (1,440 one-minute steps), then truncated whatever the queue holds.

Reward: ``-(energy_weight * E_waste / (P_idle * dt) + qos_weight * Q / hosts)`` where E_waste is the
energy of idle and switching nodes since the last step (see meter.py), P_idle the platform's idle power (all hosts
idle), Q the hosts requested by queued jobs whose wait is at least ``tau`` x their walltime.  At the
episode's end ``info`` holds the day's energy waste (W x time unit), node switches, and the mean
delay (wait beyond ``tau`` x walltime), stretch (wait / walltime), slowdown and waiting time.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
from gymnasium import spaces

from ..policies.agent import ShutdownScheduler
from ..policies.agent.nodes import node_masks
from .core import BatsimEnv, EnvError, node_size, weight
from .meter import job_figures


class ShutdownEnv(BatsimEnv):
    def __init__(self, platform: "str | Path", workloads: "str | Path | Sequence[str | Path]", *,
                 backend: str = "emulator", dt: float = 1.0, day: float = 1440.0,
                 cores_per_node: Optional[int] = None, history: int = 20, queue_features: int = 10,
                 tau: float = 0.5, energy_weight: float = 1.0, qos_weight: float = 1.0,
                 output_prefix: Optional[str] = None):
        super().__init__(platform, workloads, backend, output_prefix)
        if cores_per_node is None:
            cores_per_node = int(self.zone_properties.get("cores_per_node", 12))
        cores_per_node = node_size(cores_per_node, self.nb_hosts)
        for name, value in (("dt", dt), ("day", day), ("tau", tau)):
            if not isinstance(value, (int, float)) or not value > 0:
                raise EnvError(f"{name}: {value!r} is not a positive number")
        self.options = {"dt": dt, "day": day, "cores_per_node": cores_per_node, "history": history,
                        "queue_features": queue_features}
        self.make_scheduler()        # (checks the options now, with the scheduler's own messages)
        self.tau = tau
        self.energy_weight, self.qos_weight = weight("energy_weight", energy_weight), weight("qos_weight", qos_weight)
        self.masks = node_masks(self.nb_hosts, cores_per_node)
        self.nb_nodes = len(self.masks)
        self.max_steps = int(round(day / dt))
        self.action_space = spaces.Discrete(self.nb_nodes + 1)
        self.observation_space = spaces.Box(0.0, 1.0, (history, 5 + 1 + 1 + 1 + 4 * queue_features + 1), np.float32)

    def make_scheduler(self) -> ShutdownScheduler:
        try:
            return ShutdownScheduler(self.options)
        except ValueError as exc:
            raise EnvError(str(exc)) from None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict[str, Any]] = None):
        obs, info = super().reset(seed=seed, options=options)
        self._waste = self.meter.waste
        return obs, info

    def truncated(self) -> bool:
        return self.steps >= self.max_steps

    def reward(self) -> float:
        s, meter = self.scheduler, self.meter
        waste, self._waste = meter.waste - self._waste, meter.waste
        late = sum(j.res for j in s.queue if s.now - j.subtime >= self.tau * (j.walltime or 0.0))
        return -(self.energy_weight * waste / (meter.idle_power * s.dt)
                 + self.qos_weight * late / self.nb_hosts)

    def info(self) -> dict[str, Any]:
        return {**super().info(), "energy_waste": self.meter.waste, "nb_switches": self.scheduler.switches}

    def episode_info(self) -> dict[str, Any]:
        figures = job_figures(self.scheduler, self.scheduler.now, self.tau)
        return {**{f"{k}": v for k, v in figures.items()},
                "time_idle": self.meter.host_time_of("idle"), "time_sleeping": self.meter.host_time_of("sleeping")}
