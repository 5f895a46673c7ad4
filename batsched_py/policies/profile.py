"""The availability timeline (reservation profile) used by EASY and conservative backfilling.

It follows batsched's ``Schedule`` so that decisions match it exactly: the
future is a list of consecutive time slices, each with the hosts still
available and the jobs (with their hosts) occupying it; the last slice never
ends.  A job is inserted *first fit*: the earliest slice where it can start,
on the hosts that stay available over its whole walltime (the intersection of
the slices it overlaps), chosen by the selector among them.  Removing a job
gives its hosts back and merges neighbouring slices that end up holding the
same jobs.  Slice boundaries are where jobs are expected to end, so they are
the only candidate start times.
"""
from bisect import bisect_right
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Callable, Optional

from ..compiled import mypyc_attr
from ..errors import BatschedError

INF = float("inf")
Selector = Callable[[int, int], Optional[int]]

#: Times are fixed-point integers: ``t * 2**FRACTION_BITS``.  batsched computes with GMP
#: rationals made from the doubles Batsim sends; any double >= 2**-(FRACTION_BITS - 52) in
#: magnitude is an exact multiple of 2**-FRACTION_BITS, so sums and comparisons of these
#: integers are exactly those of the rationals (a float sum is not: conservative_bf diverged
#: with floats), and integer additions are far cheaper than Fraction ones.
FRACTION_BITS = 128
_SCALE = float(2 ** FRACTION_BITS)
MAX_TIME = 2.0 ** (1024 - FRACTION_BITS)     # (times beyond overflow the fixed point's float scaling)


@mypyc_attr(native_class=False)    # (a compiled class cannot have two exception bases)
class TimeResolutionError(BatschedError, ValueError):
    """A time too small to be represented exactly by the profile's fixed point."""


_FIXED: dict[float, int] = {}      # walltimes and times recur: convert each once


def fixed(t: float) -> int:
    """``t`` as an exact fixed-point integer (see FRACTION_BITS)."""
    v = _FIXED.get(t)
    if v is not None:
        return v
    if type(t) is int:
        v = t << FRACTION_BITS
    else:
        f = t * _SCALE             # exact: a power of two, far from overflow
        if not f.is_integer():
            if t != t or t in (INF, -INF):
                raise TimeResolutionError(f"time {t} is not finite")
            if f in (INF, -INF):
                raise TimeResolutionError(f"the reservation profile (EASY, conservative) cannot hold time {t!r}: "
                                          f"its exact fixed point ends at {MAX_TIME:.3g} (a job's subtime, "
                                          "walltime or Batsim's now)")
            raise TimeResolutionError(f"time {t!r} has bits below 2**-{FRACTION_BITS}")
        v = int(f)
    if len(_FIXED) >= 1 << 16:
        _FIXED.clear()
    _FIXED[t] = v
    return v


def seconds(t: "int | float") -> float:
    """A fixed-point time back in the platform's time unit (rounded to the nearest double)."""
    return t if isinstance(t, float) else t / 2 ** FRACTION_BITS


@dataclass(slots=True, eq=False)
class Slice:
    begin: int                  # fixed point
    end: "int | float"          # fixed point, INF for the last slice
    available: int              # bitmask of the hosts no job holds during the slice
    jobs: dict = field(default_factory=dict)    # job id -> bitmask of its hosts


_begin_of = attrgetter("begin")


@dataclass(slots=True)
class Placement:
    begin: int            # fixed point (seconds(begin) in time units)
    hosts: int            # bitmask
    starts_now: bool      # placed in the first slice: the job can be executed right away


