"""Upgrade Batsim 3 (and older) workload JSON files to Batsim 4 names.

Batsim 4 renamed the SimGrid-MSG era profile types; everything else in a
workload is unchanged. Unknown types are left alone but reported, so the user
sees them before Batsim rejects the file.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..textfiles import write_whole
from ..models.document import NO_NAN, WorkloadError, non_finite, read_workload_file
from ..models.profiles import BATSIM4_PROFILE_TYPES, PROFILE_TYPE_RENAMES


def upgrade_workload(data: dict, source: str = "<workload>") -> tuple[dict, list[str]]:
    """Return an upgraded copy of ``data`` and the list of changes/warnings."""
    if not isinstance(data, dict) or not isinstance(data.get("profiles", {}), dict):
        raise WorkloadError(f"{source}: top level must be an object with a 'profiles' object")
    if not isinstance(data.get("jobs", []), list):
        raise WorkloadError(f"{source}: 'jobs' must be a list")
    try:
        out = json.loads(json.dumps(data, allow_nan=False))
    except ValueError:      # (json reads NaN and Infinity, which it would write back as such)
        raise WorkloadError(f"{source}: {non_finite(data)}: {NO_NAN}") from None
    changes: list[str] = []
    for name, profile in out.get("profiles", {}).items():
        if not isinstance(profile, dict) or "type" not in profile:
            raise WorkloadError(f"{source}: profiles[{name!r}] has no 'type'")
        old = profile["type"]
        new = PROFILE_TYPE_RENAMES.get(old, old)
        if new != old:
            profile["type"] = new
            changes.append(f"profiles[{name!r}].type: {old} -> {new}")
        elif new not in BATSIM4_PROFILE_TYPES:
            changes.append(f"warning: profiles[{name!r}].type {old!r} is not a Batsim 4 type")
    for index, job in enumerate(out.get("jobs", [])):
        if not isinstance(job, dict) or not {"id", "subtime", "res", "profile"} <= job.keys():
            raise WorkloadError(f"{source}: jobs[{index}] lacks one of id, subtime, res, profile")
    return out, changes


def upgrade_workload_file(src: str | Path, dst: str | Path) -> list[str]:
    try:
        data, _, _ = read_workload_file(src)
    except WorkloadError as exc:
        raise WorkloadError(f"{src}: {exc}") from None
    out, changes = upgrade_workload(data, str(src))
    write_whole(Path(dst), json.dumps(out, indent=1) + "\n")
    return changes
