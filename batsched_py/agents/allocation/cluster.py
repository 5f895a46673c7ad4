"""Processors running jobs first come first served, under the emulator's power/temperature model.

A :class:`Cluster` replays a :class:`~.cluster_jobs.Jobs` stream: jobs queue in submission order and the
head job is placed, on a processor with enough free cores, by whoever drives the cluster (an
allocator below, or the agent of the environment); :meth:`Cluster.next_head` runs arrivals and job
ends until the head can be placed.  Power and temperature come from
:class:`batsched_py.models.thermal.ThermalModel`, the model the emulator writes
``PREFIX_thermal.csv`` with, fed the same job starts and ends (a job takes the lowest free hosts
of its processor).

Allocators are callables ``(cluster, cores) -> processor`` (the processor must have the free cores):

- ``round_robin``: the next processor after the last one used that has room (next fit);
- ``greedy``: consolidation, the processor with the fewest free cores that has room;
- ``coolest``: the coolest processor that has room (also the agent's fallback);
- ``online_opt1``: the online optimiser of horizon 1, MPC over a model: the processor whose choice
  minimises the predicted power (% of the total) + alpha x mean temperature (C) one step ahead.
"""
from __future__ import annotations

import heapq
from collections import deque
from typing import Any, Callable, Optional

import numpy as np

from ...models.thermal import ThermalModel, ThermalParams
from .cluster_jobs import Jobs

Allocator = Callable[["Cluster", int], int]


class Cluster:
    """``nb_processors`` processors of ``params.cores`` cores replaying ``jobs``."""

    def __init__(self, jobs: Jobs, nb_processors: int, params: ThermalParams = ThermalParams()):
        self.jobs, self.params, self.n = jobs, params, nb_processors
        # (the physical model, or a learned predictor with the same face: predictor.PredictedModel)
        self.model: Any = ThermalModel(params, nb_processors * params.cores)
        self.host_free = np.ones(nb_processors * params.cores, dtype=bool)
        self.queue: deque[int] = deque()          # job indices, submission order
        self._next = 0                            # next job to arrive
        self._ends: list[tuple[float, int, np.ndarray]] = []   # (end time, job, its hosts)
        self.wait = np.full(len(jobs), np.nan)     # s, per started job
        self.last_used = -1                        # round robin's pointer

    @property
    def now(self) -> float:
        return self.model.now

    @property
    def free(self) -> np.ndarray:
        """Free cores per processor."""
        return self.params.cores - self.model.busy

    def head_cores(self, k: int = 0) -> int:
        """Cores the ``k``-th queued job asks (0 if none)."""
        return int(self.jobs.cores[self.queue[k]]) if len(self.queue) > k else 0

    def fits(self, cores: int) -> np.ndarray:
        return self.free >= cores

    def next_head(self, until: float = np.inf) -> Optional[int]:
        """Run arrivals and ends (those before ``until``) until the head job fits a processor: its
        cores, or None when the stream is over (or ``until`` reached: the model is then at ``until``).
        A baseline run up to the agent's decision time thus places the jobs the agent placed."""
        jobs = self.jobs
        while True:
            while self._next < len(jobs) and jobs.submit[self._next] <= self.now:   # (arrivals of now)
                self.queue.append(self._next)
                self._next += 1
            if self.queue and self.fits(self.head_cores()).any():
                return self.head_cores()
            arrival = jobs.submit[self._next] if self._next < len(jobs) else np.inf
            end = self._ends[0][0] if self._ends else np.inf
            t = min(arrival, end)
            if t >= until or t == np.inf:
                if until < np.inf:
                    self.model.advance(until)
                return None
            if arrival <= end:
                self.model.advance(arrival)
                self.queue.append(self._next)
                self._next += 1
            else:
                _, job, hosts = heapq.heappop(self._ends)
                self.host_free[hosts] = True
                self.model.hosts_changed(end, _intervals(hosts), -1)

    def place(self, processor: int) -> None:
        """Start the head job on ``processor`` (which must have room) now."""
        job = self.queue.popleft()
        size, cores = int(self.jobs.cores[job]), self.params.cores
        free = np.flatnonzero(self.host_free[processor * cores:(processor + 1) * cores])
        if len(free) < size:
            raise ValueError(f"processor {processor} has {len(free)} free cores, job needs {size}")
        hosts = processor * cores + free[:size]
        self.host_free[hosts] = False
        self.model.hosts_changed(self.now, _intervals(hosts), 1)
        self.wait[job] = self.now - self.jobs.submit[job]
        heapq.heappush(self._ends, (self.now + float(self.jobs.runtime[job]), job, hosts))
        self.last_used = processor

    def run(self, allocate: Allocator, until: float = np.inf) -> None:
        """Place every job with ``allocate`` up to ``until`` (the whole stream by default)."""
        while (cores := self.next_head(until)) is not None:
            self.place(allocate(self, cores))

    def finished(self) -> bool:
        return self._next >= len(self.jobs) and not self.queue and not self._ends

    # figures
    def total_power(self) -> float:
        """W the processors draw now."""
        return float(self.model.power.sum())

    def mean_temperature(self) -> float:
        return float(self.model.temperature.mean())


