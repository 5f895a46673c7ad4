"""Perez et al.'s measures for the elastic environment and its reproduction: responsiveness W,
fairness F, utilisation U, and per-class figures that leave the first and last jobs out.

- W of a job = exec / (exec + wait): 1 when it started at once, towards 0 the longer a short job
  waited;
- F = 1 - D / M, D the Euclidean distance between the VOs' shares of the running jobs and their
  target shares (equal by default), M = sqrt(2) its largest value;
- U = running jobs' hosts / pool hosts.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Optional, Sequence

import numpy as np


def responsiveness(runtime: float, wait: float) -> float:
    return runtime / (runtime + wait) if runtime + wait > 0 else 1.0


def fairness(scheduler: Any, shares: Optional[Sequence[float]] = None) -> float:
    n = scheduler.nb_vos
    target = np.full(n, 1.0 / n) if shares is None else np.asarray(shares, float)
    counts = np.zeros(n)
    for job in scheduler.jobs.running.values():
        counts[scheduler.vo_slot(job)] += job.res
    if not counts.sum():
        return 1.0
    return float(1.0 - np.linalg.norm(counts / counts.sum() - target) / math.sqrt(2.0))


def utilisation(scheduler: Any) -> float:
    busy = sum(j.res for j in scheduler.jobs.running.values())
    return busy / max(1, scheduler.pool_size)


def step_responsiveness(scheduler: Any, finished: Iterable[Any]) -> float:
    """Mean W of the jobs finished since the last step and of the queued jobs so far (their wait
    until now, their runtime as the scheduler knows it): a signal at every step, not only at ends."""
    values = [responsiveness(j.finish_time - j.start_time, j.start_time - j.subtime) for j in finished]
    now = scheduler.now
    values += [responsiveness(scheduler.estimates[j.id], now - j.subtime) for q in scheduler.queues for j in q]
    return float(np.mean(values)) if values else 1.0


def class_figures(scheduler: Any, interactive: float = 900.0, skip: int = 500) -> dict[str, float]:
    """Mean W and queuing delay (s) of interactive (real runtime < ``interactive``) and batch jobs,
    leaving out the first and last ``skip`` jobs by submission (the paper's warm-up and drain)."""
    jobs = sorted((j for j in scheduler.jobs.by_id.values() if j.finish_time is not None and j.start_time is not None),
                  key=lambda j: (j.subtime, j.id))
    if len(jobs) > 2 * skip:
        jobs = jobs[skip:len(jobs) - skip]
    out: dict[str, float] = {"nb_jobs": float(len(jobs))}
    for name, want in (("interactive", True), ("batch", False)):
        sel = [j for j in jobs if (j.finish_time - j.start_time < interactive) is want]
        waits = [j.start_time - j.subtime for j in sel]
        out[f"{name}_jobs"] = float(len(sel))
        out[f"{name}_W"] = float(np.mean([responsiveness(j.finish_time - j.start_time, j.start_time - j.subtime)
                                          for j in sel])) if sel else float("nan")
        out[f"{name}_delay"] = float(np.mean(waits)) if waits else float("nan")
        out[f"{name}_delay_median"] = float(np.median(waits)) if waits else float("nan")
    return out
