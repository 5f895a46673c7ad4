"""Whether a source's output files are one whole run: not marked incomplete, and no file left
by an earlier run at the same prefix (an energy file from an earlier ``-E`` run would otherwise
be reported as this run's energy)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterable

from .energy import energy_at
from .io import MetricsInputError, floats, output_path, read_columns

# a file last written this long before its run started is an earlier run's (mtime granularity)
SLACK_S = 2.0


def marker_path(source: str | Path) -> Path:
    source = Path(source)
    return source / "out_INCOMPLETE" if source.is_dir() else Path(f"{source}_INCOMPLETE")


def run_problems(source: str | Path) -> list[str]:
    """One line per reason not to trust ``source``'s figures (empty: none)."""
    problems = []
    marker = marker_path(source)
    if marker.exists():
        reason = marker.read_text(errors="replace").strip().splitlines()
        problems.append(f"{marker}: the run is marked incomplete ({reason[0] if reason else 'no reason given'})")
    schedule = output_path(source, "schedule")
    if schedule is None:
        return problems
    try:
        cols = read_columns(schedule, ["consumed_joules", "simulation_time"])
        joules = floats(cols, "consumed_joules", schedule)
        wall = floats(cols, "simulation_time", schedule)
    except MetricsInputError:
        return problems        # (reported where the figures are read)
    if not joules.size:
        return problems
    started = schedule.stat().st_mtime - float(wall[0]) - SLACK_S
    for kind in ("jobs", "machine_states", "consumed_energy", "pstate_changes"):
        path = output_path(source, kind)
        if path is not None and path.stat().st_mtime < started:
            problems.append(f"{path}: written before the run of {schedule} started: left by an earlier run")
    energy = output_path(source, "consumed_energy")
    if energy is not None and joules[0] == 0 and energy_at(energy) > 0:
        problems.append(f"{energy}: {energy_at(energy):g} consumed, but {schedule} says 0 J (a run without "
                        "energy): left by an earlier run")
    return list(dict.fromkeys(problems))


def refuse_untrusted(sources: Iterable[str | Path], force: bool, tool: str) -> None:
    """A MetricsInputError for the first problem of :func:`run_problems`; with ``force``, each
    problem as a warning on stderr instead."""
    for source in sources:
        for problem in run_problems(source):
            if not force:
                raise MetricsInputError(f"{problem} (--force to report on it anyway)")
            print(f"{tool}: warning: {problem}", file=sys.stderr)
