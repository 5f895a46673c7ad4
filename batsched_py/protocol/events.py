"""Every event of Batsim's 4.2.1 JSON protocol, as immutable typed values.

Each class knows its wire ``TYPE``, how to read its ``data`` object
(``from_data``, strict: a wrong field raises :class:`ProtocolError` naming it)
and how to write it back (``to_data``).  Decoding then encoding any recorded
message gives an equal message.

Where Batsim 4.2.1's source differs from its documentation, the source wins:
progress entries use ``profile_name``; resource states are strings; a killed
job yields JOB_COMPLETED(COMPLETED_KILLED) *then* JOB_KILLED.
"""
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Optional

from procset import ProcSet

from . import fields as f
from .errors import ProtocolError
from .frozen import fast_init
from .intervals import format_intervals, parse_intervals
from .jobs import JobDescription, JobProgress

BATSIM = "batsim"
SCHEDULER = "scheduler"
BOTH = (BATSIM, SCHEDULER)


@dataclass(frozen=True, slots=True)
class Event:
    timestamp: float

    TYPE: ClassVar[str] = ""
    SENT_BY: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "Event":
        return cls(timestamp)

    def to_data(self) -> dict[str, Any]:
        return {}


# --- bidirectional -----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Notify(Event):
    """NOTIFY. ``kind`` is the notification type (Batsim's ``data.type``).

    Batsim sends no_more_static_job_to_submit, no_more_external_event_to_occur,
    event_machine_unavailable/available (with ``resources``) and, with
    --forward-unknown-events, external events it does not know (their fields in
    ``extra``); the scheduler sends registration_finished and continue_registration.
    """

    kind: str = ""
    resources: Optional[ProcSet] = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    TYPE: ClassVar[str] = "NOTIFY"
    SENT_BY: ClassVar[tuple[str, ...]] = BOTH

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "Notify":
        resources = data.get("resources")
        return cls(
            timestamp,
            kind=f.get(data, "type", str, where),
            resources=None if resources is None else parse_intervals(resources, f"{where}.resources"),
            extra={k: v for k, v in data.items() if k not in ("type", "resources")},
        )

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.kind}
        if self.resources is not None:
            data["resources"] = format_intervals(self.resources)
        data.update(self.extra)
        return data


@dataclass(frozen=True, slots=True)
class Query(Event):
    """QUERY: ``requests`` maps a request name (consumed_energy, estimate_waiting_time) to its arguments."""

    requests: Mapping[str, Any] = field(default_factory=dict)

    TYPE: ClassVar[str] = "QUERY"
    SENT_BY: ClassVar[tuple[str, ...]] = BOTH

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "Query":
        requests = f.get(data, "requests", dict, where)
        if not requests:
            raise ProtocolError("a QUERY needs at least one request", f"{where}.requests")
        for name, args in requests.items():
            f.require_object(args, f"{where}.requests.{name}")
        return cls(timestamp, requests=requests)

    def to_data(self) -> dict[str, Any]:
        return {"requests": dict(self.requests)}


@dataclass(frozen=True, slots=True)
class Answer(Event):
    """ANSWER to a QUERY: ``answers`` maps each request name to its result."""

    answers: Mapping[str, Any] = field(default_factory=dict)

    TYPE: ClassVar[str] = "ANSWER"
    SENT_BY: ClassVar[tuple[str, ...]] = BOTH

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "Answer":
        if "consumed_energy" in data:
            f.number(data, "consumed_energy", where)
        return cls(timestamp, answers=dict(data))

    @property
    def consumed_energy(self) -> Optional[float]:
        return self.answers.get("consumed_energy")

    def to_data(self) -> dict[str, Any]:
        return dict(self.answers)


# --- Batsim to scheduler -----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """One entry of SIMULATION_BEGINS' compute_resources / storage_resources."""

    id: int
    name: str
    state: str
    properties: Mapping[str, str] = field(default_factory=dict)
    zone_properties: Optional[Mapping[str, str]] = None

    @classmethod
    def from_data(cls, data: Any, where: str) -> "ResourceInfo":
        data = f.require_object(data, where)
        return cls(
            id=f.get(data, "id", int, where),
            name=f.get(data, "name", str, where),
            state=f.get(data, "state", str, where),
            properties=f.string_map(data, "properties", where, {}),
            zone_properties=f.string_map(data, "zone_properties", where, None),
        )

    def to_data(self) -> dict[str, Any]:
        data = {"id": self.id, "name": self.name, "state": self.state, "properties": dict(self.properties)}
        if self.zone_properties is not None:
            data["zone_properties"] = dict(self.zone_properties)
        return data


