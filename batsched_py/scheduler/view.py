"""What a scheduler knows of the simulation: resources and jobs, kept up to date from events.

The view changes in exactly two ways: when Batsim reports something (an event)
and when the scheduler decides something (a decision helper).  Policies read it
and never patch it, so the bookkeeping bugs of hand-written schedulers (such as
freeing a killed job's hosts twice, once on JOB_COMPLETED and once on
JOB_KILLED) cannot happen.
"""
from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable, Iterator, Mapping, Optional

from procset import ProcSet

from ..compiled import mypyc_attr
from ..protocol import JobDescription, ResourceInfo
from ..protocol.intervals import procset_from_canonical, procset_of_run
from ..models.power import PowerModel, read_power_model


def procset_of(ids: Iterable[int]) -> ProcSet:
    """A ProcSet of host ids, built from merged intervals.

    ``ProcSet(*ids)`` merges one singleton at a time: about 0.5 ms for 64 ids, which was the
    largest cost of a whole protocol round trip; this is ~25 times faster.
    """
    intervals: list[tuple[int, int]] = []
    lo = hi = -2
    for h in sorted(ids):
        if h <= hi + 1:
            if h > hi:
                hi = h
        else:
            if hi >= 0:
                intervals.append((lo, hi))
            lo = hi = h
    if hi >= 0:
        intervals.append((lo, hi))
    return procset_from_canonical(intervals)


# --- host sets as int bitmasks (bit h set: host h is in the set) -------------------------------
# The view and the built-in policies compute on masks (an AND, an OR, a popcount), and build a
# ProcSet only where one leaves them: a decision, a public property such as ``Platform.free``.

def procset_of_mask(mask: int) -> ProcSet:
    """The ProcSet of the set bits of ``mask``."""
    if mask:
        lo = (mask & -mask).bit_length() - 1
        x = mask >> lo
        if not x & (x + 1):                             # one run of consecutive ids
            return procset_of_run(lo, lo + x.bit_length() - 1)
    intervals: list[tuple[int, int]] = []
    while mask:
        lo = (mask & -mask).bit_length() - 1
        x = mask >> lo
        run = (~x & (x + 1)).bit_length() - 1          # trailing ones of x
        intervals.append((lo, lo + run - 1))
        mask ^= ((1 << run) - 1) << lo
    return procset_from_canonical(intervals)


def mask_of(hosts: "ProcSet | Iterable[int] | int") -> int:
    """The bitmask of a ProcSet, of host ids, or of one host id."""
    if isinstance(hosts, ProcSet):
        m = 0
        for lo, hi in hosts.intervals():
            m |= ((2 << (hi - lo)) - 1) << lo
        return m
    if isinstance(hosts, int):
        return 1 << hosts
    m = 0
    for h in hosts:
        m |= 1 << h
    return m


def lowest_bits(mask: int, n: int) -> int:
    """The ``n`` lowest set bits of ``mask`` (all of them if it has fewer)."""
    if n <= 0:
        return 0
    rest = mask
    while rest:                         # run by run of consecutive set bits, lowest first
        lo = (rest & -rest).bit_length() - 1
        x = rest >> lo
        run = (~x & (x + 1)).bit_length() - 1
        if run >= n:
            return (mask ^ rest) | (((1 << n) - 1) << lo)
        n -= run
        rest ^= ((1 << run) - 1) << lo
    return mask


