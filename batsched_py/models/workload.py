"""Batsim workload JSON files -> jobs and profiles, named w0, w1, ... in command-line order.

Job ids become ``WORKLOAD!NAME``; the description sent in JOB_SUBMITTED is the job's JSON
object as written in the file, with ``id`` replaced by the full id (Batsim forwards it as is,
extra fields included).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .errors import EmulatorError
from .json_numbers import rapidjson_double
from ..protocol import JobDescription
from .document import NO_NAN, WorkloadError, non_finite, read_workload_file
from .profiles import Profile, expand_tasks, parse_profile, unsupported_part

__all__ = ["Job", "Workload", "load_workload", "make_job", "unsupported_jobs_error"]


@dataclass(slots=True, eq=False)
class Job:
    id: str                      # WORKLOAD!NAME
    workload: str
    name: str
    subtime: float
    res: int
    walltime: Optional[float]    # None: no walltime (-1 in the file)
    profile: str
    desc: JobDescription         # JOB_SUBMITTED's "job" object, built once at load time
    tasks: Any = ()              # [(Task, path)], set at execution
    tasks_plan: Any = None       # the engine's plan for its profile, set at execution
    state: str = "NOT_SUBMITTED"
    start: float = -1.0
    finish: float = -1.0
    alloc: Any = None
    return_code: int = 0
    metadata: str = ""
    token: int = 0               # invalidates scheduled end events after a kill
    kill_requested: bool = False
    energy: Any = -1.0           # J, -1 without -E; with it a long double (machines.job_ended)
    # While running (see the engine): walltime left as Batsim counts it (-1: none), the task
    # being executed, when it started, and its SimGrid actions (cancelled on a kill).
    remaining: float = -1.0
    task_index: int = 0
    task_start: float = 0.0
    actions: Any = ()
    ended: bool = False          # its actor ended: its hosts are freed (see the engine)


@dataclass(slots=True)
class Workload:
    name: str
    path: str                    # as given on the command line
    nb_res: int
    jobs: list[Job]
    profiles: dict[str, Profile]
    deleted: set[str] = field(default_factory=set)   # profiles Batsim deleted (see the engine)

    def profiles_json(self) -> dict[str, Any]:
        """SIMULATION_BEGINS' profiles: Batsim lists those its jobs use (composed ones included)."""
        used: dict[str, Any] = {}
        todo = [j.profile for j in self.jobs]
        while todo:
            name = todo.pop()
            if name not in used and name in self.profiles:
                used[name] = dict(self.profiles[name].data)
                todo.extend(self.profiles[name].seq)
        return {name: used[name] for name in self.profiles if name in used}


class _Invalid(Exception):
    """A bad job object; the caller prefixes where it is (built only on error)."""


_INF = float("inf")
_JOB_KEYS = frozenset(("id", "subtime", "res", "profile", "walltime"))


_NUMBER = (int, float)


def _job(workload: Workload, raw: Any, full_id: Optional[str],
         _number=_NUMBER, _inf=_INF, _keys=_JOB_KEYS, _desc=JobDescription, _new=Job) -> Job:
    """One job object checked; raises _Invalid. Exact-class tests first: JSON gives exact types
    (bool, a subclass of int, is refused), and this runs once per job of traces of 10^5 jobs
    (hence the constants bound as defaults)."""
    if raw.__class__ is not dict:
        raise _Invalid("a job must be a JSON object")
    get = raw.get
    jid = get("id")
    if jid.__class__ is not str and jid.__class__ is not int:
        raise _Invalid(f"job 'id' must be a string or an integer, got {jid!r}")
    wname = workload.name
    name = _job_name(str(jid), wname) if full_id is None else full_id.split("!", 1)[1]
    full = wname + "!" + name
    if "subtime" not in raw:
        raise _Invalid(f"job {full!r} has no 'subtime' field (Batsim 4.2.1 aborts)")
    res = get("res")
    if res.__class__ is not int or res < 1:
        raise _Invalid(f"job {full!r}: 'res' must be a positive integer, got {res!r}")
    subtime = get("subtime", 0)
    if subtime.__class__ not in _number or not 0 <= subtime < _inf:
        raise _Invalid(f"job {full!r}: 'subtime' must be a finite non-negative number, got {subtime!r}")
    walltime = get("walltime", -1)
    if walltime.__class__ not in _number or (walltime != -1 and not 0 < walltime < _inf):
        raise _Invalid(f"job {full!r}: 'walltime' must be a positive finite number or -1, got {walltime!r}")
    profile = get("profile")
    if profile.__class__ is not str:
        raise _Invalid(f"job {full!r}: 'profile' must be a string")
    used = workload.profiles.get(profile)
    if used is None:
        raise _Invalid(f"job {full!r}: unknown profile {profile!r} in workload {wname!r}")
    if used.type == "parallel" and len(used.data["cpu"]) != res:
        raise _Invalid(f"job {full!r} requests {res} hosts but its parallel profile {profile!r} has "
                       f"{len(used.data['cpu'])} cpu entries, one per host: Batsim 4.2.1 aborts")
    # What JobDescription.from_data would give for the file's object with the full id (checked above).
    if len(raw) > 5 or "subtime" not in raw or "walltime" not in raw:
        extra = {k: v for k, v in raw.items() if k not in _keys}
        bad = non_finite(extra)
        if bad is not None:
            raise _Invalid(f"job {full!r}: {bad}: {NO_NAN}")
    else:
        extra = {}
    desc = _desc(full, res, profile, get("subtime"), get("walltime"), extra)
    return _new(full, wname, name, float(subtime), res, None if walltime == -1 else float(walltime), profile, desc)


