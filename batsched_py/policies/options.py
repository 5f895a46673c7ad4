"""Policy options (the ``--config`` JSON object): their error type and the checks they share."""
import math
from typing import Any, Mapping


class PolicyOptionError(ValueError):
    """An option a policy cannot use; the message names the option."""


def number_option(options: Mapping[str, Any], name: str, default: float, *, positive: bool = False) -> float:
    """Option ``name``: a finite number >= 0 (> 0 if ``positive``), or ``default`` when absent."""
    value = options.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < 0 or (positive and value == 0):
        raise PolicyOptionError(f"option {name}: {value!r} is not a finite {'positive' if positive else 'non-negative'} "
                                "number")
    return float(value)
