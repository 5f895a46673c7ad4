"""The scheduler's decisions as Batsim 4.2.1's server applies them, each checked with Batsim's own
refusal (its message, the decision's message index and time)."""
from __future__ import annotations

from .. import protocol as p
from ..models.errors import EmulatorError
from ..models.profiles import parse_profile, unsupported_part
from ..models.workload import Job, Workload, make_job, unsupported_jobs_error
from .jobs import JobExecution
from .state import PROGRESS_EVERY
from .switches import SwitchRequest

__all__ = ["Decisions"]

# Batsim's waiter never sleeps less than this (smaller sleeps "did not affect" SimGrid, it says).
MIN_WAIT = 1e-5


class Decisions(JobExecution):
    """The handlers of the scheduler's decisions (the engine dispatches each by its class)."""

    @staticmethod
    def _where(event: p.Event, index: int) -> str:
        return f"message {index}: {event.TYPE} at t={event.timestamp:g}"

    def _refuse(self, payload):
        event, index = payload
        raise EmulatorError(f"{self._where(event, index)}: Batsim does not accept {event.TYPE} "
                            "from a scheduler")

    def _job(self, job_id: str, event: p.Event, index: int) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise EmulatorError(f"{self._where(event, index)}: Cannot get job '{job_id}': it does not exist")
        return job

    def _execute(self, payload: tuple[p.ExecuteJob, int]) -> None:
        e, index = payload
        job = self.jobs.get(e.job_id)
        if job is None or job.state != "SUBMITTED":
            job = self._job(e.job_id, e, index)
            raise EmulatorError(f"{self._where(e, index)}: Cannot execute job '{job.id}': its state ({job.state}) is "
                                "not JOB_STATE_SUBMITTED.")
        alloc = e.alloc
        plans = self._plans.get(job.workload)
        plan = plans.get(job.profile) if plans is not None else None
        if plan is None:
            plan = self._plan(job)
        # Batsim's order: the mapping as read from the message, the machines, the allocation's size.
        mapping = self._mapping(e, index) if e.mapping is not None else None
        err = self.machines.check_start(job.id, alloc)
        if err:
            raise EmulatorError(f"{self._where(e, index)}: {err}")
        if mapping is not None:
            if len(mapping) != job.res and not plan.all_total:
                raise EmulatorError(
                    f"{self._where(e, index)}: Job '{job.id}' allocation ('{alloc}') is invalid. The decision process "
                    f"set a custom mapping for this job, but the custom mapping size ({len(mapping)}) does not "
                    f"match the job requested number of machines ({job.res}).")
            if mapping != list(range(len(alloc))):
                raise EmulatorError(f"{self._where(e, index)}: job {job.id}: a custom mapping other than one executor "
                                    "per allocated machine is not modelled by the emulator (real Batsim runs it)")
        else:
            itvs = alloc._itvs            # procset's (first, last) pairs: len(alloc) without a generator
            size = itvs[0][1] + 1 - itvs[0][0] if len(itvs) == 1 else len(alloc)
            if size != job.res and not plan.all_total:
                raise EmulatorError(
                    f"{self._where(e, index)}: Job '{job.id}' allocation ('{alloc}') is invalid. The job requires "
                    f"{job.res} machines but only {len(alloc)} were given. Using a different number of machines "
                    "than the one requested is prevented by default. If you meant to use multiple executors per "
                    "machine, please specify a custom execution mapping specifying which allocated machine each "
                    "executor should use.")
        t = self.tl.now
        if self._energy:
            # The job's actor, created by the server (a simcall), reads energies first.
            self._read_energy(2, [alloc, None])
        self.machines.job_started(t, job.id, alloc, plan.first_load)
        job.state, job.start, job.alloc, job.tasks, job.tasks_plan = "RUNNING", t, alloc, plan.tasks, plan
        job.token += 1
        job.remaining = -1.0 if job.walltime is None else job.walltime
        self.nb_running += 1
        self._run_task(job, 0)

    def _mapping(self, e: p.ExecuteJob, index: int) -> list[int]:
        """EXECUTE_JOB's custom mapping (executor -> rank in the allocation) as a list, checked as
        Batsim reads it."""
        where, n = self._where(e, index), len(e.alloc)
        bad = f"{where}: Invalid JSON message: Invalid 'mapping' object of event {self._event_number} (EXECUTE_JOB)"
        mapping: dict[int, int] = {}
        try:
            for key, value in (e.mapping or {}).items():
                mapping[int(key)] = int(value)
        except (TypeError, ValueError):
            raise EmulatorError(f"{bad}: all keys and values must be integers (or strings representing "
                                "integers)") from None
        if not mapping:
            raise EmulatorError(f"{where}: Invalid JSON: the 'mapping' value in the 'data' value of event "
                                f"{self._event_number} (EXECUTE_JOB) must be a non-empty object")
        for expected, executor in enumerate(sorted(mapping)):
            if executor != expected:
                raise EmulatorError(f"{bad}: no resource associated to executor {expected}.")
            if not 0 <= mapping[executor] < n:
                raise EmulatorError(f"{bad}: executor {executor} should use the {mapping[executor]}-th resource "
                                    f"within the allocation, but there are only {n} allocated resources.")
        return [mapping[i] for i in range(len(mapping))]

    def _reject(self, payload: tuple[p.RejectJob, int]) -> None:
        e, index = payload
        job = self._job(e.job_id, e, index)
        if job.state != "SUBMITTED":
            raise EmulatorError(f"{self._where(e, index)}: Invalid rejection received: job '{job.id}' cannot be "
                                "rejected at the present time. To be rejected, a job must be submitted and not "
                                "allocated yet.")
        job.state = "REJECTED"
        self.nb_completed += 1
        self._record(job)
        if self.on_progress is not None and not self.nb_completed % PROGRESS_EVERY:
            self.on_progress(self.nb_submitted, self.nb_completed)

    def _kill(self, payload: tuple[p.KillJob, int]) -> None:
        """Batsim's server creates a killer actor for the jobs not asked to be killed before: it
        kills the running ones, then puts its message after its simcalls (creation, kills)."""
        e, index = payload
        ids, progress, killed = [], {}, []
        for job_id in e.job_ids:
            job = self._job(job_id, e, index)
            if job.kill_requested:
                continue
            if job.state not in ("RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
                                 "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED"):
                raise EmulatorError(f"{self._where(e, index)}: Invalid KILL_JOB: job_id '{job.id}' refers to a job "
                                    "not being executed nor completed.")
            job.kill_requested = True
            ids.append(job.id)
            if job.state == "RUNNING":
                progress[job.id], rc = self._kill_progress(job)
                self._kill_running(job, rc)
                killed.append(job)
        if ids:
            self._deferred.append([3, (self._on_killing_done, (tuple(ids), progress, killed))])

    def _kill_progress(self, job: Job) -> tuple[p.JobProgress, int]:
        i = min(job.task_index, len(job.tasks) - 1)
        task, path = job.tasks[i]
        elapsed = self.tl.now - job.task_start
        if task.kind == "delay":
            frac = elapsed / task.amount if task.amount > 0 else 0.0
        else:
            rate = self._rate(job, task)
            d = 1.0 / rate if rate > 0 else 0.0
            frac = elapsed / d if d > 0 else 0.0
        node = p.JobProgress(task.profile, round(frac, 6))
        for name, index in reversed(path):
            node = p.JobProgress(name, None, index, node)
        return node, (-1 if task.kind == "delay" else -2)

    def _call_me_later(self, payload: tuple[p.CallMeLater, int]) -> None:
        e, index = payload
        now = self.tl.now
        if not e.at > now:
            raise EmulatorError(f"{self._where(e, index)}: You asked to be awaken in the past! (you ask: {e.at:f}, "
                                f"it is: {now:f})")
        self._waiters += 1
        self.tl.sleep(max(e.at - now, MIN_WAIT), (self._post, (self._on_wake, None)))

    def _on_wake(self, _):
        self._waiters -= 1
        self._out.append(p.RequestedCall(self._stamp()))

    def _set_state(self, payload: tuple[p.SetResourceState, int]) -> None:
        e, index = payload
        if not self.opt.energy:
            raise EmulatorError(f"{self._where(e, index)}: Receiving a pstate modification request, which is "
                                "forbidden as Batsim has not been launched with energy support (cf. batsim --help).")
        pstate = int(e.state)
        err = self.machines.check_set_state(e.resources, pstate)
        if err:
            raise EmulatorError(f"{self._where(e, index)}: {err}")
        now = self.tl.now
        self._read_energy(1, [None])       # the server's pstate_changes energy row
        done = self.machines.request_state(now, e.resources, pstate)
        later = [h for h, t in done.items() if t > now]
        if not later:
            self._out.append(p.ResourceStateChanged(self._stamp(), e.resources, e.state))
            return
        req = SwitchRequest(e.resources, e.state, len(later))
        self._switching += len(later)
        # Each host's switch actor computes 1 flop at the virtual pstate it is now in.  The actors
        # of consecutive hosts at the same speed do the very same arithmetic and end in the same
        # step, one after the other: one timeline action stands for them (in host order).
        speed = 0.0
        hosts: list[int] = []
        for h in sorted(later):
            s = self._speed[h][self.machines.pstate(h)].speed
            if s != speed and hosts:
                self.tl.execute(speed, (self._switch_ended, (req, hosts)))
                hosts = []
            speed = s
            hosts.append(h)
        self.tl.execute(speed, (self._switch_ended, (req, hosts)))

    def _notify(self, payload: tuple[p.Notify, int]) -> None:
        e, index = payload
        if e.kind == "registration_finished":
            self._registration_open = False
        elif e.kind == "continue_registration":
            self._registration_open = self.opt.dynamic_jobs
        else:
            raise EmulatorError(f"{self._where(e, index)}: unknown NOTIFY type {e.kind!r} from the scheduler")

    def _query(self, payload: tuple[p.Query, int]) -> None:
        e, index = payload
        answers = {}
        for name in e.requests:
            if name != "consumed_energy":
                raise EmulatorError(f"{self._where(e, index)}: unsupported query {name!r} "
                                    "(Batsim answers consumed_energy)")
            if not self.opt.energy:
                raise EmulatorError(f"{self._where(e, index)}: consumed_energy needs energy support (-E), "
                                    "as in Batsim")
            answers[name] = self.machines.consumed_energy(self.tl.now)
        self._out.append(p.Answer(self._stamp(), answers))

    def _answer(self, payload: tuple[p.Answer, int]) -> None:
        """Answers to Batsim's own queries: Batsim 4.2.1 asks none, ignore."""

    def _register_profile(self, payload: tuple[p.RegisterProfile, int]) -> None:
        e, index = payload
        where = self._where(e, index)
        if not self.opt.dynamic_jobs:
            raise EmulatorError(f"{where}: dynamic registration needs --enable-dynamic-jobs")
        wl = self.workloads.get(e.workload_name)
        if wl is None:
            wl = self.workloads[e.workload_name] = Workload(e.workload_name, "", self.platform.nb_hosts, [], {})
        if e.profile_name in wl.profiles:
            raise EmulatorError(f"{where}: profile {e.profile_name!r} of workload {e.workload_name!r} "
                                "is already registered")
        wl.profiles[e.profile_name] = parse_profile(e.profile_name, dict(e.profile), where)

    def _register_job(self, payload: tuple[p.RegisterJob, int]) -> None:
        e, index = payload
        where = self._where(e, index)
        if not self.opt.dynamic_jobs:
            raise EmulatorError(f"{where}: dynamic registration needs --enable-dynamic-jobs")
        if not self._registration_open:
            raise EmulatorError(f"{where}: registration_finished was already sent")
        wname = e.job_id.split("!", 1)[0]
        wl = self.workloads.get(wname)
        if wl is None:
            raise EmulatorError(f"{where}: workload {wname!r} does not exist (register a profile first)")
        if e.job_id in self.jobs:
            raise EmulatorError(f"{where}: job {e.job_id!r} already exists")
        if e.job is None:
            raise EmulatorError(f"{where}: REGISTER_JOB without a job description")
        raw = e.job.to_data()
        if raw.get("profile") in wl.deleted:
            raise EmulatorError(f"{where}: job {e.job_id!r} uses profile {raw['profile']!r}, which existed some time "
                                "ago but is no longer accessible: Batsim 4.2.1 deletes a job's profile once it has "
                                "sent the job's JOB_COMPLETED, unless --enable-profile-reuse, and aborts here")
        raw.setdefault("subtime", self.tl.now)
        job = make_job(wl, raw, where, full_id=e.job_id)
        bad = unsupported_part(wl.profiles[job.profile], wl.profiles)
        if bad is not None:
            raise unsupported_jobs_error(where, bad, [job.id])
        wl.jobs.append(job)
        self.jobs[job.id] = job
        job.state = "SUBMITTED"
        self.nb_submitted += 1
        if self.opt.ack_dynamic_jobs:
            self._out.append(self._submitted_event(self._stamp(), job))

    def _set_metadata(self, payload: tuple[p.SetJobMetadata, int]) -> None:
        e, index = payload
        where = self._where(e, index)
        if '"' in e.metadata:
            raise EmulatorError(f"{where}: Invalid JSON message: the 'metadata' value in the 'data' value of event "
                                f"{self._event_number} (SET_JOB_METADATA) should not contain double quotes (got "
                                f"###{e.metadata}###)")
        job = self.jobs.get(e.job_id)
        if job is None:
            raise EmulatorError(f"{where}: The job '{e.job_id}' does not exist, cannot set its metadata")
        job.metadata = e.metadata

    #: the states Batsim 4.2.1 accepts in CHANGE_JOB_STATE (COMPLETED_FAILED is not one)
    _CHANGEABLE = ("NOT_SUBMITTED", "RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED",
                   "COMPLETED_KILLED", "REJECTED")

    def _change_state(self, payload: tuple[p.ChangeJobState, int]) -> None:
        e, index = payload
        where = self._where(e, index)
        new = e.job_state
        if new not in self._CHANGEABLE:
            raise EmulatorError(f"{where}: Invalid JSON message: in event {self._event_number} (CHANGE_JOB_STATE): "
                                f"['data']['job_state'] must be one of: {{{', '.join(sorted(self._CHANGEABLE))}}}")
        job = self.jobs.get(e.job_id)
        if job is None:
            raise EmulatorError(f"{where}: The job '{e.job_id}' does not exist.")
        if job.state == "SUBMITTED":
            if new == "RUNNING":
                job.start = self.tl.now
                self.nb_running += 1
            elif new == "REJECTED":
                self.nb_completed += 1
                job.state = new
                self._record(job)
            else:
                raise EmulatorError(f"{where}: Invalid requested job state modification to '{new}': can only be "
                                    "running or rejected.")
        elif job.state == "RUNNING":
            if not new.startswith("COMPLETED_"):
                raise EmulatorError(f"{where}: Can only change the state of a running job to completed (successfully, "
                                    "failed, and killed). State was RUNNING")
            job.token += 1
            if job.actions and self._energy:
                self._actions_ended(job)
            for a in job.actions:
                a.alive = False
            job.actions = ()
            self._free_hosts(job)
            job.finish = self.tl.now
            self.nb_running -= 1
            self.nb_completed += 1
            job.state = new
            self._record(job)
        else:
            raise EmulatorError(f"{where}: Can only change the state of a submitted or running job. State was "
                                f"{job.state}")
        job.state = new
