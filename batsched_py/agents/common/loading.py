"""A policy for an agent scheduler, from a name in a --config object.

``policy`` is one of: a baseline of the environment (``T0``, ``T1``, ``T5``, ``OR*``, ``QB`` for shutdown;
``FF``, ``EASY``, ``SAF`` for scheduling: each paper's baselines.py), a saved agent (a ``.zip``
written by ``batsched-py train``; a paper's scheduler may read more kinds of file, e.g. elastic's
SARSA agent ``.npz``), or ``module:callable`` (a callable obs -> action, or a class whose instances
are).  A policy with a ``bind(scheduler)`` method gets the
scheduler when the simulation begins (baselines read the platform and the queue directly, as
rule-based policies do).
"""
from __future__ import annotations

import json
from importlib import import_module
from pathlib import Path
from typing import Any, Callable, Collection, Mapping

from ...policies.options import PolicyOptionError
from ...scheduler.failure import describe
from .saved import load_agent

Policy = Callable[[Any], Any]


def load_policy(spec: Any, env: str, baselines: Mapping[str, Callable[[], Policy]],
                readers: Mapping[str, Callable[[str], Policy]] = {}) -> Policy:
    """The policy ``spec`` names for environment ``env``, whose paper has ``baselines``; ``readers``:
    file suffix -> the paper's reader of its own saved agents (``.zip`` is always a saved PPO agent)."""
    if spec is None:
        raise PolicyOptionError(f"option policy is required: a baseline ({', '.join(baselines)}), "
                                "a saved agent (.zip) or 'module:callable'")
    if not isinstance(spec, str) or not spec:
        raise PolicyOptionError(f"option policy: {spec!r} is not a policy name")
    if spec in baselines:
        return baselines[spec]()
    for suffix, read in readers.items():
        if spec.endswith(suffix):
            return read(spec)
    if spec.endswith(".zip"):
        return load_agent(spec, env)
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise PolicyOptionError(f"option policy: {spec!r} is neither a baseline ({', '.join(baselines)}), "
                                "a saved agent (.zip) nor 'module:callable'")
    try:
        obj: Any = import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except ImportError as exc:
        raise PolicyOptionError(f"option policy: cannot import {module_name!r} ({exc})") from None
    except AttributeError:
        raise PolicyOptionError(f"option policy: {module_name!r} has no {attr!r}") from None
    except Exception as exc:    # the module's own code fails (a SyntaxError, a bug at import)
        raise PolicyOptionError(f"option policy: importing {module_name!r} failed: {describe(exc)}") from exc
    if isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:
            raise PolicyOptionError(f"option policy: {spec}() failed: {describe(exc)}") from exc
    if not callable(obj):
        raise PolicyOptionError(f"option policy: {spec} is not callable")
    return obj


def trained_agent(scheduler_name: str, env: str, options: dict, trained: Collection[str]) -> tuple[Policy, dict]:
    """The saved agent that options ``model`` and ``deterministic`` name (taken out of ``options``;
    the others are returned for the scheduler, with the ``trained`` options the agent was trained
    with where not given: see :func:`trained_with`)."""
    options = dict(options)
    model, deterministic = options.pop("model", None), options.pop("deterministic", True)
    if not isinstance(model, str):
        raise PolicyOptionError(f"{scheduler_name} needs option model: the path of a trained agent (.zip)")
    if not isinstance(deterministic, bool):
        raise PolicyOptionError(f"{scheduler_name}: option deterministic must be true or false, not {deterministic!r}")
    policy = load_agent(model, env, deterministic=deterministic)
    return policy, trained_with(model, trained, options)


def trained_with(model: str, trained: Collection[str], given: Mapping[str, Any] = {}) -> dict[str, Any]:
    """``given`` (environment arguments, or a scheduler's options) and, where it does not say, those
    among ``trained`` (what shapes what an agent sees or does) that ``model`` (a .zip) was trained with,
    from the record ``train`` writes beside it (``model.json``'s ``env_kwargs``; none without a
    record).  So a model deploys and evaluates without repeating them."""
    record = Path(model).with_suffix(".json")
    if not record.is_file():
        return dict(given)
    try:
        kwargs = json.loads(record.read_text()).get("env_kwargs", {})
    except (OSError, UnicodeDecodeError, ValueError, AttributeError) as exc:
        raise PolicyOptionError(f"model {model}: its record {record} is not readable JSON ({exc})") from None
    if not isinstance(kwargs, dict):
        raise PolicyOptionError(f"model {model}: env_kwargs in its record {record} is not an object")
    return {**{k: v for k, v in kwargs.items() if k in trained}, **given}
