"""The scheduler API: one callback per event kind, a live view, and checked decision helpers.

A policy subclasses :class:`Scheduler`, reads ``self.platform`` and
``self.jobs``, and decides through the helpers (``execute``, ``reject``,
``kill``, ``call_me_later``, ``set_pstate``, ...).  Each helper checks the
decision against the protocol's rules and the view *before* anything is sent
and raises :class:`DecisionError` naming the decision and the rule it breaks.

Callbacks run once per event, in message order; then :meth:`schedule` runs
once per message, which is where most policies take their decisions.
"""
import math
from numbers import Integral
from typing import Any, Callable, Iterable, Mapping, Optional

from procset import ProcSet

from .. import protocol as p
from .view import Job, Jobs, JobStatus, Platform, mask_of, procset_of, procset_of_mask
from ..errors import BatschedError


_QUEUED = JobStatus.QUEUED


class DecisionError(BatschedError, ValueError):
    """A decision that Batsim would refuse (or abort on), caught before it is sent."""


class SessionError(BatschedError, RuntimeError):
    """The Batsim side broke the protocol's sequencing (not a malformed message)."""


def _hosts(hosts: ProcSet | Iterable[int] | int, where: Callable[[], str]) -> ProcSet:
    """``hosts`` as a ProcSet; ``where()`` (the decision and its time) names a value that is no host ids."""
    if isinstance(hosts, ProcSet):
        # A copy: the caller may pass a set it goes on modifying in place (``free -= hosts``).
        # (The view itself never modifies a ProcSet it handed out: ``platform.free`` is rebuilt.)
        return hosts.copy()
    if _is_index(hosts):
        return ProcSet(int(hosts))   # type: ignore[arg-type]
    ids = list(hosts) if isinstance(hosts, Iterable) and not isinstance(hosts, (str, bytes)) else None
    if ids is None or not all(map(_is_index, ids)):
        raise DecisionError(f"{where()}: hosts {hosts!r} are not host ids (a ProcSet, an int >= 0 or ints >= 0)")
    return procset_of(ids)


def _is_index(value: Any) -> bool:
    """An int >= 0 (numpy's too), not a bool."""
    if type(value) is int:      # (the usual case, without the ABC's slower isinstance)
        return value >= 0
    return isinstance(value, Integral) and not isinstance(value, bool) and int(value) >= 0


