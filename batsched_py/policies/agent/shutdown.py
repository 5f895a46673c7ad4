"""DeepShutdown's decision (Casagrande et al., "Don't Hurry Be Green"): how many nodes to keep off.

Every ``dt`` time units (a minute on Grid'5000 Taurus platforms, whose time unit is the minute) the
agent says how many nodes, ``0..G``, are reserved and switched off; SAF-ordered EASY backfilling
schedules the jobs on the other nodes.  Reserving more nodes takes the idle ones that have been
idle longest (ties: highest ids, which EASY's lowest-first selection uses last); releasing takes
back first the reserved nodes still on, then those switching off (switched on once off), then
sleeping ones, lowest ids first.  Nodes that are asleep when the simulation begins start reserved.
Between decision points nothing changes the reservation; a reserved node is switched off as soon
as it is idle.  Run as a scheduler (a ``policy``), past ``day`` time units it no longer asks the
policy: it releases every node and calls while work remains, then stops so that the simulation
can end (an environment's episode ends at ``day``).

Observation: the last ``history`` feature vectors (oldest first), each (all in [0, 1]): nodes per
state (off, switching on, switching off, idle, computing) / G; nodes the agent keeps reserved / G
(its last action: GridGym's ``reservation_size``; without it the present reservation, which an
action replaces, is not observable); queue length / ``max_queue``; the
promised start of the first queued job (EASY's reservation) after now / ``day``; for the first
``queue_features`` queued jobs: hosts / platform hosts, walltime / ``day``, stretch (wait /
walltime, capped at 1), jobs of the same user in the system / ``max_user_jobs``; time of day / ``day``.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from ...scheduler import HostState, register
from ...scheduler.view import procset_of_mask
from ..backfilling import SAF
from ..options import PolicyOptionError, number_option
from ..power import require_sleep_states, shift_reservation
from ..profile import seconds
from .base import AgentMixin, action_int
from .loading import load_policy, trained_agent
from .nodes import NodeState, node_masks, node_states

EPS = 1e-6     # Batsim's clock drifts off round values by much less than this


class ShutdownScheduler(AgentMixin, SAF):
    description = "DeepShutdown decision points: every dt, how many nodes to keep off (SAF-ordered EASY beneath)"
    AGENT_OPTIONS = frozenset({"dt", "day", "cores_per_node", "history", "queue_features", "max_queue",
                               "max_user_jobs", "workload", "host_speed"})   # (the last two: OR*)
    OPTIONS = SAF.OPTIONS | AGENT_OPTIONS | {"policy"}

    @classmethod
    def option_defaults(cls) -> dict[str, Any]:
        return {**super().option_defaults(), "dt": 1.0, "day": 1440.0, "cores_per_node": 12, "history": 20,
                "queue_features": 10, "max_queue": 100.0, "max_user_jobs": 10.0, "workload": None,
                "host_speed": 1e6, "policy": None,
                **({"model": None, "deterministic": True} if "model" in cls.OPTIONS else {})}

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        options = dict(options or {})
        agent = {k: options.pop(k) for k in list(options) if k in self.AGENT_OPTIONS or k == "policy"}
        super().__init__(options)
        self.options.update(agent)
        self.dt = number_option(agent, "dt", 1.0, positive=True)
        self.day = number_option(agent, "day", 1440.0, positive=True)
        self.cores = _int_option(agent, "cores_per_node", 12)
        self.history = _int_option(agent, "history", 20)
        self.k = _int_option(agent, "queue_features", 10)
        self.max_queue = number_option(agent, "max_queue", 100.0, positive=True)
        self.max_user_jobs = number_option(agent, "max_user_jobs", 10.0, positive=True)
        self.next_decision = 0.0
        self.reserved: set[int] = set()         # nodes the agent keeps off
        self.idle_since: dict[int, float] = {}
        self.switches = 0                       # node switch requests, off and on
        self.pending: dict[str, tuple] = {}       # job id -> (job, hosts, mapping): waiting for hosts
        self.placeholders: set[int] = set()       # reserved nodes taken in EASY's profile
        self.nb_features = 5 + 1 + 1 + 1 + 4 * self.k + 1
        # the observation window: earlier decisions' feature rows, the newest last; its last row is
        # rewritten with the present features when the agent is asked
        self.window = np.zeros((self.history, self.nb_features), np.float32)
        self._seen: Optional[np.ndarray] = None     # the features the agent was shown at this point

    # --- the platform ---------------------------------------------------------------------
    def on_simulation_begins(self, event) -> None:
        super().on_simulation_begins(event)
        require_sleep_states(self)
        self.masks = node_masks(len(self.platform), self.cores)
        self.nb_nodes = len(self.masks)
        self.reserved = {i for i, s in enumerate(node_states(self.platform, self.masks)) if s is NodeState.OFF}
        self._reserve_in_profile()
        if self.policy is not None and hasattr(self.policy, "bind"):
            self.policy.bind(self)

    def states(self) -> list[NodeState]:
        return node_states(self.platform, self.masks)

    # --- scheduling: the base policy on the present nodes, the agent at decision points --------
    def schedule(self) -> None:
        self._reconcile()
        super().schedule()
        self._flush()

    def launch(self, job, hosts: int, mapping=None) -> None:
        """EASY may start a job on released nodes still switching on: it starts once they are idle."""
        self.pending[job.id] = (job, hosts, mapping, self.decision_time)
        self._flush()

    def _flush(self) -> None:
        for job_id, (job, hosts, mapping, launched) in list(self.pending.items()):
            if not hosts & ~self.platform.free_mask:
                del self.pending[job_id]
                self._execute(job, procset_of_mask(hosts), hosts, mapping)
                if launched < self.decision_time:
                    shift_reservation(self, job, hosts)

    def _reserve_in_profile(self) -> None:
        """Reserved nodes are taken in EASY's profile by one placeholder job each, for far longer
        than a day, from when their hosts are free: EASY plans the queue on the other nodes."""
        profile = self.profile
        for i in self.placeholders:
            profile.remove(f"reserved node {i}")
        self.placeholders = set(self.reserved)
        for i in self.placeholders:
            profile.insert(f"reserved node {i}", self.masks[i].bit_count(), 1000.0 * self.day,
                           _exactly(self.masks[i]))
        self.replan = True

    def decision_due(self) -> bool:
        return self.now >= self.next_decision - EPS

    def policy_action(self) -> Any:
        """Past the day (the episodes' end), the agent is not asked: every node is released so that
        the remaining jobs run and the simulation can end."""
        return 0 if self.now >= self.day - EPS else super().policy_action()

    def apply(self, action: Any) -> None:
        k = action_int(action, self.nb_nodes)
        seen = self._seen if self._seen is not None else self.features()
        self._seen = None
        self.window[:-1] = self.window[1:]        # (what the agent saw joins the window)
        self.window[-1] = seen
        reserved_before = set(self.reserved)
        states = self.states()
        if k > len(self.reserved):
            # (idle hosts that a launch waiting for its other hosts holds are not idle for the agent)
            idle = [i for i, s in enumerate(states) if s is NodeState.IDLE and i not in self.reserved
                    and self.masks[i] & self.available_mask == self.masks[i]]
            idle.sort(key=lambda i: (self.idle_since.get(i, self.now), -i))
            self.reserved.update(idle[:k - len(self.reserved)])
        elif k < len(self.reserved):
            rank = {NodeState.IDLE: 0, NodeState.COMPUTING: 0, NodeState.SWITCHING_ON: 0,
                    NodeState.SWITCHING_OFF: 1, NodeState.OFF: 2}
            release = sorted(self.reserved, key=lambda i: (rank[states[i]], i))[:len(self.reserved) - k]
            self.reserved.difference_update(release)
        self._reconcile()
        if self.reserved != reserved_before:
            self._reserve_in_profile()      # (and the base reconsiders its whole queue now)
            super(AgentMixin, self).schedule()
            self._flush()
        if self.now < self.day - EPS or self._work_left():
            self.next_decision = self.now + self.dt
            self.call_me_later(self.next_decision)

    def _work_left(self) -> bool:
        return not self.no_more_static_jobs or bool(self.queue) or bool(self.jobs.running) or bool(self.pending)

    def _reconcile(self) -> None:
        """Switch reserved idle nodes off and released sleeping ones on; idle times; present hosts."""
        platform = self.platform
        idle = platform.mask_in(HostState.IDLE) & platform.free_mask & self.available_mask
        sleeping = platform.mask_in(HostState.SLEEPING)
        off = on = 0
        now = self.now
        for i, m in enumerate(self.masks):
            if i in self.reserved:
                if m & idle == m:
                    off |= m
                    self.switches += 1
            elif m & sleeping == m:
                on |= m
                self.switches += 1
            if m & idle == m and i not in self.reserved:
                self.idle_since.setdefault(i, now)
            else:
                self.idle_since.pop(i, None)
        if off:
            self.switch_off(procset_of_mask(off))
        if on:
            self.switch_on(procset_of_mask(on))

    # --- what the agent sees ------------------------------------------------------------
    def features(self) -> np.ndarray:
        g = float(self.nb_nodes)
        counts = [0, 0, 0, 0, 0]
        for state in self.states():
            counts[state] += 1
        queue = self.queue
        promised = 0.0
        if queue:
            begin = self.profile.placed.get(queue[0].id)
            promised = 1.0 if begin is None else min(1.0, max(0.0, (seconds(begin) - self.now) / self.day))
        # (one list of Python floats, made float32 once: the same values as float64 arrays cast)
        row = [c / g for c in counts]
        row += (len(self.reserved) / g, min(1.0, len(queue) / self.max_queue), promised)
        if queue:
            users: dict[Any, int] = {}
            for job in (*queue, *self.jobs.running.values()):
                u = job.extra.get("user")
                users[u] = users.get(u, 0) + 1
            n = len(self.platform)
            for job in queue[:self.k]:
                wall = job.walltime or 0.0
                wait = self.now - job.subtime
                row += (job.res / n, min(1.0, wall / self.day),
                        min(1.0, wait / wall) if wall > 0 else 1.0,
                        min(1.0, users.get(job.extra.get("user"), 0) / self.max_user_jobs))
        row += [0.0] * (self.nb_features - 1 - len(row))
        row.append((self.now % self.day) / self.day)
        return np.array(row, np.float32)

    def observe(self) -> np.ndarray:
        """The window: the features of the last ``history - 1`` decisions, then the present ones."""
        self._seen = seen = self.features()
        obs = np.empty_like(self.window)
        obs[:-1] = self.window[1:]
        obs[-1] = seen
        return obs


@register("shutdown-agent")
class ShutdownAgent(ShutdownScheduler):
    description = ("a DeepShutdown policy as a scheduler: option 'policy' = a saved agent (.zip), a baseline "
                   "(T0, T1, T5, OR*) or 'module:callable' (obs -> nodes to keep off)")

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        super().__init__(options)
        self.policy = load_policy(self.options.get("policy"), "shutdown")


def _exactly(hosts: int):
    """A selector that takes exactly ``hosts``, or nothing."""
    def select(avail: int, n: int) -> Optional[int]:
        return hosts if avail & hosts == hosts else None
    return select


def _int_option(options: Mapping[str, Any], name: str, default: int) -> int:
    value = options.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PolicyOptionError(f"option {name}: {value!r} is not a positive integer")
    return value


@register("deepshutdown")
class DeepShutdown(ShutdownScheduler):
    description = ("a trained DeepShutdown agent: option 'model' = its .zip (batsched-py train shutdown); "
                   "'deterministic' (default true)")
    OPTIONS = ShutdownScheduler.OPTIONS | {"model", "deterministic"}

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        policy, rest = trained_agent("deepshutdown", "shutdown", dict(options or {}))
        super().__init__(rest)
        self.policy = policy
