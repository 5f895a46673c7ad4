"""The sans-IO driver between messages and a :class:`Scheduler`.

``Session.handle(message) -> reply`` is the whole scheduler side of the
protocol: transports (ZeroMQ, the in-process emulator) only move messages.
"""
from typing import Any, Callable

from .. import protocol as p
from ..compiled import mypyc_attr
# (SessionError lives in base.py: mypyc cannot compile a RuntimeError subclass)
from .base import DecisionError, Scheduler, SessionError, finite
from .view import Job, Platform


@mypyc_attr(allow_interpreted_subclasses=True)    # (copies, pickles, subclasses: see compiled.py)
class Session:
    def __init__(self, scheduler: Scheduler):
        self.scheduler = scheduler
        self.started = False
        self.ended = False
        self.messages = 0
        self._now = 0.0                 # the time of the last message received
        # This message's estimate_waiting_time requests (job id, job), answered after schedule().
        self._queries: list[tuple[str, p.JobDescription]] = []
        self._plain_take = type(scheduler).take_decisions is Scheduler.take_decisions

    def handle(self, message: p.Message) -> p.Message:
        """The reply to ``message``: its events applied, then the policy's decisions."""
        self.receive(message)
        return self.respond()

    def receive(self, message: p.Message) -> None:
        """Apply ``message``'s events and run the policy's schedule(); respond() then gives the reply.
        Between the two, a caller may take more decisions (an agent acting at a decision point)."""
        s = self.scheduler
        now = message.now
        if self.ended:
            raise SessionError("message received after SIMULATION_ENDS")
        if now < s.now:
            raise SessionError(f"Batsim's now went back in time ({now} < {s.now})")
        self.messages += 1
        self._now = s.now = s._decision_time = now
        get = _HANDLERS.get
        for event in message.events:
            handler = get(type(event))
            if handler is None or not self.started:
                if not self.started and not isinstance(event, p.SimulationBegins):
                    raise SessionError(f"first event must be SIMULATION_BEGINS, got {event.TYPE}")
                if handler is None:
                    raise SessionError(f"{event.TYPE} is not an event Batsim sends")
            handler(self, s, event)
        if not self.ended:
            s.schedule()
            if self._queries:
                self._answer_queries(s)

    def respond(self) -> p.Message:
        """The reply to the last message received: the decisions taken since."""
        s = self.scheduler
        now = self._now
        if self._plain_take:            # (take_decisions() inlined: most messages have no decision)
            decisions = s._outbox
            if decisions:
                s._outbox = []
        else:
            decisions = s.take_decisions()
        if not decisions or self.ended:
            return p.Message(now, ())   # (SIMULATION_ENDS is answered by an empty message)
        for d in decisions:
            if d.timestamp != now:      # decisions after now (advance_to): check their order
                reply_now = max(now, *(d.timestamp for d in decisions))
                p.check_order(reply_now, (d.timestamp for d in decisions), "reply")
                return p.Message(reply_now, tuple(decisions))
        return p.Message(now, tuple(decisions))

    # --- one handler per event type: update the view, then call the policy --------------
    def _begins(self, s: Scheduler, e: p.SimulationBegins) -> None:
        if self.started:
            raise SessionError("SIMULATION_BEGINS received twice")
        self.started = True
        s.platform = Platform(e.compute_resources)
        s.batsim_config = e.config
        s.on_simulation_begins(e)

    def _ends(self, s: Scheduler, e: p.SimulationEnds) -> None:
        self.ended = True
        s.finished = True
        s.on_simulation_ends(e)

    def _submitted(self, s: Scheduler, e: p.JobSubmitted) -> None:
        if e.job is None:
            raise SessionError(f"JOB_SUBMITTED {e.job_id} carries no job description (Redis mode is not supported)")
        jobs = s.jobs
        if e.job_id in jobs.by_id:
            raise SessionError(f"job {e.job_id} submitted twice")
        d = e.job
        # Batsim writes a missing walltime as -1; the view says None.
        walltime = d.walltime if d.walltime is not None and d.walltime >= 0 else None
        job = Job(e.job_id, d.res, d.subtime if d.subtime is not None else e.timestamp, walltime,
                  d.profile, d, e.profile)
        jobs.submitted(job)
        s.on_job_submitted(job)

    def _completed(self, s: Scheduler, e: p.JobCompleted) -> None:
        job = s.jobs.by_id.get(e.job_id)
        if job is None or job.alloc is None:
            raise SessionError(f"JOB_COMPLETED for {e.job_id}, which was never executed")
        s.jobs.completed(job, e.job_state, e.return_code, e.timestamp)
        s.platform.release_job(job.id)     # (the hosts of job.alloc: allocated by execute())
        s.on_job_completed(job)

    def _killed(self, s: Scheduler, e: p.JobKilled) -> None:
        # Hosts were released on the JOB_COMPLETED that precedes this event: nothing to free here.
        s.on_jobs_killed([s.jobs[j] for j in e.job_ids if j in s.jobs], e)

    def _state_changed(self, s: Scheduler, e: p.ResourceStateChanged) -> None:
        pstate = int(e.state)
        s.platform.pstate_changed(e.resources, pstate)
        s.on_resource_state_changed(e.resources, pstate)

    def _requested_call(self, s: Scheduler, e: p.RequestedCall) -> None:
        s.on_requested_call()

    def _notify(self, s: Scheduler, e: p.Notify) -> None:
        if e.kind == "no_more_static_job_to_submit":
            s.no_more_static_jobs = True
            s.on_no_more_static_jobs()
        elif e.kind == "no_more_external_event_to_occur":
            s.no_more_external_events = True
            s.on_notify(e)
        elif e.kind in ("event_machine_unavailable", "event_machine_available"):
            hosts = e.resources if e.resources is not None else p.parse_intervals("", "resources")
            unavailable = e.kind == "event_machine_unavailable"
            s.platform.set_unavailable(hosts, unavailable)
            (s.on_machine_unavailable if unavailable else s.on_machine_available)(hosts)
        else:
            s.on_notify(e)

    def _query(self, s: Scheduler, e: p.Query) -> None:
        for name, args in e.requests.items():
            if name != "estimate_waiting_time":
                raise SessionError(f"Batsim asked an unknown query {name!r}")
            where = "QUERY.requests.estimate_waiting_time"
            job_id, job = args.get("job_id"), args.get("job", {})
            if not isinstance(job_id, str) or not isinstance(job, dict):
                raise p.ProtocolError("needs a string job_id and a job object (res, walltime, ...)", where)
            self._queries.append((job_id, p.JobDescription.from_data({"profile": "", "id": job_id, **job},
                                                                     f"{where}.job")))

    def _answer_queries(self, s: Scheduler) -> None:
        # Like batsched, after the message's decisions: the estimate sees the plan they leave.
        # (typed Any: the compiled build would otherwise coerce the answer to float before the check)
        estimate_waiting_time: Any = s.estimate_waiting_time
        for job_id, description in self._queries:
            estimate = estimate_waiting_time(description)
            if isinstance(estimate, bool) or not isinstance(estimate, (int, float)) or not finite(estimate):
                raise DecisionError(f"estimate_waiting_time({job_id}) at t={s.decision_time}: returned {estimate!r}, "
                                    "not a finite number of time units (-1: cannot tell)")
            answer = {"job_id": job_id, "estimated_waiting_time": estimate}
            s._send(p.Answer(s.decision_time, {"estimate_waiting_time": answer}))
        self._queries.clear()

    def _answer(self, s: Scheduler, e: p.Answer) -> None:
        if e.consumed_energy is not None:
            s.platform.consumed_energy = e.consumed_energy
        s.on_answer(e)


_HANDLERS: dict[type, Callable[[Session, Scheduler, Any], None]] = {
    p.SimulationBegins: Session._begins, p.SimulationEnds: Session._ends, p.JobSubmitted: Session._submitted,
    p.JobCompleted: Session._completed, p.JobKilled: Session._killed,
    p.ResourceStateChanged: Session._state_changed, p.RequestedCall: Session._requested_call,
    p.Notify: Session._notify, p.Query: Session._query, p.Answer: Session._answer,
}

__all__ = ["Session", "SessionError", "DecisionError"]
