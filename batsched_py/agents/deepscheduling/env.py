"""``batsched_py/Scheduling-v0``: DeepScheduling -- which queued job starts now.

Action ``Discrete(max_queue + 1)``: 0 lets ``dt`` pass, ``i`` starts the i-th queued job now; a job
that does not fit lets time pass too (or use ``action_masks()`` with sb3-contrib's MaskablePPO).
Decisions come every ``dt`` after the events of their instant, time frozen while the agent starts
jobs; where no queued job fits the free hosts (waiting is the only choice) the simulation goes on to
its next event (see :mod:`batsched_py.agents.deepscheduling.mdp` for the decisions and the
observation, and docs/papers/deepscheduling.md for how they differ from the authors').  An episode
runs until the workload's jobs are all done (terminated), or ``max_time`` time units from the
start of the day (truncated: the scheduler's option ``max_time``, its MDP's ``horizon``).

The day starts with every node off, as the authors' platform declares: Batsim 4.2.1 cannot start a
host asleep, so the simulation switches the idle nodes off at t=0 and runs the day's workload
shifted by the switch-off time (the warm-up, read from the platform); figures count from then.

Reward, the authors' three terms integrated over the time a step covers (per ``dt``; an action that
starts a job lets no time pass and earns 0, as in their environment):
``-rho * E_waste / (P_idle * dt) - sigma * (integral of the sum over waiting jobs of 1 / walltime) / dt
+ tau * (integral of utilisation) / dt``, where E_waste is the energy of hosts idle or switching
(every idle host counts, as Shutdown-v0's), P_idle the power of every host idle, waiting jobs those
queued or started and waiting for their hosts, and utilisation the share of hosts computing.  Over
an episode the return is thus the energy waste, the jobs' summed stretch (wait / walltime) and a
constant, whatever the number of decisions.  ``info`` at the end: energy waste (W x time unit),
node switches, and the mean waiting time, delay, stretch and slowdown over every job submitted,
unfinished ones included.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from .mdp import SchedulingScheduler
from ...envs.core import BatsimEnv, EnvError, agent_scheduler, node_size, weight
from ...envs.meter import EnergyMeter, job_figures
from ...envs.warmup import ShiftedDays, switch_off_time


class WaitingMeter(EnergyMeter):
    """The energy meter, and the integral of the sum over waiting jobs of 1 / walltime."""

    def __init__(self, scheduler: SchedulingScheduler, start: float = 0.0):
        # (every host: the authors' waste counts the idle cores of partly busy nodes too)
        super().__init__(scheduler, None, start=start)
        self.waiting = 0.0
        self._rate = 0.0

    def snapshot(self) -> None:
        super().snapshot()
        s = self.scheduler
        assert isinstance(s, SchedulingScheduler)
        self._rate = (sum(1.0 / j.walltime for j in s.queue if j.walltime)
                      + sum(1.0 / j.walltime for j, _, _ in s.pending.values() if j.walltime))

    def advance(self, now: float) -> None:
        if now > self.last:
            self.waiting += self._rate * (now - self.last)
        super().advance(now)


class SchedulingEnv(BatsimEnv):
    def __init__(self, platform: "str | Path", workloads: "str | Path | Sequence[str | Path]", *,
                 backend: str = "emulator", dt: float = 1.0, day: float = 1440.0,
                 cores_per_node: Optional[int] = None, timeout: float = 5.0, max_queue: int = 20,
                 max_running: int = 20, history: int = 20, confidence_jobs: int = 5, rho: float = 1.0,
                 sigma: float = 1.0, tau: float = 0.2, max_time: float = 14400.0, start_asleep: bool = True,
                 output_prefix: Optional[str] = None):
        super().__init__(platform, workloads, backend, output_prefix)
        if cores_per_node is None:
            cores_per_node = int(self.zone_properties.get("cores_per_node", 12))
        cores_per_node = node_size(cores_per_node, self.nb_hosts)
        if not isinstance(start_asleep, bool):
            raise EnvError(f"start_asleep: {start_asleep!r} is not true or false")
        self.warmup = switch_off_time(self.platform) if start_asleep else 0.0
        self.shifted = ShiftedDays(self.warmup)
        if not isinstance(max_time, (int, float)) or not max_time > 0:
            raise EnvError(f"max_time: {max_time!r} is not a positive number")
        self.options = {"dt": dt, "day": day, "day_start": self.warmup, "start_asleep": start_asleep,
                        "cores_per_node": cores_per_node, "timeout": timeout, "max_queue": max_queue,
                        "max_running": max_running, "history": history, "confidence_jobs": confidence_jobs,
                        "max_time": max_time}
        # (making the scheduler checks the options now, with its own messages; its MDP gives the spaces
        # and the episode's end)
        self.take_mdp(self.make_scheduler().mdp(self.nb_hosts))
        self.rho, self.sigma, self.tau = weight("rho", rho), weight("sigma", sigma), weight("tau", tau)
        self._integrals = (0.0, 0.0, 0.0)

    def make_scheduler(self) -> SchedulingScheduler:
        return agent_scheduler(SchedulingScheduler, self.options)

    def simulated_workload(self, workload: Path) -> Path:
        return self.shifted(workload)

    def make_meter(self) -> WaitingMeter:
        return WaitingMeter(self.scheduler, start=self.warmup)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict[str, Any]] = None):
        obs, info = super().reset(seed=seed, options=options)
        self._integrals = self._read_integrals()
        return obs, info

    def action_masks(self) -> np.ndarray:
        """The actions that start a job now (and 0): for sb3-contrib's MaskablePPO."""
        if self.scheduler is None:
            raise EnvError("action_masks() before reset(): the mask depends on the queue, call reset() first")
        return self.scheduler.action_mask()

    def reward(self) -> float:
        (waste, waiting, computing), before = self._read_integrals(), self._integrals
        self._integrals = (waste, waiting, computing)
        dt = self.scheduler.dt
        return (-self.rho * (waste - before[0]) / (self.meter.idle_power * dt)
                - self.sigma * (waiting - before[1]) / dt
                + self.tau * (computing - before[2]) / (self.nb_hosts * dt))

    def _read_integrals(self) -> tuple[float, float, float]:
        """(energy waste, waiting jobs' sum of 1 / walltime, hosts computing) integrated so far."""
        m = self.meter
        return m.waste, m.waiting, m.host_time_of("computing")

    def info(self) -> dict[str, Any]:
        return {**super().info(), "energy_waste": self.meter.waste, "nb_switches": self.scheduler.switches,
                "invalid_actions": self.scheduler.invalid_actions}

    def episode_info(self) -> dict[str, Any]:
        return job_figures(self.scheduler, self.scheduler.now)
