"""A DQN saved by :func:`batsched_py.agents.allocation.dqn.train` as the allocation scheduler's policy.

Reading one needs stable-baselines3 (the rl extra) but not dqn.py: the saved settings name its masked
Q-network, which unpickling imports, so listing the schedulers imports no torch."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...policies.options import PolicyOptionError
from ..common.saved import saved_zip


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
            raise PolicyOptionError(f"model {self.path}: trained for observations {want} and {self.model.action_space.n} "
                             f"actions; this platform and scheduler give {got} and {scheduler.n ** scheduler.J} "
                             f"({scheduler.n} processors of {scheduler.cores} cores, J={scheduler.J})")

    def __call__(self, obs: np.ndarray) -> int:
        return greedy_action(self.model, obs)


def load_dqn(path: str) -> SavedAllocator:
    """A DQN saved by dqn.train (one-line errors for a missing or foreign file)."""
    file = saved_zip(path, "a saved DQN (a zip written by the allocation training)")
    # (SB3's DQN: a greedy action is the masked Q-network's, the policy's; MaskedDQN only changes exploration)
    from stable_baselines3 import DQN    # (optional: the rl extra)
    try:
        model = DQN.load(file, device="cpu")
    except Exception as exc:      # a broken or foreign zip: one line
        raise PolicyOptionError(f"model {path}: cannot be loaded as a DQN ({type(exc).__name__}: {str(exc)[:200]})") from None
    return SavedAllocator(model, path)
