"""The discrete-event core: Batsim 4.2.1's server loop on SimGrid 3.32's clock, without SimGrid.

How Batsim orders things (learnt from its sources and SimGrid's, checked against real recordings):
- Time is SimGrid's floating-point clock (see :mod:`.timeline`): sleeps (job submitters, delay
  tasks, waiters, walltime timeouts, the request-reply actor waiting for a decision's date) and
  executions (parallel tasks at ``speed / flops``, 1-flop switches) end in solve steps, and the
  actors of the actions ending in one step post their messages to the server's mailbox in
  action-creation order.  The clock drifts off round values; Batsim prints it with 6 decimals.
- The server handles one mailbox message at a time (each receive is a zero-delta SimGrid step,
  which also ends sleeps shorter than SimGrid's precision). After each one, if the scheduler is
  ready (its last reply has been fully applied) and the mailbox is empty, it sends what it has
  buffered (or SIMULATION_ENDS once nothing can happen any more).
- A message is 1 byte.  On a platform whose master host has SimGrid's implicit loopback link
  (a Full/Floyd/Dijkstra zone), one sent by an actor of the master host (submitters, waiters, the
  request-reply actor) crosses it, at 10 GB/s: 1e-10 s, during which the clock moves and other
  actions may end.  Job executors and switch actors run on compute hosts, which have no route to
  the master host: their messages take no time, as every message on Vivaldi platforms.
- A sender that posts a follow-up (a submitter's "bye" after its last submission) does so only
  after the server took its message, i.e. after that emptiness check: this is why a lone last
  submission is sent alone and NOTIFY no_more_static_job_to_submit comes in the next message.
- The request-reply actor applies the reply's decisions in order, each at its timestamp: a
  timestamp above the (drifted) clock makes it sleep the difference first, even 1e-10 s; then
  "scheduler ready" at the reply's ``now`` the same way.
- A job submitter sends, after each wake-up, the jobs whose submission time is not above the
  clock, then sleeps until the next one: when the clock woke slightly early (within SimGrid's
  1e-9 s precision), jobs of the same submission time go in separate messages.

Cost (the whole KTH-SP2 trace is ~140k mailbox items and ~55k solve steps): mailbox items and
SimGrid actions carry the bound method that handles them, ``(handler, payload)``; decisions are
dispatched by event class through a dict of bound methods; what a profile takes to run (tasks,
return code, rates on a uniform platform) is computed once per profile; the "where" of an error
message is formatted only when there is an error.
"""
from __future__ import annotations

from collections import deque
from time import perf_counter as _perf_counter
from dataclasses import dataclass
from typing import Any, Callable, Optional

from procset import ProcSet

from .. import protocol as p
from .errors import EmulatorError
from .events_file import ExternalEvent
from .machines import Machines
from .platform import Platform, compute_resources_json
from .profiles import Task, expand_tasks, parse_profile, unsupported_part
from .timeline import Action, Timeline
from .workload import Job, Workload, make_job, unsupported_jobs_error

__all__ = ["Engine", "EngineOptions", "Exchange", "PROGRESS_EVERY"]

Exchange = Callable[[p.Message], p.Message]
# Batsim's waiter never sleeps less than this (smaller sleeps "did not affect" SimGrid, it says).
MIN_WAIT = 1e-5
# on_progress is called every this many finished (or rejected) jobs, and once at the end.
PROGRESS_EVERY = 256
_NEG_INF = float("-inf")


@dataclass(slots=True)
class EngineOptions:
    energy: bool = False
    forward_profiles: bool = False
    dynamic_jobs: bool = False
    ack_dynamic_jobs: bool = False
    profile_reuse: bool = False
    sched_config: str = ""
    forward_unknown_events: bool = False

    def config_json(self) -> dict[str, Any]:
        return {"redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
                "redis-prefix": "default", "profiles-forwarded-on-submission": self.forward_profiles,
                "dynamic-jobs-enabled": self.dynamic_jobs, "dynamic-jobs-acknowledged": self.ack_dynamic_jobs,
                "profile-reuse-enabled": self.profile_reuse, "sched-config": self.sched_config,
                "forward-unknown-events": self.forward_unknown_events}


class _Switch:
    """One SET_RESOURCE_STATE request: answered once all its hosts are done."""
    __slots__ = ("hosts", "state", "remaining")

    def __init__(self, hosts: ProcSet, state: str, remaining: int):
        self.hosts, self.state, self.remaining = hosts, state, remaining


