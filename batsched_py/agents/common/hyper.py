"""PPO's settings (``train --hyper``) checked before a training starts: SB3 checks few of them, with
an assert or deep in torch (gamma 2: a ValueError about logits; n_epochs -1: an UnboundLocalError
after the first rollout)."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional
from ...errors import BatschedError


class HyperError(BatschedError, ValueError):
    """A bad PPO setting, named."""


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# setting -> (what it must be, the test)
RULES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "learning_rate": ("a number above 0", lambda v: _number(v) and v > 0),
    "n_steps": ("an integer of at least 1", lambda v: _integer(v) and v >= 1),
    "batch_size": ("an integer of at least 2", lambda v: _integer(v) and v >= 2),
    "minibatches": ("an integer of at least 1", lambda v: _integer(v) and v >= 1),
    "n_epochs": ("an integer of at least 1", lambda v: _integer(v) and v >= 1),
    "gamma": ("a number in (0, 1]", lambda v: _number(v) and 0 < v <= 1),
    "gae_lambda": ("a number in [0, 1]", lambda v: _number(v) and 0 <= v <= 1),
    "clip_range": ("a number above 0", lambda v: _number(v) and v > 0),
    "clip_range_vf": ("null or a number above 0", lambda v: v is None or (_number(v) and v > 0)),
    "normalize_advantage": ("true or false", lambda v: isinstance(v, bool)),
    "ent_coef": ("a number of at least 0", lambda v: _number(v) and v >= 0),
    "vf_coef": ("a number of at least 0", lambda v: _number(v) and v >= 0),
    "max_grad_norm": ("a number above 0", lambda v: _number(v) and v > 0),
    "use_sde": ("true or false", lambda v: isinstance(v, bool)),
    "sde_sample_freq": ("-1 or an integer of at least 1", lambda v: _integer(v) and (v == -1 or v >= 1)),
    "target_kl": ("null or a number above 0", lambda v: v is None or (_number(v) and v > 0)),
    "stats_window_size": ("an integer of at least 1", lambda v: _integer(v) and v >= 1),
}


def ppo_settings(paper: dict[str, Any], given: dict[str, Any], actors: int) -> tuple[dict[str, Any], Optional[int]]:
    """The paper's settings with the user's ``given`` ones over them, checked: (PPO's keyword
    arguments, the number of minibatches when the batch size derives from it).  A batch size given
    replaces the paper's minibatches (and giving both is refused: one would be ignored)."""
    unknown = sorted(set(given) - set(RULES))
    if unknown:
        raise HyperError(f"--hyper: unknown setting(s) {', '.join(map(repr, unknown))}; PPO's: {', '.join(RULES)}")
    for key, value in given.items():
        what, ok = RULES[key]
        if not ok(value):
            raise HyperError(f"--hyper: {key} {value!r} is not {what}")
    if "batch_size" in given and "minibatches" in given:
        raise HyperError("--hyper: give batch_size or minibatches, not both (the batch size is a rollout's "
                         "n_steps x actors / minibatches)")
    hyper = dict(paper)
    if "batch_size" in given:
        hyper.pop("minibatches", None)
    hyper.update(given)
    rollout = hyper["n_steps"] * actors
    if rollout < 2:
        raise HyperError(f"--hyper: n_steps {hyper['n_steps']} x {actors} actor(s): a rollout needs at least 2 steps")
    minibatches = hyper.pop("minibatches", None)
    of_rollout = f"a rollout's {rollout} steps (n_steps {hyper['n_steps']} x {actors} actors)"
    if given.get("batch_size", 0) > rollout:
        raise HyperError(f"--hyper: batch_size {given['batch_size']} is more than {of_rollout}")
    if minibatches:
        if rollout // minibatches < 2:
            whose = "" if "minibatches" in given else " (the paper's: give batch_size instead)"
            raise HyperError(f"--hyper: minibatches {minibatches}{whose} leave batches of fewer than 2 steps of "
                             f"{of_rollout}")
        hyper["batch_size"] = rollout // minibatches
    return hyper, minibatches