_BEGIN_KEYS = ("nb_resources", "nb_compute_resources", "nb_storage_resources", "allow_compute_sharing",
               "allow_storage_sharing", "config", "compute_resources", "storage_resources", "workloads",
               "profiles")


@dataclass(frozen=True, slots=True)
class SimulationBegins(Event):
    nb_resources: int = 0
    nb_compute_resources: int = 0
    nb_storage_resources: int = 0
    allow_compute_sharing: bool = False
    allow_storage_sharing: bool = True
    config: Mapping[str, Any] = field(default_factory=dict)
    compute_resources: tuple[ResourceInfo, ...] = ()
    storage_resources: Optional[tuple[ResourceInfo, ...]] = None
    workloads: Optional[Mapping[str, str]] = None
    profiles: Optional[Mapping[str, Mapping[str, Any]]] = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    TYPE: ClassVar[str] = "SIMULATION_BEGINS"
    SENT_BY: ClassVar[tuple[str, ...]] = (BATSIM,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "SimulationBegins":
        compute = tuple(ResourceInfo.from_data(r, f"{where}.compute_resources[{i}]")
                        for i, r in enumerate(f.get(data, "compute_resources", list, where)))
        # Batsim numbers compute resources 0..n-1 in order (storage ones come after); schedulers
        # index hosts by id, so anything else would silently mix hosts up.
        for i, r in enumerate(compute):
            if r.id != i:
                raise ProtocolError(f"compute resource {r.name!r} has id {r.id}, expected {i} (Batsim numbers "
                                    f"compute resources 0..{len(compute) - 1} in order)",
                                    f"{where}.compute_resources[{i}].id")
        nb_compute = f.get(data, "nb_compute_resources", int, where)
        if nb_compute != len(compute):
            raise ProtocolError(f"nb_compute_resources is {nb_compute} but compute_resources lists "
                                f"{len(compute)}", f"{where}.nb_compute_resources")
        storage = f.get(data, "storage_resources", list, where, None)
        return cls(
            timestamp,
            nb_resources=f.get(data, "nb_resources", int, where),
            nb_compute_resources=nb_compute,
            nb_storage_resources=f.get(data, "nb_storage_resources", int, where, 0),
            allow_compute_sharing=f.get(data, "allow_compute_sharing", bool, where, False),
            allow_storage_sharing=f.get(data, "allow_storage_sharing", bool, where, True),
            config=f.get(data, "config", dict, where, {}),
            compute_resources=compute,
            storage_resources=None if storage is None else tuple(
                ResourceInfo.from_data(r, f"{where}.storage_resources[{i}]") for i, r in enumerate(storage)),
            workloads=f.get(data, "workloads", dict, where, None),
            profiles=f.get(data, "profiles", dict, where, None),
            extra={k: v for k, v in data.items() if k not in _BEGIN_KEYS},
        )

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "nb_resources": self.nb_resources,
            "nb_compute_resources": self.nb_compute_resources,
            "nb_storage_resources": self.nb_storage_resources,
            "allow_compute_sharing": self.allow_compute_sharing,
            "allow_storage_sharing": self.allow_storage_sharing,
            "config": dict(self.config),
            "compute_resources": [r.to_data() for r in self.compute_resources],
        }
        if self.storage_resources is not None:
            data["storage_resources"] = [r.to_data() for r in self.storage_resources]
        if self.workloads is not None:
            data["workloads"] = dict(self.workloads)
        if self.profiles is not None:
            data["profiles"] = dict(self.profiles)
        data.update(self.extra)
        return data


@dataclass(frozen=True, slots=True)
class SimulationEnds(Event):
    TYPE: ClassVar[str] = "SIMULATION_ENDS"
    SENT_BY: ClassVar[tuple[str, ...]] = (BATSIM,)


