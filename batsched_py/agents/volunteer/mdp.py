"""Forshaw & McGough's decisions on a volunteer pool: where each HTC job runs (a computer, a room, or
nowhere yet), with interactive users taking PCs back.

The pool (platforms/volunteer.py) and its users (workloads/volunteer.py) come as a platform, a
workload and an ``--events`` file; Batsim runs with ``--enable-dynamic-jobs
--acknowledge-dynamic-jobs --enable-profile-reuse`` (the environment sets them).

What the pool does around the agent:
- a login (``machine_unavailable``) on a PC running an HTC job evicts it: the job is killed
  (KILL_JOB) and, since Batsim 4 never runs a killed job again, a copy is registered (REGISTER_JOB)
  as ``w0!7#1``, ``w0!7#2``... (batsched's naming): the job goes back to the queue and restarts from
  scratch;
- every night at 3am the PCs reboot: running HTC jobs are evicted;
- an idle PC sleeps after ``idle_open`` (1 h) when its room is open, ``idle_closed`` (15 min)
  otherwise; a job placed on a sleeping PC wakes it (the job starts once it is awake);
- a miscreant job (field ``kill_at``) is killed by its owner at that time, and not resubmitted; any
  other job still there ``patience`` seconds (a week) after its submission is given up too (killed
  or rejected): a job longer than a day can never end between two reboots.

Decision points (time frozen): a queued job whose turn came (at arrival, then every ``cycle``
seconds while it stays queued: HTCondor's negotiation cycle) when some PC can take it.  The action
(``level``): ``computer`` ``Discrete(N + 1)`` (a PC, or N = leave queued); ``cluster`` and
``cluster-week`` ``Discrete(C + 1)`` (a room: a random PC of it that can take the job, or C = leave
queued); ``system`` ``Discrete(2)`` (0 = a random PC, 1 = leave queued).  A full choice (a PC in use
or logged into, a room with none free) places on a random PC instead (``invalid_actions``);
``action_mask()`` says which choices are open.

Observation (the paper's state): ``[hour, evicted, cut]``: the hour of the job's arrival (of the day;
of the week at level ``cluster-week``), the longest earlier evicted run of the job in whole hours
(at most 24), and 1 if that run would not end before the next 3am reboot.

Outcomes: each run ends completed or evicted (login, reboot, owner kill); ``outcomes`` collects
``(state, action, completed, efficiency)`` for the learner, where efficiency is the least active
power of the pool over the PC's (1 for the most frugal PC).

Owners' logins and switches (option ``events``): Batsim 4.2.1 lets the end of a switch (on or off)
overwrite a login that came during it (the PC is idle or asleep again, no longer unavailable), and
then aborts at the owner's logout (``The making of machine N available was requested but this
machine was not in UNAVAILABLE state``).  A real RJMS would not need this, but on Batsim the
scheduler must never start a switch that an owner's login or logout would fall into.  Given
``events``, the path of the same ``--events`` file Batsim reads (as the OR* oracle reads the
workload for real runtimes), the pool never switches off an idle PC, nor wakes a sleeping one (it is
then no taker: no action places a job there), when one of its owner's events falls within the
switch's duration (``switch_off_time``, ``switch_on_time``: the pool generator's 10 s and 30 s by
default), a second's margin included; the switch waits for a later call (after the owner's event,
the idle timer starts again).  Unavailability itself still comes from Batsim's events.  Without
``events`` the pool switches regardless, and Batsim may abort (docs/fidelity.md).  The environment
(``VolunteerPool-v0``) passes its events file and its platform's switch times.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping, NamedTuple, Optional

import numpy as np

from ...models.errors import EmulatorError
from ...models.events_file import MACHINE_EVENTS, load_events
from ...platforms.volunteer import OFF_TIME, ON_TIME
from ...scheduler import HostState, Job, Scheduler
from ...scheduler.view import bits_of
from ...policies.options import PolicyOptionError, choice_option, number_option, refuse_unknown
from ...policies.agent.base import MDP, AgentMixin, action_int, max_time_option

LEVELS = ("computer", "cluster", "cluster-week", "system")
DAY = 86400.0
REBOOT_HOUR = 3
MAX_EVICTED_HOURS = 24
#: Batsim writes times with 6 decimals: a time asked for arrives up to this much before it
SLACK = 1e-3
#: a switch is not started when an owner's event falls within its duration plus this (s)
SWITCH_MARGIN = 1.0


class Outcome(NamedTuple):
    state: tuple[int, ...]
    action: int
    completed: bool
    efficiency: float


def next_reboot(t: float) -> float:
    """The first 3am strictly after ``t``."""
    at = math.floor(t / DAY) * DAY + REBOOT_HOUR * 3600.0
    return at if at > t else at + DAY


def base_id(job_id: str) -> str:
    return job_id.split("#", 1)[0]


class VolunteerPool(Scheduler):
    """The pool's mechanics (evictions, resubmission, reboots, sleep, miscreants) beneath the agent."""

    batsim_flags = ("--enable-dynamic-jobs", "--acknowledge-dynamic-jobs", "--enable-profile-reuse")
    OPTIONS = frozenset({"level", "cycle", "patience", "idle_open", "idle_closed", "policy", "seed", "epsilon", "sigma",
                         "history", "explorations", "events", "switch_off_time", "switch_on_time"})

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        super().__init__(options)
        o = self.options
        refuse_unknown(o, self.OPTIONS, type(self).__name__)
        self.level = choice_option(o, "level", "cluster", LEVELS)
        self.cycle = number_option(o, "cycle", 300.0, positive=True)
        self.idle_open = number_option(o, "idle_open", 3600.0, positive=True)
        self.idle_closed = number_option(o, "idle_closed", 900.0, positive=True)
        self.patience = number_option(o, "patience", 7 * DAY, positive=True)
        self.switch_off_time = number_option(o, "switch_off_time", OFF_TIME, positive=True)
        self.switch_on_time = number_option(o, "switch_on_time", ON_TIME, positive=True)
        events = o.get("events")
        if events is not None and not (isinstance(events, (str, Path)) and Path(events).is_file()):
            raise PolicyOptionError(f"option events: {str(events)!r} is not a file (the --events file of the "
                                    "pool's logins)")
        self.events_path = None if events is None else str(events)
        # owners' machine events (time, host), by time: filled at the simulation's start
        self.owner_times = np.zeros(0)
        self.owner_hosts = np.zeros(0, np.int64)
        seed = o.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise PolicyOptionError(f"option seed: {seed!r} is not an integer")
        self.rng = np.random.default_rng(seed)
        self.queue: list[Job] = []
        self.turn: dict[str, float] = {}            # queued job -> when it is decided again
        self.arrival: dict[str, float] = {}         # base id -> first submission
        self.give_up: dict[str, float] = {}         # job id -> when its owner kills it
        self.evicted_run: dict[str, float] = {}     # base id -> longest evicted run (s)
        self.copies: dict[str, int] = {}            # base id -> copies registered
        self.placed: dict[str, tuple[tuple[int, ...], int]] = {}   # job id -> (state, action)
        self.pending: dict[int, Job] = {}           # waking host -> the job it will run
        self.evicting: set[str] = set()             # killed jobs to resubmit
        self.unacknowledged: set[str] = set()       # registered copies Batsim has not submitted yet
        self.owner_killed: set[str] = set()
        self.idle_since: dict[int, float] = {}
        self.asked: set[float] = set()
        self.outcomes: list[Outcome] = []
        self.good_j = self.wasted_j = self.miscreant_j = 0.0
        self.overheads: list[float] = []
        self.evictions = self.reboot_evictions = self.invalid_actions = self.registered = 0
        self.reboot_at = next_reboot(0.0)
        self.finished_registration = False

    # --- the platform ---------------------------------------------------------------------
    def on_simulation_begins(self, event) -> None:
        config = self.batsim_config
        if not (config.get("dynamic-jobs-enabled") and config.get("dynamic-jobs-acknowledged")
                and config.get("profile-reuse-enabled")):
            raise PolicyOptionError("the volunteer pool resubmits evicted jobs: run Batsim with --enable-dynamic-jobs "
                                    "--acknowledge-dynamic-jobs --enable-profile-reuse")
        hosts = list(self.platform)
        try:
            self.cluster_of = np.array([int(r.properties["cluster"]) for r in hosts])
            self.active_w = np.array([float(r.properties["active_w"]) for r in hosts])
            hours = [(int(r.properties["opens"]), int(r.properties["closes"]), r.properties["weekends"] == "1")
                     for r in hosts]
        except (KeyError, ValueError):
            raise PolicyOptionError("the volunteer pool needs a platform from platforms/volunteer.py (host properties "
                                    "cluster, active_w, opens, closes, weekends)") from None
        self.openings = sorted(set(hours))          # the distinct opening hours, and each PC's index in them
        self.opening_of = [self.openings.index(x) for x in hours]
        self.nb_clusters = int(self.cluster_of.max()) + 1
        self.cluster_masks = [sum(1 << int(h) for h in np.flatnonzero(self.cluster_of == c)) for c in range(self.nb_clusters)]
        self.least_w = float(self.active_w.min())
        self.idle_since = {h: 0.0 for h in range(len(hosts))}
        if self.events_path is not None:
            self.read_owner_events(self.events_path, len(hosts))
        policy = getattr(self, "policy", None)
        if policy is not None and hasattr(policy, "bind"):
            policy.bind(self)

    def read_owner_events(self, path: str, nb_hosts: int) -> None:
        try:
            events = load_events(path, nb_hosts=nb_hosts)
        except EmulatorError as exc:
            raise PolicyOptionError(f"option events: {exc}") from None
        pairs = sorted((e.timestamp, h) for e in events if e.type in MACHINE_EVENTS and e.resources is not None
                       for h in e.resources)
        self.owner_times = np.array([t for t, _ in pairs], float)
        self.owner_hosts = np.array([h for _, h in pairs], np.int64)

    def owners_acting(self, duration: float) -> int:
        """PCs whose owner logs in or out within a switch of ``duration`` started now (a bitmask)."""
        lo, hi = np.searchsorted(self.owner_times, [self.now - SLACK, self.now + duration + SWITCH_MARGIN],
                                 side="left")
        mask = 0
        for h in set(self.owner_hosts[lo:hi].tolist()):
            mask |= 1 << h
        return mask

    def idle_limits(self) -> list[float]:
        """How long an idle PC stays awake now, per opening hours (index ``opening_of[h]``): one test
        per kind of opening hours rather than per PC, which matters at the pool's full size."""
        day, hour = int(self.now // DAY) % 7, (self.now % DAY) / 3600.0
        return [self.idle_open if (weekends or day < 5) and opens <= hour < closes else self.idle_closed
                for opens, closes, weekends in self.openings]

    def takers(self) -> int:
        """PCs that can take a job now: idle, or asleep with no owner's event during its wake-up; nobody
        logged in, none waking for a job."""
        pf = self.platform
        pending = sum(1 << h for h in self.pending)
        asleep = pf.mask_in(HostState.SLEEPING) & ~pf.unavailable_mask & ~self.owners_acting(self.switch_on_time)
        return (pf.free_mask | asleep) & ~pending

    # --- jobs -------------------------------------------------------------------------------
    def on_job_submitted(self, job: Job) -> None:
        if job.res != 1:
            self.reject(job)
            return
        self.unacknowledged.discard(job.id)
        arrival = self.arrival.setdefault(base_id(job.id), job.subtime)
        # the owner's kill: its ``kill_at``, else ``patience`` after the first submission
        self.give_up[job.id] = job.extra.get("kill_at", arrival + self.patience)
        self.queue.append(job)
        self.turn[job.id] = self.now

    def on_job_completed(self, job: Job) -> None:
        assert job.alloc is not None and job.start_time is not None and job.finish_time is not None
        h = job.alloc[0]
        self.idle_since[h] = self.now
        run = job.finish_time - job.start_time
        energy = run * self.active_w[h]
        self.give_up.pop(job.id, None)
        key = base_id(job.id)
        done = job.final_state == "COMPLETED_SUCCESSFULLY"
        if done:
            self.good_j += energy
            self.overheads.append(job.finish_time - self.arrival[key] - run)
        else:
            self.wasted_j += energy
            if "kill_at" in job.extra:
                self.miscreant_j += energy
            self.evicted_run[key] = max(self.evicted_run.get(key, 0.0), run)
        self._outcome(job.id, done, h)
        if job.id in self.evicting:
            self.evicting.discard(job.id)
            self._resubmit(job)

    def _outcome(self, job_id: str, done: bool, h: int) -> None:
        placed = self.placed.pop(job_id, None)
        if placed is not None:
            self.outcomes.append(Outcome(placed[0], placed[1], done, self.least_w / self.active_w[h]))

    def _resubmit(self, job: Job) -> None:
        key = base_id(job.id)
        self.copies[key] = k = self.copies.get(key, 0) + 1
        d = job.description
        self.register_job(f"{key}#{k}", 1, job.profile_name, d.walltime, **dict(d.extra))
        self.unacknowledged.add(f"{key}#{k}")
        self.registered += 1

    def evict(self, job: Job, reboot: bool = False) -> None:
        self.evicting.add(job.id)
        self.kill(job)
        self.evictions += 1
        self.reboot_evictions += reboot

    def requeue_pending(self, h: int) -> None:
        """The job PC ``h`` was to wake for goes back to the queue's head."""
        job = self.pending.pop(h, None)
        if job is not None:
            self._outcome(job.id, False, h)
            self.queue.insert(0, job)
            self.turn[job.id] = self.now

    def on_machine_unavailable(self, hosts) -> None:
        for h in hosts:
            self.requeue_pending(h)
            for job_id in list(self.platform[h].jobs):
                job = self.jobs[job_id]
                if not job.kill_requested:
                    self.evict(job)

    def on_machine_available(self, hosts) -> None:
        for h in hosts:
            self.idle_since[h] = self.now

    def on_resource_state_changed(self, hosts, pstate: int) -> None:
        for h in hosts:
            self.idle_since[h] = self.now
            if h in self.pending and pstate == 1:       # it fell asleep before our wake-up: wake it again
                if self.owners_acting(self.switch_on_time) >> h & 1:
                    self.requeue_pending(h)
                else:
                    self.switch_on(h)

    def start_woken(self) -> None:
        """Start the jobs of the PCs that woke for them (in schedule(): a login in the same message
        as the wake-up comes after it, and takes the PC back first)."""
        free = self.platform.free_mask
        for h in [h for h in self.pending if free >> h & 1]:
            self.execute(self.pending.pop(h), h)

    # --- placing ----------------------------------------------------------------------------
    def place(self, job: Job, h: int, state: tuple[int, ...], action: int) -> None:
        self.queue.remove(job)
        self.turn.pop(job.id, None)
        self.placed[job.id] = (state, action)
        if self.platform.free_mask >> h & 1:
            self.execute(job, h)
        else:
            self.pending[h] = job
            self.switch_on(h)

    def random_host(self, mask: int) -> int:
        hosts = bits_of(mask)
        return int(hosts[self.rng.integers(len(hosts))])

    # --- the round ---------------------------------------------------------------------------
    def schedule(self) -> None:
        now = self.now + SLACK
        if now >= self.reboot_at:
            for job in list(self.jobs.running.values()):
                if not job.kill_requested:
                    self.evict(job, reboot=True)
            self.reboot_at = next_reboot(now)
        for job in list(self.jobs.running.values()):
            if self.give_up[job.id] <= now and not job.kill_requested:
                self.owner_killed.add(job.id)
                self.kill(job)
        for job in [j for j in self.queue if self.give_up[j.id] <= now]:
            self.queue.remove(job)
            del self.turn[job.id], self.give_up[job.id]
            self.reject(job)
        self.start_woken()
        self.power()
        self.wake_up_later()

    def power(self) -> None:
        pf = self.platform
        idle = pf.free_mask & ~sum(1 << h for h in self.pending) & ~self.owners_acting(self.switch_off_time)
        limit, opening = self.idle_limits(), self.opening_of
        due = [h for h in bits_of(idle) if self.now + SLACK - self.idle_since[h] >= limit[opening[h]]]
        if due:
            self.switch_off(due)

    def work_left(self) -> bool:
        return bool(self.queue or self.jobs.running or self.pending or self.evicting
                    or self.unacknowledged or not self.no_more_static_jobs)

    def wake_up_later(self) -> None:
        now, times = self.now, []
        if self.queue:
            times.append(min(self.turn[j.id] for j in self.queue))
        if self.jobs.running:
            times.append(self.reboot_at)
            times += [self.give_up[j] for j in self.jobs.running]
        limit, opening = self.idle_limits(), self.opening_of
        times += [self.idle_since[h] + limit[opening[h]] for h in bits_of(self.platform.free_mask)]
        later = [t for t in times if t > now + SLACK]
        if later and self.work_left():
            t = min(later)
            if t not in self.asked:
                self.asked.add(t)
                self.call_me_later(t)
        if not self.work_left() and not self.finished_registration:
            self.finished_registration = True
            self.notify_registration_finished()


class VolunteerScheduler(AgentMixin, VolunteerPool):
    description = "Forshaw & McGough's decision points: where each HTC job runs on a volunteer pool, or nowhere yet"
    OPTIONS = VolunteerPool.OPTIONS | {"max_time"}

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        super().__init__(options)
        self.max_time = max_time_option(self.options)
        # the observation's hour of arrival: of the day, of the week at level cluster-week
        self.hours = 168 if self.level == "cluster-week" else 24

    def mdp(self, nb_hosts: int, nb_clusters: Optional[int] = None) -> MDP:
        """``[hour, evicted hours, cut]``; a PC, a room or any PC, the last action leaving the job
        queued; an episode lasts ``max_time``.  ``nb_clusters``: the platform's rooms (default: those
        of the simulated platform, known once the simulation began)."""
        return MDP((3,), self.action_count(nb_hosts, nb_clusters), levels=(self.hours, MAX_EVICTED_HOURS + 1, 2),
                   horizon=self.max_time)

    def action_count(self, nb_hosts: int, nb_clusters: Optional[int] = None) -> int:
        if self.level == "computer":
            return nb_hosts + 1
        if self.level == "system":
            return 2
        rooms = getattr(self, "nb_clusters", None) if nb_clusters is None else nb_clusters
        if rooms is None:
            raise ValueError(f"level {self.level}: the actions are the platform's rooms, read when the simulation "
                             "begins: give nb_clusters until then")
        return rooms + 1

    @property
    def n_actions(self) -> int:
        return self.action_count(len(self.platform))

    def current(self) -> Optional[Job]:
        return next((j for j in self.queue if self.turn.get(j.id, math.inf) <= self.now + SLACK), None)

    def decision_due(self) -> bool:
        due = self.current() is not None and self.takers() != 0
        if not due:
            for j in self.queue:            # nothing can take them now: their turn is the next cycle
                if self.turn[j.id] <= self.now + SLACK:
                    self.turn[j.id] = self.now + self.cycle
            self.wake_up_later()
        return due

    decision_due_again = decision_due

    def state(self, job: Job) -> tuple[int, int, int]:
        key = base_id(job.id)
        arrival = self.arrival.get(key, job.subtime)
        hour = int(arrival // 3600) % self.hours
        evicted = self.evicted_run.get(key, 0.0)
        cut = int(evicted > 0 and self.now + evicted > next_reboot(self.now))
        return hour, min(MAX_EVICTED_HOURS, int(evicted // 3600)), cut

    def job_key(self) -> Optional[str]:
        """The base id of the job to place now (its copies share it), None when none is."""
        job = self.current()
        return base_id(job.id) if job is not None else None

    def observe(self) -> np.ndarray:
        job = self.current()
        return np.array(self.state(job) if job is not None else (0, 0, 0), np.int64)

    def action_mask(self) -> np.ndarray:
        """Which actions are open now (the last, leave queued, always is)."""
        takers = self.takers()
        n = self.n_actions
        if self.level == "computer":
            mask = [bool(takers >> h & 1) for h in range(n - 1)]
        elif self.level == "system":
            mask = [takers != 0]
        else:
            mask = [bool(takers & m) for m in self.cluster_masks]
        return np.array(mask + [True])

    def apply(self, action: Any) -> None:
        job = self.current()
        assert job is not None          # (asked only while a job waits for its place)
        a = action_int(action, self.n_actions - 1)
        state = self.state(job)
        if a == self.n_actions - 1:
            self.turn[job.id] = self.now + self.cycle
            self.wake_up_later()
            return
        takers = self.takers()
        if self.level == "computer":
            choice = takers & (1 << a)
        elif self.level == "system":
            choice = takers
        else:
            choice = takers & self.cluster_masks[a]
        if not choice:
            self.invalid_actions += 1
            choice = takers
        self.place(job, self.random_host(choice), state, a)
        self.wake_up_later()

    def policy_action(self) -> Any:
        learn = getattr(self.policy, "learn", None)
        if learn is not None and self.outcomes:
            learn(self.outcomes)
            self.outcomes = []
        return super().policy_action()

    def figures(self) -> dict[str, float]:
        """Good and wasted HTC energy (MWh), mean overhead (min) and counts."""
        return {"good_mwh": self.good_j / 3.6e9, "wasted_mwh": self.wasted_j / 3.6e9,
                "total_mwh": (self.good_j + self.wasted_j) / 3.6e9, "miscreant_mwh": self.miscreant_j / 3.6e9,
                "overhead_min": float(np.mean(self.overheads)) / 60 if self.overheads else 0.0,
                "completed": len(self.overheads), "evictions": self.evictions,
                "reboot_evictions": self.reboot_evictions, "owner_kills": len(self.owner_killed),
                "resubmitted": self.registered, "invalid_actions": self.invalid_actions}


__all__ = ["VolunteerPool", "VolunteerScheduler", "Outcome", "LEVELS", "next_reboot"]
