"""Power and machine states over time (energy-enabled runs)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..metrics.energy import STATE_COLUMNS
from ..metrics.io import MetricsInputError, floats, output_path, read_columns
from ._mpl import pyplot, save
from .units import power_scale, time_scale


def _power_series(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Average power between consecutive energy records (d energy / d t)."""
    cols = read_columns(path, ["time", "energy"])
    t, e = floats(cols, "time", path, required=True), floats(cols, "energy", path, required=True)
    if t.size == 0:
        raise MetricsInputError(f"{path}: no rows, no power to plot (was the run cut short?)")
    keep = np.append(np.diff(t) > 0, False)
    t_next = np.append(t[1:], t[-1])
    e_next = np.append(e[1:], e[-1])
    power = (e_next[keep] - e[keep]) / (t_next[keep] - t[keep])
    return t[keep], power


def plot_power_states(source: str | Path, out: str | Path, time_unit: str = "s",
                      title: str | None = None) -> list[Path]:
    """Top: power drawn (W); bottom: stacked number of machines per state."""
    plt = pyplot()
    states = output_path(source, "machine_states")
    if states is None:
        raise MetricsInputError(f"{source}: no machine_states output to plot")
    energy = output_path(source, "consumed_energy")
    cols = read_columns(states, ["time", *STATE_COLUMNS])
    t = floats(cols, "time", states, required=True)
    if t.size == 0:
        raise MetricsInputError(f"{states}: no rows, no machine states to plot (was the run cut short?)")
    factor, unit = time_scale(float(t[-1]), time_unit)
    fig, axes = plt.subplots(2 if energy else 1, 1, figsize=(10, 6 if energy else 3.5),
                             sharex=True, squeeze=False)
    axes = axes[:, 0]
    if energy:
        te, p = _power_series(energy)
        watts, power_unit = power_scale(float(p.max()) if p.size else 0.0)
        axes[0].step(te * factor, p * watts, where="post", color="tab:red", label="power")
        axes[0].set_ylabel(f"power ({power_unit})")
        axes[0].legend(loc="upper right")
    counts = [floats(cols, c, states, required=True) for c in STATE_COLUMNS]
    axes[-1].stackplot(t * factor, *counts, step="post",
                       labels=[c[3:].replace("_", " ") for c in STATE_COLUMNS],
                       colors=["tab:blue", "tab:orange", "tab:purple", "tab:gray", "tab:green"])
    axes[-1].set_ylim(0, 1.3 * max(1.0, float(sum(c[0] for c in counts))))  # room for the legend
    axes[-1].set_ylabel("machines")
    axes[-1].set_xlabel(f"time ({unit})")
    axes[-1].legend(loc="upper right", fontsize="small", ncol=5)
    axes[0].set_title(title or f"{'Power and machine' if energy else 'Machine'} states: {source}")
    return save(fig, out)
