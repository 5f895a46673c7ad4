"""Flat per-run summaries and per-job tables."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from .energy import machine_metrics
from .io import require_path
from .jobs import PER_JOB_METRICS, JobTable, read_jobs
from .stats import describe


def job_counts(table: JobTable) -> dict[str, float]:
    """Counts with Batsim's meanings: killed = finished without success."""
    finished = int(table.finished.sum())
    success = int(np.nansum(table.success == 1))
    n = len(table)
    return {"nb_jobs": n, "nb_jobs_finished": finished, "nb_jobs_success": success,
            "nb_jobs_killed": finished - success,
            "nb_jobs_rejected": sum(s == "REJECTED" for s in table.final_state),
            "success_rate": success / n if n else 0.0}


def makespan(table: JobTable) -> float:
    """Batsim's makespan: last finish time (0 when no job ran)."""
    finish = table.finish[~np.isnan(table.finish)]
    return float(finish.max()) if finish.size else 0.0


def batsim_schedule_metrics(table: JobTable) -> dict[str, float]:
    """The job metrics of Batsim's ``_schedule.csv``, with Batsim's definitions.

    Batsim sums waiting time, turnaround and slowdown (turnaround/execution)
    over finished jobs but divides by *all* jobs, rejected ones included; maxima
    are over finished jobs; everything is 0 when nothing ran. Our own
    ``*_mean`` values divide by finished jobs only, so they differ when jobs
    were rejected.
    """
    done = table.finished
    n = len(table)
    out = job_counts(table)
    out["makespan"] = makespan(table)
    for ours, theirs in (("waiting_time", "waiting_time"), ("turnaround_time", "turnaround_time"),
                         ("slowdown", "slowdown")):
        values = table.metrics[ours][done]
        values = values[~np.isnan(values)]
        out[f"mean_{theirs}"] = float(values.sum() / n) if n else 0.0
        out[f"max_{theirs}"] = float(values.max()) if values.size else 0.0
    return out


def summary(source: str | Path, platform: str | Path | None = None,
            delay_threshold: float = 3600.0) -> dict[str, float]:
    """One flat dict per run: counts, makespan, per-metric mean/p50/p90/p99/max, energy."""
    table = read_jobs(require_path(source, "jobs"), delay_threshold)
    out: dict[str, float] = job_counts(table)
    out["makespan"] = makespan(table)
    done = table.finished
    for name in PER_JOB_METRICS:
        out.update(describe(table.metrics[name][done], name))
    out["nb_jobs_delayed"] = int((table.metrics["extra_delay"][done] > 0).sum())
    out.update(machine_metrics(source, out["makespan"], platform))
    return out


def write_job_table(table: JobTable, path: str | Path) -> None:
    """Per-job CSV (one row per job, NaN left empty) readable by pandas/evalys."""
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["job_id", "final_state", "submission_time", "starting_time",
                         "execution_time", "finish_time", "requested_number_of_resources",
                         "requested_time", "allocated_resources", *PER_JOB_METRICS])
        for i in range(len(table)):
            numbers = [table.submission[i], table.start[i], table.run[i], table.finish[i],
                       table.res[i], table.walltime[i]]
            row = [table.job_id[i], table.final_state[i], *map(_cell, numbers[:6]),
                   table.allocated[i], *(_cell(table.metrics[m][i]) for m in PER_JOB_METRICS)]
            writer.writerow(row)


def _cell(value: float) -> str:
    return "" if np.isnan(value) else f"{value:.6f}".rstrip("0").rstrip(".")
