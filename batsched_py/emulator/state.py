"""The engine's state, shared by its layers (see engine.py), and the primitives every actor uses:
the clock as Batsim prints it, puts to the server's mailbox (deferred by sub-round with -E),
energy reads, the sleeping actor that puts when it wakes, and the end-of-simulation test."""
from __future__ import annotations

from collections import deque
from typing import Callable, Generator, Optional

from .. import protocol as p
from ..models.workload import Job, Workload
from ..models.platform import Platform
from .machines import Machines
from .options import EngineOptions
from .timeline import Action, Timeline

__all__ = ["EngineState", "PROGRESS_EVERY"]

# on_progress is called every this many finished (or rejected) jobs, and once at the end.
PROGRESS_EVERY = 256


class EngineState:
    """What the engine's layers share: the platform, jobs, machines, clock (timeline), the server's
    mailbox and buffered events, and the counters that tell when the simulation is over."""

    def __init__(self, platform: Platform, workloads: list[Workload], machines: Machines, writers,
                 options: EngineOptions, on_progress: Optional[Callable[[int, int], None]] = None):
        self.platform = platform
        self.workloads = {w.name: w for w in workloads}
        self.machines = machines
        self.writers = writers
        self.opt = options
        self._run: Optional[Generator[p.Message, p.Message, None]] = None    # steps(), once started
        self._given = 0.0                      # when the last request was given (wall clock)
        self.scheduling_time = 0.0             # wall-clock seconds from a request given to its reply
        self.complete = False                  # the simulation ended (its last reply applied)
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
        # On a platform with links, every message crosses its sender's route (see _cross).
        self._routed = platform.routes is not None
        self._message_seq = -1        # see _cross
        self._event_number = 0
        self._route_latency: list[float] = []     # per compute host, then the master host's last
        self._route_rate: list[float] = []
        if platform.routes is not None and platform.master_route is not None:
            for r in platform.routes + (platform.master_route,):
                self._route_latency.append(r.latency)
                self._route_rate.append(r.rate)

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

    def _on_ready(self, _):
        self._ready = True
        if self._end_sent:
            self._done = True

    def _finished(self) -> bool:
        return (self._job_submitters == 0 and self._event_submitters == 0 and not self._registration_open
                and self.nb_submitted == self.nb_completed and self.nb_running == 0
                and self._switching == 0 and self._waiters == 0)