@dataclass(frozen=True, slots=True)
class JobSubmitted(Event):
    """JOB_SUBMITTED; ``profile`` is present only with --forward-profiles-on-submission."""

    job_id: str = ""
    job: Optional[JobDescription] = None
    profile: Optional[Mapping[str, Any]] = None

    TYPE: ClassVar[str] = "JOB_SUBMITTED"
    SENT_BY: ClassVar[tuple[str, ...]] = (BATSIM,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "JobSubmitted":
        job, job_id = data.get("job"), data.get("job_id")
        if job_id.__class__ is str and len(data) == 2 and job.__class__ is dict:
            # (the common case: a job and no forwarded profile)
            return cls(timestamp, job_id, JobDescription.from_data(job, f"{where}.job"), None)
        return cls(
            timestamp,
            job_id=f.get(data, "job_id", str, where),
            job=None if job is None else JobDescription.from_data(job, f"{where}.job"),
            profile=f.get(data, "profile", dict, where, None),
        )

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"job_id": self.job_id}
        if self.job is not None:
            data["job"] = self.job.to_data()
        if self.profile is not None:
            data["profile"] = dict(self.profile)
        return data


JOB_STATES = ("NOT_SUBMITTED", "SUBMITTED", "RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
              "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "REJECTED")
_JOB_STATE_SET = frozenset(JOB_STATES)


def _job_state(data: Mapping[str, Any], where: str) -> str:
    state = f.get(data, "job_state", str, where)
    if state not in JOB_STATES:
        raise ProtocolError(f"unknown job state {state!r} (expected one of {', '.join(JOB_STATES)})",
                            f"{where}.job_state")
    return state


@dataclass(frozen=True, slots=True)
class JobCompleted(Event):
    job_id: str = ""
    job_state: str = "COMPLETED_SUCCESSFULLY"
    return_code: int = 0
    alloc: ProcSet = field(default_factory=ProcSet)
    kill_reason: Optional[str] = None

    TYPE: ClassVar[str] = "JOB_COMPLETED"
    SENT_BY: ClassVar[tuple[str, ...]] = (BATSIM,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "JobCompleted":
        job_id, state, code, alloc = data.get("job_id"), data.get("job_state"), data.get("return_code"), data.get("alloc")
        if (job_id.__class__ is str and state.__class__ is str and state in _JOB_STATE_SET and code.__class__ is int
                and alloc.__class__ is str and "kill_reason" not in data):
            # (the common case, checked inline; the general reads below name any fault)
            return cls(timestamp, job_id, state, code, parse_intervals(alloc, f"{where}.alloc"), None)
        return cls(
            timestamp,
            job_id=f.get(data, "job_id", str, where),
            job_state=_job_state(data, where),
            return_code=f.get(data, "return_code", int, where),
            alloc=parse_intervals(f.get(data, "alloc", str, where), f"{where}.alloc"),
            kill_reason=f.get(data, "kill_reason", str, where, None),
        )

    @property
    def succeeded(self) -> bool:
        return self.job_state == "COMPLETED_SUCCESSFULLY"

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"job_id": self.job_id, "job_state": self.job_state,
                                "return_code": self.return_code}
        if self.kill_reason is not None:
            data["kill_reason"] = self.kill_reason
        data["alloc"] = format_intervals(self.alloc)
        return data


@dataclass(frozen=True, slots=True)
class JobKilled(Event):
    """JOB_KILLED acknowledging a KILL_JOB; jobs that ended before the kill have no progress entry."""

    job_ids: tuple[str, ...] = ()
    job_progress: Mapping[str, JobProgress] = field(default_factory=dict)

    TYPE: ClassVar[str] = "JOB_KILLED"
    SENT_BY: ClassVar[tuple[str, ...]] = (BATSIM,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "JobKilled":
        progress = f.get(data, "job_progress", dict, where, {})
        return cls(
            timestamp,
            job_ids=f.string_list(data, "job_ids", where),
            job_progress={job_id: JobProgress.from_data(p, f"{where}.job_progress.{job_id}")
                          for job_id, p in progress.items()},
        )

    def to_data(self) -> dict[str, Any]:
        return {"job_ids": list(self.job_ids),
                "job_progress": {k: p.to_data() for k, p in self.job_progress.items()}}


def _pstate(data: Mapping[str, Any], where: str) -> str:
    """A pstate number as a string of ASCII digits (``str.isdigit`` alone lets "²" through to ``int``)."""
    state = f.get(data, "state", str, where)
    if not (state.isascii() and state.isdigit()):
        raise ProtocolError(f"state must be a pstate number, got {state[:40]!r}", f"{where}.state")
    return state


@dataclass(frozen=True, slots=True)
class ResourceStateChanged(Event):
    resources: ProcSet = field(default_factory=ProcSet)
    state: str = "0"

    TYPE: ClassVar[str] = "RESOURCE_STATE_CHANGED"
    SENT_BY: ClassVar[tuple[str, ...]] = (BATSIM,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "ResourceStateChanged":
        return cls(timestamp, resources=parse_intervals(f.get(data, "resources", str, where),
                                                        f"{where}.resources"),
                   state=_pstate(data, where))

    def to_data(self) -> dict[str, Any]:
        return {"resources": format_intervals(self.resources), "state": self.state}


@dataclass(frozen=True, slots=True)
class RequestedCall(Event):
    TYPE: ClassVar[str] = "REQUESTED_CALL"
    SENT_BY: ClassVar[tuple[str, ...]] = (BATSIM,)


# --- scheduler to Batsim -----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ExecuteJob(Event):
    """EXECUTE_JOB; ``mapping`` (executor -> allocation rank) and storage/IO extras are optional."""

    job_id: str = ""
    alloc: ProcSet = field(default_factory=ProcSet)
    mapping: Optional[Mapping[str, Any]] = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    TYPE: ClassVar[str] = "EXECUTE_JOB"
    SENT_BY: ClassVar[tuple[str, ...]] = (SCHEDULER,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "ExecuteJob":
        alloc = parse_intervals(f.get(data, "alloc", str, where), f"{where}.alloc")
        if not alloc:
            raise ProtocolError("empty allocation", f"{where}.alloc")
        return cls(timestamp, job_id=f.get(data, "job_id", str, where), alloc=alloc,
                   mapping=f.get(data, "mapping", dict, where, None),
                   extra={k: v for k, v in data.items() if k not in ("job_id", "alloc", "mapping")})

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"job_id": self.job_id, "alloc": format_intervals(self.alloc)}
        if self.mapping is not None:
            data["mapping"] = dict(self.mapping)
        data.update(self.extra)
        return data


@dataclass(frozen=True, slots=True)
class RejectJob(Event):
    job_id: str = ""

    TYPE: ClassVar[str] = "REJECT_JOB"
    SENT_BY: ClassVar[tuple[str, ...]] = (SCHEDULER,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "RejectJob":
        return cls(timestamp, job_id=f.get(data, "job_id", str, where))

    def to_data(self) -> dict[str, Any]:
        return {"job_id": self.job_id}


@dataclass(frozen=True, slots=True)
class KillJob(Event):
    job_ids: tuple[str, ...] = ()

    TYPE: ClassVar[str] = "KILL_JOB"
    SENT_BY: ClassVar[tuple[str, ...]] = (SCHEDULER,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "KillJob":
        job_ids = f.string_list(data, "job_ids", where)
        if not job_ids:
            raise ProtocolError("KILL_JOB needs at least one job id", f"{where}.job_ids")
        return cls(timestamp, job_ids=job_ids)

    def to_data(self) -> dict[str, Any]:
        return {"job_ids": list(self.job_ids)}


@dataclass(frozen=True, slots=True)
class CallMeLater(Event):
    """CALL_ME_LATER: be woken by a REQUESTED_CALL at simulation time ``at``."""

    at: float = 0.0

    TYPE: ClassVar[str] = "CALL_ME_LATER"
    SENT_BY: ClassVar[tuple[str, ...]] = (SCHEDULER,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "CallMeLater":
        return cls(timestamp, at=f.number(data, "timestamp", where))

    def to_data(self) -> dict[str, Any]:
        return {"timestamp": self.at}


@dataclass(frozen=True, slots=True)
class RegisterJob(Event):
    job_id: str = ""
    job: Optional[JobDescription] = None

    TYPE: ClassVar[str] = "REGISTER_JOB"
    SENT_BY: ClassVar[tuple[str, ...]] = (SCHEDULER,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "RegisterJob":
        job_id = f.get(data, "job_id", str, where)
        if "!" not in job_id:
            raise ProtocolError(f"job id {job_id!r} must be WORKLOAD!NAME", f"{where}.job_id")
        job = data.get("job")
        return cls(timestamp, job_id=job_id,
                   job=None if job is None else JobDescription.from_data(job, f"{where}.job"))

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"job_id": self.job_id}
        if self.job is not None:
            data["job"] = self.job.to_data()
        return data


@dataclass(frozen=True, slots=True)
class RegisterProfile(Event):
    workload_name: str = ""
    profile_name: str = ""
    profile: Mapping[str, Any] = field(default_factory=dict)

    TYPE: ClassVar[str] = "REGISTER_PROFILE"
    SENT_BY: ClassVar[tuple[str, ...]] = (SCHEDULER,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "RegisterProfile":
        profile = f.get(data, "profile", dict, where)
        f.get(profile, "type", str, f"{where}.profile")
        return cls(timestamp, workload_name=f.get(data, "workload_name", str, where),
                   profile_name=f.get(data, "profile_name", str, where), profile=profile)

    def to_data(self) -> dict[str, Any]:
        return {"workload_name": self.workload_name, "profile_name": self.profile_name,
                "profile": dict(self.profile)}


@dataclass(frozen=True, slots=True)
class SetResourceState(Event):
    """SET_RESOURCE_STATE: move ``resources`` to power state ``state`` (a pstate number, as a string)."""

    resources: ProcSet = field(default_factory=ProcSet)
    state: str = "0"

    TYPE: ClassVar[str] = "SET_RESOURCE_STATE"
    SENT_BY: ClassVar[tuple[str, ...]] = (SCHEDULER,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "SetResourceState":
        resources = parse_intervals(f.get(data, "resources", str, where), f"{where}.resources")
        if not resources:
            raise ProtocolError("empty resource set", f"{where}.resources")
        return cls(timestamp, resources=resources, state=_pstate(data, where))

    def to_data(self) -> dict[str, Any]:
        return {"resources": format_intervals(self.resources), "state": self.state}


@dataclass(frozen=True, slots=True)
class SetJobMetadata(Event):
    job_id: str = ""
    metadata: str = ""

    TYPE: ClassVar[str] = "SET_JOB_METADATA"
    SENT_BY: ClassVar[tuple[str, ...]] = (SCHEDULER,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "SetJobMetadata":
        return cls(timestamp, job_id=f.get(data, "job_id", str, where),
                   metadata=f.get(data, "metadata", str, where))

    def to_data(self) -> dict[str, Any]:
        return {"job_id": self.job_id, "metadata": self.metadata}


@dataclass(frozen=True, slots=True)
class ChangeJobState(Event):
    job_id: str = ""
    job_state: str = ""
    kill_reason: Optional[str] = None

    TYPE: ClassVar[str] = "CHANGE_JOB_STATE"
    SENT_BY: ClassVar[tuple[str, ...]] = (SCHEDULER,)

    @classmethod
    def from_data(cls, timestamp: float, data: Mapping[str, Any], where: str) -> "ChangeJobState":
        return cls(timestamp, job_id=f.get(data, "job_id", str, where), job_state=_job_state(data, where),
                   kill_reason=f.get(data, "kill_reason", str, where, None))

    def to_data(self) -> dict[str, Any]:
        data = {"job_id": self.job_id, "job_state": self.job_state}
        if self.kill_reason is not None:
            data["kill_reason"] = self.kill_reason
        return data


EVENT_TYPES: dict[str, type[Event]] = {
    cls.TYPE: cls for cls in (
        Notify, Query, Answer, SimulationBegins, SimulationEnds, JobSubmitted, JobCompleted, JobKilled,
        ResourceStateChanged, RequestedCall, ExecuteJob, RejectJob, KillJob, CallMeLater, RegisterJob,
        RegisterProfile, SetResourceState, SetJobMetadata, ChangeJobState)
}
_FAST_INIT: tuple[type[Event], ...] = (Event, *EVENT_TYPES.values())
for _cls in _FAST_INIT:
    fast_init(_cls)
del _cls, _FAST_INIT