def finite(value: float) -> bool:
    """math.isfinite(), false for an int too large for a float (JSON holds 10**400) instead of an OverflowError."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _time(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not finite(value):
        raise DecisionError(f"{where}: {value!r} is not a finite time")
    return float(value)


class Scheduler:
    """Base class of every policy.  ``options`` come from ``--config`` (a JSON object)."""

    #: one line shown by ``batsched-py list-schedulers``
    description = "abstract base class"
    #: Batsim flags the policy needs (``run`` and ``compare`` pass them; ``serve``'s user gives them)
    batsim_flags: tuple[str, ...] = ()

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        self.options: dict[str, Any] = dict(options or {})
        self.platform: Platform = Platform(())
        self.jobs = Jobs()
        self.now = 0.0
        self.batsim_config: Mapping[str, Any] = {}
        self.no_more_static_jobs = False
        self.no_more_external_events = False
        self.finished = False
        self._decision_time = 0.0
        self._outbox: list[p.Event] = []
        # per host, the pstate switch_off / switch_on send it to (see _switch_targets)
        self._targets: Optional[tuple[Platform, dict[str, list[Optional[int]]]]] = None

    # --- callbacks: override what the policy needs -------------------------------------
    def on_simulation_begins(self, event: p.SimulationBegins) -> None: ...
    def on_simulation_ends(self, event: p.SimulationEnds) -> None: ...
    def on_job_submitted(self, job: Job) -> None: ...
    def on_job_completed(self, job: Job) -> None: ...
    def on_jobs_killed(self, jobs: list[Job], event: p.JobKilled) -> None: ...
    def on_resource_state_changed(self, hosts: ProcSet, pstate: int) -> None: ...
    def on_requested_call(self) -> None: ...
    def on_machine_unavailable(self, hosts: ProcSet) -> None: ...
    def on_machine_available(self, hosts: ProcSet) -> None: ...
    def on_no_more_static_jobs(self) -> None: ...
    def on_notify(self, event: p.Notify) -> None:
        """Notifications without a dedicated callback (forwarded external events)."""
    def on_answer(self, event: p.Answer) -> None: ...

    def estimate_waiting_time(self, job: p.JobDescription) -> float:
        """Answer to Batsim's estimate_waiting_time QUERY, asked after this message's schedule():
        how long ``job`` would wait if submitted now; -1 means the policy cannot tell."""
        return -1.0

    def schedule(self) -> None:
        """Called once after every message's events have been applied: take decisions here."""

    # --- decisions ----------------------------------------------------------------------
    @property
    def decision_time(self) -> float:
        return self._decision_time

    def advance_to(self, t: float) -> None:
        """Model decision-making time: the next decisions (and the reply) happen at ``t``."""
        if not (type(t) is float and self._decision_time <= t < math.inf):    # (else: the message is built)
            where = f"advance_to({t!r}) at t={self._decision_time}"
            t = _time(t, where)
            if t < self._decision_time:
                raise DecisionError(f"{where}: cannot move decision time back")
        self._decision_time = t

    def execute(self, job: Job | str, hosts: ProcSet | Iterable[int] | int,
                mapping: Optional[Mapping[str, Any]] = None) -> None:
        job = self._job(job, "EXECUTE_JOB")
        hosts = _hosts(hosts, lambda: f"EXECUTE_JOB {job.id} at t={self._decision_time}")
        if mapping is not None and not isinstance(mapping, Mapping):
            raise DecisionError(f"EXECUTE_JOB {job.id} at t={self._decision_time}: mapping {mapping!r} is not an "
                                "object (executor -> host rank)")
        self._execute(job, hosts, mask_of(hosts), mapping)

    def _execute(self, job: Job, hosts: ProcSet, mask: int, mapping: Optional[Mapping[str, Any]]) -> None:
        """execute() once ``hosts`` is a ProcSet the scheduler will not modify and ``mask`` its bitmask."""
        platform = self.platform
        if job.status is not _QUEUED or not mask or mask & ~platform.free_mask \
                or (mapping is None and mask.bit_count() != job.res):
            self._refuse_execution(job, hosts, mask, mapping)
        self.jobs.started(job, hosts, self._decision_time)
        platform.allocate(hosts, job.id, mask)
        self._outbox.append(p.ExecuteJob(self._decision_time, job.id, hosts, mapping))

    def _refuse_execution(self, job: Job, hosts: ProcSet, mask: int, mapping) -> None:
        rule = None
        platform = self.platform
        if job.status is not JobStatus.QUEUED:
            rule = f"job is {job.status.value}, only a queued job can be executed"
        elif not mask:
            rule = "empty allocation"
        elif mask & ~platform.all_mask:
            rule = f"hosts {procset_of_mask(mask & ~platform.all_mask)} do not exist (platform has {platform.all})"
        elif mapping is None and mask.bit_count() != job.res:
            rule = f"job requests {job.res} hosts, allocation has {len(hosts)}"
        else:
            busy = procset_of_mask(mask & ~platform.free_mask)
            states = sorted({platform[h].state.value if not platform[h].unavailable else "unavailable"
                             for h in busy})
            rule = f"hosts {busy} are not free ({', '.join(states)})"
        raise DecisionError(f"EXECUTE_JOB {job.id} on {hosts} at t={self._decision_time}: {rule}")

    def reject(self, job: Job | str) -> None:
        job = self._job(job, "REJECT_JOB")
        if job.status is not JobStatus.QUEUED:
            raise DecisionError(f"REJECT_JOB {job.id} at t={self._decision_time}: job is {job.status.value}, "
                                "only a queued job can be rejected")
        self.jobs.rejected(job, self._decision_time)
        self._send(p.RejectJob(self._decision_time, job.id))

    def kill(self, jobs: Job | str | Iterable[Job | str]) -> None:
        if isinstance(jobs, (Job, str)):
            jobs = [jobs]
        resolved = [self._job(j, "KILL_JOB") for j in jobs]
        for job in resolved:
            if job.status is not JobStatus.RUNNING:
                raise DecisionError(f"KILL_JOB {job.id} at t={self._decision_time}: job is {job.status.value}, "
                                    "only a running job can be killed")
            job.kill_requested = True
        if not resolved:
            raise DecisionError(f"KILL_JOB at t={self._decision_time}: needs at least one job")
        self._send(p.KillJob(self._decision_time, tuple(j.id for j in resolved)))

    def call_me_later(self, at: float) -> None:
        if not (type(at) is float and self._decision_time < at < math.inf):   # (else: the message is built)
            where = f"CALL_ME_LATER {at!r} at t={self._decision_time}"
            at = _time(at, where)
            if not at > self._decision_time:
                raise DecisionError(f"{where}: must be strictly after now")
        self._send(p.CallMeLater(self._decision_time, at))

    def set_pstate(self, hosts: ProcSet | Iterable[int] | int, pstate: int) -> None:
        """SET_RESOURCE_STATE: the hosts are unusable until RESOURCE_STATE_CHANGED arrives."""
        where = f"SET_RESOURCE_STATE {hosts} -> {pstate!r} at t={self._decision_time}"
        hosts = _hosts(hosts, lambda: where)
        if not _is_index(pstate):
            raise DecisionError(f"{where}: pstate {pstate!r} is not a pstate number (an int >= 0)")
        pstate = int(pstate)
        if not hosts:
            raise DecisionError(f"{where}: empty resource set")
        if self.platform.unknown_hosts(hosts):
            raise DecisionError(f"{where}: hosts {self.platform.unknown_hosts(hosts)} do not exist")
        platform = self.platform
        busy = platform.busy_mask & mask_of(hosts)
        if busy:
            h = (busy & -busy).bit_length() - 1
            raise DecisionError(f"{where}: host {h} is computing job(s) {sorted(platform[h].jobs)}")
        resources = platform.resources
        for h in hosts:
            r = resources[h]
            if r.target_pstate is not None:
                raise DecisionError(f"{where}: host {h} is still switching to pstate {r.target_pstate}")
            power = r.power
            if power is not None and (not 0 <= pstate < len(power.pstates) or pstate in power.virtual_pstates):
                raise DecisionError(f"{where}: host {h} has no pstate {pstate} a scheduler may ask for")
        self.platform.request_pstate(hosts, pstate)
        self._send(p.SetResourceState(self._decision_time, hosts, str(pstate)))

    def switch_off(self, hosts: ProcSet | Iterable[int] | int) -> None:
        """Put hosts to sleep in their first declared sleep pstate."""
        hosts = _hosts(hosts, lambda: f"switch_off({hosts!r}) at t={self._decision_time}")
        for pstate, group in self._group_by(hosts, "sleep").items():
            self.set_pstate(group, pstate)

    def switch_on(self, hosts: ProcSet | Iterable[int] | int, pstate: Optional[int] = None) -> None:
        """Wake hosts; by default into their first compute pstate (pstate 0 may be a sleep state)."""
        hosts = _hosts(hosts, lambda: f"switch_on({hosts!r}) at t={self._decision_time}")
        if pstate is not None:
            self.set_pstate(hosts, pstate)
            return
        for target, group in self._group_by(hosts, "wake").items():
            self.set_pstate(group, target)

    def register_profile(self, workload: str, name: str, profile: Mapping[str, Any]) -> None:
        if not isinstance(profile, Mapping) or not isinstance(workload, str) or not isinstance(name, str):
            raise DecisionError(f"REGISTER_PROFILE {workload}!{name} at t={self._decision_time}: needs workload "
                                f"and profile names (strings) and a profile object, got {profile!r}")
        self._send(p.RegisterProfile(self._decision_time, workload, name, dict(profile)))

    def register_job(self, job_id: str, res: int, profile: str, walltime: Optional[float] = None,
                     **extra: Any) -> None:
        where = f"REGISTER_JOB {job_id} at t={self._decision_time}"
        if not isinstance(job_id, str) or "!" not in job_id:
            raise DecisionError(f"{where}: job id must be WORKLOAD!NAME")
        if job_id in self.jobs:
            raise DecisionError(f"{where}: a job with this id already exists")
        if not _is_index(res) or not res:
            raise DecisionError(f"{where}: res {res!r} is not a positive number of hosts")
        if not isinstance(profile, str):
            raise DecisionError(f"{where}: profile {profile!r} is not a profile name")
        if walltime is not None and walltime != -1 and not (isinstance(walltime, (int, float))
                                                            and not isinstance(walltime, bool)
                                                            and finite(walltime) and walltime > 0):
            raise DecisionError(f"{where}: walltime {walltime!r} is not a positive finite number (or -1, None: none)")
        desc = p.JobDescription(job_id, res, profile, self._decision_time, walltime, extra)
        self._send(p.RegisterJob(self._decision_time, job_id, desc))

    def notify_registration_finished(self) -> None:
        self._send(p.Notify(self._decision_time, "registration_finished"))

    def notify_continue_registration(self) -> None:
        self._send(p.Notify(self._decision_time, "continue_registration"))

    def set_metadata(self, job: Job | str, metadata: str) -> None:
        job = self._job(job, "SET_JOB_METADATA")
        if not isinstance(metadata, str):
            raise DecisionError(f"SET_JOB_METADATA {job.id} at t={self._decision_time}: metadata {metadata!r} "
                                "is not a string")
        job.metadata = metadata
        self._send(p.SetJobMetadata(self._decision_time, job.id, metadata))

    def change_job_state(self, job: Job | str, state: str, kill_reason: Optional[str] = None) -> None:
        job = self._job(job, "CHANGE_JOB_STATE")
        if state not in p.JOB_STATES:
            raise DecisionError(f"CHANGE_JOB_STATE {job.id} at t={self._decision_time}: unknown state {state!r}")
        self._send(p.ChangeJobState(self._decision_time, job.id, state, kill_reason))

    def query_consumed_energy(self) -> None:
        self._send(p.Query(self._decision_time, {"consumed_energy": {}}))

    # --- internals ----------------------------------------------------------------------
    def _job(self, job: Job | str, decision: str) -> Job:
        if isinstance(job, Job):
            return job
        try:
            return self.jobs[job]
        except (KeyError, TypeError):   # (TypeError: an unhashable value, a list say)
            raise DecisionError(f"{decision} {job} at t={self._decision_time}: no such job was submitted") from None

    def _group_by(self, hosts: ProcSet, kind: str) -> dict[int, list[int]]:
        """``hosts`` by the pstate switch_off ("sleep": their first sleep pstate) or switch_on
        ("wake": their first compute pstate) sends them to."""
        targets = self._switch_targets(kind)
        if hosts and hosts.max >= len(targets):
            raise DecisionError(f"{self._switch_where(kind, hosts)}: hosts {self.platform.unknown_hosts(hosts)} "
                                "do not exist")
        groups: dict[int, list[int]] = {}
        for h in hosts:
            target = targets[h]
            if target is None:
                raise DecisionError(f"{self._switch_where(kind, hosts)}: host {h} ({self.platform[h].name}) "
                                    "declares no sleep pstate")
            group = groups.get(target)
            if group is None:
                groups[target] = [h]
            else:
                group.append(h)
        return groups

    def _switch_where(self, kind: str, hosts: ProcSet) -> str:
        return f"{'switch_off' if kind == 'sleep' else 'switch_on'}({hosts}) at t={self._decision_time}"

    def _switch_targets(self, kind: str) -> list[Optional[int]]:
        """Each host's pstate for _group_by (None: no sleep pstate), worked out once per platform."""
        cached = self._targets
        if cached is None or cached[0] is not self.platform:
            cached = self._targets = (self.platform, {})
        targets = cached[1].get(kind)
        if targets is None:
            targets = cached[1][kind] = [
                None if r.power is None or not r.power.sleep
                else r.power.sleep[0].sleep if kind == "sleep" else r.power.compute_pstates[0]
                for r in self.platform]
        return targets

    def _send(self, event: p.Event) -> None:
        self._outbox.append(event)

    def take_decisions(self) -> list[p.Event]:
        out, self._outbox = self._outbox, []
        return out
