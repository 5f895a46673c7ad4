"""What an episode measures from the scheduler's view: energy waste, switches, and job figures.

Energy waste is the energy of hosts that are idle or switching (DeepShutdown's definition),
integrated exactly; on a platform of multi-core nodes (one host per core, ``node_masks``), of the
nodes that are idle or switching, as DeepShutdown counts it: the idle cores of a node that computes
cannot be switched off (a node is off only when all its cores are), so they are not waste that a
shutdown policy could save.  ``host_time`` still counts every host's time per state.  Integrated
exactly: host states only change at messages (Batsim's events) and decisions, so
between two messages the states the last reply left hold.  Powers come from the hosts'
``wattage_per_state`` and ``sleep_pstates`` (W; energies in W x the platform's time unit: W.min
on Grid'5000 Taurus platforms, whose time unit is the minute).
"""
from __future__ import annotations

import math
from typing import Optional

from ..scheduler import HostState, Scheduler

WASTE_STATES = (HostState.IDLE, HostState.SWITCHING_ON, HostState.SWITCHING_OFF)
TRACKED_STATES = (HostState.SLEEPING, HostState.SWITCHING_ON, HostState.SWITCHING_OFF,
                  HostState.IDLE, HostState.COMPUTING)


class EnergyMeter:
    """Energy waste and time per host state since the simulation began."""

    def __init__(self, scheduler: Scheduler, node_masks: Optional[list[int]] = None, start: float = 0.0):
        self.scheduler = scheduler
        self.node_masks = node_masks
        self.last = max(scheduler.now, start)     # (nothing before ``start`` counts: a warm-up)
        self.waste = 0.0                                   # W x time unit
        self.host_time = dict.fromkeys(TRACKED_STATES, 0.0)  # host x time unit
        self._groups: Optional[list[tuple[int, float, float, float]]] = None
        self._counts: dict[HostState, int] = {}
        self._power = 0.0

    def _power_groups(self) -> list[tuple[int, float, float, float]]:
        """(hosts mask, idle W, switching-on W, switching-off W) per distinct power model."""
        groups: dict[tuple[float, float, float], int] = {}
        for r in self.scheduler.platform:
            if r.power is None or not r.power.sleep:
                raise ValueError(f"host {r.name} has no energy model with sleep pstates "
                                 "(wattage_per_state and sleep_pstates properties)")
            pw, sleep = r.power, r.power.sleep[0]
            key = (pw.pstates[r.pstate if r.pstate in pw.compute_pstates else pw.compute_pstates[0]].idle,
                   pw.pstates[sleep.switch_on].idle, pw.pstates[sleep.switch_off].idle)
            groups[key] = groups.get(key, 0) | 1 << r.id
        return [(mask, *watts) for watts, mask in groups.items()]

    def snapshot(self) -> None:
        """Take the states the last decisions left: they hold until the next message."""
        platform = self.scheduler.platform
        if self._groups is None:
            self._groups = self._power_groups()
        masks = {s: platform.mask_in(s) for s in TRACKED_STATES}
        self._counts = {s: m.bit_count() for s, m in masks.items()}
        idle, on, off = masks[HostState.IDLE], masks[HostState.SWITCHING_ON], masks[HostState.SWITCHING_OFF]
        if self.node_masks is not None:
            computing = masks[HostState.COMPUTING]
            busy = 0
            for m in self.node_masks:
                if m & computing:
                    busy |= m
            idle, on, off = idle & ~busy, on & ~busy, off & ~busy
        self._power = sum((idle & g).bit_count() * wi + (on & g).bit_count() * won + (off & g).bit_count() * woff
                          for g, wi, won, woff in self._groups)

    @property
    def idle_power(self) -> float:
        """All hosts idle (W): a scale for waste rewards."""
        if self._groups is None:
            self._groups = self._power_groups()
        return sum(g.bit_count() * wi for g, wi, _, _ in self._groups)

    def host_time_of(self, state: str) -> float:
        return self.host_time[HostState(state)]

    def advance(self, now: float) -> None:
        """Integrate up to ``now`` (the time of the next message)."""
        dt = now - self.last
        if dt > 0:
            self.waste += self._power * dt
            for s, n in self._counts.items():
                self.host_time[s] += n * dt
        self.last = max(self.last, now)


def job_figures(scheduler: Scheduler, now: float, tau: float = 0.5) -> dict[str, float]:
    """Means over the jobs submitted so far (time units): waiting time, delay (wait beyond ``tau`` x
    walltime), stretch (wait / walltime), slowdown ((wait + runtime) / runtime).  A job still waiting
    or running at ``now`` counts as if it ended now: its wait so far (to ``now`` if it never
    started) and its runtime so far, at least one time unit (so a starving policy cannot score a
    good slowdown by leaving jobs waiting)."""
    waits, delays, stretches, slowdowns = [], [], [], []
    for job in scheduler.jobs.by_id.values():
        if job.final_state == "REJECTED":
            continue
        start = job.start_time if job.start_time is not None else now
        wait = max(0.0, start - job.subtime)
        waits.append(wait)
        if job.walltime:
            delays.append(max(0.0, wait - tau * job.walltime))
            stretches.append(wait / job.walltime)
        if job.finish_time is not None and job.start_time is not None:
            run = job.finish_time - job.start_time
            if run > 0:
                slowdowns.append((wait + run) / run)
        else:
            run = max(1.0, now - job.start_time if job.start_time is not None else 0.0)
            slowdowns.append((wait + run) / run)

    def mean(xs: list[float]) -> float:
        return math.fsum(xs) / len(xs) if xs else 0.0
    return {"nb_jobs": float(len(waits)), "waiting_time": mean(waits), "delay": mean(delays),
            "stretch": mean(stretches), "slowdown": mean(slowdowns)}
