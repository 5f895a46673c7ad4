"""A policy made from what a user wrote: its options as JSON text, and its creation by name with
a refusal told in one line (the command line, compare's checks and campaign files share them)."""
import json
from typing import Any

from ..errors import BatschedError, InputError
from ..textfiles import json_fault
from .base import Scheduler
from .failure import describe
from .registry import create


def json_object(text: str, source: str) -> dict[str, Any]:
    """Scheduler options: ``text`` must hold a JSON object; errors name ``source``."""
    try:
        options = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{source}: {json_fault(exc)}") from None
    if not isinstance(options, dict):
        raise InputError(f"{source}: scheduler options must be a JSON object")
    return options


def create_scheduler(name: str, options: dict[str, Any]) -> Scheduler:
    """The policy, or one line saying why its constructor refused (a bad option, usually): the
    package's own errors (and OSError) already say it and pass as they are."""
    try:
        return create(name, options)
    except (BatschedError, OSError):
        raise
    except Exception as exc:
        raise InputError(f"scheduler {name!r} failed to start with options {json.dumps(options)}: "
                         f"{describe(exc)}") from exc
