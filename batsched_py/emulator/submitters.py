"""Batsim's submitters: one per workload (its static jobs) and one per ``--events`` file (external
events), each saying hello, sending what is due at each wake-up, sleeping until its next date, and
saying goodbye."""
from __future__ import annotations

from .. import protocol as p
from ..models.errors import EmulatorError
from ..models.events_file import ExternalEvent
from ..models.workload import Job, Workload
from .state import EngineState
from .timeline import Action

__all__ = ["Submitters"]


class _Submitter:
    """A static job (or external event) submitter: ``items`` sorted by date, ``i`` the next one,
    ``current`` the clock at its last wake-up (Batsim's current_submission_date); ``on_batch`` /
    ``on_bye`` handle its messages."""
    __slots__ = ("on_batch", "on_bye", "items", "dates", "i", "current")

    def __init__(self, on_batch, on_bye, items: list, dates: list[float]):
        self.on_batch, self.on_bye = on_batch, on_bye
        self.items, self.dates, self.i, self.current = items, dates, 0, 0.0


class Submitters(EngineState):
    """The engine's submitter actors and the server's handling of their messages."""

    def _start_submitter(self, wl: Workload) -> None:
        # Batsim submits by (subtime, job id as a string).
        order = sorted(wl.jobs, key=lambda j: (j.subtime, j.id))
        if not order:
            return
        self._job_submitters += 1
        self._begin(_Submitter(self._on_submit, self._on_bye_jobs, order, [j.subtime for j in order]))

    def _start_event_submitter(self, events: list[ExternalEvent]) -> None:
        self._event_submitters += 1
        self._begin(_Submitter(self._on_events, self._on_bye_events, events, [e.timestamp for e in events]))

    def _begin(self, sub: _Submitter) -> None:
        """A submitter starts by saying hello (SUBMITTER_HELLO) at time 0."""
        self._mailbox.append((self._on_hello, sub))

    def _on_hello(self, sub: _Submitter):
        """Once its hello is received, a submitter sends what is due at the clock, else sleeps
        until its first date (or says goodbye if it has nothing)."""
        sub.current = self.tl.now
        batch = self._next_batch(sub, woke=False)
        if batch:
            if self._first_submission:
                self._first_submitted(sub)
            return (sub.on_batch, (sub, batch))
        return self._after_batch(sub)

    @staticmethod
    def _next_batch(sub: _Submitter, woke: bool) -> list:
        """What a submitter sends now: after a wake-up the item it waited for, then every item
        whose date is not above the clock at the wake-up."""
        items, dates, i, n = sub.items, sub.dates, sub.i, len(sub.items)
        batch = []
        if woke and i < n:
            batch.append(items[i])
            i += 1
        while i < n and not dates[i] > sub.current:
            batch.append(items[i])
            i += 1
        sub.i = i
        return batch

    def _sleep_until_next(self, sub: _Submitter) -> None:
        self.tl.sleep(sub.dates[sub.i] - sub.current, (self._submitter_woke, sub))

    def _after_batch(self, sub: _Submitter):
        """The batch was received: sleep until the next date, or say goodbye."""
        if sub.i < len(sub.items):
            self._sleep_until_next(sub)
            return None
        return (sub.on_bye, None)

    def _submitter_woke(self, sub: _Submitter, _action: Action) -> None:
        sub.current = self.tl.now
        if self._first_submission:
            self._first_submitted(sub)
        self._put_now((sub.on_batch, (sub, self._next_batch(sub, woke=True))))

    def _first_submitted(self, sub: _Submitter) -> None:
        """With -E, the first job submitter to submit reads every host's energy before its put
        (Batsim's energy at the first submission, for schedule.csv): the hosts' first energy
        update, see Machines._leave_creation_power."""
        if sub.on_batch == self._on_submit:
            self._first_submission = False
            self.machines.job_submitted(self.tl.now)

    def _on_submit(self, payload):
        sub, batch = payload
        now = self.tl.now
        t = self._stamp_value if now == self._stamp_at else self._stamp()
        out = self._out
        if self.opt.forward_profiles:
            for job in batch:
                job.state = "SUBMITTED"
                out.append(self._submitted_event(t, job))
        else:
            submitted = p.JobSubmitted
            for job in batch:
                job.state = "SUBMITTED"
                out.append(submitted(t, job.id, job.desc, None))
        self.nb_submitted += len(batch)
        if sub.i < len(sub.items):    # _after_batch, inlined: sleep until the next date
            self.tl.sleep(sub.dates[sub.i] - sub.current, (self._submitter_woke, sub))
            return None
        return (sub.on_bye, None)

    def _submitted_event(self, t: float, job: Job) -> p.JobSubmitted:
        profile = None
        if self.opt.forward_profiles:
            profile = dict(self.workloads[job.workload].profiles[job.profile].data)
        return p.JobSubmitted(t, job.id, job.desc, profile)

    def _on_bye_jobs(self, _):
        self._job_submitters -= 1
        if self._job_submitters == 0:
            self._out.append(p.Notify(self._stamp(), "no_more_static_job_to_submit"))

    def _on_bye_events(self, _):
        self._event_submitters -= 1
        if self._event_submitters == 0:
            self._out.append(p.Notify(self._stamp(), "no_more_external_event_to_occur"))

    def _on_events(self, payload):
        sub, batch = payload
        now = self.tl.now
        t = self._stamp()
        for e in batch:
            if e.type == "machine_unavailable" or e.type == "machine_available":
                err = (self.machines.set_unavailable if e.type == "machine_unavailable"
                       else self.machines.set_available)(now, e.resources)
                if err:
                    raise EmulatorError(f"external event {e.type} at t={e.timestamp:g} on machines "
                                        f"{e.resources}: {err}")
                self._out.append(p.Notify(t, "event_" + e.type, e.resources))
            elif self.opt.forward_unknown_events:
                # Batsim 4.2.1 sends the event's whole JSON object from the file as the NOTIFY's
                # data, copied as is: its "type" (the notify type) and its own "timestamp" too.
                extra = {k: v for k, v in e.data.items() if k != "type"}
                self._out.append(p.Notify(t, e.type, None, extra))
        return self._after_batch(sub)
