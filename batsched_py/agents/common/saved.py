"""A saved agent (``batsched-py train``'s ``model.zip``) as a policy for its scheduler."""
from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ...policies.options import PolicyOptionError


class SavedAgent:
    """obs -> action with a trained model; ``bind(scheduler)`` checks that the scheduler's
    observations are the ones the model was trained on and gives MaskablePPO its action masks."""

    def __init__(self, model: Any, path: str, deterministic: bool = True):
        self.model = model
        self.path = path
        self.deterministic = deterministic
        self.scheduler: Any = None
        self.masked = type(model).__name__ == "MaskablePPO"

    def bind(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        expected = self.model.observation_space
        got = scheduler.observe()
        shapes = ({k: v.shape for k, v in got.items()} if isinstance(got, dict) else got.shape)
        want = ({k: s.shape for k, s in expected.spaces.items()} if hasattr(expected, "spaces") else expected.shape)
        if shapes != want:
            raise PolicyOptionError(f"model {self.path}: trained on observations {want}, the scheduler gives {shapes} "
                                    "(its options history, queue_features, max_queue... must be those of training)")
        n = getattr(self.model.action_space, "n", None)
        actions = scheduler.mdp(len(scheduler.platform)).actions
        if n != actions:
            raise PolicyOptionError(f"model {self.path}: trained with {n} actions, this platform and scheduler have "
                                    f"{actions}")

    def __call__(self, obs: Any) -> int:
        kwargs = {}
        if self.masked and self.scheduler is not None:
            kwargs["action_masks"] = self.scheduler.action_mask()
        action, _ = self.model.predict(obs, deterministic=self.deterministic, **kwargs)
        return int(np.asarray(action).reshape(()))


def saved_zip(path: str, what: str) -> Path:
    """``path``, a zip file as SB3 saves a model; else a one-line error saying it should be ``what``."""
    file = Path(path)
    if not file.is_file():
        raise PolicyOptionError(f"model {path}: no such file")
    if not zipfile.is_zipfile(file):
        raise PolicyOptionError(f"model {path}: not {what}")
    return file


def load_agent(path: str, env: str, deterministic: bool = True) -> SavedAgent:
    """Load ``path`` (PPO or MaskablePPO) for environment ``env`` ("shutdown" or "scheduling")."""
    file = saved_zip(path, "a saved agent (a zip written by batsched-py train)")
    try:
        from stable_baselines3 import PPO    # (optional: the rl extra)
    except ImportError:
        raise PolicyOptionError(f"model {path}: loading agents needs the rl extra: pip install 'batsched_py[rl]'") from None
    with zipfile.ZipFile(file) as z:
        if "data" not in z.namelist():
            raise PolicyOptionError(f"model {path}: not a saved agent (no 'data' entry: not written by batsched-py train)")
        data = z.read("data").decode("utf-8", "replace")
    algo: Any = PPO
    if "MaskableActorCriticPolicy" in data or "sb3_contrib" in data:
        from sb3_contrib import MaskablePPO    # (optional: the rl extra)
        algo = MaskablePPO
    # (the paper's network classes, e.g. agents.deepshutdown.config's, are named in the saved
    # settings: unpickling imports their module)
    import torch    # (optional: the rl extra)
    # (one thread: a decision is one small forward pass, where a thread pool costs ~10x on a busy
    # machine, and a pool started before a fork deadlocks the forked workers of compare)
    torch.set_num_threads(1)
    try:
        model = algo.load(file, device="cpu")
    except Exception as exc:       # a broken or foreign zip: one line, not SB3's traceback
        raise PolicyOptionError(f"model {path}: cannot be loaded ({type(exc).__name__}: {str(exc)[:200]})") from None
    want = "Dict" if env == "scheduling" else "Box"
    if type(model.observation_space).__name__ != want:
        raise PolicyOptionError(f"model {path}: trained on {type(model.observation_space).__name__} observations; "
                                f"the {env} environment's are {want} (an agent for the other environment?)")
    return SavedAgent(model, path, deterministic)
