"""EASY and conservative backfilling on the shared reservation profile (profile.py).

Both follow batsched (``easy_bf``, ``conservative_bf``) decision for decision:
jobs are placed in the profile by walltime; a job starts when its first-fit
place is in the present slice.  Jobs without walltime or larger than the
platform are rejected when submitted.

- ``easy``: only the *priority* job (queue head) keeps a reservation; other jobs
  start now if they fit without delaying it.  When no job ended in a message,
  only the new jobs are tried (the profile cannot have improved for the others).
- ``conservative``: every queued job keeps a reservation; when jobs end, every
  reservation is recomputed in queue order (compression).
- ``saf`` / ``sjf``: ``easy`` with the queue sorted by smallest area
  (walltime x hosts) / shortest walltime first.

Options: ``queue_order`` (queue_order.py), ``allocation``/``contiguous``/
``cores_per_node``/``seed`` (selection.py).

Speed (same decisions): a job other than the priority one only stays in the
profile if it starts now, so with a stateless selector (lowest, contiguous,
consolidation) EASY only tries the first slice for it (``Profile.insert_now``)
and skips jobs larger than the hosts free now, instead of placing and removing
them; times are exact fixed-point integers (profile.py).  When jobs end, the priority job keeps
its reservation instead of being removed and placed again whenever that would give it the same
one (``EASY._reservation_stays``): about half of the completions on a loaded cluster.
"""
from typing import Optional

from ..protocol import JobDescription
from ..scheduler import Job
from .base import QueuePolicy
from .profile import _SCALE, INF, Placement, Profile, fixed, seconds
from .selection import is_stateless, lowest


class Backfilling(QueuePolicy):
    needs_walltime = True

    def on_simulation_begins(self, event) -> None:
        super().on_simulation_begins(event)
        self.profile = Profile(self.platform.all_mask, self.now)

    def place(self, job: Job) -> Optional[Placement]:
        """Insert ``job`` first fit; a start in the present is restricted to present_hosts(), unless
        that would push the job past its start_deadline()."""
        if self.plain_hooks:
            # (needs_walltime: admit() queues only jobs with a walltime, hence the type ignores)
            return self.profile.insert(job.id, job.res, job.walltime, self.select)  # type: ignore[arg-type]
        present = self.present_hosts(job)
        duration = self.planned_duration(job)
        placed = self.profile.insert(job.id, job.res, duration, self.selector(), present)
        if present is not None and (placed is None or _after(placed.begin, self.start_deadline(job))):
            self.profile.remove(job.id)
            placed = self.profile.insert(job.id, job.res, duration, self.selector())
        return placed

    def starts_now(self, job: Job, select) -> bool:
        """Whether place(job) would start the job now, without placing it -- for a job that is
        removed again when it does not start, with a stateless selector ``select``.
        present_hosts() is called as place() calls it (power policies remind themselves there)."""
        present = self.present_hosts(job)
        if present is None:
            return self.profile.fits_now(job.res, self.planned_duration(job), select) is not None
        placed = self.place(job)        # (rare) the restriction may be lifted: place to know
        if placed is None:
            return False
        self.profile.remove(job.id)
        return placed.starts_now

    def begin_message(self) -> list[Job]:
        """Common start of a decision: drop ended jobs, admit new ones, move the present."""
        profile = self.profile
        for job in self.ended:
            profile.remove(job.id)
        admitted = [job for job in self.released if self.admit(job)] if self.released else []
        now = self.now
        first = profile.slices[0]
        if type(now) is float:
            t = now * _SCALE        # (profile.lapsed() and update_first_slice(), inlined: once per message)
            if t > first.end:
                # Reservations ended in the past: a job ran later than planned (power policies,
                # oracle runtimes).  Plan the queue afresh around the late jobs.
                for job in self.queue:
                    profile.remove(job.id)
                self.replan = True
                profile.update_first_slice(now)
            elif t.is_integer():
                first.begin = int(t)
            else:
                profile.update_first_slice(now)
            return admitted
        if profile.lapsed(now):
            for job in self.queue:
                profile.remove(job.id)
            self.replan = True
        profile.update_first_slice(now)
        return admitted


