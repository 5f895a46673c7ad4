"""The time unit of runs, for the units of tables and axes: the one ``run`` and ``compare``
record beside a run's outputs (``PREFIX_time_unit.json``: the unit their summary used, and the
platform it came from), else the one detected from a platform given (-p), else seconds."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Optional

from ..emulator.outputs import TIME_UNIT_SUFFIX as SUFFIX
from ..models.platform import PlatformError, load_platform
from ..platforms.time_unit import detect_time_unit, resolve_time_unit
from ..textfiles import json_fault, write_whole
from ..units import check_time_unit
from .io import MetricsInputError


def record_path(source: str | Path) -> Path:
    """Where the time unit of the run at ``source`` (a prefix, or a folder holding out_*) is kept."""
    source = Path(source)
    return source / f"out{SUFFIX}" if source.is_dir() else Path(f"{source}{SUFFIX}")


def record_time_unit(prefix: str | Path, unit: str, platform: str | Path) -> None:
    """Keep ``unit`` beside the outputs at ``prefix``, for metrics and plots to read later."""
    write_whole(Path(f"{prefix}{SUFFIX}"),
                json.dumps({"time_unit": unit, "platform": str(Path(platform).resolve())}) + "\n")


def recorded_time_unit(source: str | Path) -> Optional[str]:
    """The unit the run at ``source`` recorded; None when it recorded none (a real Batsim's run)."""
    path = record_path(source)
    if not path.is_file():
        return None
    try:
        unit = json.loads(path.read_text(encoding="utf-8"))["time_unit"]
    except (ValueError, RecursionError) as exc:
        raise MetricsInputError(f"{path}: {json_fault(exc)}") from None
    except (KeyError, TypeError):
        raise MetricsInputError(f'{path}: expected an object with a "time_unit"') from None
    try:
        return check_time_unit(unit, f"{path}: time_unit")
    except (ValueError, TypeError):
        raise MetricsInputError(f"{path}: time_unit {unit!r} is not one of s, min, h") from None


def runs_time_unit(given: Optional[str], platform: Optional[str | Path],
                   sources: Iterable[str | Path]) -> tuple[str, Optional[str]]:
    """The unit to label the runs at ``sources`` with, and a note to print when it is not s:
    ``given`` (--time-unit); else the one the runs recorded; else the one of ``platform`` (-p);
    else s.  Runs recorded in different units, or in a unit other than -p's, are refused: one
    table or axis cannot label both."""
    if platform is not None and not Path(platform).is_file():
        why = "a folder, not a platform file" if Path(platform).is_dir() else "no such file"
        raise MetricsInputError(f"-p {platform}: {why}")
    if platform is not None:         # (a platform that cannot be read tells no unit: said, not ignored)
        try:
            load_platform(platform)
        except (PlatformError, ValueError) as exc:
            raise MetricsInputError(f"-p: {exc}") from None
    if given:
        return check_time_unit(given), None
    recorded = {Path(s): u for s in sources if (u := recorded_time_unit(s)) is not None}
    units = sorted(set(recorded.values()))
    if len(units) > 1:
        first = {unit: next(s for s, u in recorded.items() if u == unit) for unit in units}
        raise MetricsInputError("the runs count time in different units: " + ", ".join(
            f"{source} in {unit}" for unit, source in first.items()) + "; --time-unit to label them all in one")
    if not units:
        return resolve_time_unit(None, platform)
    unit, source = units[0], next(iter(recorded))
    detected = detect_time_unit(platform) if platform else None
    if detected and detected[0] != unit:
        raise MetricsInputError(f"{record_path(source)} says the run counted in {unit}, but -p {platform} "
                                f"counts in {detected[0]} ({detected[1]}); --time-unit to say which")
    return unit, None if unit == "s" else (f"time unit: {unit}, as the run recorded in {record_path(source)}; "
                                           f"energies are in W·{unit}; --time-unit s to say otherwise")
