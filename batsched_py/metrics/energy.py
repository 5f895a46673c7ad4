"""Machine-level metrics: energy, wasted energy, utilisation, on/off cycles.

Method (documented choice):
  * energy_total   = cumulated ``energy`` of ``_consumed_energy.csv`` at the makespan
    (Batsim's ``consumed_joules``: switches after the last job are not counted);
    ``energy_until_end`` is the last value of the file. Joules when the time unit
    is seconds, watt x time-unit otherwise.
  * time in state  = integral of the step functions in ``_machine_states.csv``
    (node x time per state, until the makespan).
  * wasted energy  = idle node-time x idle watts + switching-on node-time x on watts
    + switching-off node-time x off watts, with watts read from the platform XML
    (first compute host; the cluster is assumed homogeneous). Without a platform
    it is NaN: machine states alone do not carry powers.
  * on/off cycles  = per node, the number of times it entered the switching-off
    virtual state (``new_pstate == -2`` in ``_pstate_changes.csv``; -1 is switching on).
  * utilisation    = computing node-time / (nodes x makespan).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..models.platform import host_powers
from ..units import SECONDS_PER
from .io import floats, host_set, output_path, read_columns


def energy_unit(time_unit: str) -> str:
    """Unit of the energies Batsim writes when the platform counts time in ``time_unit``:
    SimGrid integrates watts over its own time unit."""
    return "J" if time_unit == "s" else f"W·{time_unit}"


def to_kwh(value: float, time_unit: str) -> float | None:
    """An energy in watts x ``time_unit`` in kWh (None when the unit is not one of SECONDS_PER)."""
    seconds = SECONDS_PER.get(time_unit)
    return None if seconds is None else value * seconds / 3.6e6


STATE_COLUMNS = ["nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing"]
SWITCHING_OFF = -2


def state_times(path: str | Path, end: float) -> tuple[dict[str, float], int]:
    """Node-time spent in each state up to ``end``, and the number of nodes."""
    cols = read_columns(path, ["time", *STATE_COLUMNS])
    times = floats(cols, "time", path, required=True)
    if times.size == 0:
        return {c[3:]: 0.0 for c in STATE_COLUMNS}, 0
    counts = {c: floats(cols, c, path, required=True) for c in STATE_COLUMNS}
    stop = max(end, float(times[-1]))
    durations = np.diff(np.append(times, stop))
    nodes = int(sum(counts[c][0] for c in STATE_COLUMNS))
    return {c[3:]: float(np.dot(counts[c], durations)) for c in STATE_COLUMNS}, nodes


def energy_at(path: str | Path, until: float = float("inf")) -> float:
    """Cumulated energy at the last record not after ``until`` (0 if none)."""
    cols = read_columns(path, ["time", "energy"])
    times, energy = floats(cols, "time", path, required=True), floats(cols, "energy", path, required=True)
    upto = energy[times <= until]
    return float(upto[-1]) if upto.size else 0.0


def onoff_cycles(path: str | Path, nb_nodes: int | None = None) -> np.ndarray:
    """Per node, how many times it started switching off."""
    cols = read_columns(path, ["time", "machine_id", "new_pstate"])
    pstates = floats(cols, "new_pstate", path, required=True)
    sets = [host_set(text, path, i, "machine_id") for i, text in enumerate(cols["machine_id"])]
    size = max([nb_nodes or 0] + [s.max + 1 for s in sets if s])
    cycles = np.zeros(size, dtype=int)
    for procs, pstate in zip(sets, pstates):
        if pstate == SWITCHING_OFF:
            for node in procs:
                cycles[node] += 1
    return cycles


def machine_metrics(source: str | Path, makespan: float,
                    platform: str | Path | None = None) -> dict[str, float]:
    """Energy-related summary of a run (NaN for what the outputs do not allow)."""
    out: dict[str, float] = {}
    nan = float("nan")
    states_path = output_path(source, "machine_states")
    times, nodes = state_times(states_path, makespan) if states_path else ({}, 0)
    out["nb_machines"] = nodes
    out.update({f"time_{k}": v for k, v in times.items()})
    out["utilisation"] = times["computing"] / (nodes * makespan) if nodes and makespan > 0 else nan
    energy_path = output_path(source, "consumed_energy")
    out["energy_total"] = energy_at(energy_path, makespan) if energy_path else nan
    out["energy_until_end"] = energy_at(energy_path) if energy_path else nan
    out["energy_wasted"] = nan
    if platform is not None and times:
        hosts = host_powers(platform)
        if hosts:
            h = hosts[0]
            on, off = (h.state_w("on"), h.state_w("off")) if h.can_sleep else (0.0, 0.0)
            out["energy_wasted"] = (times["idle"] * h.idle_w + times["switching_on"] * on
                                    + times["switching_off"] * off)
    pstate_path = output_path(source, "pstate_changes")
    cycles = onoff_cycles(pstate_path, nodes) if pstate_path else np.zeros(0, dtype=int)
    out["onoff_cycles_total"] = int(cycles.sum())
    out["onoff_cycles_per_node_mean"] = float(cycles.mean()) if cycles.size else 0.0
    out["onoff_cycles_per_node_max"] = int(cycles.max()) if cycles.size else 0
    return out
