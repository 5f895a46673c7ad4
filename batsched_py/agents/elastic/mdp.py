"""Perez et al.'s decisions ("Responsive Elastic Computing"): which class of queued job takes a free
core, and, elastic, how many cores the pool holds.

Jobs are grid jobs (one host each on the LPC-EGEE traces).  A job's class is its virtual
organisation (VO: the job field ``vo_field``, ``group`` by default, as ``swf2json --job-fields``
writes it) and whether it is interactive (its runtime, known or estimated, under ``interactive``
= 900 s) or batch.  Up to ``nb_vos`` VOs get a class each, in the order of option ``vos`` (the
environment lists a workload's busiest VOs) or of first appearance; the others share the last one.

Decision points (time frozen while the agent decides):
- a pool host is free and a queued job fits: the action's class ``c`` in ``0..2*nb_vos-1``
  (``2*vo + 0`` interactive, ``+1`` batch) starts that class's oldest job on the lowest free pool
  host; an empty class starts the oldest queued job instead (counted in ``invalid_actions``);
- mode ``elastic``, every ``period`` (900 s: the pool stays stable at least that long): the pool
  level ``k`` adds ``pool_steps[k]`` hosts, never below ``min_pool`` nor the running jobs, never above
  the platform.  The action is then ``(c, k)``; ``c`` counts only when a job can start, ``k`` only
  at a period's start.  Mode ``scheduling`` keeps ``pool`` hosts (81, the paper's cluster) and the
  action is ``c``.
Hosts outside the pool are switched off (as soon as they are idle) and hosts entering it switched
on, so the energy outputs show what elasticity costs.

Runtimes (``runtimes``): ``oracle`` reads each job's real runtime from the workload file (option
``workload``; the environment sets it); ``median`` estimates it by the median runtime of the finished
jobs of the same user and queue (the walltime until one has finished).

Observation (a vector in [0, 1]): running jobs, pool size and idle pool hosts / platform hosts;
time until a running job ends (estimated) / period; backlog (queued jobs / platform hosts); whether
the pool is decided now; time of day; per class, queued jobs / platform hosts and the oldest wait /
``wait_scale``; the VO shares of the queue.
"""
from __future__ import annotations

import math
from statistics import median
from typing import Any, Mapping, Optional

import numpy as np

from ...scheduler import HostState, Job, Scheduler
from ...scheduler.view import lowest_bits, procset_of_mask
from ...policies.options import PolicyOptionError, choice_option, count_option, number_option, refuse_unknown
from ...policies.power import read_runtimes, real_runtime, require_sleep_states
from ...policies.agent.base import MDP, ActionError, AgentMixin, action_int, max_time_option

MODES = ("scheduling", "elastic")
_ON = (HostState.IDLE, HostState.COMPUTING)