def _after(begin: int, deadline: float) -> bool:
    """Fixed-point ``begin`` > ``deadline`` (a float, maybe infinite), exactly."""
    if deadline == INF:
        return False
    if deadline == -INF:
        return True
    return begin > fixed(deadline)


class EASY(Backfilling):
    description = "EASY backfilling: reservation for the queue head only (batsched easy_bf)"

    keeps_reservations = False      # (set when the simulation begins, see _reservation_stays)

    def on_simulation_begins(self, event) -> None:
        super().on_simulation_begins(event)
        self.keeps_reservations = self.plain_hooks and self.select is lowest

    def decide(self) -> None:
        queue = self.queue
        priority_before = queue[0] if queue else None
        # Read before begin_message removes the ended jobs from the profile.
        freed_until = self._reservations_end(self.ended) if self.ended and self.keeps_reservations else INF
        admitted = self.begin_message()
        if self.order is None and (queue[0] if queue else None) is priority_before:
            priority = priority_before      # (what _sort_keeping_priority would find)
        else:
            priority = self._sort_keeping_priority(priority_before)
        profile = self.profile
        if self.plain_selector:
            select = self.select
            quick = self.stateless_selector
        else:
            select = self.selector()
            quick = is_stateless(select)
        # A job other than the priority one is only kept in the profile if it starts now: with
        # a stateless selector, it is enough to try the first slice (same answer, no undo).
        direct = quick and self.plain_present
        # planned_duration() not overridden: the walltime (read directly below)
        plain_duration = type(self).planned_duration is QueuePolicy.planned_duration
        placed = profile.placed
        if not self.ended and not self.replan:
            # Nothing was freed: only the new jobs can start, and only on what is free now.
            free = profile.slices[0].available.bit_count()
            queued = self.in_queue
            for job in admitted:
                if free <= 0:
                    break
                if job.id in queued and job is not priority and job.res <= free:
                    if direct and job.id not in placed:
                        hosts = profile.insert_now(job.id, job.res, job.walltime if plain_duration  # type: ignore[arg-type]
                                                   else self.planned_duration(job), select)
                        if hosts is not None:
                            self.start(job, hosts)
                            free -= job.res
                        continue
                    if quick and not self.starts_now(job, select):
                        continue
                    p = self.place(job)
                    if p is not None and p.starts_now:
                        self.start(job, p.hosts)
                        free -= job.res
                    else:
                        profile.remove(job.id)
            return
        # Hosts were freed: every queued job is tried again, the priority job keeping its place.
        free = profile.slices[0].available.bit_count()   # (batsched does not update it in this loop)
        if free <= 0:
            return
        keep_priority = priority is priority_before and self._reservation_stays(priority, freed_until)
        now_count = free           # hosts available in the first slice (a job needs res of them)
        i = 0
        while i < len(queue):
            job = queue[i]
            if job is not priority and quick:
                if direct and job.id not in placed:
                    if not now_count:
                        break       # nothing left to start on; later jobs are not priority ones
                    if job.res <= now_count:
                        hosts = profile.insert_now(job.id, job.res, job.walltime if plain_duration  # type: ignore[arg-type]
                                                   else self.planned_duration(job), select)
                        if hosts is not None:
                            self.start(job, hosts, index=i)
                            now_count = profile.slices[0].available.bit_count()
                            continue
                    i += 1
                    continue
                if not self.starts_now(job, select):
                    i += 1
                    continue
            if job is priority and keep_priority:
                i += 1                  # (removed and placed again, it would land where it is)
                continue
            profile.remove(job.id)
            p = self.place(job)
            if p is not None and p.starts_now:
                self.start(job, p.hosts, index=i)
                now_count = profile.slices[0].available.bit_count()
                if job is priority:
                    priority = queue[0] if queue else None
            else:
                if job is not priority:
                    profile.remove(job.id)
                i += 1

    def _reservations_end(self, jobs: list[Job]) -> "int | float":
        """When the reservations of ``jobs`` would have ended (fixed point; INF if one has none)."""
        placed = self.profile.placed
        end: "int | float" = 0
        for job in jobs:
            begin = placed.get(job.id)
            if begin is None or job.walltime is None:
                return INF
            end = max(end, begin + fixed(job.walltime))
        return end

    def _reservation_stays(self, job: Optional[Job], freed_until: "int | float") -> bool:
        """Whether removing the priority ``job`` and placing it again would give it the same
        reservation (its begin R and hosts), so that both can be skipped.  It does when:
        the hooks and the ``lowest`` selector are the plain ones (keeps_reservations); R is in
        the future; the jobs that ended this message were to end by R (``freed_until``, so
        nothing changed from R on); and the job fits nowhere earlier.  Since the job was placed,
        other jobs only took hosts it did not hold, and ``lowest`` picks the same lowest hosts
        from any subset of the available ones that still holds them.

        Only starts before ``freed_until`` are tried: at the end of the previous message the job
        fitted nowhere before R, and since then hosts were freed only before ``freed_until``, so
        a window starting later has no host it lacked then."""
        if job is None or self.replan:
            return False
        profile = self.profile
        begin = profile.placed.get(job.id)
        return (begin is not None and begin > profile.slices[0].begin and freed_until <= begin
                and not profile.fits_before(job.id, job.res, job.walltime, freed_until))  # type: ignore[arg-type]

    def _sort_keeping_priority(self, before: Optional[Job]) -> Optional[Job]:
        """Sort the queue; if the head changed, give the new head its reservation, starting it
        (and the next heads) while it fits now."""
        self.sort_queue()
        after = self.queue[0] if self.queue else None
        if after is not before:
            if before is not None:
                self.profile.remove(before.id)
            while after is not None:
                placed = self.place(after)
                if placed is None or not placed.starts_now:
                    break
                self.start(after, placed.hosts, index=0)
                after = self.queue[0] if self.queue else None
        return after


