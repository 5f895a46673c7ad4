"""DeepScheduling's decision: which queued job starts now, or let time pass.

Decision points come every ``dt`` while a queued job could start, just after each multiple of
``dt`` from ``day_start`` (:mod:`.clock`): a decision at minute t comes after every event of minute
t, as the authors' environment steps its simulation ``t_action`` at a time.  At a decision point
time is frozen while the agent decides: action ``i`` in 1..``max_queue`` starts the i-th queued job
(submission order) now, and the agent decides again at the same instant while a queued job could
start; action 0, or a job that does not fit, lets ``dt`` pass.  When no queued job the agent sees
fits the free hosts (waiting is the only choice) the agent is not asked: the simulation goes on to
its next event, and the decision point after it.  (The authors' environment asks every minute while
jobs are queued; on busy days nine decisions in ten were such forced waits.)

A job takes the lowest free hosts that are on (idle, computing, switching on), then asleep, then
switching off (a job waits for no switch-off it can avoid).  A job whose hosts are not all idle
waits for them (sleeping ones are switched on for it) and starts once they are.  Underneath, as in
the paper, a timeout policy switches off a node of ``cores_per_node`` hosts idle (no job, nothing
waiting for it) for ``timeout`` time units, at a decision point after the agent's decisions: a node
whose job ends at minute t may take a job submitted at t before the timeout sees it idle.

Hosts idle when the simulation begins are switched off at once (``start_asleep``): the days start
with every node off, as the authors' platform declares, in a way Batsim 4.2.1 runs (it cannot start
a host asleep); the environment shifts the day by ``day_start`` (the switch-off time).

Observation (a dict of arrays in [0, 1]):
- ``queue`` (max_queue x 3): hosts / platform hosts, walltime / ``day``, confidence (mean runtime /
  walltime of the user's last ``confidence_jobs`` finished jobs; 1 without history);
- ``running`` (max_running x 3), the started jobs that end first by walltime (a job waiting for its
  hosts to switch on: as if it started now): hosts, walltime left / ``day``, confidence-estimated
  time left / ``day``;
- ``snapshots`` (history x 8), one per decision, oldest first: hosts reserved by started jobs,
  queue length / ``max_queue``, time of day / ``day``, hosts sleeping, switching on, switching
  off, idle, computing (each / platform hosts).
"""
from __future__ import annotations

from collections import deque
from typing import Any, Mapping, Optional

import numpy as np

from ...scheduler import HostState, Job
from ...policies.base import QueuePolicy
from ...policies.options import PolicyOptionError, count_option, flag_option, number_option
from ...policies.power import PowerMixin
from ...policies.selection import Selector, preferring
from ...policies.agent.base import MDP, ActionError, AgentMixin, action_int, max_time_option
from ...policies.agent.clock import Grid
from ...policies.agent.nodes import switch_idle_nodes_off

_STATES = (HostState.SLEEPING, HostState.SWITCHING_ON, HostState.SWITCHING_OFF, HostState.IDLE,
           HostState.COMPUTING)
# the observation's row widths: a queued job, a running job, a snapshot (see the module's docstring)
QUEUE_FEATURES, RUNNING_FEATURES, SNAPSHOT_FEATURES = 3, 3, 3 + len(_STATES)


class AgentQueue(QueuePolicy):
    """A queue whose jobs only start when the agent says so."""

    def decide(self) -> None:
        for job in self.released:
            self.admit(job)


