"""``batsched_py/Allocation-v0``: thermal-aware job allocation (Yi's DQN, NTU/NSCC).

Jobs of one processor each (1..``cores`` cores) arrive first come first served; at every decision
the agent picks the processor of the head job (``J=1``, action ``Discrete(N)``) or of the two head
jobs (``J=2``, action ``Discrete(N*N)``: first x N + second).  A choice without room, or one the
model foresees overheating (settling above ``max_temperature`` C), falls back to the coolest
processor with room; the observation's spare cores count only the cores a processor can take
without overheating.  Observation: ``[u, t, w, c]`` per processor then the head jobs' cores
(see :func:`~batsched_py.agents.allocation.cluster.observation`); the spaces are those the
``thermal-allocation`` scheduler declares (``AllocationScheduler.mdp``).

Reward (the thesis' eq. 3.1, against a baseline run in lockstep on the same arrivals):
``100 (P_base - P) / P_base + alpha (T_base - T)``, P the processors' total power (W) and T their
mean temperature (C): percent power saved plus alpha x degrees cooler than round robin
(``baseline="round_robin"``) or greedy consolidation (``"greedy"``).  ``reward="instant"`` (default):
at the next decision, as the thesis; ``"interval"``: over the time to the next decision,
from the energies and degree-seconds drawn, times that time in 10-minute steps.  Decisions come in
bursts (many jobs submitted in one second) and lulls, so instant rewards weigh a burst's moment
as many times as it has jobs and a lull's hours once; interval rewards add up over an episode to
eq. 3.1 integrated over time (per 10 minutes), the figure the evaluation measures.  (At alpha 0.5
and 30,000 decisions on LPC-EGEE, 8 processors, the DQN learnt less from them: 1.8% and 3.0%
power saved against round robin for seeds 0 and 1, against 4.6% for seed 0 with instant rewards,
measured before the spare cores counted overheating.)

This is a model-based environment, not a face over a Batsim scheduler: the job stream is
replayed by :class:`~batsched_py.agents.allocation.cluster.Cluster` with the emulator's own
power/temperature model (models/thermal.py, ``backend="physics"``, for evaluation) or with a
learned model standing in for the machines (``backend="predictor"``, training, as the thesis trains
offline on a learned model): ``predictor`` is given, a callable ``ThermalParams -> (nb_processors ->
model)``, e.g. ``functools.partial(batsched_py.agents.allocation.predictor.load_predictor, path)``
for the tandem LSTM predictor.  The trained agent runs in Batsim as the ``thermal-allocation``
scheduler, which keeps the same model of its own processors to observe.  ``thermal`` overrides
:class:`~batsched_py.models.thermal.ThermalParams` fields, e.g. ``{"leakage_model": "exponential"}``
(a predictor backend must have been trained on that leakage model's telemetry).

Episodes: ``episode_days`` days of the trace from the submission of a random job
(``reset(options={"start": s})`` picks the start, in s).  ``info`` at the end: mean power (W), mean temperature (C) and mean wait (s) of the agent
and of the baseline.
"""
from __future__ import annotations

import math
from dataclasses import fields
from pathlib import Path
from typing import Any, Callable, Optional

import gymnasium as gym
import numpy as np

from ...models.thermal import ThermalParams
from .mdp import AllocationScheduler, processors
from .cluster import ALLOCATORS, Cluster, guarded, observation
from .cluster_jobs import Jobs, load_jobs
from ...envs.core import EnvError, reset_options, spaces_of

BASELINES = ("round_robin", "greedy")
REWARDS = ("instant", "interval")
STEP_S = 600.0      # the interval reward's unit of time (the telemetry's step)
# a learned model of the processors: thermal parameters -> (nb_processors -> a ThermalModel's face)
Predictor = Callable[[ThermalParams], Callable[[int], Any]]


