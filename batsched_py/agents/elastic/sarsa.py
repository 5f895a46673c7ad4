"""Perez et al.'s learner: SARSA (epsilon 0.05, gamma 0.8, learning rate 0.2) with the action values
approximated by an echo state network (approximators.py), batch re-learning of the readout, and
pre-training on a teacher policy (earliest deadline first) before it acts.

One head per part of the action: the job class (always), and in mode elastic the pool level.  A
head learns only from the decisions where its part counted (a job could start; the pool was
due), and its SARSA transition spans the steps until its next such decision (rewards discounted
per step).  Every ``batch`` transitions the readouts are refitted on the last ``memory`` ones, with
targets ``Q(s,a) + lr * (R + gamma^k Q(s',a') - Q(s,a))`` under the current readout, ``sweeps`` times
over (with lr 0.2 one sweep moves the values a fifth of the way: they would lag the rewards for
many batches).

Saved as ``.npz`` (``save``); ``load_sarsa(path)`` gives a greedy policy for the ``elastic-agent``
scheduler (``--config '{"policy": "agent.npz", "mode": ...}'``).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from ...policies.options import PolicyOptionError
from .approximators import Reservoir, Readout

# where the observation says which heads decide (see mdp.py: observe)
IDLE, BACKLOG, POOL_DUE, CLASSES = 2, 4, 5, 7


class SarsaAgent:
    def __init__(self, obs_size: int, n_classes: int, n_levels: int = 0, *, kind: str = "esn",
                 epsilon: float = 0.05, gamma: float = 0.8, lr: float = 0.2, neurons: int = 100,
                 connectivity: float = 0.1, batch: int = 500, memory: int = 5000, ridge: float = 1.0,
                 sweeps: int = 10, seed: int = 0):
        for name, value in (("epsilon", epsilon), ("gamma", gamma), ("lr", lr)):
            if not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"{name}: {value!r} is not a number in [0, 1]")
        if batch < 1 or memory < batch:
            raise ValueError(f"batch {batch!r} and memory {memory!r}: need 1 <= batch <= memory")
        self.n_classes, self.n_levels = n_classes, n_levels
        self.config: dict[str, Any] = {"obs_size": obs_size, "n_classes": n_classes, "n_levels": n_levels, "kind": kind,
                       "epsilon": epsilon, "gamma": gamma, "lr": lr, "neurons": neurons,
                       "connectivity": connectivity, "batch": batch, "memory": memory, "ridge": ridge,
                       "sweeps": sweeps, "seed": seed}
        self.reservoir = Reservoir(obs_size, kind, neurons, connectivity, seed=seed)
        n_features = neurons + obs_size + 1
        self.heads = [Readout(n_features, n_classes, ridge)] + ([Readout(n_features, n_levels, ridge)]
                                                               if n_levels else [])
        self.rng = np.random.default_rng(seed)
        self.epsilon, self.gamma, self.lr, self.batch, self.memory = epsilon, gamma, lr, batch, memory
        self.sweeps = sweeps
        self.buffers: list[list[tuple]] = [[] for _ in self.heads]
        self.fresh = [0 for _ in self.heads]
        self.pending: list[Optional[list]] = [None for _ in self.heads]   # [phi, action, R, discount]
        self.learning = True

    # --- acting ------------------------------------------------------------------------------
    def begin_episode(self) -> None:
        self.reservoir.reset()
        self.pending = [None for _ in self.heads]

    def active(self, obs: np.ndarray) -> list[bool]:
        job = bool(obs[IDLE] > 0 and obs[BACKLOG] > 0)
        return [job] + ([bool(obs[POOL_DUE] > 0)] if len(self.heads) > 1 else [])

    def allowed(self, obs: np.ndarray, head: int) -> np.ndarray:
        if head == 0:     # classes with queued jobs (an empty class would start the oldest job)
            mask = obs[CLASSES:CLASSES + 2 * self.n_classes:2] > 0
            return np.flatnonzero(mask) if mask.any() else np.arange(self.n_classes)
        return np.arange(self.n_levels)

    def act(self, obs: Any, teacher: Optional[Any] = None, explore: bool = True) -> Any:
        """The action for ``obs``: random with probability epsilon when exploring, else ``teacher``'s
        when given (pre-training), else greedy; learns from the step before if learning.  Ridge
        regression pulls the values of actions seldom taken towards 0, below the values of those
        tried (rewards are positive), so greedy choices stay near what was learned."""
        obs = np.asarray(obs, float)
        phi = self.reservoir.features(obs)
        active = self.active(obs)
        taught = None if teacher is None else np.asarray(teacher).reshape(-1)
        chosen = []
        for h, head in enumerate(self.heads):
            allowed = self.allowed(obs, h)
            if explore and self.rng.random() < self.epsilon:
                a = int(self.rng.choice(allowed))
            elif taught is not None:
                a = int(taught[h])
            else:
                q = head.values(phi)[allowed]
                a = int(allowed[int(np.argmax(q))])
            chosen.append(a)
            if active[h] and self.learning:
                self._close(h, phi, a, done=False)
                self.pending[h] = [phi, a, 0.0, 1.0]
        return chosen[0] if len(self.heads) == 1 else np.array(chosen)

    def reward(self, r: float, done: bool) -> None:
        """The reward of the last step, for every head's open transition."""
        if not self.learning:
            return
        for p in self.pending:
            if p is not None:
                p[2] += p[3] * r
                p[3] *= self.gamma
        if done:
            for h in range(len(self.heads)):
                self._close(h, None, None, done=True)

    # --- learning ---------------------------------------------------------------------------------
    def _close(self, h: int, phi: Optional[np.ndarray], a: Optional[int], done: bool) -> None:
        p = self.pending[h]
        if p is None:
            return
        self.pending[h] = None
        self.buffers[h].append((p[0], p[1], p[2], 0.0 if done else p[3], phi, a))
        if len(self.buffers[h]) > self.memory:
            del self.buffers[h][:len(self.buffers[h]) - self.memory]
        self.fresh[h] += 1
        if self.fresh[h] >= self.batch:
            self.refit(h)

    def refit(self, h: int) -> None:
        """``sweeps`` SARSA updates of the whole memory, each a ridge fit of the readout."""
        buf, head = self.buffers[h], self.heads[h]
        if not buf:
            return
        self.fresh[h] = 0
        phis = np.array([t[0] for t in buf])
        actions = np.array([t[1] for t in buf])
        rewards = np.array([t[2] for t in buf])
        discounts = np.array([t[3] for t in buf])
        ends = np.array([t[4] if t[3] else t[0] for t in buf])
        next_actions = np.array([t[5] if t[3] else 0 for t in buf])
        for _ in range(self.sweeps):
            q = np.einsum("ij,ij->i", head.weights[actions], phis)
            nxt = np.einsum("ij,ij->i", head.weights[next_actions], ends)
            head.fit(phis, actions, q + self.lr * (rewards + discounts * nxt - q))

    def refit_all(self) -> None:
        for h in range(len(self.heads)):
            self.refit(h)

    # --- saving -------------------------------------------------------------------------------------
    def save(self, path: "str | Path") -> None:
        arrays: dict[str, Any] = {f"head{h}": head.weights for h, head in enumerate(self.heads)}
        arrays.update(self.reservoir.arrays(), config=json.dumps(self.config))
        np.savez(path, **arrays)

    @classmethod
    def load(cls, path: "str | Path") -> "SarsaAgent":
        with np.load(path, allow_pickle=False) as data:
            config = json.loads(str(data["config"]))
            agent = cls(**config)
            agent.reservoir = Reservoir.from_arrays(config["kind"], data)
            for h, head in enumerate(agent.heads):
                head.weights = np.array(data[f"head{h}"])
        agent.learning = False
        return agent


