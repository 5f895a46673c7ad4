"""Windows cut from a trace by a rule fixed in advance (no look at any result): the window of
``jobs`` consecutive jobs whose submissions span the longest time (the lightest arrival rate a
window of that size can have), or the window of a fixed span holding the fewest jobs.  Used to
stand LPC-EGEE windows in for a trace with fewer jobs over a longer span (Perez et al.'s 9,500
jobs in seven weeks; scripts/reproduce_elastic.py matches either the job count or the span).
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


def fewest_jobs(submits: Sequence[float], span: float, end: Optional[int] = None) -> tuple[int, int]:
    """(first job, job count) of the window lasting ``span`` seconds that holds the fewest
    submissions (the earliest of equal counts), among the windows that start at a submission and
    are over by the submission of job ``end`` (by default the last job: wholly inside the trace)."""
    t = _submits(submits, 1)
    if not span > 0:
        raise ValueError(f"window span {span!r}: not a positive number of seconds")
    last = len(t) - 1 if end is None else end
    if not 0 <= last < len(t):
        raise ValueError(f"window before job {end}: the trace has jobs 0-{len(t) - 1}")
    starts = np.flatnonzero(t[:last] + span <= t[last])
    if not len(starts):
        raise ValueError(f"window span {span:.0f} s: the trace spans only {t[last] - t[0]:.0f} s"
                         + ("" if end is None else f" before job {end}"))
    counts = np.searchsorted(t, t[starts] + span) - starts
    i = int(np.argmin(counts))
    return int(starts[i]), int(counts[i])


MATCHES = ("jobs", "span")


def train_test(submits: Sequence[float], match: str, jobs: int, span: float) -> dict[str, tuple[int, int]]:
    """{"train": (first job, job count), "test": (...)}: the test window matches the reference
    trace's job count (``match="jobs"``: the ``jobs``-job window with the longest span) or its
    span (``"span"``: the ``span``-second window with the fewest jobs); the training window is the
    window the same rule picks among those over before the test window starts."""
    if match == "jobs":
        first = longest_span(submits, jobs)
        return {"train": (longest_span(submits, jobs, end=first), jobs), "test": (first, jobs)}
    if match == "span":
        test = fewest_jobs(submits, span)
        return {"train": fewest_jobs(submits, span, end=test[0]), "test": test}
    raise ValueError(f"window match {match!r}: not one of {', '.join(MATCHES)}")