class _Submitter:
    """A static job (or external event) submitter: ``items`` sorted by date, ``i`` the next one,
    ``current`` the clock at its last wake-up (Batsim's current_submission_date); ``on_batch`` /
    ``on_bye`` handle its messages."""
    __slots__ = ("on_batch", "on_bye", "items", "dates", "i", "current")

    def __init__(self, on_batch, on_bye, items: list, dates: list[float]):
        self.on_batch, self.on_bye = on_batch, on_bye
        self.items, self.dates, self.i, self.current = items, dates, 0, 0.0


def _task_rate(task: Task, speed: float, nb_hosts: int) -> float:
    """SimGrid's rate of a parallel task: its bottleneck host's speed over its flops there."""
    if task.vector:
        flops = max(task.vector)
    else:
        flops = task.amount / nb_hosts if task.total else task.amount
    return speed / flops if flops > 0 else 0.0


class _Plan:
    """What running one profile takes, computed at its first execution: its leaf tasks, the
    job's return code, whether every task is a ``_total`` one (then any allocation size is
    fine), the cpu load of the first task, and each cpu task's rate when it depends on neither
    the allocation nor pstates (None: computed at run time)."""
    __slots__ = ("tasks", "ret", "all_total", "first_load", "rates")

    def __init__(self, tasks: list, ret: int, uniform_speed: Optional[float]):
        self.tasks = tasks
        self.ret = ret
        if len(tasks) == 1:           # the usual (non-composed) profile, without generators
            t = tasks[0][0]
            self.all_total = t.total
            self.first_load = 0.0 if t.kind == "delay" else 1.0
            self.rates = [_task_rate(t, uniform_speed, 0) if uniform_speed is not None and t.kind == "cpu"
                          and not t.total else None]
            return
        self.all_total = all(t.total for t, _ in tasks)
        self.first_load = 0.0 if not tasks or tasks[0][0].kind == "delay" else 1.0
        self.rates = [_task_rate(t, uniform_speed, 0) if uniform_speed is not None and t.kind == "cpu"
                      and not t.total else None for t, _ in tasks]