class AllocationEnv(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, jobs: "str | Path | Jobs", *, nb_processors: int = 1152, cores: int = 24, J: int = 1,
                 alpha: float = 0.5, baseline: str = "round_robin", backend: str = "physics",
                 predictor: Optional[Predictor] = None, episode_days: float = 1.0, max_temperature: float = 85.0,
                 thermal: Optional[dict] = None, reward: str = "instant"):
        if not isinstance(nb_processors, int) or nb_processors < 1:
            raise EnvError(f"nb_processors: {nb_processors!r} is not a positive integer")
        if J not in (1, 2):
            raise EnvError(f"J: {J!r}: the agent places the head job (1) or the two head jobs (2)")
        if baseline not in BASELINES:
            raise EnvError(f"baseline {baseline!r}: choose one of {', '.join(BASELINES)}")
        if reward not in REWARDS:
            raise EnvError(f"reward {reward!r}: choose one of {', '.join(REWARDS)}")
        if backend not in ("physics", "predictor"):
            raise EnvError(f"backend {backend!r}: choose physics or predictor")
        if not isinstance(alpha, (int, float)) or not 0 <= alpha < math.inf:
            raise EnvError(f"alpha: {alpha!r} is not a finite non-negative number")
        if not isinstance(max_temperature, (int, float)) or not 0 < max_temperature < math.inf:
            raise EnvError(f"max_temperature: {max_temperature!r} is not a positive number of degrees C")
        if isinstance(episode_days, bool) or not isinstance(episode_days, (int, float)) or not episode_days > 0:
            raise EnvError(f"episode_days: {episode_days!r} is not a positive number")
        unknown = sorted(set(thermal or {}) - ({f.name for f in fields(ThermalParams)} - {"cores"}))
        if unknown:
            raise EnvError(f"thermal: {', '.join(map(repr, unknown))}: not a ThermalParams field other than cores "
                           "(e.g. leakage_model, leakage_growth, resistance)")
        self.params = ThermalParams(cores=cores, **(thermal or {}))
        if not isinstance(jobs, (Jobs, str, Path)):
            raise EnvError(f"jobs: {jobs!r} is neither a path nor a Jobs")
        self.jobs = jobs if isinstance(jobs, Jobs) else load_jobs(jobs, cores)
        self.n, self.J, self.alpha, self.baseline = nb_processors, J, float(alpha), ALLOCATORS[baseline]
        self.max_temperature, self.episode = max_temperature, episode_days * 86400
        self.reward_kind = reward
        self.model_factory = None
        if backend == "predictor":
            if predictor is None:
                raise EnvError("backend predictor needs predictor: a trained predictor, e.g. "
                               "functools.partial(batsched_py.agents.allocation.predictor.load_predictor, path)")
            if not callable(predictor):
                raise EnvError(f"predictor: {predictor!r} is not callable (thermal parameters -> model factory), e.g. "
                               "functools.partial(batsched_py.agents.allocation.predictor.load_predictor, path)")
            self.model_factory = predictor(self.params)
        # the spaces of the decision the thermal-allocation scheduler makes in Batsim
        mdp = AllocationScheduler({"cores_per_node": cores, "J": J, "max_temperature": max_temperature}).mdp(
            nb_processors * cores)
        self.observation_space, self.action_space = spaces_of(mdp)
        self.agent: Any = None        # (Clusters, made by reset())
        self.base: Any = None
        self.ended = True

    def _cluster(self, jobs: Jobs) -> Cluster:
        cluster = Cluster(jobs, self.n, self.params)
        if self.model_factory is not None:
            cluster.model = self.model_factory(self.n)
        return cluster

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        span = float(self.jobs.submit[-1])
        start = reset_options(options, ("start",)).get("start")
        if start is not None and (isinstance(start, bool) or not isinstance(start, (int, float))
                                  or not math.isfinite(start)):
            raise EnvError(f"reset(options={{'start': {start!r}}}): not a time in s")
        if start is None:
            # a random job's submission (the trace has idle gaps longer than an episode)
            late = int(np.searchsorted(self.jobs.submit, max(span - self.episode, 0), side="right"))
            start = float(self.jobs.submit[self.np_random.integers(max(late, 1))])
        jobs = self.jobs.window(start, self.episode)
        if not len(jobs):
            raise EnvError(f"no job is submitted in the {self.episode / 86400:g} days from {start:g} s")
        self.agent, self.base = self._cluster(jobs), self._cluster(jobs)
        self.agent.next_head()
        self.base.model.advance(self.agent.now)      # (both clusters' clocks at the first decision)
        self.ended = False
        return self._observe(), {}

    def _observe(self) -> np.ndarray:
        heads = [self.agent.head_cores(k) for k in range(self.J)]
        return observation(self.agent.model, heads, self.max_temperature)

    def decode(self, action: Any) -> list[int]:
        return processors(action, self.n, self.J)

    def step(self, action: Any):
        if self.ended:
            raise EnvError("step() after the episode ended (or before reset()): call reset() first")
        agent = self.agent
        before = [_drawn(self.agent), _drawn(self.base)]
        for k, processor in enumerate(self.decode(action)):
            cores = agent.head_cores()
            fits = agent.fits(cores) if cores else np.zeros(self.n, bool)
            if k and not fits.any():
                break            # the second head job waits for the next decision
            agent.place(guarded(agent.model, fits, processor, cores, self.max_temperature))
        more = agent.next_head() is not None
        if more:
            self.base.run(self.baseline, until=agent.now)
        else:
            self.base.run(self.baseline)
        reward = self.reward() if self.reward_kind == "instant" else self.interval_reward(*before)
        info = {} if more else self.summary()
        self.ended = not more
        return self._observe(), reward, not more, False, info

    def close(self) -> None:
        self.ended = True
        super().close()

    def reward(self) -> float:
        """Eq. 3.1: % power saved plus alpha x degrees cooler than the baseline, now."""
        a, b = self.agent, self.base
        if b.now < a.now:
            b.model.advance(a.now)
        base_power = b.total_power()
        return (100 * (base_power - a.total_power()) / base_power
                + self.alpha * (b.mean_temperature() - a.mean_temperature()))

    def interval_reward(self, agent_before: tuple[float, float, float],
                        base_before: tuple[float, float, float]) -> float:
        """Eq. 3.1 over the time since ``*_before`` (:func:`_drawn` then), times that time in STEP_S."""
        end = max(self.agent.now, self.base.now)      # (the same but at the episode's end)
        self.agent.model.advance(end)
        self.base.model.advance(end)
        (t0, e0, d0), (_, be0, bd0) = agent_before, base_before
        t1, e1, d1 = _drawn(self.agent)
        _, be1, bd1 = _drawn(self.base)
        if t1 <= t0:
            return 0.0
        power = 100 * ((be1 - be0) - (e1 - e0)) / (be1 - be0)
        return (power + self.alpha * ((bd1 - bd0) - (d1 - d0)) / ((t1 - t0) * self.n)) * (t1 - t0) / STEP_S

    def summary(self) -> dict[str, float]:
        out = {}
        end = max(self.agent.now, self.base.now)
        for name, cluster in (("agent", self.agent), ("baseline", self.base)):
            cluster.model.advance(end)
            out.update(cluster_figures(cluster, name))
        return out


def _drawn(cluster: Cluster) -> tuple[float, float, float]:
    """(time s, J drawn, C s spent) of the cluster's processors since its start."""
    return cluster.now, float(cluster.model.energy.sum()), float(cluster.model.degree_seconds.sum())


def cluster_figures(cluster: Cluster, name: str) -> dict[str, float]:
    """Mean power (W), mean temperature (C) and mean wait (s) over the cluster's run."""
    m, t = cluster.model, max(cluster.now, 1e-9)
    return {f"{name}_power_W": float(m.energy.sum() / t),
            f"{name}_temperature_C": float(m.degree_seconds.sum() / t / cluster.n),
            f"{name}_wait_s": float(np.nanmean(cluster.wait)) if np.isfinite(cluster.wait).any() else 0.0}
