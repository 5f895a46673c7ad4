"""Calendar helpers: which local day / week a submission belongs to.

SWF submit times are seconds since the log start; the header's UnixStartTime and
TimeZoneString (or the older numeric TimeZone offset) anchor them to the
installation's wall clock, so days split at local midnight and weeks on Monday
00:00. Without those header fields, days count from the first submission.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from itertools import groupby

from .convert import CleanJob
from .swf import SwfTrace

PERIODS = ("day", "week")


def _timezone(trace: SwfTrace) -> dt.tzinfo:
    name = trace.header.get("TimeZoneString", "").strip()
    if name:
        try:
            from zoneinfo import ZoneInfo
            return ZoneInfo(name)
        except Exception:  # unknown zone or no tz database: fall back to the offset
            pass
    offset = trace.header_int("TimeZone") or 0
    return dt.timezone(dt.timedelta(seconds=offset))


def period_key(trace: SwfTrace, period: str) -> Callable[[float], dt.date]:
    """Map an SWF submit time to the date starting its local day or week."""
    if period not in PERIODS:
        raise ValueError(f"period must be one of {PERIODS}, not {period!r}")
    start = trace.header_int("UnixStartTime")
    if start is None:
        # No anchor: day 0 starts at the first submission, dates are fictitious.
        first = min((j.submit for j in trace.jobs), default=0.0)
        epoch = dt.datetime(1970, 1, 1)
        to_local = lambda t: epoch + dt.timedelta(seconds=t - first)  # noqa: E731
    else:
        tz = _timezone(trace)
        to_local = lambda t: dt.datetime.fromtimestamp(start + t, tz)  # noqa: E731

    def key(submit: float) -> dt.date:
        day = to_local(submit).date()
        return day - dt.timedelta(days=day.weekday()) if period == "week" else day
    return key


def split_episodes(jobs: list[CleanJob], trace: SwfTrace,
                   period: str) -> list[tuple[str, list[CleanJob]]]:
    """Group jobs (sorted by submit time) into (ISO date label, jobs) episodes."""
    key = period_key(trace, period)

    def dated(job: CleanJob) -> dt.date:
        try:
            return key(job.submit)
        except (OverflowError, ValueError, OSError):   # (datetime ends in year 9999)
            raise ValueError(f"{trace.path}: job {job.job_id}: submit time {job.submit:g} s is beyond the "
                             "calendar: --split cannot date it") from None
    ordered = sorted(jobs, key=lambda j: j.submit)
    return [(day.isoformat(), list(group)) for day, group in groupby(ordered, key=dated)]