class Conservative(Backfilling):
    description = "conservative backfilling: a reservation for every queued job (batsched conservative_bf)"

    def decide(self) -> None:
        admitted = self.begin_message()
        if not self.ended and not self.replan:
            for job in admitted:
                placed = self.place(job)
                if placed is not None and placed.starts_now:
                    self.start(job, placed.hosts)
            return
        self.sort_queue()
        for job in list(self.queue):
            self.profile.remove(job.id)
            placed = self.place(job)
            if placed is not None and placed.starts_now:
                self.start(job, placed.hosts)

    def estimate_waiting_time(self, job: JobDescription) -> float:
        """How long a job like ``job`` submitted now would wait, by the plan this message's decisions
        leave: every queued job keeps its reservation, so the job's first-fit place is where it
        would go.  -1 when it has no walltime or is larger than the platform.  (batsched's
        conservative_bf answers with that place's date instead of the wait.)  The hosts a power
        policy keeps from starting work now are counted as available."""
        if job.walltime is None or job.walltime < 0 or job.res > len(self.platform.resources):
            return -1.0
        select = self.selector()
        if not is_stateless(select):
            select = lowest         # (a stateful selector would remember a job that never comes)
        profile = self.profile
        begin = profile.first_fit_begin(job.res, job.walltime, select)
        return -1.0 if begin is None else seconds(begin - profile.slices[0].begin)


class SAF(EASY):
    description = "EASY backfilling with the queue in smallest-area-first order"
    default_queue_order = "saf"


class SJF(EASY):
    description = "EASY backfilling with the queue in shortest-job-first order"
    default_queue_order = "sjf"
