"""Batsim 4.2.1 profiles -> what the emulator needs to run a job: a list of tasks.

Supported types: ``delay``, ``parallel_homogeneous``, ``parallel_homogeneous_total``,
``parallel`` (cpu vector, zero com matrix) and ``composed`` (``seq`` + ``repeat``).
Every profile may carry ``ret`` (the job's return code; non-zero means COMPLETED_FAILED).
Profiles that need a network, storage, MPI or usage traces cannot be emulated without a
flow model: they load (marked ``unsupported``), and a job using one, directly or through a
composed profile, is refused with an error naming the profile and the jobs and pointing to
real Batsim (see :func:`unsupported_part`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .errors import EmulatorError

__all__ = ["Profile", "Task", "parse_profile", "expand_tasks", "unsupported_part", "UNSUPPORTED"]

# Types real Batsim 4.2.1 knows but which need a network/storage/trace model.
UNSUPPORTED = {
    "parallel_homogeneous_pfs": "storage (PFS) transfers",
    "data_staging": "storage transfers",
    "smpi": "SMPI (MPI traces)",
    "usage_trace": "usage traces",
    "trace_replay": "trace replay",
    "send": "inter-job messages", "recv": "inter-job messages",
    "SchedulerSend": "inter-job messages", "SchedulerRecv": "inter-job messages",
}

# Batsim 3's profile type names and their Batsim 4 names (the workload upgrade renames them), and
# Batsim 4's types.
PROFILE_TYPE_RENAMES = {
    "msg_par": "parallel",
    "msg_par_hg": "parallel_homogeneous",
    "msg_par_hg_tot": "parallel_homogeneous_total",
    "msg_par_hg_pfs": "parallel_homogeneous_pfs",
    "msg_par_hg_pfs_tiers": "parallel_homogeneous_pfs",
    "data_staging": "data_staging",
    "sequence": "composed",
}
BATSIM4_PROFILE_TYPES = {"delay", "parallel", "parallel_homogeneous",
                         "parallel_homogeneous_total", "parallel_homogeneous_pfs",
                         "composed", "data_staging", "smpi", "usage_trace",
                         "send", "recv", "scheduler_send", "scheduler_recv"}

#: Most leaf tasks one job's profile may expand to: the emulator lists them when the workload
#: loads, so a composed profile repeated billions of times is refused instead of filling memory.
MAX_TASKS = 1_000_000


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    type: str
    data: Mapping[str, Any]          # the JSON object as given (forwarded to the scheduler)
    ret: int = 0
    seq: tuple[str, ...] = ()
    repeat: int = 1
    unsupported: str = ""            # what it needs that the emulator does not model ("": none)


@dataclass(frozen=True, slots=True)
class Task:
    """One leaf task of a job. kind: 'delay' (seconds) or 'cpu' (flops per host / vector)."""
    profile: str
    kind: str
    amount: float = 0.0
    total: bool = False               # parallel_homogeneous_total: amount split among hosts
    vector: tuple[float, ...] = field(default=())   # parallel: flops per host rank


def _num(data: Mapping[str, Any], key: str, where: str) -> float:
    value: Any = data.get(key)
    if not _non_negative(value):
        raise EmulatorError(f"{where}: field {key!r} must be a non-negative number, got {value!r}")
    return float(value)


def parse_profile(name: str, data: Any, where: str, *, free_network: bool = False) -> Profile:
    """Check one profile object; ``where`` names the workload (and job) for messages.

    free_network: the platform has no links, so SimGrid moves ``com`` bytes in no time
    (then non-zero ``com`` is fine; otherwise it needs a network model and is refused).
    """
    where = f"{where}: profile {name!r}"
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise EmulatorError(f"{where}: a profile must be an object with a string 'type'")
    kind = data["type"]
    ret = data.get("ret", 0)
    if isinstance(ret, bool) or not isinstance(ret, int):
        raise EmulatorError(f"{where}: 'ret' must be an integer, got {ret!r}")
    if kind in UNSUPPORTED:
        return Profile(name, kind, data, ret, unsupported=UNSUPPORTED[kind])
    if kind == "delay":
        _num(data, "delay", where)
    elif kind in ("parallel_homogeneous", "parallel_homogeneous_total"):
        _num(data, "cpu", where)
        if data.get("com", 0) not in (0, 0.0) and not free_network:
            return Profile(name, kind, data, ret, unsupported="a network model (its 'com' is not zero)")
    elif kind == "parallel":
        cpu, com = data.get("cpu"), data.get("com", [])
        if not isinstance(cpu, list) or not cpu or not all(_non_negative(c) for c in cpu):
            raise EmulatorError(f"{where}: 'cpu' must be a non-empty list of non-negative numbers")
        if not isinstance(com, list) or not all(_non_negative(c) for c in com):
            raise EmulatorError(f"{where}: 'com' must be a list of non-negative numbers")
        if len(com) != len(cpu) ** 2:       # (as Batsim: one entry per pair of ranks)
            raise EmulatorError(f"{where}: 'com' has {len(com)} entries; {len(cpu)} cpu entries need "
                                f"{len(cpu)}x{len(cpu)} = {len(cpu) ** 2}")
        if any(c != 0 for c in com) and not free_network:
            return Profile(name, kind, data, ret, unsupported="a network model (its 'com' matrix is not zero)")
    elif kind == "composed":
        seq = data.get("seq")
        repeat = data.get("repeat", 1)
        if not isinstance(seq, list) or not seq or not all(isinstance(s, str) for s in seq):
            raise EmulatorError(f"{where}: 'seq' must be a non-empty list of profile names")
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise EmulatorError(f"{where}: 'repeat' must be a positive integer")
        return Profile(name, kind, data, ret, tuple(seq), repeat)
    elif PROFILE_TYPE_RENAMES.get(kind, kind) != kind:
        raise EmulatorError(f"{where}: {kind!r} is Batsim 3's name for {PROFILE_TYPE_RENAMES[kind]!r}: "
                            "convert the workload with 'batsched-py workload upgrade IN OUT'")
    else:
        raise EmulatorError(f"{where}: unknown profile type {kind!r} (Batsim 4.2.1 has delay, "
                            "parallel, parallel_homogeneous, parallel_homogeneous_total, composed, ...)")
    return Profile(name, kind, data, ret)


def _non_negative(value: Any) -> bool:
    """A JSON number >= 0 (not a boolean; NaN, which json reads, is not >= 0)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value >= 0


