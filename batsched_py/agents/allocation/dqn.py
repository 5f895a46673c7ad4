"""The thesis' DQN (Yi, ch. 3-4) with stable-baselines3: Q network with one hidden layer of 24 ReLU
units, epsilon-greedy exploration from 0.2 decaying x0.999 per step down to 0.01, Adam lr 1e-3,
minibatches of 5 from an experience replay memory, gamma 0.99.  :func:`train` writes the model
(``.zip``) and a JSON record next to it (command, seed, steps, wall time, machine)."""
from __future__ import annotations

import json
import platform as host
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HYPERPARAMETERS = dict(learning_rate=1e-3, batch_size=5, gamma=0.99, buffer_size=50_000,
                       learning_starts=50, train_freq=1, target_update_interval=500)
EPSILON = (0.2, 0.999, 0.01)     # start, decay per step, floor


class ExponentialEpsilon:
    """SB3's exploration schedule replaced by the thesis' epsilon x decay^step (floored): SB3 calls
    it with the remaining progress, so it reads the model's step count instead."""

    def __init__(self, model: Any, start: float, decay: float, floor: float):
        self.model, self.start, self.decay, self.floor = model, start, decay, floor

    def __call__(self, _progress_remaining: float) -> float:
        return max(self.floor, self.start * self.decay ** self.model.num_timesteps)


def make_dqn(env: Any, seed: int = 0, **overrides: Any):
    from stable_baselines3 import DQN
    model = DQN("MlpPolicy", env, seed=seed, policy_kwargs=dict(net_arch=[24]), device="cpu", verbose=0,
                exploration_initial_eps=EPSILON[0], exploration_final_eps=EPSILON[2],
                **{**HYPERPARAMETERS, **overrides})
    model.exploration_schedule = ExponentialEpsilon(model, *EPSILON)
    return model


def train(env_kwargs: dict, steps: int, out: "str | Path", seed: int = 0, progress: bool = False):
    """Train on ``Allocation-v0(**env_kwargs)`` for ``steps`` decisions; save ``out`` (.zip) and its
    JSON record; the model."""
    import gymnasium as gym
    import torch

    import batsched_py.envs  # noqa: F401
    torch.set_num_threads(1)
    env = gym.make("batsched_py/Allocation-v0", **env_kwargs)
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
              "hyperparameters": {**HYPERPARAMETERS, "epsilon": EPSILON, "hidden": [24]}}
    out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    return model


def greedy_action(model: Any, obs: np.ndarray) -> int:
    action, _ = model.predict(obs, deterministic=True)
    return int(np.asarray(action).reshape(()))


class SavedAllocator:
    """obs -> action with a saved DQN; ``bind(scheduler)`` checks its processors and J."""

    def __init__(self, model: Any, path: str):
        self.model, self.path = model, path

    def bind(self, scheduler: Any) -> None:
        want, got = self.model.observation_space.shape, scheduler.observe().shape
        if want != got or self.model.action_space.n != scheduler.n ** scheduler.J:
            from ...policies.options import PolicyOptionError
            raise PolicyOptionError(f"model {self.path}: trained for observations {want} and {self.model.action_space.n} "
                             f"actions; this platform and scheduler give {got} and {scheduler.n ** scheduler.J} "
                             f"({scheduler.n} processors of {scheduler.cores} cores, J={scheduler.J})")

    def __call__(self, obs: np.ndarray) -> int:
        return greedy_action(self.model, obs)


def load_dqn(path: str) -> SavedAllocator:
    """A DQN saved by :func:`train` (one-line errors for a missing or foreign file)."""
    import zipfile

    from ...policies.options import PolicyOptionError
    file = Path(path)
    if not file.is_file():
        raise PolicyOptionError(f"model {path}: no such file")
    if not zipfile.is_zipfile(file):
        raise PolicyOptionError(f"model {path}: not a saved DQN (a zip written by the allocation training)")
    from stable_baselines3 import DQN
    try:
        model = DQN.load(file, device="cpu")
    except Exception as exc:      # a broken or foreign zip: one line
        raise PolicyOptionError(f"model {path}: cannot be loaded as a DQN ({type(exc).__name__}: {str(exc)[:200]})") from None
    return SavedAllocator(model, path)