class ElasticPool(Scheduler):
    """The pool and the class queues beneath the agent: no decision of its own but the pool's
    switching (the agent starts every job)."""

    OPTIONS = frozenset({"mode", "pool", "min_pool", "period", "pool_steps", "nb_vos", "vos", "vo_field",
                         "interactive", "runtimes", "workload", "wait_scale", "policy", "max_time"})

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        super().__init__(options)
        o = self.options
        refuse_unknown(o, self.OPTIONS, type(self).__name__)
        self.mode = choice_option(o, "mode", "scheduling", MODES)
        self.pool_size = count_option(o, "pool", 81)
        self.min_pool = count_option(o, "min_pool", 30)
        self.period = number_option(o, "period", 900.0, positive=True)
        steps = o.get("pool_steps", [-20, -10, 0, 10, 20])
        if not isinstance(steps, list) or not steps or \
                not all(isinstance(s, int) and not isinstance(s, bool) for s in steps):
            raise PolicyOptionError(f"option pool_steps: {steps!r} is not a non-empty list of integers")
        self.pool_steps = list(steps)
        self.nb_vos = count_option(o, "nb_vos", 4)
        vos = o.get("vos", [])
        if not isinstance(vos, list) or len(vos) > self.nb_vos:
            raise PolicyOptionError(f"option vos: {vos!r} is not a list of at most nb_vos={self.nb_vos} VO values")
        self.vo_slots: dict[Any, int] = {v: i for i, v in enumerate(vos)}
        self.vo_field = o.get("vo_field", "group")
        if not isinstance(self.vo_field, str):
            raise PolicyOptionError(f"option vo_field: {self.vo_field!r} is not a job field name")
        self.interactive = number_option(o, "interactive", 900.0, positive=True)
        self.wait_scale = number_option(o, "wait_scale", 3600.0, positive=True)
        self.max_time = max_time_option(o)
        self.runtimes_mode = o.get("runtimes", "median")
        self.real: dict[str, float] = {}
        if self.runtimes_mode == "oracle":
            path = o.get("workload")
            if not isinstance(path, str) or not path:
                raise PolicyOptionError("option runtimes 'oracle' needs option workload: the Batsim workload file")
            self.real = read_runtimes(path, None)
        elif self.runtimes_mode != "median":
            raise PolicyOptionError(f"option runtimes: {self.runtimes_mode!r} is not 'oracle' or 'median'")
        self.n_classes = 2 * self.nb_vos
        self.queues: list[list[Job]] = [[] for _ in range(self.n_classes)]
        self.job_class: dict[str, int] = {}
        self.estimates: dict[str, float] = {}
        self.history: dict[tuple, list[float]] = {}
        self.completed: list[Job] = []            # finished since the environment last read them
        self.pool_mask = 0
        self.next_pool = 0.0
        self.invalid_actions = 0
        self.switches = 0

    # --- the platform and the pool ------------------------------------------------------
    def on_simulation_begins(self, event) -> None:
        require_sleep_states(self)
        n = len(self.platform)
        if self.mode == "scheduling" and self.pool_size > n:
            raise PolicyOptionError(f"option pool: {self.pool_size} hosts, the platform has {n}")
        if self.min_pool > n:
            raise PolicyOptionError(f"option min_pool: {self.min_pool} hosts, the platform has {n}")
        size = min(max(self.pool_size, self.min_pool), n)
        self.pool_mask = lowest_bits(self.platform.all_mask, size)
        policy = getattr(self, "policy", None)
        if policy is not None and hasattr(policy, "bind"):
            policy.bind(self)

    @property
    def nb_hosts(self) -> int:
        return len(self.platform)

    def resize(self, size: int) -> None:
        """Make the pool ``size`` hosts: leave out hosts that compute nothing (idle first), take in
        hosts that are on first, then switching on, then asleep, then switching off."""
        platform = self.platform
        computing = platform.mask_in(HostState.COMPUTING)
        size = min(self.nb_hosts, max(size, self.min_pool, self.running_count()))
        have = self.pool_mask.bit_count()
        order = (HostState.IDLE, HostState.SWITCHING_ON, HostState.SLEEPING, HostState.SWITCHING_OFF)
        if size < have:
            drop, need = 0, have - size
            for state in order:
                cand = self.pool_mask & platform.mask_in(state) & ~computing & ~drop
                while cand and need:
                    top = 1 << (cand.bit_length() - 1)      # highest ids leave first
                    drop |= top
                    cand &= ~top
                    need -= 1
            self.pool_mask &= ~drop
        elif size > have:
            outside = platform.all_mask & ~self.pool_mask
            for state in order:
                take = lowest_bits(outside & platform.mask_in(state), size - self.pool_mask.bit_count())
                self.pool_mask |= take
        self.pool_size = self.pool_mask.bit_count()

    def power(self) -> None:
        """Switch on pool hosts asleep, switch off idle hosts outside the pool."""
        platform = self.platform
        wake = self.pool_mask & platform.mask_in(HostState.SLEEPING)
        rest = platform.free_mask & platform.mask_in(HostState.IDLE) & ~self.pool_mask
        if wake:
            self.switch_on(procset_of_mask(wake))
            self.switches += wake.bit_count()
        if rest:
            self.switch_off(procset_of_mask(rest))
            self.switches += rest.bit_count()

    def free_pool(self) -> int:
        return self.pool_mask & self.platform.free_mask

    def running_count(self) -> int:
        return len(self.jobs.running)

    # --- jobs -----------------------------------------------------------------------------
    def vo_slot(self, job: Job) -> int:
        vo = job.extra.get(self.vo_field)
        if vo not in self.vo_slots and len(self.vo_slots) < self.nb_vos - 1:
            self.vo_slots[vo] = len(self.vo_slots)
        return self.vo_slots.get(vo, self.nb_vos - 1)

    def estimate(self, job: Job) -> float:
        real = real_runtime(self.real, job.id)
        if real is not None:
            return real
        past = self.history.get(self._key(job))
        if past:
            return median(past[-50:])
        return job.walltime if job.walltime else self.interactive

    def _key(self, job: Job) -> tuple:
        return job.extra.get("user"), job.extra.get("queue")

    def is_interactive(self, job: Job) -> bool:
        return self.estimates[job.id] < self.interactive

    def on_job_submitted(self, job: Job) -> None:
        limit = self.nb_hosts if self.mode == "elastic" else self.pool_size
        if job.res > limit:
            self.reject(job)
            return
        self.estimates[job.id] = self.estimate(job)
        c = 2 * self.vo_slot(job) + (0 if self.is_interactive(job) else 1)
        self.job_class[job.id] = c
        self.queues[c].append(job)

    def on_job_completed(self, job: Job) -> None:
        if job.start_time is not None and job.finish_time is not None:
            self.history.setdefault(self._key(job), []).append(job.finish_time - job.start_time)
        self.completed.append(job)

    @property
    def queue(self) -> list[Job]:
        """Queued jobs, oldest first."""
        return sorted((j for q in self.queues for j in q), key=lambda j: (j.subtime, j.id))

    def queued_count(self) -> int:
        return sum(len(q) for q in self.queues)

    def startable(self) -> bool:
        free = self.free_pool().bit_count()
        return free > 0 and any(j.res <= free for q in self.queues for j in q)

    def start_class(self, c: int) -> Optional[Job]:
        """Start class ``c``'s oldest job that fits (else the oldest that fits): the job started."""
        free = self.free_pool()
        n = free.bit_count()
        job = next((j for j in self.queues[c] if j.res <= n), None)
        if job is None:
            self.invalid_actions += 1
            fitting = [q[i] for q in self.queues for i in range(len(q)) if q[i].res <= n]
            if not fitting:
                return None
            job = min(fitting, key=lambda j: (j.subtime, j.id))
        self.queues[self.job_class[job.id]].remove(job)
        self.execute(job, procset_of_mask(lowest_bits(free, job.res)))
        return job

    # --- the scheduling round ----------------------------------------------------------------
    def pool_due(self) -> bool:
        return self.mode == "elastic" and self.now >= self.next_pool - 1e-6

    def work_left(self) -> bool:
        return bool(self.queued_count() or self.jobs.running or not self.no_more_static_jobs)

    def schedule(self) -> None:
        self.power()


