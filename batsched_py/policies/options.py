"""Policy options (the ``--config`` JSON object): their error type and the checks they share."""
from typing import Any, Mapping, Sequence

from ..scheduler.base import finite
from ..errors import BatschedError


class PolicyOptionError(BatschedError, ValueError):
    """An option a policy cannot use; the message names the option."""


def refuse_unknown(options: Mapping[str, Any], known: "frozenset[str]", owner: str) -> None:
    """One line naming the options ``owner`` does not know, and those it does."""
    unknown = set(options) - known
    if unknown:
        raise PolicyOptionError(f"{owner}: unknown option(s) {sorted(unknown)}; known: {sorted(known)}")


def number_option(options: Mapping[str, Any], name: str, default: float, *, positive: bool = False) -> float:
    """Option ``name``: a finite number >= 0 (> 0 if ``positive``), or ``default`` when absent."""
    value = options.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not finite(value) \
            or value < 0 or (positive and value == 0):
        raise PolicyOptionError(f"option {name}: {value!r} is not a finite {'positive' if positive else 'non-negative'} "
                                "number")
    return float(value)


def count_option(options: Mapping[str, Any], name: str, default: int) -> int:
    """Option ``name``: a positive integer (a size, a count), or ``default`` when absent."""
    value = options.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PolicyOptionError(f"option {name}: {value!r} is not a positive integer")
    return value


def choice_option(options: Mapping[str, Any], name: str, default: str, choices: Sequence[str]) -> str:
    """Option ``name``: one of ``choices``, or ``default`` when absent."""
    value = options.get(name, default)
    if value not in choices:
        raise PolicyOptionError(f"option {name}: {value!r} is not one of {', '.join(choices)}")
    return value


def flag_option(options: Mapping[str, Any], name: str, default: bool) -> bool:
    """Option ``name``: true or false (a string such as "false" would be truthy), or ``default``."""
    value = options.get(name, default)
    if value.__class__ is not bool:
        raise PolicyOptionError(f"option {name}: {value!r} is not true or false")
    return value


#: What each built-in option does, for ``list-schedulers`` (defaults: each policy's OPTION_DEFAULTS).
OPTION_HELP = {
    "queue_order": "queue order: fcfs, lcfs, saf, laf, sjf, ljf, smallest, largest",
    "allocation": "host selection: lowest, contiguous, round_robin, consolidation, random",
    "contiguous": "contiguous hosts when true (as allocation 'contiguous')",
    "cores_per_node": "hosts per node, allocated and switched together",
    "seed": "seed of allocation 'random'",
    "custom_mapping": "send an explicit executor-to-host mapping, as batsched's filler does",
    "base": "the queue policy under power management",
    "timeout": "idle time units before a node is switched off",
    "threshold": "longest wait (time units) a queued job may get to keep sleeping nodes off",
    "workload": "workload JSON holding the jobs' real runtimes",
    "host_speed": "host speed (flop/s) turning parallel_homogeneous profiles into runtimes",
    "keep_on": "keep nodes planned within this many time units on",
    "policy": "a baseline name, a saved agent or 'module:callable' (required where the default is null)",
    "model": "required: the trained agent's .zip (batsched-py train)",
    "deterministic": "the agent's most likely action (false: sampled)",
    "dt": "time units between two agent decisions",
    "day": "time units of an episode (the agent is asked within it)",
    "history": "decisions (snapshots) in the observation window",
    "queue_features": "queued jobs described in an observation",
    "max_queue": "queue length that normalises observations (scheduling: queued jobs an action can name)",
    "max_user_jobs": "a user's jobs in the system that normalise observations",
    "release_features": "observe each node's release and each queued job's stretch by walltime (shutdown)",
    "advice": "a baseline whose action the observation shows, one-hot (shutdown; null: none)",
    "advice_options": "the advice baseline's arguments, e.g. {\"max_wait\": 20} (shutdown)",
    "max_running": "running jobs described in an observation",
    "confidence_jobs": "a user's last finished jobs that give its runtime/walltime confidence",
    "J": "head jobs placed per decision: 1 or 2",
    "alpha": "online_opt1's weight of the mean temperature (C) beside the power (%)",
    "max_temperature": "temperature (C) a placement may not take a processor over (else: the coolest one)",
    "leakage_model": "leakage power the scheduler observes: linear or exponential",
}


def describe_options(defaults: Mapping[str, Any]) -> list[str]:
    """One line per option: name, default (JSON), what it does."""
    import json
    return [f"{name}={json.dumps(default)}: {OPTION_HELP.get(name, '')}".rstrip(": ")
            for name, default in sorted(defaults.items())]
