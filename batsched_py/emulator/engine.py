"""The discrete-event core: Batsim 4.2.1's server loop, without SimGrid.

How Batsim orders things (learnt from its server and checked against real recordings):
- Actors (job submitters, job executors, waiters, switches, the event submitter and the
  request-reply actor that applies the scheduler's decisions) post messages to the server's
  mailbox; everything that fires at the same simulated time is posted together, in the order
  the timers were armed (here: a heap keyed by (time, sequence number)).
- The server handles one mailbox message at a time. After each one, if the scheduler is ready
  (its last reply has been fully applied) and the mailbox is empty, it sends what it has
  buffered (or SIMULATION_ENDS once nothing can happen any more).
- A sender that posts a follow-up (a submitter's "bye" after its last submission) does so
  only after the server took its message, i.e. after that emptiness check: this is why a lone
  last submission is sent alone and NOTIFY no_more_static_job_to_submit comes in the next
  message, while with other same-time events pending the NOTIFY rides along.
- The reply's decisions are applied at their own timestamps, then "scheduler ready" at the
  reply's ``now``; events happening meanwhile are buffered for the next request.
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Optional

from procset import ProcSet

from .. import protocol as p
from .errors import EmulatorError
from .events_file import ExternalEvent
from .machines import Machines
from .outputs import JobRecord
from .platform import Platform, compute_resources_json
from .workload import Job, Workload, make_job

__all__ = ["Engine", "EngineOptions", "Exchange"]

Exchange = Callable[[p.Message], p.Message]
EPS = 1e-9


def r6(t: float) -> float:
    """Batsim prints times with 6 decimals."""
    return round(t, 6)


@dataclass(slots=True)
class EngineOptions:
    energy: bool = False
    forward_profiles: bool = False
    dynamic_jobs: bool = False
    ack_dynamic_jobs: bool = False
    profile_reuse: bool = False
    sched_config: str = ""
    forward_unknown_events: bool = False

    def config_json(self) -> dict[str, Any]:
        return {"redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
                "redis-prefix": "default", "profiles-forwarded-on-submission": self.forward_profiles,
                "dynamic-jobs-enabled": self.dynamic_jobs, "dynamic-jobs-acknowledged": self.ack_dynamic_jobs,
                "profile-reuse-enabled": self.profile_reuse, "sched-config": self.sched_config,
                "forward-unknown-events": self.forward_unknown_events}


class _Switch:
    """One SET_RESOURCE_STATE request: answered once all its hosts are done."""
    __slots__ = ("hosts", "state", "remaining")

    def __init__(self, hosts: ProcSet, state: str, remaining: int):
        self.hosts, self.state, self.remaining = hosts, state, remaining


class Engine:
    def __init__(self, platform: Platform, workloads: list[Workload], events: list[list[ExternalEvent]],
                 machines: Machines, writers, exchange: Exchange, options: EngineOptions,
                 on_progress: Optional[Callable[[int, int], None]] = None):
        self.platform = platform
        self.workloads = {w.name: w for w in workloads}
        self.machines = machines
        self.writers = writers
        self.exchange = exchange
        self.opt = options
        self.on_progress = on_progress
        self.jobs: dict[str, Job] = {}
        self.now = 0.0
        self.messages = 0
        self._heap: list = []
        self._seq = 0
        self._mailbox: deque = deque()
        self._out: list[p.Event] = []          # events buffered for the next request
        self._ready = False
        self._end_sent = False
        self._done = False
        self._job_submitters = 0
        self._event_submitters = 0
        self._registration_open = options.dynamic_jobs
        self.nb_submitted = self.nb_completed = self.nb_running = 0
        self._switching = 0
        self._waiters = 0
        self._tasks_cache: dict[tuple[str, str], list] = {}
        self._speed = [h.pstates for h in platform.hosts]
        for wl in workloads:
            for job in wl.jobs:
                self.jobs[job.id] = job
            self._arm_submitter(wl)
        for lst in events:
            self._arm_events(lst)

    # ------------------------------------------------------------------ timers

    def _push(self, t: float, kind: str, payload: Any = None) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, kind, payload))

    def _arm_submitter(self, wl: Workload) -> None:
        # Batsim submits by (subtime, job id as a string), same-time jobs in one message.
        order = sorted(wl.jobs, key=lambda j: (j.subtime, j.id))
        if not order:
            return
        self._job_submitters += 1
        groups: list[list[Job]] = []
        for job in order:
            if groups and groups[-1][0].subtime == job.subtime:
                groups[-1].append(job)
            else:
                groups.append([job])
        self._chain("submit", [(g[0].subtime, g) for g in groups], 0)

    def _arm_events(self, events: list[ExternalEvent]) -> None:
        self._event_submitters += 1
        if not events:
            self._push(0.0, "bye_events")
            return
        groups: list[list[ExternalEvent]] = []
        for e in events:
            if groups and groups[-1][0].timestamp == e.timestamp:
                groups[-1].append(e)
            else:
                groups.append([e])
        self._chain("events", [(g[0].timestamp, g) for g in groups], 0)

    def _chain(self, kind: str, groups: list, i: int) -> None:
        """A submitter sleeps until its next group only once the previous one is sent: arm lazily,
        so that its timer is ordered after timers armed meanwhile (as SimGrid does)."""
        self._push(groups[i][0], kind, (groups, i))

    # ------------------------------------------------------------------ main loop

    def run(self) -> None:
        begins = p.SimulationBegins(
            0.0, nb_resources=self.platform.nb_hosts, nb_compute_resources=self.platform.nb_hosts,
            nb_storage_resources=0, allow_compute_sharing=False, allow_storage_sharing=True,
            config=self.opt.config_json(),
            compute_resources=tuple(p.ResourceInfo.from_data(r, "compute_resources")
                                    for r in compute_resources_json(self.platform)),
            storage_resources=(), workloads={w.name: w.path for w in self.workloads.values()},
            profiles={w.name: w.profiles_json() for w in self.workloads.values()})
        self._out.append(begins)
        self._mailbox.extend(self._send())
        heap, mailbox = self._heap, self._mailbox
        late: list = []
        while not self._done:
            if not mailbox:
                if not heap:
                    raise EmulatorError(f"t={self.now:g}: nothing can happen any more but the simulation "
                                        "is not finished (the scheduler is waiting for nothing)")
                t = heap[0][0]
                self.now = t
                late = []
                while heap and heap[0][0] <= t:
                    item = heapq.heappop(heap)
                    (late if item[2].endswith("_late") else mailbox).append((item[2], item[3]))
                if not mailbox:
                    mailbox.extend(late)
                    late = []
            kind, payload = mailbox.popleft()
            follow = getattr(self, "_on_" + kind)(payload)
            same_time = ()
            if self._ready and not mailbox and not self._done:
                if self._out:
                    same_time = self._send()
                elif not self._end_sent and self._finished():
                    self._out.append(p.SimulationEnds(r6(self.now)))
                    self._end_sent = True
                    same_time = self._send()
            if follow:
                mailbox.append(follow)
            if late:
                mailbox.extend(late)
                late = []
            mailbox.extend(same_time)

    def _finished(self) -> bool:
        return (self._job_submitters == 0 and self._event_submitters == 0 and not self._registration_open
                and self.nb_submitted == self.nb_completed and self.nb_running == 0
                and self._switching == 0 and self._waiters == 0)

    def _send(self) -> list:
        """One request/reply; returns the reply's items to apply at the current time."""
        now = r6(self.now)
        request = p.Message(now, tuple(self._out))
        self._out = []
        self._ready = False
        self.messages += 1
        index = self.messages
        reply = self.exchange(request)
        if not isinstance(reply, p.Message):
            raise EmulatorError(f"reply to message {index}: not a protocol Message ({type(reply).__name__})")
        if reply.now < now:
            raise EmulatorError(f"reply to message {index}: now={reply.now} is before the request's "
                                f"now={now} (a reply cannot go back in time)")
        try:
            p.check_order(reply.now, (e.timestamp for e in reply.events), f"reply to message {index}")
        except p.ProtocolError as exc:
            raise EmulatorError(str(exc)) from None
        items = []
        # Pending timers at this very time were armed before the reply arrived.
        while self._heap and self._heap[0][0] <= self.now:
            item = heapq.heappop(self._heap)
            items.append((item[2], item[3]))
        for e in reply.events:
            if e.timestamp <= self.now + EPS:
                items.append(("decision", (e, index)))
            else:
                self._push(e.timestamp, "decision", (e, index))
        if reply.now <= self.now + EPS:
            items.append(("ready", None))
        else:
            self._push(reply.now, "ready", None)
        return items

    # ------------------------------------------------------------------ mailbox handlers

    def _on_ready(self, _):
        self._ready = True
        if self._end_sent:
            self._done = True

    def _on_submit(self, payload):
        groups, i = payload
        group, last = groups[i][1], i == len(groups) - 1
        if not last:
            self._chain("submit", groups, i + 1)
        t = r6(self.now)
        for job in group:
            job.state = "SUBMITTED"
            self.nb_submitted += 1
            self.machines.job_submitted(self.now)
            self._out.append(self._submitted_event(t, job))
        self._progress()
        return ("bye_jobs", None) if last else None

    def _submitted_event(self, t: float, job: Job) -> p.JobSubmitted:
        profile = None
        if self.opt.forward_profiles:
            profile = dict(self.workloads[job.workload].profiles[job.profile].data)
        return p.JobSubmitted(t, job.id, p.JobDescription.from_data(job.description, job.id), profile)

    def _on_bye_jobs(self, _):
        self._job_submitters -= 1
        if self._job_submitters == 0:
            self._out.append(p.Notify(r6(self.now), "no_more_static_job_to_submit"))

    def _on_bye_events(self, _):
        self._event_submitters -= 1
        if self._event_submitters == 0:
            self._out.append(p.Notify(r6(self.now), "no_more_external_event_to_occur"))

    def _on_events(self, payload):
        groups, i = payload
        group, last = groups[i][1], i == len(groups) - 1
        if not last:
            self._chain("events", groups, i + 1)
        t = r6(self.now)
        for e in group:
            if e.type == "machine_unavailable":
                self.machines.set_unavailable(self.now, e.resources)
                self._out.append(p.Notify(t, "event_machine_unavailable", e.resources))
            elif e.type == "machine_available":
                self.machines.set_available(self.now, e.resources)
                self._out.append(p.Notify(t, "event_machine_available", e.resources))
            elif self.opt.forward_unknown_events:
                extra = {k: v for k, v in e.data.items() if k not in ("type", "timestamp")}
                self._out.append(p.Notify(t, e.type, None, extra))
        return ("bye_events", None) if last else None

    def _on_wake(self, _):
        self._waiters -= 1
        self._out.append(p.RequestedCall(r6(self.now)))

    def _on_switch(self, payload):
        req, hosts = payload
        self.machines.switch_done(self.now, hosts)
        self._switching -= 1
        req.remaining -= len(hosts)
        if req.remaining == 0:
            self._out.append(p.ResourceStateChanged(r6(self.now), req.hosts, req.state))

    def _on_phase(self, payload):
        job, token, load = payload
        if job.token == token:
            self.machines.job_load_changed(self.now, job.id, job.alloc, load)

    def _on_end(self, payload):
        job, token, state, rc = payload
        if job.token != token or job.state != "RUNNING":
            return
        self._finish(job, state, rc)

    _on_end_late = _on_end
    _on_switch_late = _on_switch

    def _finish(self, job: Job, state: str, rc: int) -> None:
        t = self.now
        job.state, job.return_code, job.finish = state, rc, t
        job.energy = self.machines.job_ended(t, job.id, job.alloc)
        self.nb_running -= 1
        self.nb_completed += 1
        self._record(job)
        self._out.append(p.JobCompleted(r6(t), job.id, state, rc, job.alloc))
        self._progress()

    def _record(self, job: Job) -> None:
        if self.writers is None:
            return
        rec = JobRecord(job.name, job.workload, job.profile, job.subtime, job.res,
                        -1.0 if job.walltime is None else job.walltime, job.state, job.start,
                        job.finish, job.alloc if job.alloc is not None else "", job.energy, job.metadata)
        if job.state == "REJECTED":
            self.writers.job_rejected(rec)
        else:
            self.writers.job_finished(rec)

    def _progress(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.nb_submitted, self.nb_completed)

    # ------------------------------------------------------------------ decisions

    def _on_decision(self, payload):
        event, index = payload
        handler = _DECISIONS.get(type(event))
        where = f"message {index}: {event.TYPE} at t={event.timestamp:g}"
        if handler is None:
            raise EmulatorError(f"{where}: Batsim does not accept {event.TYPE} from a scheduler")
        handler(self, event, where)

    def _job(self, job_id: str, where: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise EmulatorError(f"{where}: job {job_id!r} does not exist (unknown job)")
        return job

    def _execute(self, e: p.ExecuteJob, where: str) -> None:
        job = self._job(e.job_id, where)
        if job.state != "SUBMITTED":
            raise EmulatorError(f"{where}: job {job.id} cannot be executed: its state is {job.state} "
                                "(only submitted, not yet started jobs can be)")
        alloc = e.alloc
        wl = self.workloads[job.workload]
        key = (job.workload, job.profile)
        tasks = self._tasks_cache.get(key)
        if tasks is None:
            tasks = self._tasks_cache[key] = wl.tasks_of(job)
        if len(alloc) != job.res and not all(t.total for t, _ in tasks):
            raise EmulatorError(f"{where}: job {job.id} requests {job.res} hosts but the allocation "
                                f"{alloc} has {len(alloc)} (wrong number of hosts)")
        err = self.machines.check_execute(alloc)
        if err:
            raise EmulatorError(f"{where}: job {job.id}: invalid allocation {alloc}: {err}")
        t = self.now
        job.state, job.start, job.alloc, job.tasks = "RUNNING", t, alloc, tasks
        job.token += 1
        self.nb_running += 1
        speed = min(self._speed[h][self.machines.pstate(h)].speed for h in alloc) \
            if any(tk.kind == "cpu" for tk, _ in tasks) else 1.0
        n = len(alloc)
        elapsed = 0.0
        wall = job.walltime
        end_state, rc = None, 0
        loads = []
        for task, _path in tasks:
            d = task.duration(n, speed)
            loads.append((elapsed, 0.0 if task.kind == "delay" else 1.0))
            if wall is not None and d >= wall - elapsed:
                end_state, rc, elapsed = "COMPLETED_WALLTIME_REACHED", -1, wall
                break
            elapsed += d
        if end_state is None:
            ret = wl.profiles[job.profile].ret
            end_state, rc = ("COMPLETED_SUCCESSFULLY", 0) if ret == 0 else ("COMPLETED_FAILED", ret)
        self.machines.job_started(t, job.id, alloc, loads[0][1] if loads else 0.0)
        if self.opt.energy:
            prev = loads[0][1] if loads else 0.0
            for offset, load in loads[1:]:
                if load != prev:
                    self._push(t + offset, "phase", (job, job.token, load))
                    prev = load
        # A compute task that completes is noticed one scheduling round after plain timers
        # (its executor waits on a child activity): see _on_end_late.
        # (Empirical: seen for parallel_homogeneous, not for parallel_homogeneous_total.)
        late = (end_state != "COMPLETED_WALLTIME_REACHED" and bool(tasks) and tasks[-1][0].kind == "cpu"
                and not tasks[-1][0].total)
        self._push(t + elapsed, "end_late" if late else "end", (job, job.token, end_state, rc))

    def _reject(self, e: p.RejectJob, where: str) -> None:
        job = self._job(e.job_id, where)
        if job.state != "SUBMITTED":
            raise EmulatorError(f"{where}: job {job.id} cannot be rejected: its state is {job.state} "
                                "(only submitted, not yet started jobs can be)")
        job.state = "REJECTED"
        self.nb_completed += 1
        self._record(job)
        self._progress()

    def _kill(self, e: p.KillJob, where: str) -> None:
        ids, progress = [], {}
        for job_id in e.job_ids:
            job = self._job(job_id, where)
            if job.kill_requested:
                continue
            if job.state not in ("RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
                                 "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED"):
                raise EmulatorError(f"{where}: job {job.id} is neither running nor finished "
                                    f"(state {job.state}): it cannot be killed")
            job.kill_requested = True
            ids.append(job.id)
            if job.state == "RUNNING":
                progress[job.id], rc = self._kill_progress(job)
                self._finish(job, "COMPLETED_KILLED", rc)
        if ids:
            self._out.append(p.JobKilled(r6(self.now), tuple(ids), progress))

    def _kill_progress(self, job: Job) -> tuple[p.JobProgress, int]:
        elapsed = self.now - job.start
        n = len(job.alloc)
        speed = min(self._speed[h][self.machines.pstate(h)].speed for h in job.alloc)
        acc = 0.0
        chosen = job.tasks[-1]
        frac = 1.0
        for task, path in job.tasks:
            d = task.duration(n, speed)
            if elapsed < acc + d or d == 0 and elapsed <= acc:
                chosen, frac = (task, path), ((elapsed - acc) / d if d > 0 else 0.0)
                break
            acc += d
        task, path = chosen
        node = p.JobProgress(task.profile, round(frac, 6))
        for name, index in reversed(path):
            node = p.JobProgress(name, None, index, node)
        return node, (-1 if task.kind == "delay" else -2)

    def _call_me_later(self, e: p.CallMeLater, where: str) -> None:
        if not e.at > self.now + EPS:
            raise EmulatorError(f"{where}: CALL_ME_LATER at {e.at} is not in the future "
                                f"(simulation time is {self.now:g})")
        self._waiters += 1
        self._push(e.at, "wake")

    def _set_state(self, e: p.SetResourceState, where: str) -> None:
        if not self.opt.energy:
            raise EmulatorError(f"{where}: SET_RESOURCE_STATE needs energy support (-E), as in Batsim")
        pstate = int(e.state)
        err = self.machines.check_set_state(e.resources, pstate)
        if err:
            raise EmulatorError(f"{where}: {err}")
        done = self.machines.request_state(self.now, e.resources, pstate)
        later: dict[float, list[int]] = {}
        for h, t in done.items():
            if t > self.now:
                later.setdefault(t, []).append(h)
        req = _Switch(e.resources, e.state, sum(len(v) for v in later.values()))
        if not later:
            self._out.append(p.ResourceStateChanged(r6(self.now), e.resources, e.state))
            return
        for t in sorted(later):
            self._switching += 1
            self._push(t, "switch_late", (req, ProcSet(*later[t])))  # a 1-flop execution: late

    def _notify(self, e: p.Notify, where: str) -> None:
        if e.kind == "registration_finished":
            self._registration_open = False
        elif e.kind == "continue_registration":
            self._registration_open = self.opt.dynamic_jobs
        else:
            raise EmulatorError(f"{where}: unknown NOTIFY type {e.kind!r} from the scheduler")

    def _query(self, e: p.Query, where: str) -> None:
        answers = {}
        for name in e.requests:
            if name != "consumed_energy":
                raise EmulatorError(f"{where}: unsupported query {name!r} (Batsim answers consumed_energy)")
            if not self.opt.energy:
                raise EmulatorError(f"{where}: consumed_energy needs energy support (-E), as in Batsim")
            answers[name] = self.machines.consumed_energy(self.now)
        self._out.append(p.Answer(r6(self.now), answers))

    def _answer(self, e: p.Answer, where: str) -> None:
        """Answers to Batsim's own queries: Batsim 4.2.1 asks none, ignore."""

    def _register_profile(self, e: p.RegisterProfile, where: str) -> None:
        from .profiles import parse_profile
        if not self.opt.dynamic_jobs:
            raise EmulatorError(f"{where}: dynamic registration needs --enable-dynamic-jobs")
        wl = self.workloads.get(e.workload_name)
        if wl is None:
            wl = self.workloads[e.workload_name] = Workload(e.workload_name, "", self.platform.nb_hosts, [], {})
        if e.profile_name in wl.profiles:
            raise EmulatorError(f"{where}: profile {e.profile_name!r} of workload {e.workload_name!r} "
                                "is already registered")
        wl.profiles[e.profile_name] = parse_profile(e.profile_name, dict(e.profile), where)

    def _register_job(self, e: p.RegisterJob, where: str) -> None:
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
        raw.setdefault("subtime", self.now)
        job = make_job(wl, raw, where, full_id=e.job_id)
        wl.jobs.append(job)
        self.jobs[job.id] = job
        job.state = "SUBMITTED"
        self.nb_submitted += 1
        if self.opt.ack_dynamic_jobs:
            self._out.append(self._submitted_event(r6(self.now), job))

    def _set_metadata(self, e: p.SetJobMetadata, where: str) -> None:
        self._job(e.job_id, where).metadata = e.metadata

    def _change_state(self, e: p.ChangeJobState, where: str) -> None:
        job = self._job(e.job_id, where)
        new = e.job_state
        if job.state == "SUBMITTED" and new in ("RUNNING", "REJECTED"):
            if new == "RUNNING":
                job.start = self.now
                self.nb_running += 1
            else:
                self.nb_completed += 1
                job.state = new
                self._record(job)
        elif job.state == "RUNNING" and new.startswith("COMPLETED_"):
            job.token += 1
            if job.alloc is not None:
                job.energy = self.machines.job_ended(self.now, job.id, job.alloc)
            job.finish = self.now
            self.nb_running -= 1
            self.nb_completed += 1
            job.state = new
            self._record(job)
        else:
            raise EmulatorError(f"{where}: cannot change job {job.id} from {job.state} to {new}")
        job.state = new


_DECISIONS = {
    p.ExecuteJob: Engine._execute, p.RejectJob: Engine._reject, p.KillJob: Engine._kill,
    p.CallMeLater: Engine._call_me_later, p.SetResourceState: Engine._set_state, p.Notify: Engine._notify,
    p.Query: Engine._query, p.Answer: Engine._answer, p.RegisterProfile: Engine._register_profile,
    p.RegisterJob: Engine._register_job, p.SetJobMetadata: Engine._set_metadata,
    p.ChangeJobState: Engine._change_state,
}
