"""A training's files written so that a kill at any instant loses no more than the steps since the
last checkpoint: every file (checkpoint, reward statistics, model.zip) goes to PATH.part and is
renamed whole, SIGINT and SIGTERM waiting meanwhile; ``--resume`` takes the newest checkpoint that
is whole and fits the training, and names those it passes over and why."""
from __future__ import annotations

import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any, Callable, Optional

from ...interrupts import signals_deferred

PART = ".part"
_NAME = re.compile(r"model_(\d+)_steps\.zip")


def save_whole(path: Path, write: Callable[[Path], None]) -> None:
    """``write(part)`` then rename ``part`` to ``path``: a reader never meets a file cut short
    (a signal waits until the file is whole; a SIGKILL leaves a PATH.part, never a cut PATH)."""
    part = path.with_name(path.name + PART)
    with signals_deferred():
        try:
            write(part)
            os.replace(part, path)
        finally:
            part.unlink(missing_ok=True)


def save_agent(path: Path, write: Callable[[Path], None], env_kwargs: dict[str, Any], **about: Any) -> None:
    """A saved agent (``write``, as :func:`save_whole`) and beside it its record, PATH.json: the
    environment arguments it was trained with (what loaders read to show it the observation it
    learned on: ``loading.trained_with``) and ``about`` it."""
    save_whole(path, write)
    record = json.dumps({"env_kwargs": env_kwargs, **about}, indent=1) + "\n"

    def write_record(part: Path) -> None:
        part.write_text(record)
    save_whole(path.with_suffix(".json"), write_record)


def stats_of(checkpoint: Path) -> Path:
    """Where the reward statistics (VecNormalize) saved with ``checkpoint`` are."""
    return checkpoint.with_name(checkpoint.name.replace("model_", "model_vecnormalize_", 1)).with_suffix(".pkl")


def zip_fault(path: Path) -> Optional[str]:
    """What makes ``path`` no saved agent (None: it is one, whole)."""
    if not zipfile.is_zipfile(path):
        return "cut short or not a zip (a training killed while writing it)"
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            if not names:
                return "an empty zip"
            if "data" not in names:
                return "not a saved agent (no 'data' entry)"
            damaged = z.testzip()
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        return f"unreadable ({exc})"
    return f"damaged (entry {damaged!r})" if damaged else None


def describe_space(space: Any) -> str:
    """'Box(20, 48)', 'Dict(queue, running, snapshots)', 'Discrete(15)'."""
    kind = type(space).__name__
    if hasattr(space, "spaces") and isinstance(space.spaces, dict):
        return f"{kind}({', '.join(space.spaces)})"
    if kind == "Discrete":
        return f"Discrete({space.n})"
    return f"{kind}{tuple(space.shape)}" if getattr(space, "shape", None) is not None else kind


def fit_fault(path: Path, observation_space: Any, action_space: Any, algorithm: str) -> Optional[str]:
    """What makes the whole checkpoint ``path`` unfit to go on with a training of ``algorithm``
    (PPO or MaskablePPO) on these spaces (None: it fits)."""
    from stable_baselines3.common.save_util import json_to_data    # (optional: the rl extra)
    try:
        with zipfile.ZipFile(path) as z:
            data = json_to_data(z.read("data").decode("utf-8"))
    except Exception as exc:          # (its settings are unpickled: anything may be wrong in them)
        return f"its settings cannot be read ({type(exc).__name__}: {str(exc)[:120]})"
    have = data.get("observation_space"), data.get("action_space")
    if have[0] != observation_space or have[1] != action_space:
        return (f"trained on observations {describe_space(have[0])} and actions {describe_space(have[1])}, this "
                f"training's are {describe_space(observation_space)} and {describe_space(action_space)} (another "
                "agent, platform or --env)")
    policy = data.get("policy_class")
    theirs = "MaskablePPO" if getattr(policy, "__module__", "").startswith("sb3_contrib") else "PPO"
    if theirs != algorithm:
        return f"a {theirs} checkpoint, this training is {algorithm} (--masking or not)"
    return None


def latest_checkpoint(folder: Path, fault: Optional[Callable[[Path], Optional[str]]] = None,
                      skipped: Optional[list[str]] = None) -> Optional[Path]:
    """The checkpoint of most steps that is whole and in which ``fault`` finds nothing wrong; each
    one passed over is added to ``skipped`` as 'NAME: why'."""
    found = sorted(((int(m.group(1)), p) for p in folder.glob("model_*_steps.zip")
                    if (m := _NAME.fullmatch(p.name))), reverse=True)
    for _, path in found:
        why = zip_fault(path) or (fault(path) if fault else None)
        if why is None:
            return path
        if skipped is not None:
            skipped.append(f"{path.name}: {why}")
    return None


def WholeCheckpoints(every: int, folder: Path, normalize: bool):
    """SB3's CheckpointCallback, each file written whole: the reward statistics first, then the
    model, so that a whole checkpoint always has its statistics beside it."""
    from stable_baselines3.common.callbacks import BaseCallback    # (optional: the rl extra)

    class _Checkpoints(BaseCallback):
        def _init_callback(self) -> None:
            folder.mkdir(parents=True, exist_ok=True)

        def _on_step(self) -> bool:
            if self.n_calls % every == 0:
                path = folder / f"model_{self.num_timesteps}_steps.zip"
                venv = self.model.get_vec_normalize_env()
                if normalize and venv is not None:
                    save_whole(stats_of(path), lambda part: venv.save(str(part)))
                save_whole(path, lambda part: self.model.save(part))
            return True
    return _Checkpoints()