class SchedulingScheduler(AgentMixin, PowerMixin, AgentQueue):
    description = "DeepScheduling decision points: which queued job starts now (timeout shutdown beneath)"
    AGENT_OPTIONS = frozenset({"dt", "day", "day_start", "start_asleep", "max_queue", "max_running", "history",
                               "confidence_jobs", "max_time"})
    # (PowerMixin's options but 'base': the queue beneath is this class's own, AgentQueue)
    OPTIONS = QueuePolicy.OPTIONS | (PowerMixin.POWER_OPTIONS - {"base"}) | AGENT_OPTIONS | {"policy"}
    # (what shapes the observation and the actions: a saved agent brings those it was trained with)
    TRAINED_OPTIONS = frozenset({"max_queue", "max_running", "history", "confidence_jobs", "max_time"})

    @classmethod
    def option_defaults(cls) -> dict[str, Any]:
        return {**super().option_defaults(), "timeout": 5, "cores_per_node": 12, "dt": 1.0,
                "day": 1440.0, "day_start": 0.0, "start_asleep": True, "max_queue": 20, "max_running": 20,
                "history": 20, "confidence_jobs": 5, "max_time": None, "policy": None,
                **({"model": None, "deterministic": True} if "model" in cls.OPTIONS else {})}

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        options = dict(options or {})
        options.setdefault("timeout", 5)
        options.setdefault("cores_per_node", 12)
        super().__init__(options)
        self.dt = number_option(self.options, "dt", 1.0, positive=True)
        self.day = number_option(self.options, "day", 1440.0, positive=True)
        self.day_start = number_option(self.options, "day_start", 0.0)
        self.start_asleep = flag_option(self.options, "start_asleep", True)
        self.grid = Grid(self.day_start, self.dt)
        self.point = -1     # the decision point (grid index) open now, or the last one closed
        self.watch = -1     # decision points up to this one are asked for in advance (see _close)
        self._switches, self._started = 0, False    # (whether this point decided something)
        self.max_queue = count_option(self.options, "max_queue", 20)
        self.max_running = count_option(self.options, "max_running", 20)
        self.history = count_option(self.options, "history", 20)
        self.confidence_jobs = count_option(self.options, "confidence_jobs", 5)
        self.max_time = max_time_option(self.options)
        # The last `history` snapshots, each row written twice (at i and i + history) so that the
        # window ending at any row is one contiguous slice: no deque to stack at every observation.
        self._snapshots = np.zeros((2 * self.history, SNAPSHOT_FEATURES), np.float32)
        self._snapshot_row = 0
        self.user_ratios: dict[Any, deque] = {}
        self.started_last = False
        self.invalid_actions = 0

    def mdp(self, nb_hosts: int) -> MDP:
        """The queue, the running jobs and the snapshots; action i starts the i-th queued job, 0 waits;
        an episode lasts ``max_time`` from the start of the day."""
        return MDP({"queue": (self.max_queue, QUEUE_FEATURES), "running": (self.max_running, RUNNING_FEATURES),
                    "snapshots": (self.history, SNAPSHOT_FEATURES)}, self.max_queue + 1,
                   horizon=None if self.max_time is None else self.day_start + self.max_time)

    def on_simulation_begins(self, event) -> None:
        super().on_simulation_begins(event)
        if self.start_asleep:
            switch_idle_nodes_off(self, self.node_masks)    # (not counted: the day starts with them off)
        if self.policy is not None and hasattr(self.policy, "bind"):
            self.policy.bind(self)

    def on_job_completed(self, job: Job) -> None:
        super().on_job_completed(job)
        if job.walltime and job.start_time is not None and job.finish_time is not None:
            ratios = self.user_ratios.setdefault(job.extra.get("user"), deque(maxlen=self.confidence_jobs))
            ratios.append(min(1.0, (job.finish_time - job.start_time) / job.walltime))

    # --- decision points ----------------------------------------------------------------
    def decision_due(self) -> bool:
        """At a decision point where a queued job could start.  Any other message (an event) asks for
        the decision point after it; a decision point where none can only runs the timeout."""
        k = self.grid.index(self.now)
        if k is None or k <= self.point:
            self._remind(self.now)
            return False
        self.point = k
        if self.startable():
            return True
        self._close()
        return False

    def decision_due_again(self) -> bool:
        return self.started_last and self.startable()

    def startable(self) -> bool:
        """Whether a queued job the agent sees fits the free hosts: else waiting is the only choice,
        and the agent is not asked (the next event may change that)."""
        free = self.free_hosts().bit_count()
        return any(job.res <= free for job in self.queue[:self.max_queue])

    def _close(self) -> None:
        """The decision point is over (time passes): the timeout, then the next decision point while a
        queued job could start or the events of this point's decisions may come just before one (see
        :mod:`.clock`: asked for by such an event, it would come late)."""
        super()._power_down()
        if self.switches != self._switches or self._started:
            self._switches, self._started = self.switches, False
            self.watch = self.point + self.grid.ahead
        if self.startable() or self.point < self.watch:
            self._remind(self.now)

    def _power_down(self) -> None:
        """(The timeout runs when a decision point closes, after the agent's decisions: _close.)"""

    def _remind(self, at: float) -> None:
        """A call at the first decision point after ``at`` (and after the one open now)."""
        super()._remind(self.grid.at(max(self.point + 1, self.grid.after(at))))

    def selector(self) -> Selector:
        """Free hosts that are on first, then asleep, then switching off."""
        awake = self.awake_mask()
        return preferring(preferring(self.select, awake | self.platform.mask_in(HostState.SLEEPING)), awake)

    def policy_action(self) -> Any:
        """Run as a scheduler, a policy that waits while nothing runs, nothing waits for hosts and a
        queued job fits would never end the simulation: the first job that fits starts instead."""
        action = super().policy_action()
        if not self.jobs.running and not self.pending and action_int(action, self.max_queue) == 0:
            fitting = self.fitting()
            if fitting:
                return fitting[0] + 1
        return action

    def fits(self, index: int) -> bool:
        """Whether queued job ``index`` (0-based) can start now (on hosts on or asleep)."""
        return index < len(self.queue) and self.queue[index].res <= self.free_hosts().bit_count()

    def free_hosts(self) -> int:
        return self.available_mask & ~self.platform.unavailable_mask

    def fitting(self) -> list[int]:
        """The queued jobs the agent sees (0-based, in queue order) that can start now."""
        free = self.free_hosts().bit_count()
        return [i for i, job in enumerate(self.queue[:self.max_queue]) if job.res <= free]

    def action_mask(self) -> np.ndarray:
        """Which actions start a job (action 0, waiting, always can)."""
        mask = np.zeros(self.max_queue + 1, bool)
        mask[0] = True
        mask[[i + 1 for i in self.fitting()]] = True
        return mask

    def apply(self, action: Any) -> None:
        i = action_int(action, self.max_queue)
        self._push_snapshot(self.snapshot())
        self.started_last = False
        if i > 0 and self.fits(i - 1):
            job = self.queue[i - 1]
            hosts = self.selector()(self.free_hosts(), job.res)
            if hosts is not None:
                self.start(job, hosts, index=i - 1)
                self._flush()           # (hosts that are on: executed now, not at the next message)
                self.started_last = self._started = True
        if i > 0 and not self.started_last:
            self.invalid_actions += 1
        if not self.decision_due_again():
            self._close()

    # --- what the agent sees ------------------------------------------------------------
    def confidence(self, job: Job) -> float:
        ratios = self.user_ratios.get(job.extra.get("user"))
        # sum/len, not np.mean: the same sum for deques under 8 long (the default 5), without
        # building an array for each job of each observation
        return sum(ratios) / len(ratios) if ratios else 1.0

    def snapshot(self) -> list[float]:
        n = float(len(self.platform))
        platform = self.platform
        reserved = (platform.all_mask & ~self.available_mask).bit_count()
        return [reserved / n, min(1.0, len(self.queue) / self.max_queue),
                ((self.now - self.day_start) % self.day) / self.day,
                *(platform.mask_in(s).bit_count() / n for s in _STATES)]

    def _push_snapshot(self, row: list[float]) -> None:
        i = self._snapshot_row
        self._snapshots[i] = self._snapshots[i + self.history] = row
        self._snapshot_row = (i + 1) % self.history

    def observe(self) -> dict[str, np.ndarray]:
        n = float(len(self.platform))
        queue = np.zeros((self.max_queue, QUEUE_FEATURES), np.float32)
        for r, job in enumerate(self.queue[:self.max_queue]):
            queue[r] = (job.res / n, min(1.0, (job.walltime or self.day) / self.day), self.confidence(job))
        running = np.zeros((self.max_running, RUNNING_FEATURES), np.float32)
        now = self.now
        # (a job waiting for its hosts to switch on holds them too: as if it started now)
        started = [(job.start_time if job.start_time is not None else now, job)
                   for job in (*self.jobs.running.values(), *(job for job, _, _ in self.pending.values()))]
        started.sort(key=lambda sj: sj[0] + sj[1].walltime if sj[1].walltime is not None else float("inf"))
        for r, (start, job) in enumerate(started[:self.max_running]):
            wall = job.walltime or self.day
            elapsed = now - start
            left = max(0.0, wall - elapsed)
            estimated = max(0.0, self.confidence(job) * wall - elapsed)
            running[r] = (job.res / n, min(1.0, left / self.day), min(1.0, estimated / self.day))
        snapshots = np.empty((self.history, SNAPSHOT_FEATURES), np.float32)
        i = self._snapshot_row
        snapshots[:-1] = self._snapshots[i + 1:i + self.history]
        snapshots[-1] = self.snapshot()
        return {"queue": queue, "running": running, "snapshots": snapshots}


__all__ = ["SchedulingScheduler", "ActionError", "PolicyOptionError"]
