"""Thermal-aware allocation's decision point (the ``thermal-allocation`` and ``dqn-allocation``
schedulers of :mod:`batsched_py.agents.allocation.scheduler` add the saved DQNs).

First come first served; the head job (or the two head jobs, option ``J`` = 2) is placed on a
processor (``cores_per_node`` consecutive hosts, default 24) by ``policy``: ``round_robin``,
``greedy``, ``coolest``, ``online_opt1`` (option ``alpha``), or an agent.
Batsim reports no temperature, so the scheduler keeps the emulator's power/temperature model of its
own processors (models/thermal.py, fed its own job starts and ends; option ``leakage_model``, as
the agent was trained with) and observes it (cluster.py's ``observation``), exactly as
``Allocation-v0`` does.  A job asking more cores than a processor has is an error.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from ...models.errors import EmulatorError
from ...models.thermal import ThermalModel, ThermalParams
from ...scheduler import DecisionError, Job
from ...scheduler.view import mask_of, procset_of_mask
from ...policies.base import QueuePolicy
from ...policies.options import PolicyOptionError, number_option
from ...policies.agent.base import MDP, AgentMixin, action_int
from .cluster import ALLOCATORS, guarded, observation, online_opt1

AGENT_OPTIONS = ("policy", "J", "alpha", "max_temperature", "leakage_model")


class AllocationScheduler(AgentMixin, QueuePolicy):
    description = ("thermal-aware allocation decision points: which processor takes the head job (FCFS); "
                   "option 'policy' = round_robin, greedy, coolest or online_opt1")
    # (no queue_order, allocation, contiguous nor seed: FCFS order, and the policy picks the processor)
    OPTIONS = frozenset({"cores_per_node", *AGENT_OPTIONS})
    #: the saved agents make_policy() also reads, for its error message (a paper's scheduler adds them)
    SAVED_POLICIES = ""

    @classmethod
    def option_defaults(cls) -> dict[str, Any]:
        return {"cores_per_node": 24, "policy": "round_robin", "J": 1,
                "alpha": 0.5, "max_temperature": 85.0, "leakage_model": "linear"}

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        options = {"cores_per_node": 24, **dict(options or {})}
        agent = {k: options.pop(k) for k in AGENT_OPTIONS if k in options}
        super().__init__(options)
        self.options.update(agent)
        self.cores = self.options["cores_per_node"]
        self.J = agent.get("J", 1)
        if self.J not in (1, 2):
            raise PolicyOptionError(f"option J: {self.J!r}: 1 (the head job) or 2 (the two head jobs)")
        self.alpha = number_option(agent, "alpha", 0.5)
        self.max_temperature = number_option(agent, "max_temperature", 85.0, positive=True)
        self.policy = self.make_policy(agent.get("policy", "round_robin"))
        self.last_used = -1

    def make_policy(self, spec: Any) -> Any:
        """The agent's policy that option ``policy`` names: a baseline allocator."""
        names = [*ALLOCATORS, "online_opt1"]
        if spec == "online_opt1":
            return AllocatorPolicy(online_opt1(self.alpha))
        if spec in ALLOCATORS:
            return AllocatorPolicy(ALLOCATORS[spec])
        raise PolicyOptionError(f"option policy: {spec!r}: choose {', '.join(names)}{self.SAVED_POLICIES}")

    def on_simulation_begins(self, event) -> None:
        super().on_simulation_begins(event)
        try:
            params = ThermalParams(cores=self.cores, leakage_model=self.options.get("leakage_model", "linear"))
            self.model = ThermalModel(params, len(self.platform))
        except EmulatorError as exc:
            raise PolicyOptionError(f"{exc} (options cores_per_node, leakage_model)") from None
        self.n = self.model.nb_processors
        self.params = self.model.params
        if self.policy is not None and hasattr(self.policy, "bind"):
            self.policy.bind(self)

    # --- the face the allocators see (as a Cluster's) ----------------------------------------
    @property
    def free(self) -> np.ndarray:
        return self.cores - self.model.busy

    def fits(self, cores: int) -> np.ndarray:
        return self.free >= cores

    def head_cores(self, k: int = 0) -> int:
        return self.queue[k].res if len(self.queue) > k else 0

    def observe(self) -> np.ndarray:
        return observation(self.model, [self.head_cores(k) for k in range(self.J)], self.max_temperature)

    def mdp(self, nb_hosts: int) -> MDP:
        """``[u, t, w, c]`` per processor then the head jobs' cores (cluster.py's ``observation``,
        each scaled to about 0-1: bounded by 2); the processor of each head job, ``first * N +
        second`` for two."""
        n = nb_hosts // self.cores
        return MDP((4 * n + self.J,), n ** self.J, high=2.0)

    # --- FCFS with the agent at each placement -----------------------------------------------
    def on_job_completed(self, job: Job) -> None:
        super().on_job_completed(job)
        assert job.alloc is not None
        self.model.hosts_changed(self.now, [tuple(i) for i in job.alloc.intervals()], -1)

    def decide(self) -> None:
        self.model.advance(self.now)
        for job in self.released:
            if job.res > self.cores:
                raise DecisionError(f"job {job.id} asks for {job.res} cores; a processor has {self.cores} "
                                    "(thermal-allocation runs a job on one processor)")
            self.queue.append(job)
            self.in_queue.add(job.id)

    def decision_due(self) -> bool:
        return bool(self.queue) and bool(self.fits(self.head_cores()).any())

    decision_due_again = decision_due

    def apply(self, action: Any) -> None:
        for k, processor in enumerate(processors(action, self.n, self.J)):
            cores = self.head_cores()
            fits = self.fits(cores) if cores else np.zeros(self.n, bool)
            if k and not fits.any():
                break
            self.place(guarded(self.model, fits, processor, cores, self.max_temperature))

    def place(self, processor: int) -> None:
        job = self.queue[0]
        span = ((1 << self.cores) - 1) << (processor * self.cores)
        free = procset_of_mask(self.available_mask & span)
        hosts = mask_of(list(free)[:job.res])
        self.start(job, hosts, index=0)
        self.model.hosts_changed(self.now, [tuple(i) for i in procset_of_mask(hosts).intervals()], 1)
        self.last_used = processor


def processors(action: Any, n: int, J: int) -> list[int]:
    """The processors ``action`` picks among ``n``: the head job's (``J`` = 1), or the two head
    jobs' (``first * n + second``); one outside ``Discrete(n ** J)`` raises ActionError."""
    a = action_int(action, n ** J - 1)
    return [a] if J == 1 else [a // n, a % n]


class AllocatorPolicy:
    """A baseline allocator as the agent's policy: it reads the scheduler, not the observation."""

    def __init__(self, allocate):
        self.allocate, self.scheduler = allocate, None

    def bind(self, scheduler) -> None:
        self.scheduler = scheduler

    def __call__(self, obs) -> int:
        s = self.scheduler
        p = self.allocate(s, s.head_cores())
        return p if s.J == 1 else p * s.n + p     # (the second head job: the same choice, or the fallback)
