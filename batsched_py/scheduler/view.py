"""What a scheduler knows of the simulation: resources and jobs, kept up to date from events.

The view changes in exactly two ways: when Batsim reports something (an event)
and when the scheduler decides something (a decision helper).  Policies read it
and never patch it, so the bookkeeping bugs of hand-written schedulers (such as
freeing a killed job's hosts twice, once on JOB_COMPLETED and once on
JOB_KILLED) cannot happen.
"""
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterable, Iterator, Mapping, Optional

from procset import ProcSet

from ..protocol import JobDescription, ResourceInfo
from .power import PowerModel, read_power_model


def procset_of(ids: Iterable[int]) -> ProcSet:
    """A ProcSet of host ids, built from merged intervals.

    ``ProcSet(*ids)`` merges one singleton at a time: about 0.5 ms for 64 ids, which was the
    largest cost of a whole protocol round trip; this is ~25 times faster.
    """
    intervals: list[list[int]] = []
    for h in sorted(ids):
        if intervals and h <= intervals[-1][1] + 1:
            if h > intervals[-1][1]:
                intervals[-1][1] = h
        else:
            intervals.append([h, h])
    return ProcSet(*[(lo, hi) for lo, hi in intervals])


class HostState(str, Enum):
    IDLE = "idle"
    COMPUTING = "computing"
    SLEEPING = "sleeping"
    SWITCHING_ON = "switching_on"
    SWITCHING_OFF = "switching_off"
    CHANGING_PSTATE = "changing_pstate"  # a compute-to-compute pstate change not yet acknowledged
    UNAVAILABLE = "unavailable"


@dataclass(slots=True)
class Resource:
    id: int
    name: str
    state: HostState
    pstate: int
    properties: Mapping[str, str]
    power: Optional[PowerModel]
    jobs: set = field(default_factory=set)      # ids of jobs running here
    unavailable: bool = False                   # external event_machine_unavailable
    target_pstate: Optional[int] = None         # pstate requested and not yet acknowledged

    @property
    def role(self) -> str:
        return self.properties.get("role", "")


class Platform:
    """The compute resources, their power states and which are free."""

    def __init__(self, resources: Iterable[ResourceInfo]):
        self.resources: list[Resource] = []
        for info in resources:
            power = read_power_model(info.properties, info.name)
            state = HostState(info.state) if info.state in HostState._value2member_map_ else HostState.IDLE
            pstate = 0
            if state is HostState.SLEEPING and power is not None and power.sleep:
                pstate = power.sleep[0].sleep
            self.resources.append(Resource(info.id, info.name, state, pstate, info.properties, power))
        self.all = procset_of((r.id for r in self.resources))
        # Hosts ready to take a job right now; maintained incrementally (ProcSet ops are O(intervals)).
        self.free = procset_of((r.id for r in self.resources if r.state is HostState.IDLE))
        self.consumed_energy: Optional[float] = None  # last ANSWER to a consumed_energy QUERY

    def __len__(self) -> int:
        return len(self.resources)

    def __getitem__(self, host_id: int) -> Resource:
        return self.resources[host_id]

    def __iter__(self) -> Iterator[Resource]:
        return iter(self.resources)

    def hosts_in(self, *states: HostState) -> ProcSet:
        return procset_of((r.id for r in self.resources if r.state in states))

    @property
    def sleeping(self) -> ProcSet:
        return self.hosts_in(HostState.SLEEPING)

    @property
    def energy_aware(self) -> bool:
        return bool(self.resources) and all(r.power is not None for r in self.resources)

    def unknown_hosts(self, hosts: ProcSet) -> ProcSet:
        return hosts - self.all

    # --- transitions (called by the view's owner, never by policies) -------------------
    def _set_state(self, hosts: Iterable[int], state: HostState) -> None:
        for h in hosts:
            self.resources[h].state = state

    def allocate(self, hosts: ProcSet, job_id: str) -> None:
        for h in hosts:
            r = self.resources[h]
            r.jobs.add(job_id)
            r.state = HostState.COMPUTING
        self.free -= hosts

    def release(self, hosts: ProcSet, job_id: str) -> None:
        back = []
        for h in hosts:
            r = self.resources[h]
            r.jobs.discard(job_id)
            if not r.jobs and r.state is HostState.COMPUTING:
                r.state = HostState.IDLE
                if not r.unavailable:
                    back.append(h)
        self.free |= procset_of(back)

    def request_pstate(self, hosts: ProcSet, pstate: int) -> None:
        for h in hosts:
            r = self.resources[h]
            r.target_pstate = pstate
            sleep_target = r.power is not None and pstate in r.power.sleep_pstates
            if sleep_target:
                r.state = HostState.SWITCHING_OFF
            elif r.state is HostState.SLEEPING:
                r.state = HostState.SWITCHING_ON
            else:
                r.state = HostState.CHANGING_PSTATE
        self.free -= hosts

    def pstate_changed(self, hosts: ProcSet, pstate: int) -> None:
        back = []
        for h in hosts:
            r = self.resources[h]
            r.pstate = pstate
            r.target_pstate = None
            if r.power is not None and pstate in r.power.sleep_pstates:
                r.state = HostState.SLEEPING
            else:
                r.state = HostState.COMPUTING if r.jobs else HostState.IDLE
                if r.state is HostState.IDLE and not r.unavailable:
                    back.append(h)
        self.free |= procset_of(back)

    def set_unavailable(self, hosts: ProcSet, unavailable: bool) -> None:
        back = []
        for h in hosts:
            r = self.resources[h]
            r.unavailable = unavailable
            if not unavailable and r.state is HostState.IDLE:
                back.append(h)
        if unavailable:
            self.free -= hosts
        else:
            self.free |= procset_of(back)


