"""Figures comparing several runs: metric bar charts and per-job CDFs."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..metrics.compare import compare_table
from ..metrics.io import require_path
from ..metrics.jobs import read_jobs
from ._mpl import pyplot, save
from .units import energy_scale, time_scale

# Axis labels and what the values count: "t" times, "e" energies, "" no unit.
BAR_METRICS = {"waiting_time_mean": ("mean waiting time", "t"),
               "bounded_slowdown_mean": ("mean bounded slowdown", ""),
               "makespan": ("makespan", "t"), "utilisation": ("utilisation", ""),
               "energy_total": ("energy", "e"), "energy_wasted": ("wasted energy", "e")}
CDF_METRICS = {"waiting_time": ("waiting time", "t"), "slowdown": ("slowdown", ""),
               "bounded_slowdown": ("bounded slowdown", "")}
# One line style per run (besides its colour), so CDFs stay apart in grey print and overlaps.
LINE_STYLES = ["-", "--", ":", "-."]


def _scale(kind: str, largest: float, time_unit: str) -> tuple[float, str]:
    """(factor, " (unit)") for values of ``kind`` up to ``largest``."""
    if not kind:
        return 1.0, ""
    factor, unit = (time_scale if kind == "t" else energy_scale)(largest, time_unit)
    return factor, f" ({unit})"


def plot_bars(rows: list[dict], metric: str, out: str | Path, label: str | None = None,
              factor: float = 1.0) -> list[Path]:
    """One bar per run for ``metric`` (a summary column), its values times ``factor``."""
    plt = pyplot()
    names = [r["run"] for r in rows]
    values = [float(r.get(metric, np.nan)) * factor for r in rows]
    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(rows) + 2), 4))
    bars = ax.bar(names, values, color=plt.get_cmap("tab10")(np.arange(len(rows)) % 10))
    ax.bar_label(bars, fmt="%.4g", fontsize="small")
    ax.set_ylabel(label or metric)
    ax.set_xlabel("run")
    ax.set_title(f"{label or metric} per run")
    ax.tick_params(axis="x", rotation=20)
    return save(fig, out)


def _finished_values(source: Path, metric: str) -> np.ndarray:
    table = read_jobs(require_path(source, "jobs"))
    values = np.sort(table.metrics[metric][table.finished])
    return values[~np.isnan(values)]


def plot_cdfs(results: dict[str, Path], metric: str, out: str | Path,
              label: str | None = None, log_x: bool = True, kind: str = "", time_unit: str = "s") -> list[Path]:
    """Empirical CDF of a per-job metric (finished jobs), one curve per run, each in its own
    line style; ``kind`` "t": times, shown in hours or days when they are long."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    series = {name: _finished_values(source, metric) for name, source in results.items()}
    factor, unit = _scale(kind, max((float(v[-1]) for v in series.values() if v.size), default=0.0), time_unit)
    for i, (name, values) in enumerate(series.items()):
        if values.size:
            ax.step(values * factor, np.arange(1, values.size + 1) / values.size, where="post", label=name,
                    linestyle=LINE_STYLES[i % len(LINE_STYLES)], linewidth=1.6)
    label = f"{label or metric}{unit}"
    if log_x:
        ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel(label or metric)
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(title="run")
    ax.set_title(f"CDF of {label or metric}")
    return save(fig, out)


def comparison_plots(results: dict[str, Path], outdir: str | Path,
                     platform: str | Path | None = None, time_unit: str = "s") -> list[Path]:
    """Bar charts of the main metrics and CDFs of waiting time and slowdowns.

    Metrics that no run has (e.g. energy without -E) are skipped. ``time_unit``: the
    platform's time unit, for the labels (energies are then in watt x that unit).
    """
    outdir = Path(outdir)
    rows = compare_table(results, platform)
    written: list[Path] = []
    for metric, (label, kind) in BAR_METRICS.items():
        values = [float(r.get(metric, np.nan)) for r in rows]
        if any(np.isfinite(values)):
            factor, unit = _scale(kind, float(np.nanmax(values)), time_unit)
            written += plot_bars(rows, metric, outdir / f"bar_{metric}", label + unit, factor)
    for metric, (label, kind) in CDF_METRICS.items():
        written += plot_cdfs(results, metric, outdir / f"cdf_{metric}", label, kind=kind, time_unit=time_unit)
    return written
