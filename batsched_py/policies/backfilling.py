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
"""
from typing import Optional

from ..scheduler import Job, register
from .base import QueuePolicy
from .profile import Placement, Profile


class Backfilling(QueuePolicy):
    needs_walltime = True

    def on_simulation_begins(self, event) -> None:
        super().on_simulation_begins(event)
        self.profile = Profile(self.platform.all, self.now)

    def place(self, job: Job) -> Optional[Placement]:
        """Insert ``job`` first fit; a start in the present is restricted to present_hosts(), unless
        that would push the job past its start_deadline()."""
        present = self.present_hosts(job)
        duration = self.planned_duration(job)
        placed = self.profile.insert(job.id, job.res, duration, self.selector(), present)
        if present is not None and (placed is None or placed.begin > self.start_deadline(job)):
            self.profile.remove(job.id)
            placed = self.profile.insert(job.id, job.res, duration, self.selector())
        return placed

    def begin_message(self) -> list[Job]:
        """Common start of a decision: drop ended jobs, admit new ones, move the present."""
        for job in self.ended:
            self.profile.remove(job.id)
        admitted = [job for job in self.released if self.admit(job)]
        self.profile.update_first_slice(self.now)
        return admitted


@register("easy")
class EASY(Backfilling):
    description = "EASY backfilling: reservation for the queue head only (batsched easy_bf)"

    def decide(self) -> None:
        priority_before = self.queue[0] if self.queue else None
        admitted = self.begin_message()
        priority = self._sort_keeping_priority(priority_before)
        if not self.ended and not self.replan:
            # Nothing was freed: only the new jobs can start, and only on what is free now.
            free = len(self.profile.available_now)
            for job in admitted:
                if free <= 0:
                    break
                if job in self.queue and job is not priority and job.res <= free:
                    placed = self.place(job)
                    if placed is not None and placed.starts_now:
                        self.start(job, placed.hosts)
                        free -= job.res
                    else:
                        self.profile.remove(job.id)
            return
        # Hosts were freed: every queued job is tried again, the priority job keeping its place.
        free = len(self.profile.available_now)   # (batsched does not update it in this loop)
        i = 0
        while i < len(self.queue) and free > 0:
            job = self.queue[i]
            self.profile.remove(job.id)
            placed = self.place(job)
            if placed is not None and placed.starts_now:
                self.start(job, placed.hosts)
                if job is priority:
                    priority = self.queue[0] if self.queue else None
            else:
                if job is not priority:
                    self.profile.remove(job.id)
                i += 1

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
                self.start(after, placed.hosts)
                after = self.queue[0] if self.queue else None
        return after


@register("conservative")
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


@register("saf")
class SAF(EASY):
    description = "EASY backfilling with the queue in smallest-area-first order"
    default_queue_order = "saf"


@register("sjf")
class SJF(EASY):
    description = "EASY backfilling with the queue in shortest-job-first order"
    default_queue_order = "sjf"
