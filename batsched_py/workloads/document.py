"""A Batsim workload file's top level, read the same way by everything that reads workloads
(the emulator, the oracle policy, the Batsim 3 upgrade): an unreadable file, text that is not
UTF-8 or JSON, or a wrong shape is named in one line, never a traceback."""
import json
import sys
from pathlib import Path
from typing import Any, Callable

from ..textfiles import not_utf8


class WorkloadError(ValueError):
    """Invalid workload; the message names the file and the element."""


def read_workload_file(path: str | Path, parse_float: Callable[[str], float] | None = None
                       ) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
    """The document, its ``profiles`` and its ``jobs``; a WorkloadError saying what is wrong
    (without the path, which callers name as they see it).  parse_float: as json.load's (the
    emulator reads numbers as Batsim does)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f, parse_float=parse_float)
    except OSError as exc:
        raise WorkloadError(f"cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise WorkloadError(not_utf8(exc)) from None
    except ValueError as exc:       # JSONDecodeError, or an integer of more than 4300 digits
        raise WorkloadError(f"invalid JSON ({exc})") from None
    except RecursionError:
        raise WorkloadError(f"JSON nested too deep for Python's parser (about {sys.getrecursionlimit()} levels "
                            "at most)") from None
    if not isinstance(data, dict):
        raise WorkloadError("the top level must be a JSON object")
    # (a missing 'jobs' and ids Batsim splits badly are refused by the emulator's reader, as Batsim does)
    profiles, jobs = data.get("profiles", {}), data.get("jobs", [])
    if not isinstance(profiles, dict) or not isinstance(jobs, list):
        raise WorkloadError("'profiles' must be an object and 'jobs' a list")
    return data, profiles, jobs
