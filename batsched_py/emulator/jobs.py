"""Jobs and their profiles run: each job's executor runs its profile's tasks (sleeps, parallel
tasks at SimGrid's rate, the walltime's timeout), frees its hosts and tells the server; the
server records the job's end."""
from __future__ import annotations

from typing import Callable, Optional

from .. import protocol as p
from ..models.platform import Platform
from ..models.profiles import Task, expand_tasks
from ..models.workload import Job, Workload
from .machines import Machines
from .options import EngineOptions
from .state import PROGRESS_EVERY
from .switches import Switches
from .timeline import Action

__all__ = ["JobExecution"]


def _task_rate(task: Task, speed: float, nb_hosts: int) -> float:
    """SimGrid's rate of a parallel task: its bottleneck host's speed over its flops there."""
    if task.vector:
        flops = max(task.vector)
    else:
        flops = task.amount / nb_hosts if task.total else task.amount
    return speed / flops if flops > 0 else 0.0


def _task_flops(task: Task, nb_hosts: int) -> float | tuple[float, ...]:
    """A cpu task's flops on each host: one amount for all, or one per host rank."""
    if task.vector:
        return task.vector
    return task.amount / nb_hosts if task.total else task.amount


class _Plan:
    """What running one profile takes, computed at its first execution: its leaf tasks, the
    job's return code, whether every task is a ``_total`` one (then any allocation size is
    fine), the cpu load of the first task, and each cpu task's rate when it depends on neither
    the allocation nor pstates (None: computed at run time)."""
    __slots__ = ("tasks", "ret", "all_total", "first_load", "rates")

    def __init__(self, tasks: list, ret: int, uniform_speed: Optional[float]):
        self.tasks = tasks
        self.ret = ret
        if len(tasks) == 1:           # the usual (non-composed) profile, without generators
            t = tasks[0][0]
            self.all_total = t.total
            self.first_load = 0.0 if t.kind == "delay" else 1.0
            self.rates = [_task_rate(t, uniform_speed, 0) if uniform_speed is not None and t.kind == "cpu"
                          and not t.total else None]
            return
        self.all_total = all(t.total for t, _ in tasks)
        self.first_load = 0.0 if not tasks or tasks[0][0].kind == "delay" else 1.0
        self.rates = [_task_rate(t, uniform_speed, 0) if uniform_speed is not None and t.kind == "cpu"
                      and not t.total else None for t, _ in tasks]