def bits_of(mask: int) -> list[int]:
    """The set bits of ``mask`` in increasing order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class HostState(str, Enum):
    IDLE = "idle"
    COMPUTING = "computing"
    SLEEPING = "sleeping"
    SWITCHING_ON = "switching_on"
    SWITCHING_OFF = "switching_off"
    CHANGING_PSTATE = "changing_pstate"  # a compute-to-compute pstate change not yet acknowledged
    UNAVAILABLE = "unavailable"


@mypyc_attr(allow_interpreted_subclasses=True)    # (copies, pickles, subclasses: see compiled.py)
class Resource:
    """One compute host.  ``state`` and ``jobs`` are read from the platform's host sets (kept as
    bitmasks, so that allocating a job costs no per-host work); the other fields are plain."""
    __slots__ = ("id", "name", "pstate", "properties", "power", "unavailable", "target_pstate", "_platform")

    def __init__(self, id: int, name: str, pstate: int, properties: Mapping[str, str],
                 power: Optional[PowerModel], platform: "Platform"):
        self.id = id
        self.name = name
        self.pstate = pstate
        self.properties = properties
        self.power = power
        self.unavailable = False                    # external event_machine_unavailable
        self.target_pstate: Optional[int] = None    # pstate requested and not yet acknowledged
        self._platform = platform

    @property
    def state(self) -> "HostState":
        bit = 1 << self.id
        for state, mask in self._platform._masks.items():
            if mask & bit:
                return state
        raise AssertionError(f"host {self.id} has no state")  # pragma: no cover

    @state.setter
    def state(self, state: "HostState") -> None:
        self._platform._move(self.id, state)

    @property
    def jobs(self) -> set[str]:
        """Ids of the jobs running here (a new set: changing it changes nothing)."""
        bit = 1 << self.id
        return {j for j, mask in self._platform.job_masks.items() if mask & bit}

    @property
    def role(self) -> str:
        return self.properties.get("role", "")

    def __repr__(self) -> str:
        return (f"Resource(id={self.id}, name={self.name!r}, state={self.state}, pstate={self.pstate}, "
                f"jobs={self.jobs}, unavailable={self.unavailable}, target_pstate={self.target_pstate})")


_IDLE, _COMPUTING, _SLEEPING = HostState.IDLE, HostState.COMPUTING, HostState.SLEEPING


@mypyc_attr(allow_interpreted_subclasses=True)    # (copies, pickles, subclasses: see compiled.py)
class Platform:
    """The compute resources, their power states and which are free.

    Host sets are kept as int bitmasks (``free_mask``, ``all_mask``, ``mask_in(...)``,
    ``job_masks``); the ProcSet properties (``free``, ``all``, ``sleeping``, ``hosts_in``) are
    built from them on demand and ``free`` is cached until the view changes -- read them, never
    modify them in place.
    """

    def __init__(self, resources: Iterable[ResourceInfo]):
        self.resources: list[Resource] = []
        # hosts in each state: the truth behind Resource.state
        self._masks: dict[HostState, int] = dict.fromkeys(HostState, 0)
        for info in resources:
            power = read_power_model(info.properties, info.name)
            state = HostState(info.state) if info.state in HostState._value2member_map_ else HostState.IDLE
            pstate = 0
            if state is HostState.SLEEPING and power is not None and power.sleep:
                pstate = power.sleep[0].sleep
            self.resources.append(Resource(info.id, info.name, pstate, info.properties, power, self))
            self._masks[state] |= 1 << info.id
        self.all_mask = mask_of(r.id for r in self.resources)
        self.all = procset_of_mask(self.all_mask)
        #: running job id -> bitmask of its hosts: the truth behind Resource.jobs
        self.job_masks: dict[str, int] = {}
        self._shared = 0                # hosts running more than one job (never, through execute())
        # Hosts ready to take a job right now: idle and available.
        self.free_mask = self._masks[_IDLE]
        self.unavailable_mask = 0       # hosts made unavailable by external events
        self._free: Optional[ProcSet] = None
        self.consumed_energy: Optional[float] = None  # last ANSWER to a consumed_energy QUERY

    def __len__(self) -> int:
        return len(self.resources)

    def __getitem__(self, host_id: int) -> Resource:
        return self.resources[host_id]

    def __iter__(self) -> Iterator[Resource]:
        return iter(self.resources)

    @property
    def free(self) -> ProcSet:
        """Hosts ready to take a job right now (idle and available)."""
        if self._free is None:
            self._free = procset_of_mask(self.free_mask)
        return self._free

    @property
    def nb_free(self) -> int:
        return self.free_mask.bit_count()

    def mask_in(self, *states: HostState) -> int:
        m = 0
        for state in states:
            m |= self._masks[state]
        return m

    def hosts_in(self, *states: HostState) -> ProcSet:
        return procset_of_mask(self.mask_in(*states))

    @property
    def sleeping(self) -> ProcSet:
        return self.hosts_in(HostState.SLEEPING)

    @property
    def busy_mask(self) -> int:
        """Hosts running at least one job."""
        m = 0
        for jm in self.job_masks.values():
            m |= jm
        return m

    @property
    def energy_aware(self) -> bool:
        return bool(self.resources) and all(r.power is not None for r in self.resources)

    def unknown_hosts(self, hosts: ProcSet) -> ProcSet:
        return hosts - self.all

    # --- transitions (called by the view's owner, never by policies) -------------------
    def _move_mask(self, mask: int, state: HostState) -> None:
        """Put the hosts of ``mask`` in ``state``."""
        masks = self._masks
        for s, m in masks.items():
            if m & mask:
                masks[s] = m & ~mask
        masks[state] |= mask

    def _move(self, host_id: int, state: HostState) -> None:
        self._move_mask(1 << host_id, state)

    def _set_free(self, mask: int) -> None:
        if mask != self.free_mask:
            self.free_mask = mask
            self._free = None

    def _set_state(self, hosts: Iterable[int], state: HostState) -> None:
        self._move_mask(mask_of(hosts), state)

    def allocate(self, hosts: ProcSet, job_id: str, mask: Optional[int] = None) -> None:
        if mask is None:
            mask = mask_of(hosts)
        job_masks = self.job_masks
        own = job_masks.get(job_id, 0)
        masks = self._masks
        computing = masks[_COMPUTING]
        if mask & computing & ~own:     # hosts already running another job
            self._shared |= mask & computing & ~own
        job_masks[job_id] = own | mask
        idle = masks[_IDLE]
        if mask & ~idle:                # (the hosts of an execution are free, hence idle)
            self._move_mask(mask, _COMPUTING)
        else:
            masks[_IDLE] = idle & ~mask
            masks[_COMPUTING] = computing | mask
        if self.free_mask & mask:
            self.free_mask &= ~mask
            self._free = None

    def release(self, hosts: ProcSet, job_id: str) -> None:
        self.release_job(job_id, mask_of(hosts))

    def release_job(self, job_id: str, mask: int = -1) -> None:
        """Release the hosts of ``mask`` (default: all) that job ``job_id`` holds."""
        job_masks = self.job_masks
        own = job_masks.get(job_id, 0)
        gone = own & mask               # hosts the job leaves
        if not gone:
            return
        if own & ~gone:
            job_masks[job_id] = own & ~gone
        else:
            del job_masks[job_id]
        if gone & self._shared:         # some of them run other jobs too
            seen = shared = 0
            for jm in job_masks.values():
                shared |= seen & jm
                seen |= jm
            self._shared = shared
            gone &= ~seen
        masks = self._masks
        back = gone & masks[_COMPUTING]
        if back:
            masks[_COMPUTING] &= ~back
            masks[_IDLE] |= back
            back &= ~self.unavailable_mask
            if back:
                self.free_mask |= back
                self._free = None

    def request_pstate(self, hosts: ProcSet, pstate: int) -> None:
        mask = mask_of(hosts)
        sleeping = self._masks[_SLEEPING]
        off = on = change = 0
        for h in hosts:
            r = self.resources[h]
            r.target_pstate = pstate
            bit = 1 << h
            if r.power is not None and pstate in r.power.sleep_pstates:
                off |= bit
            elif sleeping & bit:
                on |= bit
            else:
                change |= bit
        self._move_mask(off, HostState.SWITCHING_OFF)
        self._move_mask(on, HostState.SWITCHING_ON)
        self._move_mask(change, HostState.CHANGING_PSTATE)
        self._set_free(self.free_mask & ~mask)

    def pstate_changed(self, hosts: ProcSet, pstate: int) -> None:
        busy = self.busy_mask
        asleep = computing = idle = 0
        for h in hosts:
            r = self.resources[h]
            r.pstate = pstate
            r.target_pstate = None
            bit = 1 << h
            if r.power is not None and pstate in r.power.sleep_pstates:
                asleep |= bit
            elif busy & bit:
                computing |= bit
            else:
                idle |= bit
        self._move_mask(asleep, _SLEEPING)
        self._move_mask(computing, _COMPUTING)
        self._move_mask(idle, _IDLE)
        self._set_free(self.free_mask | (idle & ~self.unavailable_mask))

    def set_unavailable(self, hosts: ProcSet, unavailable: bool) -> None:
        mask = mask_of(hosts)
        for h in hosts:
            self.resources[h].unavailable = unavailable
        if unavailable:
            self.unavailable_mask |= mask
            self._set_free(self.free_mask & ~mask)
        else:
            self.unavailable_mask &= ~mask
            self._set_free(self.free_mask | (mask & self._masks[_IDLE]))


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


_QUEUED, _RUNNING, _COMPLETED, _REJECTED = JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.COMPLETED, JobStatus.REJECTED


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
        job.status = _RUNNING
        job.alloc = alloc
        job.start_time = now
        self.running[job.id] = job

    def rejected(self, job: Job, now: float) -> None:
        del self.queue[job.id]
        job.status = _REJECTED
        job.final_state = "REJECTED"
        job.finish_time = now
        self.finished[job.id] = job

    def completed(self, job: Job, state: str, return_code: int, now: float) -> None:
        self.running.pop(job.id, None)
        job.status = _COMPLETED
        job.final_state = state
        job.return_code = return_code
        job.finish_time = now
        self.finished[job.id] = job
