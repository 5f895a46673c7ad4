"""Days that start with every node off, on Batsim 4.2.1 (which cannot start a host asleep).

The environments switch the idle nodes off at t=0 and simulate the day's workload shifted by the
switch-off time (the warm-up): every node is off when the day's first job can arrive, and figures
count from then.
"""
from __future__ import annotations

import json
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Optional

from ..models.platform import load_platform
from .core import EnvError


def switch_off_time(platform: Path) -> float:
    """How long the slowest compute host takes to switch off (time units), from its sleep pstates."""
    longest = 0.0
    for host in load_platform(platform, energy=True).hosts:
        if host.id >= 0:
            for spec in host.sleep_pstates:
                longest = max(longest, host.switch_off_time(spec))
    return longest


def shifted_workload(source: Path, shift: float, folder: Path) -> Path:
    """A copy of a Batsim workload whose jobs are submitted ``shift`` later (written once)."""
    target = folder / f"{source.stem}+{shift:g}{source.suffix}"
    if not target.exists():
        try:
            doc = json.loads(source.read_text())
            for job in doc["jobs"]:
                job["subtime"] = float(job["subtime"]) + shift
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EnvError(f"workload {source}: cannot read its jobs' submission times ({exc})") from None
        part = target.with_suffix(".part")
        part.write_text(json.dumps(doc))
        part.replace(target)
    return target


class ShiftedDays:
    """The day files an environment simulates: shifted by ``shift`` (none: the files themselves),
    in a temporary folder that goes with this object."""

    def __init__(self, shift: float):
        self.shift = shift
        self._folder: Optional[Path] = None

    def __call__(self, workload: Path) -> Path:
        if not self.shift:
            return workload
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="batsched-py-days-"))
            weakref.finalize(self, shutil.rmtree, self._folder, True)
        return shifted_workload(workload, self.shift, self._folder)
