"""``batsched_py/Shutdown-v0``: DeepShutdown (Casagrande et al., "Don't Hurry Be Green").

Action ``Discrete(G + 1)``: how many of the platform's G nodes to keep reserved and off, every
``dt`` time units; EASY backfilling schedules the jobs on the other nodes (see
:mod:`batsched_py.agents.deepshutdown.mdp` for the decision, its semantics and the observation).
An episode is one day: ``day / dt`` steps (1,440 one-minute steps), then truncated whatever the
queue holds (the scheduler's MDP: ``max_steps``, a count of decisions, not a time).  With ``advice``
(a baseline the agent sees) and ``shield_wait``, the action is capped at the advice while a queued
job has waited ``shield_wait`` or longer (the mdp module: the shield).

The day starts with every node off, as the authors' platform declares: Batsim 4.2.1 cannot start a
host asleep, so the simulation switches the idle nodes off at t=0 and runs the day's workload
shifted by the switch-off time (the warm-up, read from the platform); figures count from then.

Reward (the authors'): ``-(energy_weight * E_waste / (P_max * dt * hosts) + qos_weight * Q / hosts)``
where E_waste is the energy of hosts idle or switching during the step (every idle host counts,
the idle cores of a partly busy node too, as the authors' ``benchmark.csv`` counts), P_max the
hosts' largest idle power over their pstates (125 W on Taurus), and Q the hosts of the jobs the
reservation blocks (they would start now were no node reserved) whose stretch (wait / walltime)
reached ``tau``: 0 while nothing is reserved.  At the episode's end ``info`` holds the day's energy
waste (W x time unit), node switches, host time per state, and the mean waiting time, delay (wait
beyond ``tau`` x walltime), stretch and slowdown over every job submitted, unfinished ones included.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from .mdp import ShutdownScheduler
from ...envs.core import BatsimEnv, EnvError, agent_scheduler, weight
from ...envs.meter import EnergyMeter, job_figures
from ...envs.warmup import ShiftedDays, switch_off_time


class ShutdownEnv(BatsimEnv):
    def __init__(self, platform: "str | Path", workloads: "str | Path | Sequence[str | Path]", *,
                 backend: str = "emulator", dt: float = 1.0, day: float = 1440.0,
                 cores_per_node: Optional[int] = None, history: int = 20, queue_features: int = 10,
                 tau: float = 0.5, energy_weight: float = 1.0, qos_weight: float = 1.0,
                 start_asleep: bool = True, release_features: bool = True, advice: Optional[str] = None,
                 advice_options: Optional[dict[str, Any]] = None, shield_wait: Optional[float] = None,
                 output_prefix: Optional[str] = None):
        super().__init__(platform, workloads, backend, output_prefix)
        if cores_per_node is None:
            cores_per_node = int(self.zone_properties.get("cores_per_node", 12))
        if isinstance(cores_per_node, bool) or not isinstance(cores_per_node, int) or cores_per_node < 1:
            raise EnvError(f"cores_per_node: {cores_per_node!r} is not a positive integer")
        if self.nb_hosts % cores_per_node:
            raise EnvError(f"cores_per_node: {cores_per_node} does not divide the platform's {self.nb_hosts} "
                           "compute hosts into whole nodes")
        for name, value in (("dt", dt), ("day", day), ("tau", tau)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise EnvError(f"{name}: {value!r} is not a positive number")
        for name, flag in (("start_asleep", start_asleep), ("release_features", release_features)):
            if not isinstance(flag, bool):
                raise EnvError(f"{name}: {flag!r} is not true or false")
        self.warmup = switch_off_time(self.platform) if start_asleep else 0.0
        self.options = {"dt": dt, "day": day, "day_start": self.warmup, "start_asleep": start_asleep,
                        "cores_per_node": cores_per_node, "history": history, "queue_features": queue_features,
                        "tau": tau, "release_features": release_features, "advice": advice,
                        "advice_options": {} if advice_options is None else advice_options, "shield_wait": shield_wait}
        # (making the scheduler checks the options now, with its own messages; its MDP gives the spaces
        # and the day's decisions)
        self.take_mdp(self.make_scheduler().mdp(self.nb_hosts))
        self.tau = tau
        self.energy_weight, self.qos_weight = weight("energy_weight", energy_weight), weight("qos_weight", qos_weight)
        self.shifted = ShiftedDays(self.warmup)
        self._qos = 0.0

    def make_scheduler(self) -> ShutdownScheduler:
        return agent_scheduler(ShutdownScheduler, self.options)

    def simulated_workload(self, workload: Path) -> Path:
        return self.shifted(workload)

    def make_meter(self) -> EnergyMeter:
        # (every host: the authors' waste counts the idle cores of partly busy nodes too)
        return EnergyMeter(self.scheduler, None, start=self.warmup)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict[str, Any]] = None):
        obs, info = super().reset(seed=seed, options=options)
        self._waste = self.meter.waste
        self._qos = 0.0
        pw = [r.power for r in self.scheduler.platform]
        self.p_max = max(max(ps.idle for ps in p.pstates) for p in pw if p is not None)
        return obs, info

    def after_action(self) -> None:
        s = self.scheduler
        self._qos = sum(j.res for j in s.blocked() if s.stretch(j) >= self.tau)

    def reward(self) -> float:
        s, meter = self.scheduler, self.meter
        waste, self._waste = meter.waste - self._waste, meter.waste
        return -(self.energy_weight * waste / (self.p_max * s.dt * self.nb_hosts)
                 + self.qos_weight * self._qos / self.nb_hosts)

    def info(self) -> dict[str, Any]:
        return {**super().info(), "energy_waste": self.meter.waste, "nb_switches": self.scheduler.switches}

    def episode_info(self) -> dict[str, Any]:
        figures = job_figures(self.scheduler, self.scheduler.now, self.tau)
        return {**figures, **{f"time_{state}": self.meter.host_time_of(state)
                              for state in ("idle", "computing", "switching_on", "switching_off", "sleeping")}}
