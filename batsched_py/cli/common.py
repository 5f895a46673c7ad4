"""What the commands share: the policy and simulation options, --config, the time unit note and
the one-line error of a known failure."""
import argparse
import sys
from pathlib import Path
from typing import Any, Optional

from ..argtypes import count
from ..errors import BatschedError, InputError
from ..platforms.time_unit import resolve_time_unit
from ..scheduler.creation import json_object
from ..textfiles import not_utf8, os_error

#: Failures that already name what and where, printed as one line (exit status 2): the package's
#: own errors and the system's; anything else is a bug and keeps its traceback.
KNOWN_ERRORS = (BatschedError, OSError)


def error_text(exc: BaseException) -> str:
    """A known failure's line (an OSError as 'what: path')."""
    return os_error(exc) if isinstance(exc, OSError) else str(exc)


def parse_options(text: Optional[str]) -> dict[str, Any]:
    """``--config``: a JSON object given inline or as a path to a file."""
    if not text:
        return {}
    source = "--config"
    if not text.lstrip().startswith("{"):
        path = Path(text)
        if not path.is_file():
            raise InputError(f"--config {text!r} is neither a JSON object nor an existing file")
        try:
            source, text = str(path), path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"--config {text}: {not_utf8(exc)}") from None
    return json_object(text, source)


def scheduler_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheduler", required=True, help="policy name (see list-schedulers)")
    p.add_argument("--config", help="policy options: a JSON object, inline or a file path")


def simulation_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-p", "--platform", required=True, type=Path, help="SimGrid platform XML")
    p.add_argument("-w", "--workload", required=True, action="append", type=Path,
                   help="Batsim workload JSON (repeat for several workloads)")
    p.add_argument("-E", "--energy", action="store_true", help="enable the energy model and energy outputs")
    p.add_argument("--events", action="append", default=[], type=Path, help="external events file")
    p.add_argument("--mmax", type=count, default=0, help="use at most this many compute hosts (0: all)")


def time_unit(args: argparse.Namespace) -> str:
    """--time-unit, or the platform's detected one (said on stderr), or s."""
    unit, note = resolve_time_unit(args.time_unit, args.platform)
    if note:
        print(f"batsched-py {args.command}: {note}", file=sys.stderr)
    return unit


def say(line: str) -> None:
    """A library function's note or progress line, on stderr."""
    print(line, file=sys.stderr)
