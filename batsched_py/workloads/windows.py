"""Job-count windows cut from a trace by a rule fixed in advance (no look at any result): the
window of ``jobs`` consecutive jobs whose submissions span the longest time, i.e. the lightest
arrival rate a window of that size can have.  Used to stand LPC-EGEE windows in for a trace with
fewer jobs over a longer span (Perez et al.'s 9,500 jobs in seven weeks; scripts/reproduce_elastic.py).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np


def _submits(submits: Sequence[float], jobs: int) -> np.ndarray:
    t = np.asarray(submits, float)
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"window of {jobs!r} jobs: not a positive integer")
    if len(t) < jobs:
        raise ValueError(f"window of {jobs} jobs: the trace has only {len(t)} jobs")
    if np.any(np.diff(t) < 0):
        raise ValueError("submission times are not sorted")
    return t


def longest_span(submits: Sequence[float], jobs: int, end: Optional[int] = None) -> int:
    """Index of the first job of the window of ``jobs`` consecutive jobs (sorted submission times
    ``submits``) with the longest span, among those that end before job ``end`` (all by default);
    the earliest of equal spans."""
    t = _submits(submits, jobs)
    last = len(t) if end is None else end
    if last < jobs:
        raise ValueError(f"window of {jobs} jobs before job {end}: only {max(0, last)} jobs there")
    spans = t[jobs - 1:last] - t[:last - jobs + 1]
    return int(np.argmax(spans))


def fewest_jobs(submits: Sequence[float], span: float) -> tuple[int, int]:
    """(first job, job count) of the window lasting ``span`` seconds, wholly inside the trace, that
    holds the fewest submissions (the earliest of equal counts)."""
    t = _submits(submits, 1)
    if not span > 0:
        raise ValueError(f"window span {span!r}: not a positive number of seconds")
    starts = np.flatnonzero(t + span <= t[-1])
    if not len(starts):
        raise ValueError(f"window span {span:.0f} s: the trace spans only {t[-1] - t[0]:.0f} s")
    counts = np.searchsorted(t, t[starts] + span) - starts
    i = int(np.argmin(counts))
    return int(starts[i]), int(counts[i])