def _intervals(hosts: np.ndarray) -> list[tuple[int, int]]:
    """Sorted host ids as (first, last) runs of consecutive ids."""
    cuts = np.flatnonzero(np.diff(hosts) != 1) + 1
    return [(int(run[0]), int(run[-1])) for run in np.split(hosts, cuts)]


def round_robin(cluster: Cluster, cores: int) -> int:
    fits = np.flatnonzero(cluster.fits(cores))
    after = fits[fits > cluster.last_used]
    return int(after[0] if len(after) else fits[0])


def greedy(cluster: Cluster, cores: int) -> int:
    free = np.where(cluster.fits(cores), cluster.free, np.iinfo(np.int64).max)
    return int(np.argmin(free))


def coolest(cluster: Cluster, cores: int) -> int:
    return int(np.argmin(np.where(cluster.fits(cores), cluster.model.temperature, np.inf)))


def placement_costs(cluster: Cluster, cores: int, alpha: float, horizon: float) -> np.ndarray:
    """Per processor, the predicted cost of placing ``cores`` more there: % of the total power +
    alpha x mean temperature (C) after ``horizon`` s (the physical model; inf where it does not fit).
    Only the chosen processor changes, so one vectorised step gives every choice."""
    p, model = cluster.params, cluster.model
    u_now = model.utilisation
    u_new = (model.busy + cores) / p.cores
    t_same = p.relax(model.temperature, u_now, model.inlet, horizon)
    t_new = p.relax(model.temperature, u_new, model.inlet, horizon)
    w_same, w_new = p.power(u_now, t_same), p.power(u_new, t_new)
    power = w_same.sum() - w_same + w_new
    temperature = (t_same.sum() - t_same + t_new) / cluster.n
    cost = 100 * power / w_same.sum() + alpha * temperature
    return np.where(cluster.fits(cores), cost, np.inf)


def online_opt1(alpha: float, horizon: float = 600.0) -> Allocator:
    """The online optimiser of horizon 1 (one ``horizon`` s step of MPC) for weight ``alpha``."""
    def allocate(cluster: Cluster, cores: int) -> int:
        return int(np.argmin(placement_costs(cluster, cores, alpha, horizon)))
    return allocate


ALLOCATORS: dict[str, Allocator] = {"round_robin": round_robin, "greedy": greedy, "coolest": coolest}


def observation(model: ThermalModel, heads: list[int], limit: float) -> np.ndarray:
    """The agent's state: [u, t, w, c] per processor (utilisation, temperature, power, spare cores,
    each scaled to about 0-1: t over 100 C, w over the busy power, c over the processor's cores)
    then the cores of the ``J`` head jobs (0: none) over the processor's cores.  Spare cores are
    those the processor can take without settling above ``limit`` C (:func:`room`): a choice the
    fallback would override is then visibly one without room."""
    p = model.params
    per = np.stack([model.utilisation, model.temperature / 100.0, model.power / p.busy,
                    room(model, limit) / p.cores], axis=1)
    return np.concatenate([per.ravel(), np.asarray(heads, dtype=float) / p.cores]).astype(np.float32)


def room(model: ThermalModel, limit: float) -> np.ndarray:
    """Cores each processor can take without settling above ``limit`` C (at most its free cores)."""
    p = model.params
    more = np.arange(p.cores + 1)
    settles = p.steady_state((model.busy[:, None] + more) / p.cores, model.inlet[:, None])
    cool = (settles <= limit) & (more <= p.cores - model.busy[:, None])
    return np.maximum(cool.sum(axis=1) - 1, 0)


def overheats(model: ThermalModel, processor: int, cores: int, limit: float) -> bool:
    """Whether ``cores`` more on ``processor`` would take it above ``limit`` C once settled."""
    p = model.params
    u = (model.busy[processor] + cores) / p.cores
    return float(p.steady_state(u, model.inlet[processor])) > limit


def guarded(model: ThermalModel, fits: np.ndarray, processor: int, cores: int, limit: float) -> int:
    """The agent's choice, or the coolest processor with room when the choice has no room or would
    overheat (the thesis' fallback)."""
    if 0 <= processor < len(fits) and fits[processor] and not overheats(model, processor, cores, limit):
        return processor
    return int(np.argmin(np.where(fits, model.temperature, np.inf)))