class JobStatus(str, Enum):
    QUEUED = "queued"          # submitted, waiting for a decision
    RUNNING = "running"
    COMPLETED = "completed"    # ended; see Job.final_state for how
    REJECTED = "rejected"


@dataclass(slots=True, eq=False)
class Job:
    id: str
    res: int
    subtime: float
    walltime: Optional[float]          # None: no walltime given
    profile_name: str
    description: JobDescription
    profile: Optional[Mapping[str, Any]] = None  # only with --forward-profiles-on-submission
    status: JobStatus = JobStatus.QUEUED
    alloc: Optional[ProcSet] = None
    start_time: Optional[float] = None
    finish_time: Optional[float] = None
    final_state: Optional[str] = None  # COMPLETED_SUCCESSFULLY, COMPLETED_KILLED, ...
    return_code: Optional[int] = None
    kill_requested: bool = False
    metadata: Optional[str] = None

    @property
    def workload(self) -> str:
        return self.id.split("!", 1)[0]

    @property
    def extra(self) -> Mapping[str, Any]:
        """Fields of the job description Batsim does not interpret (user, real runtime, ...)."""
        return self.description.extra

    @property
    def waiting_time(self) -> Optional[float]:
        return None if self.start_time is None else self.start_time - self.subtime

    @property
    def expected_end(self) -> Optional[float]:
        """When the job must have ended by: start + walltime (None without walltime or not started)."""
        if self.start_time is None or self.walltime is None:
            return None
        return self.start_time + self.walltime


class Jobs:
    """Every job the scheduler heard of, with the queue in submission order."""

    def __init__(self) -> None:
        self.by_id: dict[str, Job] = {}
        self.queue: dict[str, Job] = {}     # insertion-ordered: submission order
        self.running: dict[str, Job] = {}
        self.finished: dict[str, Job] = {}

    def __getitem__(self, job_id: str) -> Job:
        return self.by_id[job_id]

    def __contains__(self, job_id: str) -> bool:
        return job_id in self.by_id

    def __len__(self) -> int:
        return len(self.by_id)

    def submitted(self, job: Job) -> None:
        self.by_id[job.id] = job
        self.queue[job.id] = job

    def started(self, job: Job, alloc: ProcSet, now: float) -> None:
        del self.queue[job.id]
        job.status = JobStatus.RUNNING
        job.alloc = alloc
        job.start_time = now
        self.running[job.id] = job

    def rejected(self, job: Job, now: float) -> None:
        del self.queue[job.id]
        job.status = JobStatus.REJECTED
        job.final_state = "REJECTED"
        job.finish_time = now
        self.finished[job.id] = job

    def completed(self, job: Job, state: str, return_code: int, now: float) -> None:
        self.running.pop(job.id, None)
        job.status = JobStatus.COMPLETED
        job.final_state = state
        job.return_code = return_code
        job.finish_time = now
        self.finished[job.id] = job
