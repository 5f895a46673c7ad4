"""The paper's epsilon-greedy reward-history learner (our reading of its eq. 3-8, where the text gives
no more).

- Reward of a run (eq. 4-5): ``(1 - sigma) + sigma * efficiency`` when it completes, ``-1`` when it
  is evicted or killed; efficiency is the pool's least active power over the PC's (1 on the most
  frugal PC), so sigma weighs energy efficiency against completing at all.
- Value of a state-action (eq. 3, 7-8): the gaussian-weighted average of its last ``history``
  rewards, the reward of age ``i`` (0 the newest) weighing ``exp(-i^2 / (2 (history/2)^2))``;
  an untried action is worth 0, and so is leaving the job queued (it earns no reward).
- Choice (eq. 6): with probability epsilon_t a random open action (full rooms/PCs removed), else the
  best open one.  Ties go to leaving the job queued (our choice: the paper values both 0), so a job
  is placed greedily only where placing has paid; in a state never seen only exploration places it,
  and the price of not knowing is waiting rather than an evicted run.  A queued job is decided again
  every negotiation cycle (greedily, as the values change) but explores at most ``explorations`` (2)
  times in its life: our reading of epsilon as the chance that a job's placement explores, not that
  a 300 s cycle does.  Drawn every cycle, a job the learner holds back (one evicted from a long run,
  as every miscreant is) would be explored the more, the longer it is held, and each such run lasts
  until the next login or reboot.  ``explorations=None`` draws every cycle.  epsilon_t starts at 1
  and decays by ``decay`` per decision down to ``epsilon``; when the rewards diverge from what was
  learnt -- the recent (gaussian-weighted) value of the action departs from the plain mean of its
  history by more than ``divergence`` -- epsilon_t rises by ``boost``.  (A single eviction among
  completions moves neither far; a change of regime, such as term starting, does.)
- The 3am cut-off rule: a job whose longest evicted run would not end before the 3am reboot waits.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Iterable, Optional

import numpy as np

from .mdp import Outcome

POLICIES = ("random", "bandit")


def _share(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"{name}: {value!r} is not a number in [0, 1]")
    return float(value)


class RewardHistory:
    def __init__(self, epsilon: float = 0.1, sigma: float = 0.5, history: int = 20, decay: float = 0.995,
                 divergence: float = 0.2, boost: float = 0.05, explorations: Optional[int] = 2,
                 seed: Optional[int] = 0):
        self.epsilon, self.sigma = _share("epsilon", epsilon), _share("sigma", sigma)
        for name, n in (("history", history), ("explorations", 1 if explorations is None else explorations)):
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"{name}: {n!r} is not a positive integer")
        self.explorations = explorations
        self.explored: dict[str, int] = {}         # job (base id) -> its exploratory decisions
        self.decay, self.divergence, self.boost = _share("decay", decay), divergence, _share("boost", boost)
        self.history = history
        self.weights = np.exp(-np.arange(history) ** 2 / (2 * (history / 2) ** 2))
        self.rewards: dict[tuple, deque] = {}
        self.eps_now = 1.0
        self.rng = np.random.default_rng(seed)
        self.scheduler: Any = None

    def bind(self, scheduler) -> None:
        self.scheduler = scheduler

    def reward(self, completed: bool, efficiency: float) -> float:
        return (1.0 - self.sigma) + self.sigma * efficiency if completed else -1.0

    def value(self, state: tuple, action: int) -> float:
        past = self.rewards.get((state, action))
        if not past:
            return 0.0
        r = np.fromiter(reversed(past), float, len(past))     # newest first
        w = self.weights[:len(r)]
        return float(w @ r / w.sum())

    def learn(self, outcomes: Iterable[Outcome]) -> None:
        for o in outcomes:
            key = (tuple(int(x) for x in o.state), int(o.action))
            past = self.rewards.setdefault(key, deque(maxlen=self.history))
            past.append(self.reward(o.completed, o.efficiency))
            if abs(self.value(*key) - sum(past) / len(past)) > self.divergence:
                self.eps_now = min(1.0, self.eps_now + self.boost)

    def act(self, obs: np.ndarray, mask: np.ndarray, job: Optional[str] = None) -> int:
        """The action for the job ``job`` (its base id: the key of its exploration budget; None: no
        budget) in state ``obs``, among the open actions of ``mask``."""
        queue = len(mask) - 1
        if obs[2]:
            return queue
        self.eps_now = max(self.epsilon, self.eps_now * self.decay)
        open_ = np.flatnonzero(mask)
        explored = self.explored.get(job, 0) if job is not None else 0
        if (self.explorations is None or explored < self.explorations) and self.rng.random() < self.eps_now:
            if job is not None:
                self.explored[job] = explored + 1
            return int(self.rng.choice(open_))
        state = tuple(int(x) for x in obs)
        values = np.array([self.value(state, int(a)) if a != queue else 0.0 for a in open_])
        best = open_[np.isclose(values, values.max())]
        return queue if queue in best else int(self.rng.choice(best))

    def __call__(self, obs: np.ndarray) -> int:
        return self.act(obs, self.scheduler.action_mask(), self.scheduler.job_key())


class RandomPlacement:
    """HTCondor's default: a random open placement, never leaving a job queued (at level ``system``:
    a random free PC of the pool)."""

    def __init__(self, seed: Optional[int] = 0):
        self.rng = np.random.default_rng(seed)
        self.scheduler: Any = None

    def bind(self, scheduler) -> None:
        self.scheduler = scheduler

    def act(self, obs: np.ndarray, mask: np.ndarray, job: Optional[str] = None) -> int:
        placing = np.flatnonzero(mask[:-1])
        return int(self.rng.choice(placing)) if len(placing) else len(mask) - 1

    def __call__(self, obs: np.ndarray) -> int:
        return self.act(obs, self.scheduler.action_mask())


def make_policy(name: Any, seed: Optional[int] = 0, **params: Any):
    if name == "random":
        if params:
            raise ValueError(f"{sorted(params)}: random placement takes none")
        return RandomPlacement(seed)
    if name == "bandit":
        return RewardHistory(seed=seed, **params)
    raise ValueError(f"policy: {name!r} is not one of {', '.join(POLICIES)}")


def run_episode(env, agent, seed: Optional[int] = None) -> dict[str, Any]:
    """One episode of ``env`` (VolunteerPool-v0) with ``agent`` (act + optional learn, online); its
    figures."""
    obs, info = env.reset(seed=seed)
    learn = getattr(agent, "learn", None)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info["action_mask"], info["job"]))
        if learn is not None:
            learn(info["outcomes"])
        done = terminated or truncated
    return {k: v for k, v in info.items() if k not in ("outcomes", "action_mask")}
