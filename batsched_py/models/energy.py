"""SimGrid 3.32 host energy model (plugin ``host_energy``), as Batsim uses it.

A host at pstate ``p`` whose cores are used at fraction ``load`` (0..1) draws
    idle                                  if load == 0
    epsilon + load * (all_cores - epsilon)  otherwise
watts, and ``wattage_off`` when switched off (Batsim never powers hosts off:
sleeping is just a low-power pstate, so wattage_off is parsed but unused).
Energy is power integrated over simulated time, piecewise constant between
events, so the emulator keeps per-host power and integrates lazily.
"""

from __future__ import annotations

from .platform import Host, PState

__all__ = ["power", "host_power", "job_load"]


def power(pstate: PState, load: float) -> float:
    """Watts drawn at ``pstate`` with ``load`` = busy cores / core count."""
    if load <= 0.0:
        return pstate.idle
    return pstate.epsilon + load * (pstate.all_cores - pstate.epsilon)


def host_power(host: Host, pstate: int, busy_cores: int) -> float:
    """Watts drawn by ``host`` at ``pstate`` with ``busy_cores`` cores computing."""
    return power(host.pstates[pstate], min(busy_cores, host.core_count) / host.core_count)


def job_load(host: Host, busy_cores: int) -> float:
    """Load fraction SimGrid sees when ``busy_cores`` executions share ``host``."""
    return min(busy_cores, host.core_count) / host.core_count
