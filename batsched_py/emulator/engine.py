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
  A KILL_JOB's killer actor (master host) kills, then tells the server with its own message:
  JOB_COMPLETED (COMPLETED_KILLED) and JOB_KILLED are written when the server receives it.
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

from time import perf_counter as _perf_counter
from typing import Callable, Generator, Optional, Sequence

from .. import protocol as p
from ..models.errors import EmulatorError
from ..models.events_file import ExternalEvent
from ..models.json_numbers import as_batsim_reads
from ..models.platform import Platform, compute_resources_json
from ..models.workload import Workload
from .decisions import Decisions
from .machines import Machines
from .options import EngineOptions
from .timeline import Action, Timeline

__all__ = ["Engine"]

_NEG_INF = float("-inf")


class _Reply:
    """A scheduler reply being applied by Batsim's request-reply actor: ``k`` its next decision."""
    __slots__ = ("events", "now", "index", "k")

    def __init__(self, events: Sequence[p.Event], now: float, index: int):
        self.events, self.now, self.index, self.k = events, now, index, 0


def _sub_round(put: list) -> int:
    """The sort key of a deferred ``[sub-round, item]``."""
    return put[0]


def _released(_) -> None:
    """The ready put of a released engine (Engine.release)."""
    raise EmulatorError("this engine's run is over and released")


class Engine(Decisions):
    """Batsim 4.2.1's server loop: its layers (state.py, submitters.py, switches.py, jobs.py,
    decisions.py) each add one kind of actor or message; this one runs the mailbox, SimGrid's
    steps and rounds, and the requests and replies, driven by its caller: :meth:`steps`, or
    ``start``/``send``/``close``, the same as a Backend of transport/backend.py."""

    def __init__(self, platform: Platform, workloads: list[Workload], events: list[list[ExternalEvent]],
                 machines: Machines, writers, options: EngineOptions,
                 on_progress: Optional[Callable[[int, int], None]] = None):
        super().__init__(platform, workloads, machines, writers, options, on_progress)
        # The handlers of the messages of compute hosts' actors (job executors, switch actors), see
        # _cross (bound methods, compared as such: compiled ones have no __func__).
        self._compute_host_senders = {self._on_end, self._on_switch}
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
        self._decisions = {}
        self._compute_host_senders = set()
        self._ready_put = (_released, None)
        self._put_now = self._mailbox.append
        self._mailbox.clear()
        self._deferred = []
        self._readers = []
        self._check_read = None
        self._out = []

    # The Backend interface, here so that the per-message work stays in compiled code: drive()
    # calls send() once per request (Emulation.start/send delegate to these).
    def start(self) -> p.Message:
        """The first request (SIMULATION_BEGINS and what comes with it)."""
        if self._run is not None:
            raise EmulatorError("Emulation.start() called twice")
        self._run = run = self.steps()
        request = next(run)
        self._given = _perf_counter()
        return request

    def send(self, reply: p.Message) -> Optional[p.Message]:
        """Apply the scheduler's ``reply``; the next request, or None once the simulation ended.
        The time since the request was given is the scheduler's (``scheduling_time``, as Batsim
        counts it)."""
        run = self._run
        if run is None:
            raise EmulatorError("Emulation.send() before start()")
        self.scheduling_time += _perf_counter() - self._given
        try:
            request = run.send(reply)
        except StopIteration:
            self.complete = True
            return None
        self._given = _perf_counter()
        return request

    def close(self) -> None:
        """Stop the simulation where it is (idempotent); the outputs are the caller's."""
        if self._run is not None:
            self._run.close()

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
                # zero-work executions end with it, and so does the message's own action.
                soon = tl.take_soon() if tl.soon else None
                if energy and mailbox[0][0] in self._compute_host_senders:
                    self.machines.action_ended(tl.now, (self._sender_host(mailbox[0]),))
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

    def _sender_host(self, item: tuple) -> int:
        """The compute host whose actor sent ``item``: a job's actor runs on the job's first
        host, a switch actor on its host."""
        return item[1][0].alloc.min if item[0] == self._on_end else item[1][1][0]

    def _cross(self, item: tuple) -> Optional[list[Action]]:
        """On a platform with links: the message ``item``, at the head of the mailbox, crosses its
        sender's route to the server, its latency first (SimGrid's ptask_L07: a latency phase, no
        bandwidth used), then its byte (see _transfer).  The sender: a job's actor runs on the
        job's first host, a switch actor on its host, every other actor on the master host.  With
        -E, SimGrid updates the energy of a compute host whose message arrives."""
        host = self._sender_host(item) if item[0] in self._compute_host_senders else -1
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
        reply = as_batsim_reads(reply)
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
