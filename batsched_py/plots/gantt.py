"""Gantt chart of a run: one rectangle per contiguous block of allocated hosts."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..metrics.io import host_set, require_path
from ..metrics.jobs import read_jobs
from ._mpl import pyplot, save
from .units import time_scale


def plot_gantt(source: str | Path, out: str | Path, title: str | None = None,
               time_unit: str = "s") -> list[Path]:
    """Jobs as host x time rectangles; killed/failed jobs hatched, as the legend says (whatever
    the title: compare gives its own)."""
    from matplotlib.patches import Patch
    plt = pyplot()
    table = read_jobs(require_path(source, "jobs"))
    fig, ax = plt.subplots(figsize=(10, 5))
    cmap = plt.get_cmap("tab20")
    finished = np.flatnonzero(table.finished)
    factor, unit = time_scale(float(np.nanmax(table.finish[finished])) if finished.size else 0.0, time_unit)
    max_host = 0
    for i in finished:
        procs = host_set(table.allocated[i], table.path, int(i), "allocated_resources")
        failed = table.success[i] != 1
        for low, high in procs.intervals():
            ax.broken_barh([(table.start[i] * factor, table.run[i] * factor)], (low, high - low + 1),
                           facecolors=cmap(i % 20), edgecolor="black", linewidth=0.3,
                           hatch="//" if failed else None)
            max_host = max(max_host, high)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("host")
    ax.set_ylim(0, max_host + 1)
    ax.legend(handles=[Patch(facecolor="white", edgecolor="black", label="completed"),
                       Patch(facecolor="white", edgecolor="black", hatch="//", label="killed or failed")],
              loc="upper right", fontsize="small")
    ax.set_title(title or f"Gantt chart: {source} ({int(table.finished.sum())} jobs)")
    return save(fig, out)
