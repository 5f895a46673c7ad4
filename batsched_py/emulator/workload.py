"""Batsim workload JSON files -> jobs and profiles, named w0, w1, ... in command-line order.

Job ids become ``WORKLOAD!NAME``; the description sent in JOB_SUBMITTED is the job's JSON
object as written in the file, with ``id`` replaced by the full id (Batsim forwards it as is,
extra fields included).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .errors import EmulatorError
from .profiles import Profile, Task, expand_tasks, parse_profile

__all__ = ["Job", "Workload", "load_workload", "make_job"]


@dataclass(slots=True)
class Job:
    id: str                      # WORKLOAD!NAME
    workload: str
    name: str
    subtime: float
    res: int
    walltime: Optional[float]    # None: no walltime (-1 in the file)
    profile: str
    description: dict[str, Any]  # JOB_SUBMITTED's "job" object
    tasks: list = field(default_factory=list)   # [(Task, path)], filled at first execution
    state: str = "NOT_SUBMITTED"
    start: float = -1.0
    finish: float = -1.0
    alloc: Any = None
    return_code: int = 0
    metadata: str = ""
    token: int = 0               # invalidates scheduled end events after a kill
    kill_requested: bool = False
    energy: float = -1.0
    # While running (see the engine): walltime left as Batsim counts it (-1: none), the task
    # being executed, when it started, and its SimGrid actions (cancelled on a kill).
    remaining: float = -1.0
    task_index: int = 0
    task_start: float = 0.0
    actions: Any = ()


@dataclass(slots=True)
class Workload:
    name: str
    path: str                    # as given on the command line
    nb_res: int
    jobs: list[Job]
    profiles: dict[str, Profile]

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

    def tasks_of(self, job: Job) -> list[tuple[Task, tuple]]:
        return expand_tasks(self.profiles[job.profile], self.profiles, f"job {job.id}")


def make_job(workload: Workload, raw: Any, where: str, *, full_id: Optional[str] = None) -> Job:
    """Check one job object of ``workload`` (static or registered by the scheduler)."""
    if not isinstance(raw, dict):
        raise EmulatorError(f"{where}: a job must be a JSON object")
    jid = raw.get("id")
    if isinstance(jid, bool) or not isinstance(jid, (str, int)):
        raise EmulatorError(f"{where}: job 'id' must be a string or an integer, got {jid!r}")
    name = str(jid)
    if full_id is not None:
        name = full_id.split("!", 1)[1]
    elif "!" in name:
        name = name.split("!", 1)[1]
    full = f"{workload.name}!{name}"
    where = f"{where}: job {full!r}"
    res = raw.get("res")
    if isinstance(res, bool) or not isinstance(res, int) or res < 1:
        raise EmulatorError(f"{where}: 'res' must be a positive integer, got {res!r}")
    subtime = raw.get("subtime", 0)
    if isinstance(subtime, bool) or not isinstance(subtime, (int, float)) or subtime < 0:
        raise EmulatorError(f"{where}: 'subtime' must be a non-negative number, got {subtime!r}")
    walltime = raw.get("walltime", -1)
    if isinstance(walltime, bool) or not isinstance(walltime, (int, float)):
        raise EmulatorError(f"{where}: 'walltime' must be a number, got {walltime!r}")
    if walltime != -1 and walltime <= 0:
        raise EmulatorError(f"{where}: 'walltime' must be positive or -1, got {walltime!r}")
    profile = raw.get("profile")
    if not isinstance(profile, str):
        raise EmulatorError(f"{where}: 'profile' must be a string")
    if profile not in workload.profiles:
        raise EmulatorError(f"{where}: unknown profile {profile!r} in workload {workload.name!r}")
    description = dict(raw)
    description["id"] = full
    return Job(full, workload.name, name, float(subtime), res,
               None if walltime == -1 else float(walltime), profile, description)


def load_workload(path: str | Path, name: str, *, nb_hosts: int, free_network: bool = False) -> Workload:
    """Read and validate one workload file; ``nb_hosts``: compute hosts of the platform.

    free_network: the platform has no links (communications cost nothing), so profiles with
    a non-zero ``com`` can be emulated exactly.
    """
    where = f"workload {name} ({path})"
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as exc:
        raise EmulatorError(f"{where}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise EmulatorError(f"{where}: invalid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise EmulatorError(f"{where}: the top level must be a JSON object")
    nb_res = data.get("nb_res", nb_hosts)
    if isinstance(nb_res, bool) or not isinstance(nb_res, int) or nb_res < 1:
        raise EmulatorError(f"{where}: 'nb_res' must be a positive integer")
    raw_profiles = data.get("profiles", {})
    raw_jobs = data.get("jobs", [])
    if not isinstance(raw_profiles, dict) or not isinstance(raw_jobs, list):
        raise EmulatorError(f"{where}: 'profiles' must be an object and 'jobs' a list")
    wl = Workload(name, str(path), nb_res, [], {})
    for pname, praw in raw_profiles.items():
        wl.profiles[pname] = parse_profile(pname, praw, where, free_network=free_network)
    for pname, p in wl.profiles.items():
        if p.type == "composed":
            expand_tasks(p, wl.profiles, where)   # unknown sub-profiles and cycles, early
    seen: set[str] = set()
    for i, raw in enumerate(raw_jobs):
        job = make_job(wl, raw, f"{where}: jobs[{i}]")
        if job.id in seen:
            raise EmulatorError(f"{where}: jobs[{i}]: duplicate job id {job.id!r}")
        if job.res > nb_hosts:
            raise EmulatorError(f"{where}: job {job.id!r} requests {job.res} hosts but the platform "
                                f"has {nb_hosts} compute hosts")
        seen.add(job.id)
        wl.jobs.append(job)
    return wl