class Engine:
    def __init__(self, platform: Platform, workloads: list[Workload], events: list[list[ExternalEvent]],
                 machines: Machines, writers, exchange: Exchange, options: EngineOptions,
                 on_progress: Optional[Callable[[int, int], None]] = None):
        self.platform = platform
        self.workloads = {w.name: w for w in workloads}
        self.machines = machines
        self.writers = writers
        self.exchange = exchange
        self.exchange_time = 0.0               # wall-clock seconds spent in exchange (the scheduler)
        self.opt = options
        self.on_progress = on_progress
        self.jobs: dict[str, Job] = {}
        self.tl = Timeline()
        self.messages = 0
        self._mailbox: deque = deque()
        self._due: list = []                   # posted at time 0, before the first reply is applied
        # Posted once the mailbox is empty: switch completions and, with -E, ends of jobs whose last
        # task is parallel_homogeneous.  An approximation of SimGrid's scheduling rounds: those
        # actors make simcalls before their put (set_pstate; energy reads of hosts not updated
        # now), one round each (scripts/simgrid_study/README.md).
        self._late: list = []
        self._out: list[p.Event] = []          # events buffered for the next request
        self._ready = False
        self._end_sent = False
        self._done = False
        self._job_submitters = 0
        self._event_submitters = 0
        self._registration_open = options.dynamic_jobs
        self.nb_submitted = self.nb_completed = self.nb_running = 0
        self._switching = 0
        self._waiters = 0
        self._groups: Optional[dict] = None    # switch completions of the actions being woken
        self._stamp_at: Optional[float] = None  # _stamp's cache
        self._stamp_value = 0.0
        self._plans: dict[str, dict[str, _Plan]] = {}
        self._energy = options.energy
        self._speed = [h.pstates for h in platform.hosts]
        # Without -E no pstate ever changes: with all hosts at the same speed, a job's bottleneck
        # speed is that one (saves a walk over the allocation per task).
        speeds = {h.pstates[h.default_pstate].speed for h in platform.hosts}
        self._uniform_speed = speeds.pop() if len(speeds) == 1 and not options.energy else None
        # Messages from actors of the master host cross its loopback link, if it has one; job
        # executors and switch actors run on compute hosts, with no route to the master host:
        # their messages take no time.
        self._loopback_rate = platform.master_loopback_bw    # 1-byte messages: rate = bandwidth
        self._compute_host_senders = {Engine._on_end, Engine._on_switch}
        self._decisions = {
            p.ExecuteJob: self._execute, p.RejectJob: self._reject, p.KillJob: self._kill,
            p.CallMeLater: self._call_me_later, p.SetResourceState: self._set_state, p.Notify: self._notify,
            p.Query: self._query, p.Answer: self._answer, p.RegisterProfile: self._register_profile,
            p.RegisterJob: self._register_job, p.SetJobMetadata: self._set_metadata,
            p.ChangeJobState: self._change_state,
        }
        for wl in workloads:
            for job in wl.jobs:
                self.jobs[job.id] = job
            self._start_submitter(wl)
        for lst in events:
            self._start_event_submitter(lst)

    @property
    def now(self) -> float:
        return self.tl.now

    def _stamp(self) -> float:
        """The clock as Batsim prints it, with 6 decimals: every event's timestamp.  Cached per
        clock value: round(x, 6) is correctly rounded through dtoa (~3k instructions) and most
        events share their time with others."""
        now = self.tl.now
        if now != self._stamp_at:
            self._stamp_at = now
            self._stamp_value = round(now, 6)
        return self._stamp_value

    # ------------------------------------------------------------------ submitters

    def _start_submitter(self, wl: Workload) -> None:
        # Batsim submits by (subtime, job id as a string).
        order = sorted(wl.jobs, key=lambda j: (j.subtime, j.id))
        if not order:
            return
        self._job_submitters += 1
        self._begin(_Submitter(self._on_submit, self._on_bye_jobs, order, [j.subtime for j in order]))

    def _start_event_submitter(self, events: list[ExternalEvent]) -> None:
        self._event_submitters += 1
        if not events:
            self._due.append((self._on_bye_events, None))
            return
        self._begin(_Submitter(self._on_events, self._on_bye_events, events, [e.timestamp for e in events]))

    def _begin(self, sub: _Submitter) -> None:
        """At time 0 a submitter sends what is due at once, else sleeps until its first date."""
        batch = self._next_batch(sub, woke=False)
        if batch:
            self._due.append((sub.on_batch, (sub, batch)))
        else:
            self._sleep_until_next(sub)

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
        self._mailbox.append((sub.on_batch, (sub, self._next_batch(sub, woke=True))))

    # ------------------------------------------------------------------ main loop

    def run(self) -> None:
        begins = p.SimulationBegins(
            0.0, nb_resources=self.platform.nb_hosts, nb_compute_resources=self.platform.nb_hosts,
            nb_storage_resources=0, allow_compute_sharing=False, allow_storage_sharing=True,
            config=self.opt.config_json(),
            compute_resources=tuple(p.ResourceInfo.from_data(r, "compute_resources")
                                    for r in compute_resources_json(self.platform)),
            storage_resources=(), workloads={w.name: w.path for w in self.workloads.values()},
            profiles={w.name: w.profiles_json() for w in self.workloads.values()})
        self._out.append(begins)
        mailbox, tl = self._mailbox, self.tl
        loopback = self._loopback_rate > 0.0
        mailbox.extend(self._send())
        popleft = mailbox.popleft
        while not self._done:
            if not mailbox:
                if self._late:
                    mailbox.extend(self._late)
                    self._late = []
                    continue
                ended = tl.step()
                if ended is None:
                    raise EmulatorError(f"t={tl.now:g}: nothing can happen any more but the simulation "
                                        "is not finished (the scheduler is waiting for nothing)")
                self._wake(ended)
                continue
            if loopback and mailbox[0][0].__func__ not in self._compute_host_senders:
                soon = self._cross_loopback()
            else:
                # Receiving this message is a zero-delta SimGrid step: sub-precision sleeps and
                # zero-work executions end with it, their actors post after the emptiness check.
                soon = tl.take_soon() if tl.soon else None
            handler, payload = popleft()
            follow = handler(payload)
            same_time = None
            if self._ready and not mailbox and not self._done:
                if self._out:
                    same_time = self._send()
                elif not self._end_sent and self._finished():
                    self._out.append(p.SimulationEnds(self._stamp()))
                    self._end_sent = True
                    same_time = self._send()
            if follow:
                mailbox.append(follow)
            if soon:
                self._wake(soon)
            if same_time:
                mailbox.extend(same_time)
        if self.on_progress is not None:
            self.on_progress(self.nb_submitted, self.nb_completed)

    def _cross_loopback(self) -> Optional[list[Action]]:
        """The message at the head of the mailbox comes from an actor of the master host, as the
        server: it crosses the master host's loopback link, 1 byte at its bandwidth (1e-10 s at
        10 GB/s), while the clock moves.  Actions ending before it arrives wake their actors (who
        post behind it); those ending with it are returned, their actors post after the check."""
        tl = self.tl
        comm = tl.execute(self._loopback_rate, None)
        while True:
            ended = tl.step()
            if not comm.alive:
                return [a for a in ended if a is not comm] or None
            self._wake(ended)

    def _wake(self, ended: list[Action]) -> None:
        """The actors of ``ended`` actions run, in order; most post a message to the server."""
        self._groups = None
        for a in ended:
            handler, payload = a.item
            handler(payload, a)

    def _post(self, item, _action: Action) -> None:
        """An actor that just posts ``item`` to the server when its sleep ends."""
        self._mailbox.append(item)

    def _switch_ended(self, payload, _action: Action) -> None:
        req, host = payload
        if self._groups is None:
            self._groups = {}
        group = self._groups.get(id(req))
        if group is None:
            self._groups[id(req)] = group = [req, []]
            # The switch actor sets the final pstate (a SimGrid simcall) before telling
            # the server: it reaches it after the messages already queued.
            self._late.append((self._on_switch, group))
        group[1].append(host)

    def _finished(self) -> bool:
        return (self._job_submitters == 0 and self._event_submitters == 0 and not self._registration_open
                and self.nb_submitted == self.nb_completed and self.nb_running == 0
                and self._switching == 0 and self._waiters == 0)

    def _send(self) -> list:
        """One request/reply; returns the items to post now (decisions due, maybe "ready")."""
        now = self._stamp()
        request = p.Message(now, tuple(self._out))
        self._out = []
        self._ready = False
        self.messages += 1
        index = self.messages
        t0 = _perf_counter()
        try:
            reply = self.exchange(request)
        finally:
            self.exchange_time += _perf_counter() - t0
        if not isinstance(reply, p.Message):
            raise EmulatorError(f"reply to message {index}: not a protocol Message ({type(reply).__name__})")
        reply_now = reply.now
        if reply_now < now:
            raise EmulatorError(f"reply to message {index}: now={reply_now} is before the request's "
                                f"now={now} (a reply cannot go back in time)")
        events = reply.events
        previous = _NEG_INF
        for e in events:     # p.check_order's rules, inline; it names the culprit on failure
            t = e.timestamp
            if t < previous or t > reply_now:
                try:
                    p.check_order(reply_now, (e.timestamp for e in events), f"reply to message {index}")
                except p.ProtocolError as exc:
                    raise EmulatorError(str(exc)) from None
            previous = t
        items = self._due
        self._due = []
        self._apply_reply(items, events, 0, reply_now, index)
        return items

    def _apply_reply(self, items, events, k: int, reply_now: float, index: int, woke: bool = False) -> None:
        """The request-reply actor from decision ``k`` on: each one at its timestamp (sleeping
        first if the timestamp is above the clock, then sending it as is), then "ready" at the
        reply's now the same way.  Appends what it posts now to ``items``: decisions as
        (their handler, (event, message index))."""
        tl = self.tl
        decisions = self._decisions
        refuse = self._refuse
        if woke:
            e = events[k]
            items.append((decisions.get(type(e), refuse), (e, index)))
            k += 1
        for k in range(k, len(events)):
            e = events[k]
            if e.timestamp > tl.now:
                tl.sleep(e.timestamp - tl.now, (self._reply_woke, (events, k, reply_now, index)))
                return
            items.append((decisions.get(type(e), refuse), (e, index)))
        if reply_now > tl.now:
            tl.sleep(reply_now - tl.now, (self._post, (self._on_ready, None)))
        else:
            items.append((self._on_ready, None))

    def _reply_woke(self, payload, _action: Action) -> None:
        events, k, reply_now, index = payload
        self._apply_reply(self._mailbox, events, k, reply_now, index, woke=True)

    # ------------------------------------------------------------------ mailbox handlers

    def _on_ready(self, _):
        self._ready = True
        if self._end_sent:
            self._done = True

    def _on_submit(self, payload):
        sub, batch = payload
        now = self.tl.now
        if not self.nb_submitted:
            self.machines.job_submitted(now)
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
            if e.type == "machine_unavailable":
                self.machines.set_unavailable(now, e.resources)
                self._out.append(p.Notify(t, "event_machine_unavailable", e.resources))
            elif e.type == "machine_available":
                self.machines.set_available(now, e.resources)
                self._out.append(p.Notify(t, "event_machine_available", e.resources))
            elif self.opt.forward_unknown_events:
                # Batsim 4.2.1 sends the event's whole JSON object from the file as the NOTIFY's
                # data, copied as is: its "type" (the notify type) and its own "timestamp" too.
                extra = {k: v for k, v in e.data.items() if k != "type"}
                self._out.append(p.Notify(t, e.type, None, extra))
        return self._after_batch(sub)

    def _on_wake(self, _):
        self._waiters -= 1
        self._out.append(p.RequestedCall(self._stamp()))

    def _on_switch(self, payload):
        req, hosts = payload
        self.machines.switch_done(self.tl.now, ProcSet(*hosts))
        self._switching -= len(hosts)
        req.remaining -= len(hosts)
        if req.remaining == 0:
            self._out.append(p.ResourceStateChanged(self._stamp(), req.hosts, req.state))

    def _on_end(self, payload):
        job, token, state, rc = payload
        if job.token != token or job.state != "RUNNING":
            return
        self._finish(job, state, rc)

    def _actions_ended(self, job: Job) -> None:
        """The job's current SimGrid actions end or are cancelled now: with -E, SimGrid updates
        the energy of their hosts (a parallel task's hosts, or the first host, where the job's
        actor sleeps) while their load still counts -- see machines.py."""
        task = job.tasks[min(job.task_index, len(job.tasks) - 1)][0] if job.tasks else None
        hosts = job.alloc if task is not None and task.kind == "cpu" else (job.alloc.min,)
        self.machines.action_ended(self.tl.now, hosts)

    def _finish(self, job: Job, state: str, rc: int) -> None:
        t = self.tl.now
        if job.actions:               # killed: its actions are cancelled
            if self._energy:
                self._actions_ended(job)
            for a in job.actions:
                a.alive = False
        job.actions = ()
        job.state, job.return_code, job.finish = state, rc, t
        if job.alloc is not None:     # None: started by CHANGE_JOB_STATE, on no host
            job.energy = self.machines.job_ended(t, job.id, job.alloc)
        self.nb_running -= 1
        self.nb_completed += 1
        if self.writers is not None:  # _record, inlined
            self.writers.job_row(job.name, job.workload, job.profile, job.subtime, job.res,
                                 -1.0 if job.walltime is None else job.walltime, state, job.start, t,
                                 "" if job.alloc is None else job.alloc, job.energy, job.metadata)
        self._out.append(p.JobCompleted(self._stamp_value if t == self._stamp_at else self._stamp(), job.id,
                                        state, rc, job.alloc))
        if self.on_progress is not None and not self.nb_completed % PROGRESS_EVERY:
            self.on_progress(self.nb_submitted, self.nb_completed)

    def _record(self, job: Job) -> None:
        if self.writers is None:
            return
        self.writers.job_row(job.name, job.workload, job.profile, job.subtime, job.res,
                             -1.0 if job.walltime is None else job.walltime, job.state, job.start,
                             job.finish, job.alloc if job.alloc is not None else "", job.energy, job.metadata)

    # ------------------------------------------------------------------ job execution

    def _plan(self, job: Job) -> _Plan:
        plans = self._plans.get(job.workload)
        if plans is None:
            plans = self._plans[job.workload] = {}
        plan = plans.get(job.profile)
        if plan is None:
            wl = self.workloads[job.workload]
            profile = wl.profiles[job.profile]
            plan = plans[job.profile] = _Plan(expand_tasks(profile, wl.profiles, f"job {job.id}"), profile.ret,
                                              self._uniform_speed)
        return plan

    def _run_task(self, job: Job, i: int, late: bool = False) -> None:
        """Batsim's executor starts task ``i`` of ``job`` now (or ends the job after the last)."""
        plan = job.tasks_plan
        tasks = plan.tasks
        tl = self.tl
        while i < len(tasks):
            task = tasks[i][0]
            job.task_index, job.task_start = i, tl.now
            remaining = job.remaining
            if self._energy:
                self.machines.job_load_changed(tl.now, job.id, job.alloc, 0.0 if task.kind == "delay" else 1.0)
            if task.kind == "delay":
                d = task.amount
                if remaining < 0 or d < remaining:
                    if d > 0:
                        job.actions = [tl.sleep(d, (self._task_done, (job, i, False)))]
                        return
                    i += 1          # sleep_for(0) returns at once
                    continue
                if remaining > 0:
                    job.actions = [tl.sleep(remaining, (self._task_done, (job, i, True)))]
                    return
                self._post_end(job, "COMPLETED_WALLTIME_REACHED", -1)
                return
            rate = plan.rates[i]
            if rate is None:
                rate = self._rate(job, task)
            ex = tl.execute(rate, (self._task_done, (job, i, False)))
            if remaining >= 0:
                # wait_for(remaining): SimGrid adds a timeout sleep, created after the execution.
                job.actions = [ex, tl.sleep(remaining, (self._task_done, (job, i, True)))]
            else:
                job.actions = [ex]
            return
        ret = plan.ret
        self._post_end(job, *(("COMPLETED_SUCCESSFULLY", 0) if ret == 0 else ("COMPLETED_FAILED", ret)), late=late)

    def _rate(self, job: Job, task: Task) -> float:
        """SimGrid's rate of a parallel task: its bottleneck host's speed over its flops there."""
        speed = self._uniform_speed
        if speed is None:
            speed = min(self._speed[h][self.machines.pstate(h)].speed for h in job.alloc)
        return _task_rate(task, speed, len(job.alloc))

    def _task_done(self, payload, action: Action) -> None:
        job, i, timeout = payload
        acts = job.actions
        if job.state != "RUNNING" or action not in acts:
            return
        # An execution ending in the same step as its timeout is a timeout: the execution's
        # action comes first, and SimGrid then finds the timeout detector finished too.
        if not timeout and len(acts) == 2 and not acts[1].alive:
            timeout = True
        if self._energy:
            self._actions_ended(job)
        for a in acts:
            a.alive = False
        job.actions = ()
        if timeout:
            self._post_end(job, "COMPLETED_WALLTIME_REACHED", -1)
            return
        # With -E a job ending with a parallel_homogeneous task reaches the server after the
        # messages already queued at this time, like a switch completion: at a job's end Batsim
        # reads the energy of every host (a consumed_energy.csv row), a simcall -- one SimGrid
        # scheduling round -- per host not updated at this time (proven with the real SimGrid in
        # scripts/simgrid_study); approximated here, not modelled round by round.
        late = (self._energy and action.rate != 0.0 and i + 1 == len(job.tasks)
                and not job.tasks[i][0].total)
        if i + 1 == len(job.tasks):    # the last task: no walltime bookkeeping needed
            ret = job.tasks_plan.ret
            end = (self._on_end, (job, job.token, "COMPLETED_SUCCESSFULLY", 0) if ret == 0 else
                   (job, job.token, "COMPLETED_FAILED", ret))
            (self._late if late else self._mailbox).append(end)     # _post_end, inlined
            return
        if job.remaining >= 0:
            if action.rate == 0.0:
                if job.remaining > 0:
                    job.remaining = job.remaining - job.tasks[i][0].amount
            else:
                job.remaining = job.remaining - (self.tl.now - job.task_start)
        self._run_task(job, i + 1, late)

    def _post_end(self, job: Job, state: str, rc: int, late: bool = False) -> None:
        (self._late if late else self._mailbox).append((self._on_end, (job, job.token, state, rc)))

    # ------------------------------------------------------------------ decisions

    @staticmethod
    def _where(event: p.Event, index: int) -> str:
        return f"message {index}: {event.TYPE} at t={event.timestamp:g}"

    def _refuse(self, payload):
        event, index = payload
        raise EmulatorError(f"{self._where(event, index)}: Batsim does not accept {event.TYPE} "
                            "from a scheduler")

    def _job(self, job_id: str, event: p.Event, index: int) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise EmulatorError(f"{self._where(event, index)}: job {job_id!r} does not exist (unknown job)")
        return job

    def _execute(self, payload: tuple[p.ExecuteJob, int]) -> None:
        e, index = payload
        job = self.jobs.get(e.job_id)
        if job is None or job.state != "SUBMITTED":
            job = self._job(e.job_id, e, index)
            raise EmulatorError(f"{self._where(e, index)}: job {job.id} cannot be executed: its state is "
                                f"{job.state} (only submitted, not yet started jobs can be)")
        alloc = e.alloc
        plans = self._plans.get(job.workload)
        plan = plans.get(job.profile) if plans is not None else None
        if plan is None:
            plan = self._plan(job)
        itvs = alloc._itvs            # procset's (first, last) pairs: len(alloc) without a generator
        size = itvs[0][1] + 1 - itvs[0][0] if len(itvs) == 1 else len(alloc)
        if size != job.res and not plan.all_total:
            raise EmulatorError(f"{self._where(e, index)}: job {job.id} requests {job.res} hosts but the "
                                f"allocation {alloc} has {len(alloc)} (wrong number of hosts)")
        t = self.tl.now
        err = self.machines.start_job(t, job.id, alloc, plan.first_load)
        if err:
            raise EmulatorError(f"{self._where(e, index)}: job {job.id}: invalid allocation {alloc}: {err}")
        job.state, job.start, job.alloc, job.tasks, job.tasks_plan = "RUNNING", t, alloc, plan.tasks, plan
        job.token += 1
        job.remaining = -1.0 if job.walltime is None else job.walltime
        self.nb_running += 1
        self._run_task(job, 0)

    def _reject(self, payload: tuple[p.RejectJob, int]) -> None:
        e, index = payload
        job = self._job(e.job_id, e, index)
        if job.state != "SUBMITTED":
            raise EmulatorError(f"{self._where(e, index)}: job {job.id} cannot be rejected: its state is "
                                f"{job.state} (only submitted, not yet started jobs can be)")
        job.state = "REJECTED"
        self.nb_completed += 1
        self._record(job)
        if self.on_progress is not None and not self.nb_completed % PROGRESS_EVERY:
            self.on_progress(self.nb_submitted, self.nb_completed)

    def _kill(self, payload: tuple[p.KillJob, int]) -> None:
        e, index = payload
        ids, progress = [], {}
        for job_id in e.job_ids:
            job = self._job(job_id, e, index)
            if job.kill_requested:
                continue
            if job.state not in ("RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
                                 "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED"):
                raise EmulatorError(f"{self._where(e, index)}: job {job.id} is neither running nor finished "
                                    f"(state {job.state}): it cannot be killed")
            job.kill_requested = True
            ids.append(job.id)
            if job.state == "RUNNING":
                progress[job.id], rc = self._kill_progress(job)
                self._finish(job, "COMPLETED_KILLED", rc)
        if ids:
            self._out.append(p.JobKilled(self._stamp(), tuple(ids), progress))

    def _kill_progress(self, job: Job) -> tuple[p.JobProgress, int]:
        i = min(job.task_index, len(job.tasks) - 1)
        task, path = job.tasks[i]
        elapsed = self.tl.now - job.task_start
        if task.kind == "delay":
            frac = elapsed / task.amount if task.amount > 0 else 0.0
        else:
            rate = self._rate(job, task)
            d = 1.0 / rate if rate > 0 else 0.0
            frac = elapsed / d if d > 0 else 0.0
        node = p.JobProgress(task.profile, round(frac, 6))
        for name, index in reversed(path):
            node = p.JobProgress(name, None, index, node)
        return node, (-1 if task.kind == "delay" else -2)

    def _call_me_later(self, payload: tuple[p.CallMeLater, int]) -> None:
        e, index = payload
        now = self.tl.now
        if not e.at > now:
            raise EmulatorError(f"{self._where(e, index)}: CALL_ME_LATER at {e.at} is not in the future "
                                f"(simulation time is {now:g})")
        self._waiters += 1
        self.tl.sleep(max(e.at - now, MIN_WAIT), (self._post, (self._on_wake, None)))

    def _set_state(self, payload: tuple[p.SetResourceState, int]) -> None:
        e, index = payload
        if not self.opt.energy:
            raise EmulatorError(f"{self._where(e, index)}: SET_RESOURCE_STATE needs energy support (-E), "
                                "as in Batsim")
        pstate = int(e.state)
        err = self.machines.check_set_state(e.resources, pstate)
        if err:
            raise EmulatorError(f"{self._where(e, index)}: {err}")
        now = self.tl.now
        done = self.machines.request_state(now, e.resources, pstate)
        later = [h for h, t in done.items() if t > now]
        if not later:
            self._out.append(p.ResourceStateChanged(self._stamp(), e.resources, e.state))
            return
        req = _Switch(e.resources, e.state, len(later))
        self._switching += len(later)
        for h in sorted(later):
            # Each host's switch actor computes 1 flop at the virtual pstate it is now in.
            self.tl.execute(self._speed[h][self.machines.pstate(h)].speed, (self._switch_ended, (req, h)))

    def _notify(self, payload: tuple[p.Notify, int]) -> None:
        e, index = payload
        if e.kind == "registration_finished":
            self._registration_open = False
        elif e.kind == "continue_registration":
            self._registration_open = self.opt.dynamic_jobs
        else:
            raise EmulatorError(f"{self._where(e, index)}: unknown NOTIFY type {e.kind!r} from the scheduler")

    def _query(self, payload: tuple[p.Query, int]) -> None:
        e, index = payload
        answers = {}
        for name in e.requests:
            if name != "consumed_energy":
                raise EmulatorError(f"{self._where(e, index)}: unsupported query {name!r} "
                                    "(Batsim answers consumed_energy)")
            if not self.opt.energy:
                raise EmulatorError(f"{self._where(e, index)}: consumed_energy needs energy support (-E), "
                                    "as in Batsim")
            answers[name] = self.machines.consumed_energy(self.tl.now)
        self._out.append(p.Answer(self._stamp(), answers))

    def _answer(self, payload: tuple[p.Answer, int]) -> None:
        """Answers to Batsim's own queries: Batsim 4.2.1 asks none, ignore."""

    def _register_profile(self, payload: tuple[p.RegisterProfile, int]) -> None:
        e, index = payload
        where = self._where(e, index)
        if not self.opt.dynamic_jobs:
            raise EmulatorError(f"{where}: dynamic registration needs --enable-dynamic-jobs")
        wl = self.workloads.get(e.workload_name)
        if wl is None:
            wl = self.workloads[e.workload_name] = Workload(e.workload_name, "", self.platform.nb_hosts, [], {})
        if e.profile_name in wl.profiles:
            raise EmulatorError(f"{where}: profile {e.profile_name!r} of workload {e.workload_name!r} "
                                "is already registered")
        wl.profiles[e.profile_name] = parse_profile(e.profile_name, dict(e.profile), where)

    def _register_job(self, payload: tuple[p.RegisterJob, int]) -> None:
        e, index = payload
        where = self._where(e, index)
        if not self.opt.dynamic_jobs:
            raise EmulatorError(f"{where}: dynamic registration needs --enable-dynamic-jobs")
        if not self._registration_open:
            raise EmulatorError(f"{where}: registration_finished was already sent")
        wname = e.job_id.split("!", 1)[0]
        wl = self.workloads.get(wname)
        if wl is None:
            raise EmulatorError(f"{where}: workload {wname!r} does not exist (register a profile first)")
        if e.job_id in self.jobs:
            raise EmulatorError(f"{where}: job {e.job_id!r} already exists")
        if e.job is None:
            raise EmulatorError(f"{where}: REGISTER_JOB without a job description")
        raw = e.job.to_data()
        raw.setdefault("subtime", self.tl.now)
        job = make_job(wl, raw, where, full_id=e.job_id)
        bad = unsupported_part(wl.profiles[job.profile], wl.profiles)
        if bad is not None:
            raise unsupported_jobs_error(where, bad, [job.id])
        wl.jobs.append(job)
        self.jobs[job.id] = job
        job.state = "SUBMITTED"
        self.nb_submitted += 1
        if self.opt.ack_dynamic_jobs:
            self._out.append(self._submitted_event(self._stamp(), job))

    def _set_metadata(self, payload: tuple[p.SetJobMetadata, int]) -> None:
        e, index = payload
        self._job(e.job_id, e, index).metadata = e.metadata

    def _change_state(self, payload: tuple[p.ChangeJobState, int]) -> None:
        e, index = payload
        job = self._job(e.job_id, e, index)
        new = e.job_state
        if job.state == "SUBMITTED" and new in ("RUNNING", "REJECTED"):
            if new == "RUNNING":
                job.start = self.tl.now
                self.nb_running += 1
            else:
                self.nb_completed += 1
                job.state = new
                self._record(job)
        elif job.state == "RUNNING" and new.startswith("COMPLETED_"):
            job.token += 1
            if job.actions and self._energy:
                self._actions_ended(job)
            for a in job.actions:
                a.alive = False
            job.actions = ()
            if job.alloc is not None:
                job.energy = self.machines.job_ended(self.tl.now, job.id, job.alloc)
            job.finish = self.tl.now
            self.nb_running -= 1
            self.nb_completed += 1
            job.state = new
            self._record(job)
        else:
            raise EmulatorError(f"{self._where(e, index)}: cannot change job {job.id} from {job.state} to {new}")
        job.state = new
