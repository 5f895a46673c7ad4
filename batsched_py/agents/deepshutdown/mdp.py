"""DeepShutdown's decision (Casagrande et al., "Don't Hurry Be Green"): how many nodes to keep off.

The semantics follow the authors' environment (GridGym ``OffReservationEnv``, the one their
DeepShutdown code trains on); docs/papers/deepshutdown.md lists where ours differs and why.

- Every ``dt`` the agent says how many nodes, ``0..G``, are **reserved**.  A reserved node takes no
  job and is switched off as soon as it is idle.  The reservation is a cap, not an order to switch
  on: a released node stays as it is (off, say) until a job is placed on it.
- Reserving takes nodes that hold no job: first those already off, then those switching off, then
  the idle ones, longest idle first.  Releasing gives back first nodes still on, then those off,
  then those switching off (they need the longest to serve a job), lowest ids first.
- Jobs are planned with EASY (:mod:`.easy_plan`: the oldest job first, the next ones smallest area
  first) on the hosts of the nodes not reserved, at each decision point, after the agent's action
  (as the authors' environment does; between two points jobs wait): a job placed on hosts that are
  off or switching waits for them (they are switched on for it) and starts once they are all idle.
  So no job ever holds a reserved node's host.
- A node switches as a whole, as the authors' nodes (one 12-core machine each) do: a job placed on
  part of a sleeping node wakes all of it, and its other cores idle, counted as waste, while the node
  is on.
- The priority job is not delayed by the reservation alone: when every unreserved node is free and
  it needs more nodes than that, just enough reserved nodes are released (the authors' rule).
- Decisions come after every event of their instant: Batsim may deliver the REQUESTED_CALL of
  minute t before the job completions or submissions of minute t, in separate messages.  So the
  first comes ``LAG`` after ``day_start`` and the next ones every ``dt (1 + DRIFT)``: the jobs
  started at a decision point end (a whole number of minutes later) just before a later one, and a
  node whose job ends at minute t is seen idle, and may take a job submitted at t, at minute t.
- Hosts idle when the simulation begins are switched off at once (``start_asleep``): the days start
  with every node off, as the authors' platform declares, in a way Batsim 4.2.1 runs (it cannot
  start a host in a sleep pstate).  The environment shifts the day by ``day_start`` (the switch-off
  time) so that every node is off when the day's first job can arrive.
- Past ``day_start + day`` the policy is no longer asked: every node is released so that the
  remaining jobs run and the simulation can end.

Observation: the last ``history`` feature rows (oldest first), each in [0, 1]: nodes per state (off,
switching on, switching off, idle, computing) / G; reserved nodes / G; queue length / ``max_queue``;
the priority job's reserved start after now / ``day``; hosts of the queued jobs that could start now
were no node reserved / hosts, and of those among them whose stretch (wait / walltime) reached
``tau`` (what the reservation blocks, or what the next plan starts); each node's idle
age / ``idle_scale`` (capped; 0 unless idle and free); for the ``queue_features`` jobs of the plan
order: hosts / hosts, walltime / ``day``, stretch / ``tau`` (capped), jobs of the same user in the
system / ``max_user_jobs``; time of day / ``day``.  With ``release_features`` (the default; false
gives the observation of the agents trained before it), what the oracle's rule reads, from walltimes
only: each node's time until the jobs holding its hosts release them by walltime, as
log(1 + t) / log(1 + ``day``) (0: no job holds it), and for each job of the plan order its stretch
were it to wait for the next releases by walltime, / ``tau`` (capped; 1: no release would start it).
With ``advice`` (a baseline's name, ``advice_options`` its arguments), what that baseline would do
now, one-hot over the G + 1 actions: the agent starts from a rule it can copy exactly (a clone
without it drifts: 15% more waste than its teacher QB) and learns where to depart from it (residual
learning).  The baselines read only what a deployed scheduler knows, OR* excepted (real runtimes).

With ``advice`` and ``shield_wait`` (time units), a shield (Alshiekh et al., "Safe Reinforcement
Learning via Shielding", 2018): while a queued job has waited ``shield_wait`` or longer, the agent
keeps no more nodes off than its advice does, so the rule's guarantee (QB's ``max_wait``: no job
waits longer for a node to wake) holds whatever the network says.  A network fitted on energy waste
alone learns to leave a large job waiting for hours on days unlike those it saw; the shield bounds
that and leaves every other decision to the agent.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from ...scheduler import HostState
from ...scheduler.view import lowest_bits, procset_of_mask
from ...policies.base import QueuePolicy
from ...policies.options import PolicyOptionError, count_option, number_option
from ...policies.power import require_sleep_states
from ...policies.agent.base import MDP, AgentMixin, action_int
from ...policies.agent.clock import DRIFT, EPS, LAG
from ...policies.agent.easy_plan import easy_plan, plan_order
from ...policies.agent.nodes import NodeState, node_masks, node_states, switch_idle_nodes_off
from .baselines import BASELINES
from .releases import held, host_waits, node_waits, wait_for_hosts


def feature_count(nb_nodes: int, queue_features: int, releases: bool = True, advice: bool = False) -> int:
    """The width of one observation row (its one definition: see ShutdownScheduler.mdp)."""
    return 5 + 1 + 1 + 1 + 2 + nb_nodes * (1 + releases) + advice * (nb_nodes + 1) + (4 + releases) * queue_features + 1


def advisor(name: Any, options: Any) -> Any:
    """The baseline ``name`` with ``options`` (the ``advice`` options), or None when ``name`` is."""
    if name is None:
        return None
    if not isinstance(name, str) or name not in BASELINES:
        raise PolicyOptionError(f"option advice: {name!r} is not a baseline ({', '.join(BASELINES)}) or null")
    if not isinstance(options, dict):
        raise PolicyOptionError(f"option advice_options: {options!r} is not an object of {name}'s arguments")
    try:
        return BASELINES[name](**options)
    except (TypeError, ValueError) as exc:
        raise PolicyOptionError(f"option advice_options: {name} refuses {options}: {exc}") from None


class ShutdownScheduler(AgentMixin, QueuePolicy):
    description = "DeepShutdown decision points: every dt, how many nodes to keep off (EASY beneath)"
    AGENT_OPTIONS = frozenset({"dt", "day", "day_start", "start_asleep", "cores_per_node", "history",
                               "queue_features", "max_queue", "max_user_jobs", "tau", "idle_scale",
                               "release_features", "advice", "advice_options", "shield_wait",
                               "workload", "host_speed"})   # (the last two: OR*'s real runtimes)
    OPTIONS = AGENT_OPTIONS | {"policy"}
    # (what shapes what the agent sees or does: a saved agent brings those it was trained with, see common.loading)
    TRAINED_OPTIONS = frozenset({"history", "queue_features", "release_features", "advice", "advice_options",
                                 "shield_wait"})

    @classmethod
    def option_defaults(cls) -> dict[str, Any]:
        return {"dt": 1.0, "day": 1440.0, "day_start": 0.0, "start_asleep": True, "cores_per_node": 12,
                "history": 20, "queue_features": 10, "max_queue": 100.0, "max_user_jobs": 10.0, "tau": 0.5,
                "idle_scale": 10.0, "release_features": True, "advice": None, "advice_options": {}, "shield_wait": None,
                "workload": None, "host_speed": 1e6, "policy": None,
                **({"model": None, "deterministic": True} if "model" in cls.OPTIONS else {})}

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        options = dict(options or {})
        agent = {k: options.pop(k) for k in list(options) if k in self.OPTIONS}
        super().__init__(options)
        self.options.update(agent)
        self.dt = number_option(agent, "dt", 1.0, positive=True)
        self.day = number_option(agent, "day", 1440.0, positive=True)
        self.day_start = number_option(agent, "day_start", 0.0)
        self.tau = number_option(agent, "tau", 0.5, positive=True)
        self.idle_scale = number_option(agent, "idle_scale", 10.0, positive=True)
        self.start_asleep = agent.get("start_asleep", True)
        if not isinstance(self.start_asleep, bool):
            raise PolicyOptionError(f"option start_asleep: {self.start_asleep!r} is not true or false")
        self.releases = agent.get("release_features", True)
        if not isinstance(self.releases, bool):
            raise PolicyOptionError(f"option release_features: {self.releases!r} is not true or false")
        self.advisor = advisor(agent.get("advice"), agent.get("advice_options", {}))
        self.shield_wait = None if agent.get("shield_wait") is None else number_option(agent, "shield_wait", 0.0,
                                                                                      positive=True)
        if self.shield_wait is not None and self.advisor is None:
            raise PolicyOptionError("option shield_wait: a shield keeps the agent to its advice, and no advice is "
                                    "given (option advice)")
        self.cores = count_option(agent, "cores_per_node", 12)
        self.history = count_option(agent, "history", 20)
        self.k = count_option(agent, "queue_features", 10)
        self.max_queue = number_option(agent, "max_queue", 100.0, positive=True)
        self.max_user_jobs = number_option(agent, "max_user_jobs", 10.0, positive=True)
        self.next_decision = self.day_start + LAG * self.dt
        self.reserved: set[int] = set()         # nodes the agent keeps off
        self.idle_since: dict[int, float] = {}  # free, unreserved, idle node -> since when
        self.switches = 0                       # node switches, off and on
        self.pending: dict[str, tuple[Any, int]] = {}   # job id -> (job, hosts): waiting for its hosts
        self.shadow: Optional[float] = None     # the priority job's reserved start (None: nothing waits)
        self._seen: Optional[np.ndarray] = None   # the features the agent was shown at this point
        self._advice: Optional[int] = None        # and the advice among them

    def mdp(self, nb_hosts: int) -> MDP:
        """The window of ``history`` feature rows; how many of the nodes to keep off, 0..G; an
        episode is a day of ``day / dt`` decisions (counted, not timed: no float accumulation)."""
        nodes = len(node_masks(nb_hosts, self.cores))
        width = feature_count(nodes, self.k, self.releases, self.advisor is not None)
        return MDP((self.history, width), nodes + 1, max_steps=int(round(self.day / self.dt)))

    # --- the platform ---------------------------------------------------------------------
    def on_simulation_begins(self, event) -> None:
        super().on_simulation_begins(event)
        require_sleep_states(self)
        self.masks = node_masks(len(self.platform), self.cores)
        self.nb_nodes = len(self.masks)
        self.nb_features = feature_count(self.nb_nodes, self.k, self.releases, self.advisor is not None)
        # the observation window: earlier decisions' feature rows, the newest last
        self.window = np.zeros((self.history, self.nb_features), np.float32)
        if self.start_asleep:
            switch_idle_nodes_off(self, self.masks)    # (not counted: the day starts with them off)
        if self.advisor is not None:
            self.advisor.bind(self)
        if self.policy is not None and hasattr(self.policy, "bind"):
            self.policy.bind(self)
        self.call_me_later(self.next_decision)

    def states(self) -> list[NodeState]:
        return node_states(self.platform, self.masks)

    @property
    def held_mask(self) -> int:
        """Hosts that started or waiting jobs hold."""
        return self.platform.all_mask & ~self.available_mask

    def free_mask_of(self, nodes: "set[int] | None" = None) -> int:
        """Hosts no job holds (any power state, available), of ``nodes`` (default: all nodes)."""
        free = self.available_mask & ~self.platform.unavailable_mask
        if nodes is None:
            return free
        m = 0
        for i in nodes:
            m |= self.masks[i]
        return free & m

    def unreserved(self) -> set[int]:
        return set(range(self.nb_nodes)) - self.reserved

    # --- scheduling: EASY on the unreserved nodes at every message, the agent at decision points ---
    def decide(self) -> None:
        """At every message: queue the new jobs, start waiting jobs whose hosts are ready, switch
        hosts for them; planning waits for the decision point, after every event of the instant."""
        for job in self.released:
            self.admit(job)
        self._flush()
        self._reconcile()

    def _plan(self) -> None:
        self._spare_priority_job()
        jobs = plan_order(self.queue, max(self.k, 1))
        started, self.shadow = easy_plan(jobs, self.free_mask_of(self.unreserved()), self._releases(),
                                         self.now, self._choose)
        for job, hosts in started:
            self.start(job, hosts)
        self._flush()
        self._reconcile()

    def _releases(self) -> list[tuple[float, int]]:
        """(time, hosts) each job holding hosts releases them, by walltime."""
        return [(end, hosts.bit_count()) for end, hosts in held(self, {})]

    def _spare_priority_job(self) -> None:
        """The authors' rule: when every host of the unreserved nodes is free and the priority job
        still needs more nodes than are unreserved, release that many reserved nodes.  (A priority
        job that waits for running jobs on the unreserved nodes waits, reservation or not: that
        is how the oracle keeps nodes off while a job can wait for a release.)"""
        if not self.queue or not self.reserved:
            return
        unreserved = self.unreserved()
        hosts = 0
        for i in unreserved:
            hosts |= self.masks[i]
        if hosts & ~self.free_mask_of(unreserved):
            return
        missing = -(-self.queue[0].res // self.cores) - len(unreserved)
        if missing <= 0:
            return
        states = self.states()
        for i in sorted(self.reserved, key=lambda i: (_RELEASE_RANK[states[i]], i))[:missing]:
            self.reserved.discard(i)

    def _choose(self, free: int, n: int) -> int:
        """``n`` hosts of ``free``: idle ones first, then switching on, switching off, asleep; lowest
        ids first (the authors' order)."""
        platform = self.platform
        idle = free & platform.mask_in(HostState.IDLE)
        ranks = (idle, free & platform.mask_in(HostState.SWITCHING_ON),
                 free & platform.mask_in(HostState.SWITCHING_OFF), free & platform.mask_in(HostState.SLEEPING))
        out = 0
        for hosts in ranks:
            take = lowest_bits(hosts, n - out.bit_count())
            out |= take
            if out.bit_count() >= n:
                break
        return out

    def launch(self, job, hosts: int, mapping=None) -> None:
        """A job placed on hosts not all idle starts once they are (they are switched on for it)."""
        self.pending[job.id] = (job, hosts)

    def _flush(self) -> None:
        free = self.platform.free_mask
        for job_id, (job, hosts) in list(self.pending.items()):
            if not hosts & ~free:
                del self.pending[job_id]
                self._execute(job, procset_of_mask(hosts), hosts, None)
                free = self.platform.free_mask

    def _reconcile(self) -> None:
        """Switch reserved resting nodes off and the nodes of waiting jobs on; idle ages.  A node
        switches as a whole, as the authors' nodes (one machine of 12 cores) do: a job on part of a
        sleeping node wakes all of it (its other cores idle, and count as waste, as theirs do), and a
        node left partly idle, partly asleep is resting, so a policy can still switch it off (it used
        to stay half on until a job took its idle hosts: all day on some days)."""
        platform = self.platform
        unheld = self.available_mask     # (hosts no started or waiting job holds)
        idle = platform.mask_in(HostState.IDLE) & platform.free_mask & unheld
        settled = ~platform.mask_in(HostState.SWITCHING_ON, HostState.SWITCHING_OFF)
        sleeping = platform.mask_in(HostState.SLEEPING) & settled
        wanted = 0
        for _, hosts in self.pending.values():
            wanted |= hosts
        off = on = 0
        now = self.now
        for i, m in enumerate(self.masks):
            resting = bool(m & idle) and m & (idle | (sleeping & unheld)) == m    # (no job, settled, some idle)
            if i in self.reserved:
                if resting:
                    off |= m & idle
                    self.switches += 1
            elif m & wanted & sleeping:
                on |= m & sleeping & (wanted | unheld)
                self.switches += 1
            if resting and i not in self.reserved:
                self.idle_since.setdefault(i, now)
            else:
                self.idle_since.pop(i, None)
        if off:
            self.switch_off(procset_of_mask(off))
        if on:
            self.switch_on(procset_of_mask(on))

    # --- the agent ------------------------------------------------------------------------
    def decision_due(self) -> bool:
        return self.now >= self.next_decision - EPS

    @property
    def day_end(self) -> float:
        return self.day_start + self.day

    def policy_action(self) -> Any:
        """Past the day (the episodes' end), the agent is not asked: every node is released so that
        the remaining jobs run and the simulation can end."""
        return 0 if self.now >= self.day_end else super().policy_action()

    def apply(self, action: Any) -> None:
        k = action_int(action, self.nb_nodes)
        seen = self._seen if self._seen is not None else self.features()
        self._seen = None
        if self.shield_wait is not None and any(self.now - job.subtime >= self.shield_wait - EPS for job in self.queue):
            assert self._advice is not None
            k = min(k, self._advice)
        self.window[:-1] = self.window[1:]        # (what the agent saw joins the window)
        self.window[-1] = seen
        self.reserve(k)
        self._plan()
        if self.now < self.day_end or self._work_left():
            period = self.dt * (1 + DRIFT)
            self.next_decision += period
            while self.next_decision <= self.now + EPS:     # (a decision came late: keep the grid)
                self.next_decision += period
            self.call_me_later(self.next_decision)

    def reserve(self, k: int) -> None:
        """Make the reservation ``k`` nodes (see the module's docstring for which)."""
        states = self.states()
        if k > len(self.reserved):
            held = self.held_mask
            candidates = [i for i in range(self.nb_nodes) if i not in self.reserved and not self.masks[i] & held]
            candidates.sort(key=lambda i: (_RESERVE_RANK[states[i]], self.idle_since.get(i, self.now), -i))
            self.reserved.update(candidates[:k - len(self.reserved)])
        elif k < len(self.reserved):
            release = sorted(self.reserved, key=lambda i: (_RELEASE_RANK[states[i]], i))[:len(self.reserved) - k]
            self.reserved.difference_update(release)

    def _work_left(self) -> bool:
        return not self.no_more_static_jobs or bool(self.queue) or bool(self.jobs.running) or bool(self.pending)

    def startable(self) -> list[Any]:
        """The queued jobs that would start now were no node reserved (EASY over every free host)."""
        if not self.queue:
            return []
        started, _ = easy_plan(plan_order(self.queue, max(self.k, 1)), self.free_mask_of(), self._releases(),
                               self.now)
        return [job for job, _ in started]

    def blocked(self) -> list[Any]:
        """The queued jobs the reservation blocks: those that would start now were no node reserved
        (none while nothing is reserved, as the authors count them)."""
        return self.startable() if self.reserved else []

    def stretch(self, job: Any) -> float:
        """Wait so far / walltime (no walltime: as late as can be)."""
        return (self.now - job.subtime) / job.walltime if job.walltime else float("inf")

    # --- what the agent sees ------------------------------------------------------------
    def features(self) -> np.ndarray:
        g, n = float(self.nb_nodes), float(len(self.platform))
        counts = [0, 0, 0, 0, 0]
        for state in self.states():
            counts[state] += 1
        queue, now = self.queue, self.now
        promised = 0.0
        if self.shadow is not None:
            promised = min(1.0, max(0.0, (self.shadow - now) / self.day))
        startable = self.startable()
        row = [c / g for c in counts]
        row += (len(self.reserved) / g, min(1.0, len(queue) / self.max_queue), promised,
                sum(j.res for j in startable) / n,
                sum(j.res for j in startable if self.stretch(j) >= self.tau) / n)
        row += [min(1.0, (now - self.idle_since[i]) / self.idle_scale) if i in self.idle_since else 0.0
                for i in range(self.nb_nodes)]
        ends = held(self, {}) if self.releases else []
        if self.releases:
            # (a few minutes and a few hours both matter, against a job's stretch bound: log-scaled)
            scale = np.log1p(self.day)
            row += [min(1.0, float(np.log1p(max(0.0, t))) / scale) for t in node_waits(ends, self.masks, now)]
        if self.advisor is not None:
            advice = [0.0] * (self.nb_nodes + 1)
            self._advice = action_int(self.advisor.act(), self.nb_nodes)
            advice[self._advice] = 1.0
            row += advice
        jobs = plan_order(queue, self.k)
        if jobs:
            users: dict[Any, int] = {}
            for job in (*queue, *self.jobs.running.values()):
                u = job.extra.get("user")
                users[u] = users.get(u, 0) + 1
            hosts = host_waits(ends, now)
            for job in jobs:
                wall = job.walltime or 0.0
                row += (job.res / n, min(1.0, wall / self.day), min(1.0, self.stretch(job) / self.tau),
                        min(1.0, users.get(job.extra.get("user"), 0) / self.max_user_jobs))
                if self.releases:
                    row.append(self._stretch_at_release(job, hosts))
        row += [0.0] * (self.nb_features - 1 - len(row))
        row.append(((now - self.day_start) % self.day) / self.day)
        return np.array(row, np.float32)

    def _stretch_at_release(self, job: Any, hosts: list[float]) -> float:
        """``job``'s stretch / ``tau`` (capped) were it to wait until the next releases by walltime of
        held hosts (``hosts``: times from now, sorted) give it as many hosts as it asks: the oracle's
        test of whether a startable job may wait (1 when none would start it)."""
        if not job.walltime or not hosts:
            return 1.0
        start = wait_for_hosts(job.res, hosts)
        return min(1.0, (self.now - job.subtime + start) / job.walltime / self.tau)

    def observe(self) -> np.ndarray:
        """The window: the features of the last ``history - 1`` decisions, then the present ones."""
        self._seen = seen = self.features()
        obs = np.empty_like(self.window)
        obs[:-1] = self.window[1:]
        obs[-1] = seen
        return obs


_RESERVE_RANK = {NodeState.OFF: 0, NodeState.SWITCHING_OFF: 1, NodeState.IDLE: 2, NodeState.SWITCHING_ON: 3,
                 NodeState.COMPUTING: 4}
_RELEASE_RANK = {NodeState.IDLE: 0, NodeState.COMPUTING: 0, NodeState.SWITCHING_ON: 0, NodeState.OFF: 1,
                 NodeState.SWITCHING_OFF: 2}