@mypyc_attr(allow_interpreted_subclasses=True)    # (copies, pickles, subclasses: see compiled.py)
class Profile:
    def __init__(self, hosts: int, now: float = 0.0):
        self.slices = [Slice(fixed(now), INF, hosts)]
        self.placed: dict[str, int] = {}     # job id -> fixed-point begin of its reservation

    def __contains__(self, job_id: str) -> bool:
        return job_id in self.placed

    def update_first_slice(self, now: float) -> None:
        """The present moves to ``now``: the first slice starts there."""
        t = None
        if type(now) is float:      # (a new value nearly every message: not worth caching)
            f = now * _SCALE
            if f.is_integer():
                t = int(f)
        if t is None:
            t = fixed(now)
        first = self.slices[0]
        if t <= first.end:
            first.begin = t
        else:
            self._overdue(t)

    def lapsed(self, now: float) -> bool:
        """Whether ``now`` is past the end of the first slice (see _overdue)."""
        return now * _SCALE > self.slices[0].end     # (exact: a power-of-two scaling, int/float compare)

    def _overdue(self, t: int) -> None:
        """The present is past the end of the first slice: some reservation ended while its
        job was still running (a power policy's launch waited for hosts, or an oracle's runtime
        was short).  batsched never gets there (a job ends by its walltime); here, the slices
        up to ``t`` become one instant ``[t, t + 1)`` (fixed-point units) still holding every job
        they held, so that late jobs keep their hosts until they end and nothing else moves.
        (Queued jobs' reservations should be removed first: Backfilling re-places them.)"""
        slices = self.slices
        m = 0
        while slices[m].end <= t:
            m += 1
        available = -1
        jobs: dict = {}
        for s in slices[:m + 1]:
            available &= s.available
            jobs.update(s.jobs)
        nxt = slices[m]
        del slices[:m]
        nxt.begin = t + 1
        slices.insert(0, Slice(t, t + 1, available, jobs))
        if nxt.jobs == jobs:        # nothing was late after all: one slice
            nxt.begin = t
            del slices[0]

    def insert(self, job_id: str, res: int, walltime: float, select: Selector,
               present: Optional[int] = None) -> Optional[Placement]:
        """Insert the job first fit; None if it never fits.

        ``present`` (optional) restricts the hosts the job may take in the first slice (hosts
        that may start work now); later slices are unrestricted."""
        wall = fixed(walltime)
        found = self._first_fit(res, wall, select, present)
        if found is None:
            return None
        i, j, hosts = found
        begin = self.slices[i].begin
        self._occupy(i, j, job_id, hosts, begin + wall)
        return Placement(begin, hosts, i == 0)

    def first_fit_begin(self, res: int, walltime: float, select: Selector) -> Optional[int]:
        """Where insert() would make a job begin (fixed point), else None; changes nothing.

        Only equivalent to insert()'s answer when ``select`` is stateless."""
        found = self._first_fit(res, fixed(walltime), select, None)
        return None if found is None else self.slices[found[0]].begin

    def _first_fit(self, res: int, wall: int, select: Selector,
                   present: Optional[int]) -> Optional[tuple[int, int, int]]:
        """(first slice, last slice, hosts) of a first-fit placement, or None."""
        slices = self.slices
        n = len(slices)
        for i in range(n):
            s = slices[i]
            avail = s.available if present is None or i else s.available & present
            if avail.bit_count() < res:
                continue
            until = s.begin + wall
            j = i
            if s.end < until:
                for j in range(i + 1, n):
                    nxt = slices[j]
                    avail &= nxt.available
                    if avail.bit_count() < res:
                        j = n
                        break
                    if nxt.end >= until:
                        hosts = select(avail, res)
                        if hosts is not None:
                            break
                        # (batsched keeps scanning when the selector refuses)
                else:
                    j = n
                if j == n:
                    continue
            else:
                hosts = select(avail, res)
                if hosts is None:
                    continue
            assert hosts is not None       # (every path here set it)
            return i, j, hosts
        return None

    def _occupy(self, i: int, j: int, job_id: str, hosts: int, until: int) -> None:
        """Put the job on ``hosts`` in slices i..j, splitting slice j where the job ends."""
        slices = self.slices
        keep = ~hosts
        for k in range(i, j):
            s = slices[k]
            s.available &= keep
            s.jobs[job_id] = hosts
        last = slices[j]
        if last.begin < until < last.end:
            slices.insert(j + 1, Slice(until, last.end, last.available, dict(last.jobs)))
            last.end = until
        last.available &= keep
        last.jobs[job_id] = hosts
        self.placed[job_id] = slices[i].begin

    def fits_now(self, res: int, walltime: float, select: Selector, present: Optional[int] = None) -> Optional[int]:
        """The hosts insert() would give a job placed in the first slice, else None; changes nothing.

        Only equivalent to insert()'s answer when ``select`` is stateless (its calls on later
        slices, which this skips, then have no effect)."""
        found = self._fit_first(res, fixed(walltime), select, present)
        return None if found is None else found[0]

    def insert_now(self, job_id: str, res: int, walltime: float, select: Selector) -> Optional[int]:
        """insert() if the job lands in the first slice (returns its hosts), else change nothing
        and return None.  Equivalent to insert() followed by remove() when the job does not start
        now, provided ``select`` is stateless."""
        wall = fixed(walltime)
        found = self._fit_first(res, wall, select, None)
        if found is None:
            return None
        hosts, j = found
        self._occupy(0, j, job_id, hosts, self.slices[0].begin + wall)
        return hosts

    def _fit_first(self, res: int, wall: int, select: Selector, present: Optional[int]):
        """(hosts, index of the last slice the job overlaps) of a first-slice placement, or None."""
        slices = self.slices
        s = slices[0]
        avail = s.available if present is None else s.available & present
        if avail.bit_count() < res:
            return None
        until = s.begin + wall
        if s.end >= until:
            hosts = select(avail, res)
            return None if hosts is None else (hosts, 0)
        for j in range(1, len(slices)):
            nxt = slices[j]
            avail &= nxt.available
            if avail.bit_count() < res:
                return None
            if nxt.end >= until:
                hosts = select(avail, res)
                if hosts is not None:
                    return hosts, j
        return None

    def fits_before(self, job_id: str, res: int, walltime: float, limit: int) -> bool:
        """Whether ``res`` of the hosts available over ``walltime`` could be found from a slice
        beginning before ``limit``, the job's own hosts given back: whether the job, removed and
        inserted again with a selector that takes any such hosts (``lowest``), would move earlier."""
        slices = self.slices
        wall = fixed(walltime)
        for i in range(len(slices)):
            s = slices[i]
            if s.begin >= limit:
                return False
            avail = s.available | s.jobs.get(job_id, 0)
            if avail.bit_count() < res:
                continue
            until = s.begin + wall
            j = i
            while slices[j].end < until:
                j += 1
                nxt = slices[j]
                avail &= nxt.available | nxt.jobs.get(job_id, 0)
                if avail.bit_count() < res:
                    break
            else:
                return True
        return False

    def remove(self, job_id: str) -> bool:
        """Give the job's hosts back from every slice it occupies; False if it was not there."""
        begin = self.placed.pop(job_id, None)
        if begin is None:
            return False
        slices = self.slices
        i = 0 if job_id in slices[0].jobs else self._first_slice_of(job_id, begin)
        n = len(slices)
        while i < n:
            s = slices[i]
            hosts = s.jobs.pop(job_id, None)
            if hosts is None:
                break
            s.available |= hosts
            if i > 0 and slices[i - 1].jobs == s.jobs:
                s.begin = slices[i - 1].begin
                del slices[i - 1]
                n -= 1
            else:
                i += 1
        if 0 < i < n and slices[i - 1].jobs == slices[i].jobs:
            slices[i].begin = slices[i - 1].begin
            del slices[i - 1]
        return True

    def _first_slice_of(self, job_id: str, begin: int) -> int:
        """Index of the first slice holding the job, found by its begin (checked; else scanned)."""
        slices = self.slices
        lo = bisect_right(slices, begin, key=_begin_of)     # after the last slice beginning by ``begin``
        i = lo - 1 if lo else 0
        if job_id in slices[i].jobs and (i == 0 or job_id not in slices[i - 1].jobs):
            return i
        return next(k for k, s in enumerate(slices) if job_id in s.jobs)

    def hosts_needed_before(self, date: float) -> int:
        """Hosts some job in the profile occupies before ``date`` (power policies keep them on)."""
        limit = fixed(date)
        used = 0
        for s in self.slices:
            if s.begin >= limit:
                break
            for hosts in s.jobs.values():
                used |= hosts
        return used
