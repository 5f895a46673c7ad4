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
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Optional

from procset import ProcSet

INF = float("inf")
Selector = Callable[[ProcSet, int], Optional[ProcSet]]


@dataclass(slots=True)
class Slice:
    begin: float
    end: float
    available: ProcSet
    jobs: dict = field(default_factory=dict)    # job id -> hosts

    @property
    def length(self) -> float:
        return self.end - self.begin

    def copy(self) -> "Slice":
        return Slice(self.begin, self.end, ProcSet(self.available), dict(self.jobs))


@dataclass(frozen=True, slots=True)
class Placement:
    begin: float
    hosts: ProcSet
    starts_now: bool      # placed in the first slice: the job can be executed right away


class Profile:
    def __init__(self, hosts: ProcSet, now: float = 0.0):
        self.slices = [Slice(Fraction(now), INF, ProcSet(hosts))]

    def __contains__(self, job_id: str) -> bool:
        return any(job_id in s.jobs for s in self.slices)

    @property
    def available_now(self) -> ProcSet:
        return self.slices[0].available

    def update_first_slice(self, now: float) -> None:
        """The present moves to ``now``: the first slice starts there."""
        self.slices[0].begin = Fraction(now)

    def insert(self, job_id: str, res: int, walltime: float, select: Selector,
               present: Optional[ProcSet] = None) -> Optional[Placement]:
        """Insert the job first fit; None if it never fits.

        ``present`` (optional) restricts the hosts the job may take in the first slice (hosts
        that may start work now); later slices are unrestricted."""
        slices = self.slices
        walltime = Fraction(walltime)
        for i, s in enumerate(slices):
            avail = s.available if present is None or i else s.available & present
            if len(avail) < res:
                continue
            total = s.length
            if total >= walltime:
                hosts = select(avail, res)
                if hosts is not None:
                    self._split(i, s.begin + walltime)
                    self._occupy(i, job_id, hosts)
                    return Placement(s.begin, hosts, i == 0)
                continue
            for j in range(i + 1, len(slices)):
                nxt = slices[j]
                if len(nxt.available) < res:
                    break
                avail = avail & nxt.available
                total += nxt.length
                if len(avail) < res:
                    break
                if total >= walltime:
                    hosts = select(avail, res)
                    if hosts is not None:   # (batsched keeps scanning when the selector refuses)
                        for k in range(i, j):
                            self._occupy(k, job_id, hosts)
                        self._split(j, s.begin + walltime)
                        self._occupy(j, job_id, hosts)
                        return Placement(s.begin, hosts, i == 0)
        return None

    def remove(self, job_id: str) -> bool:
        """Give the job's hosts back from every slice it occupies; False if it was not there."""
        slices = self.slices
        i = next((k for k, s in enumerate(slices) if job_id in s.jobs), None)
        if i is None:
            return False
        while i < len(slices) and job_id in slices[i].jobs:
            s = slices[i]
            s.available = s.available | s.jobs.pop(job_id)
            i = self._merge_with_previous(i) + 1
        if i < len(slices):
            self._merge_with_previous(i)
        return True

    def _merge_with_previous(self, i: int) -> int:
        if i > 0 and self.slices[i - 1].jobs == self.slices[i].jobs:
            self.slices[i].begin = self.slices[i - 1].begin
            del self.slices[i - 1]
            return i - 1
        return i

    def _split(self, i: int, date: float) -> None:
        s = self.slices[i]
        if s.begin < date < s.end:
            second = s.copy()
            second.begin = date
            s.end = date
            self.slices.insert(i + 1, second)

    def _occupy(self, i: int, job_id: str, hosts: ProcSet) -> None:
        s = self.slices[i]
        s.available = s.available - hosts
        s.jobs[job_id] = hosts

    def hosts_needed_before(self, date: float) -> ProcSet:
        """Hosts some job in the profile occupies before ``date`` (power policies keep them on)."""
        used = ProcSet()
        for s in self.slices:
            if s.begin >= date:
                break
            for hosts in s.jobs.values():
                used |= hosts
        return used
