"""The thesis' DQN (Yi, ch. 3-4) with stable-baselines3: Q network with one hidden layer of 24 ReLU
units, epsilon-greedy exploration from 0.2 decaying x0.999 per step down to 0.01, Adam lr 1e-3,
minibatches of 5 from an experience replay memory, gamma 0.99.  :func:`train` writes the model
(``.zip``) and a JSON record next to it (command, seed, steps, wall time, machine); saved.py reads
it back as a policy.

Invalid actions are masked (:func:`valid_actions`): a processor without room for the head job
(spare cores that do not overheat, see :func:`~.cluster.observation`) gets no Q-value, in the
greedy choice, in the exploration draw and in the TD target's max.  Without the mask the agent
learnt to name the processors of warm racks, whose choice the fallback overrides once they near
overheating by sending the job to the coolest processor, an idle one: it spread the load instead
of consolidating it.  The mask reads only the state.

The agent learns from eq. 3.1 x :data:`REWARD_SCALE` (0.1): in percent and degrees, eq. 3.1 gives
returns of hundreds over gamma 0.99's horizon, where SB3's Huber loss is linear and the 24-unit
network fits the small differences between actions (a fraction of a percent per decision) far
more slowly.  A constant factor leaves the best policy unchanged.  At alpha 0.5, 30,000 decisions,
seed 0 (LPC-EGEE, 8 processors; power saved against round robin on the 30 held-out days): 2.3%
unmasked, 1.7% masked, 3.5% with rewards x0.01, 4.6% x0.1, 5.0% once spare cores exclude
overheating (greedy consolidation: 5.3%)."""
from __future__ import annotations

import json
import platform as host
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch as th
from gymnasium.wrappers import TransformReward
from stable_baselines3 import DQN
from stable_baselines3.dqn.policies import DQNPolicy, QNetwork

from ... import envs  # noqa: F401  (registers Allocation-v0)
from .predictor import load_predictor

HYPERPARAMETERS = dict(learning_rate=1e-3, batch_size=5, gamma=0.99, buffer_size=50_000,
                       learning_starts=50, train_freq=1, target_update_interval=500)
EPSILON = (0.2, 0.999, 0.01)     # start, decay per step, floor
REWARD_SCALE = 0.1               # (see the module's docstring)


def valid_actions(obs: Any, nb_actions: int) -> Any:
    """Boolean (batch, actions) torch mask of the actions whose processors have room, read from
    observations laid out as :func:`~.cluster.observation` writes them (``4 N + J`` values: free
    fraction at ``4 i + 3``, the ``J`` head jobs' cores at the end).  ``J=2``: the second job must
    fit after the first is placed, unless it fits nowhere (it then waits, any second is valid).
    A row with no valid action (the head job fits only where it overheats) keeps every action:
    the environment's fallback then picks the coolest processor with room."""
    obs = obs.reshape(-1, obs.shape[-1])
    J = 1 if obs.shape[1] == 4 * nb_actions + 1 else 2
    n = (obs.shape[1] - J) // 4
    free, heads, slack = obs[:, 3:4 * n:4], obs[:, 4 * n:], 1e-4
    valid = free >= heads[:, :1] - slack
    if J == 2:
        after = free[:, None, :] - heads[:, 0, None, None] * th.eye(n, dtype=obs.dtype, device=obs.device)
        second = (after >= heads[:, 1, None, None] - slack) | (heads[:, 1, None, None] <= 0)
        second |= ~second.any(-1, keepdim=True)
        valid = (valid[:, :, None] & second).reshape(-1, n * n)
    return valid | ~valid.any(1, keepdim=True)


class MaskedQNetwork(QNetwork):
    def forward(self, obs):
        q = super().forward(obs)
        return q.masked_fill(~valid_actions(obs, q.shape[1]), -1e6)


class MaskedDQNPolicy(DQNPolicy):
    def make_q_net(self):
        net_args = self._update_features_extractor(self.net_args, features_extractor=None)
        return MaskedQNetwork(**net_args).to(self.device)


class MaskedDQN(DQN):
    """SB3's DQN drawing its exploratory (and warm-up) actions among the valid ones."""

    def _random_valid(self, observation):
        obs = np.asarray(observation, dtype=np.float32)
        valid = valid_actions(th.as_tensor(obs), int(self.action_space.n)).numpy()
        action = np.array([np.random.choice(np.flatnonzero(row)) for row in valid])
        return action if obs.ndim > 1 else action.reshape(())

    def predict(self, observation, state=None, episode_start=None, deterministic=False):
        if not deterministic and np.random.rand() < self.exploration_rate:
            return self._random_valid(observation), state
        return self.policy.predict(observation, state, episode_start, deterministic)

    def _sample_action(self, learning_starts, action_noise=None, n_envs=1):
        if self.num_timesteps < learning_starts:
            action = self._random_valid(self._last_obs)
        else:
            action, _ = self.predict(self._last_obs, deterministic=False)
        return action, action


class ExponentialEpsilon:
    """SB3's exploration schedule replaced by the thesis' epsilon x decay^step (floored): SB3 calls
    it with the remaining progress, so it reads the model's step count instead."""

    def __init__(self, model: Any, start: float, decay: float, floor: float):
        self.model, self.start, self.decay, self.floor = model, start, decay, floor

    def __call__(self, _progress_remaining: float) -> float:
        return max(self.floor, self.start * self.decay ** self.model.num_timesteps)


def make_dqn(env: Any, seed: int = 0, **overrides: Any):
    """The thesis' DQN on ``Allocation-v0`` ``env``, which it learns from with rewards x REWARD_SCALE."""
    env = TransformReward(env, lambda reward: REWARD_SCALE * float(reward))
    model = MaskedDQN(MaskedDQNPolicy, env, seed=seed, policy_kwargs=dict(net_arch=[24]), device="cpu", verbose=0,
                exploration_initial_eps=EPSILON[0], exploration_final_eps=EPSILON[2],
                **{**HYPERPARAMETERS, **overrides})
    model.exploration_schedule = ExponentialEpsilon(model, *EPSILON)
    return model


def train(env_kwargs: dict, steps: int, out: "str | Path", seed: int = 0, progress: bool = False):
    """Train on ``Allocation-v0(**env_kwargs)`` for ``steps`` decisions (``predictor``: the path of a
    saved predictor, which the environment is given); save ``out`` (.zip) and its JSON record; the model."""
    th.set_num_threads(1)
    predictor = env_kwargs.get("predictor")
    given = {} if predictor is None else {"predictor": partial(load_predictor, predictor)}
    env = gym.make("batsched_py/Allocation-v0", **{**env_kwargs, **given})
    model = make_dqn(env, seed)
    began = time.perf_counter()
    model.learn(total_timesteps=steps, progress_bar=progress)
    wall = time.perf_counter() - began
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    # (the schedule holds the model: saved, it would drag the replay memory into the file)
    model.save(out, exclude=["exploration_schedule"])
    record = {"command": " ".join(sys.argv), "seed": seed, "steps": steps, "wall_time_s": round(wall, 1),
              "machine": f"{host.node()} {host.processor() or host.machine()}, torch threads 1",
              "env": {k: (str(v) if isinstance(v, Path) else v) for k, v in env_kwargs.items() if k != "jobs"},
              "jobs": str(getattr(env_kwargs.get("jobs"), "source", env_kwargs.get("jobs"))),
              "hyperparameters": {**HYPERPARAMETERS, "epsilon": EPSILON, "hidden": [24], "reward_scale": REWARD_SCALE,
                                  "invalid_actions": "masked"}}
    out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    return model
