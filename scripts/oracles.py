"""Oracles that know what no deployable policy can: how far perfect knowledge moves the figures of
Scheduling-v0 and Shutdown-v0, and so where the issue's targets stand (docs/papers/*.md).

Each is a baseline's rule given information the agent never sees: the real runtime of every job
(read from the day's workload file, as the authors' ``OR*`` reads the running jobs' runtimes) or
the jobs submitted in the next minutes.  Used through ``evaluate``'s ``module:callable`` policies,
with this folder on the path::

    PYTHONPATH=scripts batsched-py evaluate --env scheduling -p platforms/taurus_deepshutdown.xml \\
        -w ../shared/data/deepshutdown/lyon_*/workloads/test -o runs/oracles-scheduling -j 2 \\
        --dedupe-against ../shared/data/deepshutdown/lyon_*/workloads/train \\
        --policies 'EASY,SAF,SAF-confidence=oracles:SafConfidence,SAF-runtime-order=oracles:SafRuntimeOrder,SAF-runtime=oracles:SafRuntime,SAF-no-reservation=oracles:SafNoReservation,SAF-runtime-no-reservation=oracles:SafRuntimeNoReservation'

    PYTHONPATH=scripts batsched-py evaluate --env shutdown -p platforms/taurus_deepshutdown.xml \\
        -w ../shared/data/deepshutdown/lyon_*/workloads/test -o runs/oracles-shutdown -j 2 \\
        --dedupe-against ../shared/data/deepshutdown/lyon_*/workloads/train \\
        --policies 'T0,T5,OR*,OR*-0.25=OR*:{"max_stretch": 0.25},OR*-1=OR*:{"max_stretch": 1},OR*+1min=oracles:OffReservationForesight'
"""
from __future__ import annotations

import bisect
import math
from typing import Any

from batsched_py.agents.deepscheduling.baselines import Saf
from batsched_py.agents.deepshutdown.baselines import OffReservationOracle
from batsched_py.models.document import read_workload_file
from batsched_py.policies.power import day_runtimes, day_workload, real_runtime


class _Runtimes:
    """Binds the real runtime of every job of the day."""

    def bind(self, scheduler: Any) -> None:
        super().bind(scheduler)
        self.runtimes = day_runtimes(scheduler)

    def runtime(self, job: Any) -> float:
        real = real_runtime(self.runtimes, str(job.id))
        return (job.walltime if real is None else real) or math.inf


class SafConfidence(Saf):
    """SAF whose area uses the runtime the agent can estimate: walltime x the user's recent
    runtime / walltime (the observation's confidence feature)."""

    def order(self, job: Any) -> float:
        return self.scheduler.confidence(job) * (job.walltime or math.inf) * job.res


class SafRuntimeOrder(_Runtimes, Saf):
    """SAF ordered by the real area (runtime x hosts); the head's reservation still by walltimes."""

    def order(self, job: Any) -> float:
        return self.runtime(job) * job.res


class SafRuntime(SafRuntimeOrder):
    """SAF with every walltime replaced by the real runtime: the order, the head's reservation and
    which jobs backfill."""

    def duration(self, job: Any) -> float:
        return self.runtime(job)

    def ends_at(self, job: Any) -> float:
        return job.start_time + self.runtime(job)


class SafNoReservation(Saf):
    """SAF without the head's reservation: the smallest-area job that fits now starts, whatever it
    delays (a list schedule).  No oracle: it asks whether a schedule outside EASY's family waits less."""

    def act(self) -> int:
        s = self.scheduler
        fitting = s.fitting()
        return min(fitting, key=lambda i: self.order(s.queue[i])) + 1 if fitting else 0


class SafRuntimeNoReservation(SafNoReservation, SafRuntimeOrder):
    """SAF without a reservation, ordered by the real area."""


class OffReservationForesight(OffReservationOracle):
    """``OR*`` that also knows the jobs submitted in the next ``horizon`` time units: it keeps on
    (does not reserve) the hosts they will ask for."""
    horizon = 1.0

    def bind(self, scheduler: Any) -> None:
        super().bind(scheduler)
        _, _, jobs = read_workload_file(day_workload(scheduler))
        self.arrivals = sorted((float(job["subtime"]), int(job["res"])) for job in jobs)
        self.times = [t for t, _ in self.arrivals]

    def free_hosts(self) -> int:
        now = self.scheduler.now
        first = bisect.bisect_right(self.times, now)
        last = bisect.bisect_right(self.times, now + self.horizon)
        return super().free_hosts() - sum(res for _, res in self.arrivals[first:last])