class JobExecution(Switches):
    """The engine's job executors and the server's side of a job's end."""

    def __init__(self, platform: Platform, workloads: list[Workload], machines: Machines, writers,
                 options: EngineOptions, on_progress: Optional[Callable[[int, int], None]] = None):
        super().__init__(platform, workloads, machines, writers, options, on_progress)
        self._plans: dict[str, dict[str, _Plan]] = {}     # per workload and profile: see _Plan

    def _plan(self, job: Job) -> _Plan:
        plans = self._plans.get(job.workload)
        if plans is None:
            plans = self._plans[job.workload] = {}
        plan = plans.get(job.profile)
        if plan is None:
            wl = self.workloads[job.workload]
            profile = wl.profiles[job.profile]
            plan = plans[job.profile] = _Plan(expand_tasks(profile, wl.profiles, f"job {job.id}"), profile.ret,
                                              self._uniform_speed)
        return plan

    def _run_task(self, job: Job, i: int) -> None:
        """Batsim's executor starts task ``i`` of ``job`` now (or ends the job after the last)."""
        plan = job.tasks_plan
        tasks = plan.tasks
        tl = self.tl
        while i < len(tasks):
            task = tasks[i][0]
            job.task_index, job.task_start = i, tl.now
            remaining = job.remaining
            if task.kind == "delay":
                if self._energy:
                    self.machines.job_load_changed(tl.now, job.id, job.alloc, 0.0)
                d = task.amount
                if remaining < 0 or d < remaining:
                    if d > 0:
                        job.actions = [tl.sleep(d, (self._task_done, (job, i, False)))]
                        return
                    i += 1          # sleep_for(0) returns at once
                    continue
                if remaining > 0:
                    job.actions = [tl.sleep(remaining, (self._task_done, (job, i, True)))]
                    return
                self._post_end(job, "COMPLETED_WALLTIME_REACHED", -1)
                return
            rate = plan.rates[i]
            if rate is None:
                rate = self._rate(job, task)
            if self._energy:
                self.machines.job_computes(tl.now, job.id, job.alloc, _task_flops(task, len(job.alloc)), rate)
            ex = tl.execute(rate, (self._task_done, (job, i, False)))
            if remaining >= 0:
                # wait_for(remaining): SimGrid adds a timeout sleep, created after the execution.
                job.actions = [ex, tl.sleep(remaining, (self._task_done, (job, i, True)))]
            else:
                job.actions = [ex]
            return
        ret = plan.ret
        self._post_end(job, *(("COMPLETED_SUCCESSFULLY", 0) if ret == 0 else ("COMPLETED_FAILED", ret)))

    def _rate(self, job: Job, task: Task) -> float:
        """SimGrid's rate of a parallel task: its bottleneck host's speed over its flops there."""
        speed = self._uniform_speed
        if speed is None:
            speed = min(self._speed[h][self.machines.pstate(h)].speed for h in job.alloc)
        return _task_rate(task, speed, len(job.alloc))

    def _task_done(self, payload, action: Action) -> None:
        job, i, timeout = payload
        acts = job.actions
        if job.state != "RUNNING" or action not in acts:
            return
        # The walltime cut a computation: SimGrid does not cancel it, it runs on (see _on_end).
        cut = timeout and len(acts) == 2
        # An execution ending in the same step as its timeout completes: its action comes first
        # and answers the job's actor, whose timeout then ends with no effect.
        for a in acts:
            a.alive = False
        job.actions = ()
        if timeout:
            self._post_end(job, "COMPLETED_WALLTIME_REACHED", -1, cut)
            return
        if i + 1 == len(job.tasks):    # the last task: no walltime bookkeeping needed
            ret = job.tasks_plan.ret
            self._post_end(job, *(("COMPLETED_SUCCESSFULLY", 0) if ret == 0 else ("COMPLETED_FAILED", ret)))
            return
        if job.remaining >= 0:
            if action.rate == 0.0:
                if job.remaining > 0:
                    job.remaining = job.remaining - job.tasks[i][0].amount
            else:
                job.remaining = job.remaining - (self.tl.now - job.task_start)
        self._run_task(job, i + 1)

    def _post_end(self, job: Job, state: str, rc: int, cut: bool = False) -> None:
        """The job's actor frees its hosts, writing its end rows, and tells the server the job
        ended.  With -E it reads the energy of the job's hosts, then of every host (its
        consumed_energy.csv row) before its put.  ``cut``: a computation cut by the walltime
        keeps loading the hosts until the actor ends (_on_end)."""
        t = self.tl.now
        switch_ended = self._switch_ended
        reaching = [h for a in self._step_actions if a.item is not None and a.item[0] == switch_ended
                    for h in a.item[1][1]] if self._energy else ()
        job.energy = self.machines.job_ended(t, job.id, job.alloc, False, reaching)
        job.ended = True
        end = (self._on_end, (job, job.token, state, rc, cut))
        if self._energy:
            if not cut:
                self.machines.job_load_changed(t, job.id, job.alloc, 0.0)
            self._read_energy(1, [job.alloc, None], end)
        else:
            self._mailbox.append(end)

    def _on_end(self, payload):
        job, token, state, rc, cut = payload
        if cut:
            # Its actor ends once its put is received: SimGrid then cancels the computation the
            # walltime cut, updating its hosts' energy, load included.
            self.machines.action_ended(self.tl.now, job.alloc)
            self.machines.job_load_changed(self.tl.now, job.id, job.alloc, 0.0)
        if job.token != token or job.state != "RUNNING":
            return
        self._completed(job, state, rc)

    def _actions_ended(self, job: Job) -> None:
        """The job's current SimGrid actions end or are cancelled now: with -E, SimGrid updates
        the energy of their hosts (a parallel task's hosts, or the first host, where the job's
        actor sleeps) while their load still counts -- see machines.py."""
        task = job.tasks[min(job.task_index, len(job.tasks) - 1)][0] if job.tasks else None
        hosts = job.alloc if task is not None and task.kind == "cpu" else (job.alloc.min,)
        self.machines.action_ended(self.tl.now, hosts)

    def _free_hosts(self, job: Job) -> None:
        """The server frees the job's hosts (its end rows) unless its actor did (_post_end).
        None: started by CHANGE_JOB_STATE, on no host."""
        if job.alloc is not None and not job.ended:
            job.energy = self.machines.job_ended(self.tl.now, job.id, job.alloc)

    def _kill_running(self, job: Job, rc: int) -> None:
        """The killer actor kills a running job: its actions are cancelled, its hosts freed; the
        server learns it from the killer's message (_on_killing_done)."""
        if job.actions:
            if self._energy:
                self._actions_ended(job)
            for a in job.actions:
                a.alive = False
            job.actions = ()
        self._free_hosts(job)
        job.state, job.return_code, job.finish = "COMPLETED_KILLED", rc, self.tl.now

    def _on_killing_done(self, payload: tuple[tuple[str, ...], dict, list[Job]]) -> None:
        """The killer actor's message: the server completes the jobs it killed, then acknowledges
        the KILL_JOB."""
        ids, progress, killed = payload
        for job in killed:
            self._completed(job, job.state, job.return_code, job.finish)
        self._out.append(p.JobKilled(self._stamp(), ids, progress))

    def _completed(self, job: Job, state: str, rc: int, finish: Optional[float] = None) -> None:
        """The server learns that the job ended at ``finish`` (default: now): JOB_COMPLETED, or
        its killer's message."""
        t = self.tl.now
        job.state, job.return_code, job.finish = state, rc, t if finish is None else finish
        self.nb_running -= 1
        self.nb_completed += 1
        if self._ended is not None:
            self._ended.append(job)
        if self.writers is not None:  # _record, inlined
            self.writers.job_row(job.name, job.workload, job.profile, job.subtime, job.res,
                                 -1.0 if job.walltime is None else job.walltime, state, job.start, job.finish,
                                 "" if job.alloc is None else job.alloc, job.energy, job.metadata)
        self._out.append(p.JobCompleted(self._stamp_value if t == self._stamp_at else self._stamp(), job.id,
                                        state, rc, job.alloc))
        if self.on_progress is not None and not self.nb_completed % PROGRESS_EVERY:
            self.on_progress(self.nb_submitted, self.nb_completed)

    def _record(self, job: Job) -> None:
        if self.writers is None:
            return
        self.writers.job_row(job.name, job.workload, job.profile, job.subtime, job.res,
                             -1.0 if job.walltime is None else job.walltime, job.state, job.start,
                             job.finish, job.alloc if job.alloc is not None else "", job.energy, job.metadata)