_BANGS = re.compile("!+")


def _job_name(text: str, wname: str) -> str:
    """The name Batsim 4.2.1 gives a workload file's job of id ``text``: an id in which the
    workload's name appears (anywhere) is split at runs of '!' and must be WORKLOAD!NAME; any
    other id is the name itself, which must not contain a '!'."""
    if wname in text:
        parts = _BANGS.split(text)
        if len(parts) != 2:
            raise _Invalid(f"job id {text!r}: Batsim 4.2.1 aborts: an id holding the workload's name "
                           f"{wname!r} must be two '!'-separated parts, WORKLOAD!NAME, the name without '!'")
        if parts[0] != wname:
            raise _Invalid(f"job id {text!r} names workload {parts[0]!r}, not {wname!r}: Batsim 4.2.1 "
                           "files the job under a workload that does not exist")
        return parts[1]
    if "!" in text:
        raise _Invalid(f"job id {text!r}: Batsim 4.2.1 aborts: a job name must not contain a '!'")
    return text


def _batsim_top_level(data: dict, where: str) -> int:
    """Batsim 4.2.1's checks of a workload file's top level, in its order; returns nb_res."""
    if "nb_res" not in data:
        raise EmulatorError(f"{where}: the 'nb_res' field is missing (Batsim 4.2.1 aborts)")
    nb_res = nb_res_of(data, where)
    for key, kind in (("profiles", "object"), ("jobs", "array")):
        if key not in data:
            raise EmulatorError(f"{where}: the '{key}' {kind} is missing (Batsim 4.2.1 aborts)")
    return nb_res


def make_job(workload: Workload, raw: Any, where: str, *, full_id: Optional[str] = None) -> Job:
    """Check one job object of ``workload`` (static or registered by the scheduler)."""
    try:
        return _job(workload, raw, full_id)
    except _Invalid as exc:
        raise EmulatorError(f"{where}: {exc}") from None


def unsupported_jobs_error(where: str, profile: Profile, jobs: list[str]) -> EmulatorError:
    """The error for jobs that use a profile the emulator cannot model (see profiles.py)."""
    shown = ", ".join(jobs[:5]) + (f" and {len(jobs) - 5} more" if len(jobs) > 5 else "")
    return EmulatorError(f"{where}: profile {profile.name!r} (type {profile.type!r}) needs "
                         f"{profile.unsupported}, which the emulator does not model; used by job"
                         f"{'s' if len(jobs) > 1 else ''} {shown}; run this workload with real Batsim")


def nb_res_of(data: dict, where: str) -> int:
    """A workload document's ``nb_res``, which Batsim requires: a positive integer."""
    nb_res = data.get("nb_res")
    if isinstance(nb_res, bool) or not isinstance(nb_res, int) or nb_res < 1:
        raise EmulatorError(f"{where}: 'nb_res' must be a positive integer, got {nb_res!r}")
    return nb_res


def load_workload(path: str | Path, name: str, *, nb_hosts: int, free_network: bool = False) -> Workload:
    """Read and validate one workload file; ``nb_hosts``: compute hosts of the platform.

    free_network: the platform has no links (communications cost nothing), so profiles with
    a non-zero ``com`` can be emulated exactly.  Profiles the emulator cannot model are an
    error only when a job uses them (the error names the profile and those jobs).
    """
    where = f"workload {name} ({path})"
    try:
        data, raw_profiles, raw_jobs = read_workload_file(path, rapidjson_double)
    except WorkloadError as exc:
        raise EmulatorError(f"{where}: {exc}") from None
    wl = Workload(name, str(path), _batsim_top_level(data, where), [], {})
    for pname, praw in raw_profiles.items():
        wl.profiles[pname] = parse_profile(pname, praw, where, free_network=free_network)
        field = non_finite(praw)      # (forwarded as it is with --forward-profiles-on-submission)
        if field is not None:
            raise EmulatorError(f"{where}: profile {pname!r}: {field}: {NO_NAN}")
    for pname, p in wl.profiles.items():
        if p.type == "composed":
            expand_tasks(p, wl.profiles, where)   # unknown sub-profiles and cycles, early
    blocked = {pname: bad for pname, p in wl.profiles.items() if (bad := unsupported_part(p, wl.profiles))}
    seen: set[str] = set()
    jobs = wl.jobs
    for i, raw in enumerate(raw_jobs):
        try:
            job = _job(wl, raw, None)
        except _Invalid as exc:
            raise EmulatorError(f"{where}: jobs[{i}]: {exc}") from None
        raw_jobs[i] = None            # the parsed object is no longer needed: lower peak memory
        if job.id in seen:
            raise EmulatorError(f"{where}: jobs[{i}]: duplicate job id {job.id!r}")
        if job.res > nb_hosts:
            raise EmulatorError(f"{where}: job {job.id!r} requests {job.res} hosts but the platform "
                                f"has {nb_hosts} compute hosts")
        seen.add(job.id)
        jobs.append(job)
    if blocked:
        users: dict[str, list[str]] = {}
        for job in jobs:
            bad = blocked.get(job.profile)
            if bad is not None:
                users.setdefault(bad.name, []).append(job.id)
        for pname, ids in users.items():
            raise unsupported_jobs_error(where, wl.profiles[pname], ids)
    return wl