def expand_tasks(profile: Profile, profiles: Mapping[str, Profile], where: str,
                 _depth: int = 0) -> list[tuple[Task, tuple[tuple[str, int], ...]]]:
    """Leaf tasks of ``profile`` in execution order, each with its path of (composed name, index)."""
    if profile.type != "composed":
        d = profile.data
        if profile.unsupported:       # jobs running it are refused before (unsupported_part)
            task = Task(profile.name, "unsupported")
        elif profile.type == "delay":
            task = Task(profile.name, "delay", float(d["delay"]))
        elif profile.type == "parallel":
            task = Task(profile.name, "cpu", vector=tuple(float(c) for c in d["cpu"]))
        else:
            task = Task(profile.name, "cpu", float(d["cpu"]), profile.type == "parallel_homogeneous_total")
        return [(task, ())]
    if _depth > 32:
        raise EmulatorError(f"{where}: profile {profile.name!r}: composed profiles nest too deep (cycle?)")
    out = []
    for _ in range(profile.repeat):
        for i, sub in enumerate(profile.seq):
            if sub not in profiles:
                raise EmulatorError(f"{where}: profile {profile.name!r} uses unknown profile {sub!r}")
            for task, path in expand_tasks(profiles[sub], profiles, where, _depth + 1):
                out.append((task, ((profile.name, i),) + path))
        if len(out) > MAX_TASKS:
            raise EmulatorError(f"{where}: profile {profile.name!r} expands to more than {MAX_TASKS:,} tasks "
                                f"(repeat {profile.repeat:,} of {len(profile.seq)} profile(s)); the emulator "
                                "lists a job's tasks when the workload loads and refuses longer profiles")
    return out


def unsupported_part(profile: Profile, profiles: Mapping[str, Profile], _depth: int = 0) -> Profile | None:
    """The first profile ``profile`` runs (itself or, for a composed one, a sub-profile) that the
    emulator cannot model, or None."""
    if profile.unsupported:
        return profile
    if _depth > 32:
        return None                   # a cycle: expand_tasks reports it
    for sub in profile.seq:
        found = profiles.get(sub)
        if found is not None and (found := unsupported_part(found, profiles, _depth + 1)) is not None:
            return found
    return None
