"""Comparison tables across runs: one flat summary row per run name."""
from __future__ import annotations

import csv
import math
from pathlib import Path

from .energy import energy_unit
from .summary import summary

# Columns shown in the terminal table (the CSV keeps every column).
TABLE_COLUMNS = ["run", "nb_jobs", "nb_jobs_finished", "nb_jobs_killed", "nb_jobs_rejected", "makespan",
                 "waiting_time_mean", "waiting_time_p90", "slowdown_mean", "bounded_slowdown_mean",
                 "bounded_slowdown_max", "utility_mean", "utilisation", "energy_total",
                 "energy_wasted", "onoff_cycles_total"]
# Column name prefixes counted in the platform's time unit ("t") or in watts times it ("e").
UNIT_PREFIXES = {"makespan": "t", "waiting_time": "t", "turnaround_time": "t", "energy_": "e"}


def compare_table(results: dict[str, Path], platform: str | Path | None = None) -> list[dict]:
    """Summary row per run; ``results`` maps a run name to an output prefix or directory."""
    return [{"run": name, **summary(source, platform)} for name, source in results.items()]


def write_csv(rows: list[dict], path: str | Path) -> None:
    """All columns (union over rows, first-seen order), one row per run."""
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    with open(path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows({k: _text(v) for k, v in row.items()} for row in rows)


def _text(value) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    return str(value)


def column_title(column: str, time_unit: str = "s") -> str:
    """``column`` with its unit: ``makespan (s)``, ``energy_total (J)``, ``energy_total (W·min)``."""
    for prefix, kind in UNIT_PREFIXES.items():
        if column.startswith(prefix):
            return f"{column} ({time_unit if kind == 't' else energy_unit(time_unit)})"
    return column


def format_table(rows: list[dict], columns: list[str] | None = None, time_unit: str = "s") -> str:
    """Aligned plain-text table (numbers right-aligned, NaN shown as '-'), units in the titles."""
    columns = [c for c in (columns or TABLE_COLUMNS) if any(c in r for r in rows)]
    cells = [[_text(r.get(c, "")) or "-" for c in columns] for r in rows]
    titles = [column_title(c, time_unit) for c in columns]
    widths = [max([len(t)] + [len(row[i]) for row in cells]) for i, t in enumerate(titles)]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(titles, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for row in cells:
        lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                               for i, (v, w) in enumerate(zip(row, widths))))
    return "\n".join(lines)