class SarsaPolicy:
    """A saved agent as a greedy policy for the elastic-agent scheduler."""

    def __init__(self, agent: SarsaAgent, path: str):
        self.agent, self.path = agent, path

    def bind(self, scheduler: Any) -> None:
        c = self.agent.config
        want = (c["obs_size"], c["n_classes"], c["n_levels"] > 0)
        got = (scheduler.obs_size, scheduler.n_classes, scheduler.mode == "elastic")
        if want != got:
            raise PolicyOptionError(f"model {self.path}: trained for (observation size, classes, elastic) = {want}; "
                                    f"this scheduler has {got} (options nb_vos and mode must be those of training)")
        if c["n_levels"] and c["n_levels"] != len(scheduler.pool_steps):
            raise PolicyOptionError(f"model {self.path}: trained with {c['n_levels']} pool levels; option pool_steps "
                                    f"has {len(scheduler.pool_steps)}")
        self.agent.begin_episode()

    def __call__(self, obs: Any) -> Any:
        return self.agent.act(obs, explore=False)


def load_sarsa(path: str) -> Callable[[Any], Any]:
    if not Path(path).is_file():
        raise PolicyOptionError(f"model {path}: no such file")
    try:
        agent = SarsaAgent.load(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PolicyOptionError(f"model {path}: not a SARSA agent saved by SarsaAgent.save "
                                f"({type(exc).__name__}: {str(exc)[:160]})") from None
    return SarsaPolicy(agent, path)
