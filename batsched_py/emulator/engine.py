"""The discrete-event core: Batsim 4.2.1's server loop on SimGrid 3.32's clock, without SimGrid.

How Batsim orders things (learnt from its sources and SimGrid's, checked against real recordings):
- Time is SimGrid's floating-point clock (see :mod:`.timeline`): sleeps (job submitters, delay
  tasks, waiters, walltime timeouts, the request-reply actor waiting for a decision's date) and
  executions (parallel tasks at ``speed / flops``, 1-flop switches) end in solve steps, and the
  actors of the actions ending in one step post their messages to the server's mailbox in
  action-creation order.  The clock drifts off round values; Batsim prints it with 6 decimals.
- The server handles one mailbox message at a time (without links, each receive is a zero-delta
  SimGrid step, which also ends sleeps shorter than SimGrid's precision). After each one, if the
  scheduler is ready (its last reply has been fully applied) and the mailbox is empty, it sends
  what it has buffered (or SIMULATION_ENDS once nothing can happen any more).
- A message is 1 byte, and starts moving when the server takes it (one at a time).  On a platform
  without links, one sent by an actor of the master host (submitters, waiters, the request-reply
  actor) crosses the master's implicit loopback link if it has one (a Full/Floyd/Dijkstra zone),
  at 10 GB/s: 1e-10 s, during which the clock moves and other actions may end; job executors and
  switch actors run on compute hosts, with no route to the master host: their messages take no
  time, as every message on Vivaldi platforms.  On a platform with links (``platform.routes``,
  see network.py), every message crosses its sender's route to the master host: the route's
  latency, then its byte at the route's rate (SimGrid's ptask_L07), the clock moving meanwhile.
  A job's actor sends from the job's first host, a switch actor from its host, the others from
  the master host (its route to itself).  The actors of actions ending with a message wake in
  action creation order: those of actions created before it (it is created when the server takes
  it) put before its sender's next put.  With -E the sender host's energy is updated when its
  message arrives (the energy plugin updates the hosts of every action that ends).  Each switch
  actor's message is then its own; without links, the switch completions of one request that end
  together are one mailbox item.  A switch request's rows are written when its last host is done.
  Not modelled: the killer actor's message reporting a KILL_JOB (a warning on such platforms).
- SimGrid scheduling rounds (scripts/simgrid_study/README.md): after each solve (every receive
  is one) the woken actors run in sub-rounds, each simcall costing its actor one.  The server
  checks its mailbox in the sub-round it got its message, plus one per simcall of its handler:
  it sees the puts of earlier sub-rounds only.  Simcalls before a put: a switch actor's
  set_pstate; with -E, energy reads (a job's actor at its start and end, the server's pstate
  rows), one per host not updated at the current time.  So a sender's follow-up (a submitter's
  "bye" after its last submission), put once the server took its message, is not seen by that
  check: a lone last submission is sent alone, NOTIFY no_more_static_job_to_submit next.
- Submitters start with a SUBMITTER_HELLO.  The request-reply actor puts the reply's decisions
  one at a time, each once the server received the previous one, at its timestamp: a
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

import warnings
from collections import deque
from time import perf_counter as _perf_counter
from dataclasses import dataclass
from typing import Any, Callable, Generator, Optional, Sequence

from procset import ProcSet

from .. import protocol as p
from ..scheduler.failure import policy_failure
from ..models.errors import EmulatorError, NetworkNotModelledWarning
from ..models.events_file import ExternalEvent
from .machines import Machines
from ..models.platform import Platform, compute_resources_json
from ..models.profiles import Task, expand_tasks, parse_profile, unsupported_part
from .timeline import Action, Timeline
from ..models.workload import Job, Workload, make_job, unsupported_jobs_error

__all__ = ["Engine", "EngineOptions", "Exchange", "PROGRESS_EVERY"]

Exchange = Callable[[p.Message], p.Message]
# Batsim's waiter never sleeps less than this (smaller sleeps "did not affect" SimGrid, it says).
MIN_WAIT = 1e-5
# on_progress is called every this many finished (or rejected) jobs, and once at the end.
PROGRESS_EVERY = 256
_NEG_INF = float("-inf")


#: Batsim flags a scheduler may need (see Scheduler.batsim_flags), and EngineOptions' names for them
FLAG_OPTIONS = {"--enable-dynamic-jobs": "dynamic_jobs", "--acknowledge-dynamic-jobs": "ack_dynamic_jobs",
                "--enable-profile-reuse": "profile_reuse"}


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
    """One SET_RESOURCE_STATE request: answered once all its hosts are done (``done``: those
    whose switch actor's message the server received)."""
    __slots__ = ("hosts", "state", "remaining", "done")

    def __init__(self, hosts: ProcSet, state: str, remaining: int):
        self.hosts, self.state, self.remaining = hosts, state, remaining
        self.done: list[int] = []


class _Submitter:
    """A static job (or external event) submitter: ``items`` sorted by date, ``i`` the next one,
    ``current`` the clock at its last wake-up (Batsim's current_submission_date); ``on_batch`` /
    ``on_bye`` handle its messages."""
    __slots__ = ("on_batch", "on_bye", "items", "dates", "i", "current")

    def __init__(self, on_batch, on_bye, items: list, dates: list[float]):
        self.on_batch, self.on_bye = on_batch, on_bye
        self.items, self.dates, self.i, self.current = items, dates, 0, 0.0


class _Reply:
    """A scheduler reply being applied by Batsim's request-reply actor: ``k`` its next decision."""
    __slots__ = ("events", "now", "index", "k")

    def __init__(self, events: Sequence[p.Event], now: float, index: int):
        self.events, self.now, self.index, self.k = events, now, index, 0


def _sub_round(put: list) -> int:
    """The sort key of a deferred ``[sub-round, item]``."""
    return put[0]


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


def _released(message: p.Message) -> p.Message:
    """The exchange of a released engine (Engine.release)."""
    raise EmulatorError("this engine's run is over and released")


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
        self._asked_at = 0.0                   # the time of the last request (its reply is checked against it)
        # The server's mailbox: messages put (isend) in earlier scheduling rounds, and those of the
        # current round's first sub-round.  Puts of later sub-rounds of the current round wait in
        # _deferred as [sub-round, item] until the round ends (_end_round).
        self._mailbox: deque = deque()
        self._deferred: list = []
        # With -E, actors read energies (simcalls) before some puts: every put of a round is then
        # deferred, to order them by sub-round.  _readers: this round's energy reads (start
        # sub-round, host sets, [sub-round after them, their put]); _touched: hosts updated by a
        # read's simcall in this round -> its sub-round; _check_read: the server's reads before
        # its emptiness check, if any.
        self._put_now = self._mailbox.append if not options.energy else self._defer_now
        self._readers: list = []
        self._touched: dict[int, int] = {}
        self._check_read: Optional[list] = None
        self._first_submission = options.energy
        self._ready_put = (self._on_ready, None)
        self._out: list[p.Event] = []          # events buffered for the next request
        self._step_actions: list[Action] = []    # the actions ending in this SimGrid step
        # Jobs whose JOB_COMPLETED is in _out: Batsim deletes their profiles once it is sent,
        # unless --enable-profile-reuse (None then).
        self._ended: Optional[list[Job]] = None if options.profile_reuse else []
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
        # (bound methods, compared as such: compiled ones have no __func__)
        self._compute_host_senders = {self._on_end, self._on_switch}
        # On a platform with links, every message crosses its sender's route (see _cross).
        self._routed = platform.routes is not None
        self._message_seq = -1        # see _cross
        self._kill_warned = False
        self._event_number = 0
        self._route_latency: list[float] = []     # per compute host, then the master host's last
        self._route_rate: list[float] = []
        if platform.routes is not None and platform.master_route is not None:
            for r in platform.routes + (platform.master_route,):
                self._route_latency.append(r.latency)
                self._route_rate.append(r.rate)
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

    # ------------------------------------------------------------------ main loop

    def release(self) -> None:
        """Drop what the run built, once its result is taken.  Timeline actions and the engine's
        tables refer back to the engine through its bound methods: without this, a finished run
        (its jobs, the policy and its view) stayed alive until the next full cyclic collection,
        and a loop of simulations held twice the memory."""
        for job in self.jobs.values():
            job.actions = ()
        self.jobs = {}
        self.workloads = {}
        self.tl = Timeline()
        self.exchange = _released
        self._decisions = {}
        self._compute_host_senders = set()
        self._ready_put = (_released, None)
        self._put_now = self._mailbox.append
        self._mailbox.clear()
        self._deferred = []
        self._readers = []
        self._check_read = None
        self._out = []

    def run(self) -> None:
        """The whole simulation, each request answered by ``self.exchange``."""
        steps = self.steps()
        send = steps.send
        exchange = self.exchange
        request = next(steps)       # (there is always a first request: SIMULATION_BEGINS)
        while True:
            t0 = _perf_counter()
            try:
                reply = exchange(request)
            except Exception as exc:    # (the scheduler side's: named with the time, see policy_failure)
                raise policy_failure(exc, request.now)
            finally:
                self.exchange_time += _perf_counter() - t0
            try:
                request = send(reply)
            except StopIteration:
                return

    def steps(self) -> Generator[p.Message, p.Message, None]:
        """The simulation driven by its caller, sans-IO: yields each request to the scheduler and
        takes the reply through ``send()``; returns once Batsim's last reply has been applied."""
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
        routed = self._routed
        energy = self._energy
        self._reply_sent(self._take_reply((yield self._request())))
        popleft = mailbox.popleft
        touched = self._touched
        held = self.machines.held
        while not self._done:
            if not mailbox:
                ended = tl.step()
                if ended is None:
                    raise EmulatorError(f"t={tl.now:g}: nothing can happen any more but the simulation "
                                        "is not finished (the scheduler is waiting for nothing)")
                if energy:
                    self._round(ended)
                else:     # no energy reads, no switch actor: every put is in sub-round 1
                    self._wake(ended)
                continue
            older: Optional[list[Action]] = None
            if routed:
                soon = self._cross(mailbox[0])
                if soon:
                    # SimGrid wakes the actors of the actions ending with the message in action
                    # creation order: those of actions older than the message run before its
                    # sender and the server, so they put first.
                    older = [a for a in soon if a.seq < self._message_seq]
                    if older:
                        soon = [a for a in soon if a.seq > self._message_seq]
            elif loopback and mailbox[0][0] not in self._compute_host_senders:
                self._message_seq = tl.last_seq + 1
                soon = self._transfer(self._loopback_rate)
                if soon:
                    older = [a for a in soon if a.seq < self._message_seq]
                    if older:
                        soon = [a for a in soon if a.seq > self._message_seq]
            else:
                # Receiving this message is a zero-delta SimGrid step: sub-precision sleeps and
                # zero-work executions end with it.
                soon = tl.take_soon() if tl.soon else None
            # A new scheduling round: the server, the sender and the actors of the ended actions
            # run in sub-rounds (see _check_sees_nothing).
            if touched:
                touched.clear()
            if soon and energy:
                self._ended_energy(soon)
            handler, payload = popleft()
            earlier = len(mailbox)     # put in earlier rounds: the server's check sees them
            self._step_actions = (older or []) + (soon or [])
            if older:
                self._wake(older)
            follow = handler(payload)
            if follow:
                self._put_now(follow)     # the sender's next put, right after its put completed
            if soon:
                self._wake(soon)
            if self._readers:      # with -E: energy reads (every job start has some)
                if held:     # job starts, sleep/wake requests: rows after the woken actors ran
                    self.machines.write_held_rows()
                self._settle_reads()
            if self._ready and not earlier and not self._done and (self._check_read is None or
                                                                   self._check_sees_nothing(earlier)):
                if self._out:
                    self._reply_sent(self._take_reply((yield self._request())))
                elif not self._end_sent and self._finished():
                    self._out.append(p.SimulationEnds(self._stamp()))
                    self._end_sent = True
                    self._reply_sent(self._take_reply((yield self._request())))
            self._check_read = None
            if self._deferred:
                self._end_round()
        if self.on_progress is not None:
            self.on_progress(self.nb_submitted, self.nb_completed)

    def _check_sub(self) -> int:
        """The sub-round of the server's mailbox check: 1, plus one per simcall of its handler."""
        return 1 if self._check_read is None else self._check_read[0]

    def _check_sees_nothing(self, earlier: int) -> bool:
        """The server checks its mailbox in sub-round _check_sub(): it sees the puts of earlier
        sub-rounds only.  Every woken actor runs first in sub-round 1 and puts after its own
        simcalls, so with no simcall in the handler (the caller's shortcut) it sees none of this
        round's puts (``earlier``: those of earlier rounds, already checked)."""
        c = self._check_sub()
        return len(self._mailbox) == earlier and not any(sub < c for sub, _ in self._deferred)

    def _reply_sent(self, put) -> None:
        """The server created the request-reply actor (a simcall) after its check: the actor's
        first put, if it does not sleep first, comes one sub-round after the check, after every
        other put of the round."""
        if put is not None:
            if self._deferred:
                self._deferred.append([self._check_sub() + 1, put])
            else:
                self._mailbox.append(put)

    def _end_round(self) -> None:
        """The puts of the round's later sub-rounds reach the mailbox in sub-round order (stable:
        in the order the actors run within a sub-round)."""
        deferred = self._deferred
        if len(deferred) > 1:
            deferred.sort(key=_sub_round)
        self._mailbox.extend([item for _, item in deferred])
        self._deferred = []

    def _round(self, ended: list[Action]) -> None:
        """A scheduling round without the server: the actors of ``ended`` run and put."""
        if self._touched:
            self._touched.clear()
        if self._energy:
            self._ended_energy(ended)
        self._step_actions = ended
        self._wake(ended)
        if self._readers:
            self._settle_reads()
        if self._deferred:
            self._end_round()

    def _transfer(self, rate: float) -> Optional[list[Action]]:
        """The message at the head of the mailbox moves its byte at ``rate`` (its route's slowest
        link: 1e-10 s over SimGrid's 10 GB/s loopback link of the master host), while the clock
        moves.  Actions ending before it arrives wake their actors (who put behind it); those
        ending with it are returned: their actors run in the round where the server receives it."""
        tl = self.tl
        if tl.execute_alone(rate):       # (the usual case: nothing else ends meanwhile)
            return None
        comm = tl.execute(rate, None)
        while True:
            ended = tl.step()
            assert ended is not None       # the message itself is in flight
            if not comm.alive:
                ended = [a for a in ended if a is not comm]
                if ended and self._energy:
                    self._ended_energy(ended)
                return ended or None
            self._round(ended)

    def _cross(self, item: tuple) -> Optional[list[Action]]:
        """On a platform with links: the message ``item``, at the head of the mailbox, crosses its
        sender's route to the server, its latency first (SimGrid's ptask_L07: a latency phase, no
        bandwidth used), then its byte (see _transfer).  The sender: a job's actor runs on the
        job's first host, a switch actor on its host, every other actor on the master host.  With
        -E, SimGrid updates the energy of a compute host whose message arrives."""
        sender = item[0]
        host = -1
        if sender in self._compute_host_senders:
            host = item[1][0].alloc.min if sender == self._on_end else item[1][1][0]
        latency, rate = self._route_latency[host], self._route_rate[host]
        tl = self.tl
        ended: Optional[list[Action]] = None
        self._message_seq = tl.last_seq + 1      # SimGrid's action for the message, created now
        if latency > 0.0:
            lat = tl.sleep(latency, None)
            while True:
                during = tl.step()
                assert during is not None
                if not lat.alive:
                    during = [a for a in during if a is not lat]
                    break
                self._round(during)
            if rate > 0.0:
                if during:
                    self._round(during)
                ended = self._transfer(rate)
            elif during:          # no link: it arrives once its latency is paid
                ended = during
        elif rate > 0.0:
            ended = self._transfer(rate)
        else:                     # no route: a zero-delta step, as on platforms without links
            self._message_seq = -1
            return tl.take_soon() if tl.soon else None
        if host >= 0 and self._energy:
            self.machines.action_ended(tl.now, (host,))
        return ended

    def _ended_energy(self, ended: list[Action]) -> None:
        """SimGrid updates the energy of the hosts of the actions ending in a solve before any
        actor runs (see machines.py): before this round's energy readers count their simcalls."""
        task_done = self._task_done
        for a in ended:
            handler, payload = a.item
            if handler == task_done:
                job = payload[0]
                if job.state == "RUNNING" and a in job.actions:
                    self._actions_ended(job)

    def _wake(self, ended: list[Action]) -> None:
        """The actors of ``ended`` actions run, in order; most put a message to the server."""
        self._groups = None
        for a in ended:
            handler, payload = a.item
            handler(payload, a)

    def _defer_now(self, item) -> None:
        """An actor puts ``item`` in its first sub-round (with -E: see _readers)."""
        self._deferred.append([1, item])

    def _read_energy(self, sub: int, host_sets: list, put=None) -> list:
        """An actor starting in sub-round ``sub`` reads the energy of ``host_sets`` (None: every
        host), then puts ``put`` if any: returns [its sub-round after the reads, put], set once
        the round's reads are settled (_settle_reads)."""
        entry = [0, put]
        if put is not None:
            self._deferred.append(entry)
        self._readers.append((sub, host_sets, entry))
        return entry

    def _settle_reads(self) -> None:
        """The round's energy reads, run in lockstep: each reader's sub-round after them."""
        readers = self._readers
        self._readers = []
        ends = self.machines.read_energy(self.tl.now, [(sub, hosts) for sub, hosts, _ in readers],
                                         self._touched)
        for (_, _, entry), end in zip(readers, ends):
            entry[0] = end

    def _post(self, item, _action: Action) -> None:
        """An actor that just puts ``item`` when its sleep ends."""
        self._put_now(item)

    def _switch_ended(self, payload, _action: Action) -> None:
        """The switch actors of ``hosts`` (one action: see _set_state) end, one after the other."""
        req, hosts = payload
        self.machines.switch_reached(self.tl.now, hosts)
        if self._routed:          # each switch actor's message crosses its own route
            self._deferred.extend([2, (self._on_switch, [req, [host]])] for host in hosts)
            return
        if self._groups is None:
            self._groups = {}
        group = self._groups.get(id(req))
        if group is None:
            self._groups[id(req)] = group = [req, []]
            # A switch actor sets the final pstate (a simcall) before its put.
            self._deferred.append([2, (self._on_switch, group)])
        group[1].extend(hosts)

    def _finished(self) -> bool:
        return (self._job_submitters == 0 and self._event_submitters == 0 and not self._registration_open
                and self.nb_submitted == self.nb_completed and self.nb_running == 0
                and self._switching == 0 and self._waiters == 0)

    def _request(self) -> p.Message:
        """The next request: what the server buffered, at the current time."""
        self._asked_at = now = self._stamp()
        request = p.Message(now, tuple(self._out))
        self._out = []
        if self._ended:
            self._delete_profiles()
        self._ready = False
        self.messages += 1
        return request

    def _take_reply(self, reply: p.Message):
        """Check the reply to the last request; returns the request-reply actor's first put (None if
        it sleeps)."""
        index = self.messages
        now = self._asked_at
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
        if not events and not reply_now > self.tl.now:
            return self._ready_put          # the usual empty reply: "ready" at once
        return self._next_put(_Reply(events, reply_now, index))

    def _delete_profiles(self) -> None:
        """Batsim sends the message, then deletes the ended jobs' profiles (composed ones with
        their sub-profiles): they stay known by name, but a REGISTER_JOB naming one aborts."""
        ended = self._ended or []
        for job in ended:
            wl = self.workloads[job.workload]
            todo = [job.profile]
            while todo:
                name = todo.pop()
                if name not in wl.deleted:
                    wl.deleted.add(name)
                    todo.extend(wl.profiles[name].seq)
        ended.clear()

    def _next_put(self, reply: _Reply):
        """The request-reply actor's next put: decision ``k`` at its timestamp, then "ready" at the
        reply's now.  A timestamp above the (drifted) clock makes it sleep the difference first
        (returns None), even 1e-10 s.  Each put waits until the server received it: the next one
        is the follow-up of its handler (_on_decision)."""
        item: tuple
        if reply.k < len(reply.events):
            when, item = reply.events[reply.k].timestamp, (self._on_decision, reply)
        else:
            when, item = reply.now, self._ready_put
        now = self.tl.now
        if when > now:
            self.tl.sleep(when - now, (self._post, item))
            return None
        return item

    def _on_decision(self, reply: _Reply):
        """Decision ``k`` of ``reply`` reached the server: apply it; the actor puts the next."""
        e = reply.events[reply.k]
        self._event_number = reply.k          # (Batsim's "event N" of its message errors)
        self._decisions.get(type(e), self._refuse)((e, reply.index))
        reply.k += 1
        return self._next_put(reply)

    # ------------------------------------------------------------------ mailbox handlers

    def _on_ready(self, _):
        self._ready = True
        if self._end_sent:
            self._done = True

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

    def _on_wake(self, _):
        self._waiters -= 1
        self._out.append(p.RequestedCall(self._stamp()))

    def _on_switch(self, payload):
        req, hosts = payload
        self._switching -= len(hosts)
        req.remaining -= len(hosts)
        req.done.extend(hosts)
        if req.remaining == 0:
            # Batsim writes the request's rows once its last host is done.
            self.machines.switch_done(self.tl.now, sorted(req.done), req.hosts, int(req.state))
            # Its energy row: the server checks its mailbox after these reads' simcalls.
            self._check_read = self._read_energy(1, [None])
            self._out.append(p.ResourceStateChanged(self._stamp(), req.hosts, req.state))

    def _on_end(self, payload):
        job, token, state, rc, cut = payload
        if cut:
            # Its actor ends once its put is received: SimGrid then cancels the computation the
            # walltime cut, updating its hosts' energy, load included.
            self.machines.action_ended(self.tl.now, job.alloc)
            self.machines.job_load_changed(self.tl.now, job.id, job.alloc, 0.0)
        if job.token != token or job.state != "RUNNING":
            return
        self._completed(job, state, rc)

    def _actions_ended(self, job: Job) -> None:
        """The job's current SimGrid actions end or are cancelled now: with -E, SimGrid updates
        the energy of their hosts (a parallel task's hosts, or the first host, where the job's
        actor sleeps) while their load still counts -- see machines.py."""
        task = job.tasks[min(job.task_index, len(job.tasks) - 1)][0] if job.tasks else None
        hosts = job.alloc if task is not None and task.kind == "cpu" else (job.alloc.min,)
        self.machines.action_ended(self.tl.now, hosts)

    def _free_hosts(self, job: Job) -> None:
        """The server frees the job's hosts (its end rows) unless its actor did (_post_end).
        None: started by CHANGE_JOB_STATE, on no host."""
        if job.alloc is not None and not job.ended:
            job.energy = self.machines.job_ended(self.tl.now, job.id, job.alloc)

    def _kill_running(self, job: Job, rc: int) -> None:
        """The server kills a running job: its actions are cancelled, its hosts freed."""
        if job.actions:
            if self._energy:
                self._actions_ended(job)
            for a in job.actions:
                a.alive = False
            job.actions = ()
        self._free_hosts(job)
        self._completed(job, "COMPLETED_KILLED", rc)

    def _completed(self, job: Job, state: str, rc: int) -> None:
        """The server learns that the job ended (JOB_COMPLETED, or it killed it)."""
        t = self.tl.now
        job.state, job.return_code, job.finish = state, rc, t
        self.nb_running -= 1
        self.nb_completed += 1
        if self._ended is not None:
            self._ended.append(job)
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

    def _run_task(self, job: Job, i: int) -> None:
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
        self._post_end(job, *(("COMPLETED_SUCCESSFULLY", 0) if ret == 0 else ("COMPLETED_FAILED", ret)))

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
        # The walltime cut a computation: SimGrid does not cancel it, it runs on (see _on_end).
        cut = timeout and len(acts) == 2
        # An execution ending in the same step as its timeout completes: its action comes first
        # and answers the job's actor, whose timeout then ends with no effect.
        for a in acts:
            a.alive = False
        job.actions = ()
        if timeout:
            self._post_end(job, "COMPLETED_WALLTIME_REACHED", -1, cut)
            return
        if i + 1 == len(job.tasks):    # the last task: no walltime bookkeeping needed
            ret = job.tasks_plan.ret
            self._post_end(job, *(("COMPLETED_SUCCESSFULLY", 0) if ret == 0 else ("COMPLETED_FAILED", ret)))
            return
        if job.remaining >= 0:
            if action.rate == 0.0:
                if job.remaining > 0:
                    job.remaining = job.remaining - job.tasks[i][0].amount
            else:
                job.remaining = job.remaining - (self.tl.now - job.task_start)
        self._run_task(job, i + 1)

    def _post_end(self, job: Job, state: str, rc: int, cut: bool = False) -> None:
        """The job's actor frees its hosts, writing its end rows, and tells the server the job
        ended.  With -E it reads the energy of the job's hosts, then of every host (its
        consumed_energy.csv row) before its put.  ``cut``: a computation cut by the walltime
        keeps loading the hosts until the actor ends (_on_end)."""
        t = self.tl.now
        switch_ended = self._switch_ended
        reaching = [h for a in self._step_actions if a.item is not None and a.item[0] == switch_ended
                    for h in a.item[1][1]] if self._energy else ()
        job.energy = self.machines.job_ended(t, job.id, job.alloc, False, reaching)
        job.ended = True
        end = (self._on_end, (job, job.token, state, rc, cut))
        if self._energy:
            if not cut:
                self.machines.job_load_changed(t, job.id, job.alloc, 0.0)
            self._read_energy(1, [job.alloc, None], end)
        else:
            self._mailbox.append(end)

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
            raise EmulatorError(f"{self._where(event, index)}: Cannot get job '{job_id}': it does not exist")
        return job

    def _execute(self, payload: tuple[p.ExecuteJob, int]) -> None:
        e, index = payload
        job = self.jobs.get(e.job_id)
        if job is None or job.state != "SUBMITTED":
            job = self._job(e.job_id, e, index)
            raise EmulatorError(f"{self._where(e, index)}: Cannot execute job '{job.id}': its state ({job.state}) is "
                                "not JOB_STATE_SUBMITTED.")
        alloc = e.alloc
        plans = self._plans.get(job.workload)
        plan = plans.get(job.profile) if plans is not None else None
        if plan is None:
            plan = self._plan(job)
        # Batsim's order: the mapping as read from the message, the machines, the allocation's size.
        mapping = self._mapping(e, index) if e.mapping is not None else None
        err = self.machines.check_start(job.id, alloc)
        if err:
            raise EmulatorError(f"{self._where(e, index)}: {err}")
        if mapping is not None:
            if len(mapping) != job.res and not plan.all_total:
                raise EmulatorError(
                    f"{self._where(e, index)}: Job '{job.id}' allocation ('{alloc}') is invalid. The decision process "
                    f"set a custom mapping for this job, but the custom mapping size ({len(mapping)}) does not "
                    f"match the job requested number of machines ({job.res}).")
            if mapping != list(range(len(alloc))):
                raise EmulatorError(f"{self._where(e, index)}: job {job.id}: a custom mapping other than one executor "
                                    "per allocated machine is not modelled by the emulator (real Batsim runs it)")
        else:
            itvs = alloc._itvs            # procset's (first, last) pairs: len(alloc) without a generator
            size = itvs[0][1] + 1 - itvs[0][0] if len(itvs) == 1 else len(alloc)
            if size != job.res and not plan.all_total:
                raise EmulatorError(
                    f"{self._where(e, index)}: Job '{job.id}' allocation ('{alloc}') is invalid. The job requires "
                    f"{job.res} machines but only {len(alloc)} were given. Using a different number of machines "
                    "than the one requested is prevented by default. If you meant to use multiple executors per "
                    "machine, please specify a custom execution mapping specifying which allocated machine each "
                    "executor should use.")
        t = self.tl.now
        if self._energy:
            # The job's actor, created by the server (a simcall), reads energies first.
            self._read_energy(2, [alloc, None])
        self.machines.job_started(t, job.id, alloc, plan.first_load)
        job.state, job.start, job.alloc, job.tasks, job.tasks_plan = "RUNNING", t, alloc, plan.tasks, plan
        job.token += 1
        job.remaining = -1.0 if job.walltime is None else job.walltime
        self.nb_running += 1
        self._run_task(job, 0)

    def _mapping(self, e: p.ExecuteJob, index: int) -> list[int]:
        """EXECUTE_JOB's custom mapping (executor -> rank in the allocation) as a list, checked as
        Batsim reads it."""
        where, n = self._where(e, index), len(e.alloc)
        bad = f"{where}: Invalid JSON message: Invalid 'mapping' object of event {self._event_number} (EXECUTE_JOB)"
        mapping: dict[int, int] = {}
        try:
            for key, value in (e.mapping or {}).items():
                mapping[int(key)] = int(value)
        except (TypeError, ValueError):
            raise EmulatorError(f"{bad}: all keys and values must be integers (or strings representing "
                                "integers)") from None
        if not mapping:
            raise EmulatorError(f"{where}: Invalid JSON: the 'mapping' value in the 'data' value of event "
                                f"{self._event_number} (EXECUTE_JOB) must be a non-empty object")
        for expected, executor in enumerate(sorted(mapping)):
            if executor != expected:
                raise EmulatorError(f"{bad}: no resource associated to executor {expected}.")
            if not 0 <= mapping[executor] < n:
                raise EmulatorError(f"{bad}: executor {executor} should use the {mapping[executor]}-th resource "
                                    f"within the allocation, but there are only {n} allocated resources.")
        return [mapping[i] for i in range(len(mapping))]

    def _reject(self, payload: tuple[p.RejectJob, int]) -> None:
        e, index = payload
        job = self._job(e.job_id, e, index)
        if job.state != "SUBMITTED":
            raise EmulatorError(f"{self._where(e, index)}: Invalid rejection received: job '{job.id}' cannot be "
                                "rejected at the present time. To be rejected, a job must be submitted and not "
                                "allocated yet.")
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
                raise EmulatorError(f"{self._where(e, index)}: Invalid KILL_JOB: job_id '{job.id}' refers to a job "
                                    "not being executed nor completed.")
            job.kill_requested = True
            ids.append(job.id)
            if job.state == "RUNNING":
                progress[job.id], rc = self._kill_progress(job)
                self._kill_running(job, rc)
        if ids:
            self._out.append(p.JobKilled(self._stamp(), tuple(ids), progress))
            if self._routed and not self._kill_warned:
                self._kill_warned = True
                warnings.warn(NetworkNotModelledWarning(
                    f"{self.platform.path}: KILL_JOB at t={self.tl.now:g}: Batsim's killer actor tells its server "
                    "of the kills with a message over the master host's route, which the emulator does not "
                    "model: JOB_COMPLETED (COMPLETED_KILLED) and JOB_KILLED come that route's time earlier "
                    "than in Batsim"), stacklevel=2)

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
            raise EmulatorError(f"{self._where(e, index)}: You asked to be awaken in the past! (you ask: {e.at:f}, "
                                f"it is: {now:f})")
        self._waiters += 1
        self.tl.sleep(max(e.at - now, MIN_WAIT), (self._post, (self._on_wake, None)))

    def _set_state(self, payload: tuple[p.SetResourceState, int]) -> None:
        e, index = payload
        if not self.opt.energy:
            raise EmulatorError(f"{self._where(e, index)}: Receiving a pstate modification request, which is "
                                "forbidden as Batsim has not been launched with energy support (cf. batsim --help).")
        pstate = int(e.state)
        err = self.machines.check_set_state(e.resources, pstate)
        if err:
            raise EmulatorError(f"{self._where(e, index)}: {err}")
        now = self.tl.now
        self._read_energy(1, [None])       # the server's pstate_changes energy row
        done = self.machines.request_state(now, e.resources, pstate)
        later = [h for h, t in done.items() if t > now]
        if not later:
            self._out.append(p.ResourceStateChanged(self._stamp(), e.resources, e.state))
            return
        req = _Switch(e.resources, e.state, len(later))
        self._switching += len(later)
        # Each host's switch actor computes 1 flop at the virtual pstate it is now in.  The actors
        # of consecutive hosts at the same speed do the very same arithmetic and end in the same
        # step, one after the other: one timeline action stands for them (in host order).
        speed = 0.0
        hosts: list[int] = []
        for h in sorted(later):
            s = self._speed[h][self.machines.pstate(h)].speed
            if s != speed and hosts:
                self.tl.execute(speed, (self._switch_ended, (req, hosts)))
                hosts = []
            speed = s
            hosts.append(h)
        self.tl.execute(speed, (self._switch_ended, (req, hosts)))

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
        if raw.get("profile") in wl.deleted:
            raise EmulatorError(f"{where}: job {e.job_id!r} uses profile {raw['profile']!r}, which existed some time "
                                "ago but is no longer accessible: Batsim 4.2.1 deletes a job's profile once it has "
                                "sent the job's JOB_COMPLETED, unless --enable-profile-reuse, and aborts here")
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
        where = self._where(e, index)
        if '"' in e.metadata:
            raise EmulatorError(f"{where}: Invalid JSON message: the 'metadata' value in the 'data' value of event "
                                f"{self._event_number} (SET_JOB_METADATA) should not contain double quotes (got "
                                f"###{e.metadata}###)")
        job = self.jobs.get(e.job_id)
        if job is None:
            raise EmulatorError(f"{where}: The job '{e.job_id}' does not exist, cannot set its metadata")
        job.metadata = e.metadata

    #: the states Batsim 4.2.1 accepts in CHANGE_JOB_STATE (COMPLETED_FAILED is not one)
    _CHANGEABLE = ("NOT_SUBMITTED", "RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED",
                   "COMPLETED_KILLED", "REJECTED")

    def _change_state(self, payload: tuple[p.ChangeJobState, int]) -> None:
        e, index = payload
        where = self._where(e, index)
        new = e.job_state
        if new not in self._CHANGEABLE:
            raise EmulatorError(f"{where}: Invalid JSON message: in event {self._event_number} (CHANGE_JOB_STATE): "
                                f"['data']['job_state'] must be one of: {{{', '.join(sorted(self._CHANGEABLE))}}}")
        job = self.jobs.get(e.job_id)
        if job is None:
            raise EmulatorError(f"{where}: The job '{e.job_id}' does not exist.")
        if job.state == "SUBMITTED":
            if new == "RUNNING":
                job.start = self.tl.now
                self.nb_running += 1
            elif new == "REJECTED":
                self.nb_completed += 1
                job.state = new
                self._record(job)
            else:
                raise EmulatorError(f"{where}: Invalid requested job state modification to '{new}': can only be "
                                    "running or rejected.")
        elif job.state == "RUNNING":
            if not new.startswith("COMPLETED_"):
                raise EmulatorError(f"{where}: Can only change the state of a running job to completed (successfully, "
                                    "failed, and killed). State was RUNNING")
            job.token += 1
            if job.actions and self._energy:
                self._actions_ended(job)
            for a in job.actions:
                a.alive = False
            job.actions = ()
            self._free_hosts(job)
            job.finish = self.tl.now
            self.nb_running -= 1
            self.nb_completed += 1
            job.state = new
            self._record(job)
        else:
            raise EmulatorError(f"{where}: Can only change the state of a submitted or running job. State was "
                                f"{job.state}")
        job.state = new