class ElasticScheduler(AgentMixin, ElasticPool):
    description = ("Perez et al.'s decision points: which job class takes a free core and (mode elastic) the pool "
                   "size every period")

    def decision_due(self) -> bool:
        if self.pool_due() and self.work_left():
            return True
        return self.startable()

    def decision_due_again(self) -> bool:
        return self.startable()

    def split(self, action: Any) -> tuple[int, int]:
        """``action`` as (class, pool level); the level is that of 'no change' in mode scheduling."""
        if self.mode == "scheduling":
            return action_int(action, self.n_classes - 1), -1
        try:
            a = np.asarray(action).reshape(-1)
        except ValueError:          # (a ragged sequence)
            a = np.empty(0)
        if a.shape != (2,):
            raise ActionError(f"action {action!r}: mode elastic takes (class, pool level), "
                              f"MultiDiscrete([{self.n_classes}, {len(self.pool_steps)}])")
        return action_int(a[0], self.n_classes - 1), action_int(a[1], len(self.pool_steps) - 1)

    def apply(self, action: Any) -> None:
        c, level = self.split(action)
        if self.pool_due():
            self.resize(self.pool_size + self.pool_steps[level])
            self.next_pool = self.now + self.period
            if self.work_left():
                self.call_me_later(self.next_pool)
        if self.startable():
            self.start_class(c)
        self.power()

    # --- what the agent sees ------------------------------------------------------------------
    def observe(self) -> np.ndarray:
        n = float(self.nb_hosts)
        ends = [max(0.0, j.start_time + self.estimates.get(j.id, 0.0) - self.now)
                for j in self.jobs.running.values() if j.start_time is not None]
        head = [self.running_count() / n, self.pool_size / n, self.free_pool().bit_count() / n,
                min(1.0, min(ends, default=self.period) / self.period), min(1.0, self.queued_count() / n),
                float(self.pool_due()), (self.now % 86400.0) / 86400.0]
        per_class = []
        for q in self.queues:
            oldest = self.now - min((j.subtime for j in q), default=self.now)
            per_class += [min(1.0, len(q) / n), min(1.0, oldest / self.wait_scale)]
        total = max(1, self.queued_count())
        shares = [(len(self.queues[2 * v]) + len(self.queues[2 * v + 1])) / total for v in range(self.nb_vos)]
        return np.array(head + per_class + shares, np.float32)

    @property
    def obs_size(self) -> int:
        return 7 + 2 * self.n_classes + self.nb_vos

    def mdp(self, nb_hosts: int) -> MDP:
        """The pool and per-class queues; the class served next (elastic: and the pool's step); an
        episode lasts ``max_time``."""
        actions = self.n_classes if self.mode == "scheduling" else (self.n_classes, len(self.pool_steps))
        return MDP((self.obs_size,), actions, horizon=self.max_time)


def deadline(s: ElasticPool, job: Job) -> float:
    """EDF's deadline: the job's earliest possible end (submission + runtime)."""
    return job.subtime + s.estimates.get(job.id, math.inf)


__all__ = ["ElasticPool", "ElasticScheduler", "MODES", "deadline"]
