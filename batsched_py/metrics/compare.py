"""Comparison tables across runs: one flat summary row per run name."""
from __future__ import annotations

import csv
import math
from pathlib import Path

from .summary import summary

# Columns shown in the terminal table (the CSV keeps every column).
TABLE_COLUMNS = ["run", "nb_jobs", "nb_jobs_finished", "makespan", "waiting_time_mean",
                 "waiting_time_p90", "slowdown_mean", "bounded_slowdown_mean",
                 "bounded_slowdown_max", "utility_mean", "utilisation", "energy_total",
                 "energy_wasted", "onoff_cycles_total"]


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


def format_table(rows: list[dict], columns: list[str] | None = None) -> str:
    """Aligned plain-text table (numbers right-aligned, NaN shown as '-')."""
    columns = [c for c in (columns or TABLE_COLUMNS) if any(c in r for r in rows)]
    cells = [[_text(r.get(c, "")) or "-" for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(columns, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for row in cells:
        lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                               for i, (v, w) in enumerate(zip(row, widths))))
    return "\n".join(lines)
