"""Per-job metrics from Batsim's ``_jobs.csv``.

Definitions (times in the workload's time unit):
  waiting_time         starting_time - submission_time
  turnaround_time      finish_time - submission_time
  slowdown             turnaround / execution_time (Batsim's ``stretch`` column and
                       the basis of ``mean_slowdown`` in ``_schedule.csv``)
  bounded_slowdown     max((wait + run) / max(run, 10), 1)
  pp_bounded_slowdown  max((wait + run) / (res * max(run, 10)), 1): bounded slowdown
                       per allocated processor, so wide jobs are not favoured
  stretch_walltime     wait / requested_time (waiting relative to the user's estimate)
  extra_delay          max(wait - threshold, 0)
  utility              run / (run + wait): responsiveness utility, 1 = no wait
Only *finished* jobs (those that started: not rejected) have these values;
rejected jobs have NaN, as Batsim leaves their cells empty.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .io import MetricsInputError, floats, read_columns

JOB_COLUMNS = ["job_id", "submission_time", "requested_number_of_resources", "requested_time",
               "success", "final_state", "starting_time", "execution_time", "finish_time",
               "allocated_resources"]
# columns set for every job, and those set for every job that ran (all but the rejected ones)
ALWAYS_SET = ("submission_time", "requested_number_of_resources", "requested_time", "success")
RUN_TIMES = ("starting_time", "execution_time", "finish_time")
REJECTED = "REJECTED"
BSLD_BOUND = 10.0
PER_JOB_METRICS = ("waiting_time", "turnaround_time", "slowdown", "bounded_slowdown",
                   "pp_bounded_slowdown", "stretch_walltime", "extra_delay", "utility")


@dataclass
class JobTable:
    """Columns of a ``_jobs.csv`` plus the derived per-job metrics."""

    path: Path
    job_id: list[str]
    final_state: list[str]
    allocated: list[str]
    submission: np.ndarray
    res: np.ndarray
    walltime: np.ndarray
    success: np.ndarray
    start: np.ndarray
    run: np.ndarray
    finish: np.ndarray
    metrics: dict[str, np.ndarray]

    @property
    def finished(self) -> np.ndarray:
        """Mask of jobs that ran (Batsim's nb_jobs_finished), killed or not."""
        return ~np.isnan(self.start)

    def __len__(self) -> int:
        return len(self.job_id)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def job_metrics(wait: np.ndarray, run: np.ndarray, res: np.ndarray, walltime: np.ndarray,
                delay_threshold: float) -> dict[str, np.ndarray]:
    """The per-job metrics of the module docstring (NaN where undefined)."""
    bounded_run = np.maximum(run, BSLD_BOUND)
    turnaround = wait + run
    return {
        "waiting_time": wait,
        "turnaround_time": turnaround,
        "slowdown": _ratio(turnaround, run),
        "bounded_slowdown": np.maximum(turnaround / bounded_run, 1.0),
        "pp_bounded_slowdown": np.maximum(_ratio(turnaround, res * bounded_run), 1.0),
        "stretch_walltime": _ratio(wait, walltime),
        "extra_delay": np.maximum(wait - delay_threshold, 0.0),
        "utility": _ratio(run, turnaround),
    }


def read_jobs(path: str | Path, delay_threshold: float = 3600.0) -> JobTable:
    """Read ``_jobs.csv`` (plain or .gz) and compute the per-job metrics."""
    cols = read_columns(path, JOB_COLUMNS)
    f = {name: floats(cols, name, path, required=name in ALWAYS_SET) for name in
         ("submission_time", "requested_number_of_resources", "requested_time", "success",
          "starting_time", "execution_time", "finish_time")}
    for i, state in enumerate(cols["final_state"]):
        missing = [name for name in RUN_TIMES if np.isnan(f[name][i])]
        if missing and state != REJECTED:
            raise MetricsInputError(f"{path}:{i + 2}: job {cols['job_id'][i]}: {', '.join(missing)} empty, but the "
                                    f"job is {state}, not {REJECTED}")
    wait = f["starting_time"] - f["submission_time"]
    metrics = job_metrics(wait, f["execution_time"], f["requested_number_of_resources"],
                          f["requested_time"], delay_threshold)
    return JobTable(Path(path), cols["job_id"], cols["final_state"], cols["allocated_resources"],
                    f["submission_time"], f["requested_number_of_resources"],
                    f["requested_time"], f["success"], f["starting_time"],
                    f["execution_time"], f["finish_time"], metrics)
