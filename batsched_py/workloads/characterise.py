"""Per-day arrival characterisation: share of "sequential" submissions.

A submission is *sequential* when it arrives within ``gap`` seconds (5 minutes
by default) of the previous submission in the trace (across day boundaries too);
the very first job of the trace has no predecessor and is not sequential. Days
are then grouped into quartile bins (1 = lowest quarter of shares, 4 = highest),
using the quartiles of the per-day shares.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .episodes import period_key
from .swf import SwfTrace

DEFAULT_GAP = 300.0


@dataclass
class DayShare:
    day: str
    n_jobs: int
    n_sequential: int
    share: float
    quartile_bin: int = 0


def sequential_shares(trace: SwfTrace, gap: float = DEFAULT_GAP) -> list[DayShare]:
    """Per local day: number of submissions, sequential ones, their share, bin."""
    key = period_key(trace, "day")
    submits = sorted(j.submit for j in trace.jobs)
    days: dict[str, list[int]] = {}
    previous = None
    for submit in submits:
        counts = days.setdefault(key(submit).isoformat(), [0, 0])
        counts[0] += 1
        if previous is not None and submit - previous <= gap:
            counts[1] += 1
        previous = submit
    rows = [DayShare(day, n, s, s / n) for day, (n, s) in days.items()]
    assign_quartile_bins(rows)
    return rows


def assign_quartile_bins(rows: list[DayShare]) -> list[float]:
    """Set ``quartile_bin`` (1-4) from the quartiles of the shares; returns the cut points."""
    if not rows:
        return []
    cuts = [float(c) for c in np.quantile([r.share for r in rows], [0.25, 0.5, 0.75])]
    for row in rows:
        # side="left": a share equal to a cut point falls in the lower bin.
        row.quartile_bin = int(np.searchsorted(cuts, row.share, side="left")) + 1
    return cuts


def write_shares_csv(rows: list[DayShare], path: str | Path) -> None:
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["day", "n_jobs", "n_sequential", "sequential_share", "quartile_bin"])
        for r in rows:
            writer.writerow([r.day, r.n_jobs, r.n_sequential, f"{r.share:.6f}", r.quartile_bin])
