"""Batsim external events files (``--events``): one JSON object per line, ascending timestamps.

Known types: ``machine_unavailable`` / ``machine_available`` (``resources``: an interval set).
Other types are "generic": forwarded to the scheduler only with --forward-unknown-events.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from procset import ProcSet

from ..textfiles import json_fault, not_utf8
from .document import NO_NAN, non_finite
from .errors import EmulatorError
from .json_numbers import rapidjson_double

__all__ = ["ExternalEvent", "load_events"]

MACHINE_EVENTS = ("machine_unavailable", "machine_available")


@dataclass(frozen=True, slots=True)
class ExternalEvent:
    timestamp: float
    type: str
    resources: ProcSet | None = None
    data: dict[str, Any] = field(default_factory=dict)   # the whole line (generic events)


def load_events(path: str | Path, *, nb_hosts: int) -> list[ExternalEvent]:
    events: list[ExternalEvent] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EmulatorError(f"events file {path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise EmulatorError(f"events file {path}: {not_utf8(exc)}") from None
    last = 0.0
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"events file {path}, line {n}"
        try:
            obj = json.loads(line, parse_float=rapidjson_double)
        except (ValueError, RecursionError) as exc:
            raise EmulatorError(f"{where}: {json_fault(exc)}") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            raise EmulatorError(f"{where}: an event must be an object with a string 'type'")
        t = obj.get("timestamp")
        # (json reads NaN and Infinity, which no event time can be)
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t < math.inf:
            raise EmulatorError(f"{where}: 'timestamp' must be a finite non-negative number, got {json.dumps(t)}")
        bad = non_finite(obj)       # (a generic event goes to the scheduler as it is)
        if bad is not None:
            raise EmulatorError(f"{where}: {bad}: {NO_NAN}")
        if t < last:
            raise EmulatorError(f"{where}: timestamps must be in ascending order ({t} < {last})")
        last = t
        resources = None
        if obj["type"] in MACHINE_EVENTS:
            text = obj.get("resources")
            try:
                resources = ProcSet.from_str(text.replace(",", " ")) if isinstance(text, str) else None
            except ValueError:
                resources = None
            if resources is None:
                raise EmulatorError(f"{where}: 'resources' must be an interval set like \"0-3 7\"")
            if resources and (resources.min < 0 or resources.max >= nb_hosts):
                raise EmulatorError(f"{where}: resources {resources} out of range 0-{nb_hosts - 1}")
        events.append(ExternalEvent(float(t), obj["type"], resources, obj))
    return events
