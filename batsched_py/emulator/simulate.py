"""In-process API: run a whole simulation against a Scheduler (or any exchange callable), the
emulator being a caller-driven Backend (:class:`Emulation`) driven as real Batsim is
(transport/backend.py)."""
from __future__ import annotations

import gc
import re
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generator, Iterator, Mapping, Optional, Sequence

from procset import ProcSet

from .. import protocol as p
from ..interrupts import interruption
from ..models.document import WorkloadError, read_workload_file
from ..models.errors import EmulatorError, NetworkNotModelledWarning
from ..models.events_file import load_events
from ..models.platform import load_platform
from ..models.thermal import THERMAL_SUFFIX, ThermalModel, ThermalParams
from ..models.workload import Job, load_workload, nb_res_of
from ..scheduler import Session
from ..transport.backend import Exchange, drive
from .engine import Engine
from .machines import Machines
from .options import EngineOptions
from .outputs import OutputWriters
from .progress import progress_bar

__all__ = ["simulate", "run_engine", "Emulation", "SimulationResult", "JobOutcome"]


@dataclass(slots=True)
class JobOutcome:
    job_id: str
    workload: str
    profile: str
    submission_time: float
    requested_resources: int
    requested_time: float
    final_state: str
    starting_time: float
    execution_time: float
    finish_time: float
    allocated_resources: Optional[ProcSet]
    consumed_energy: float
    metadata: str


class JobOutcomes(Mapping[str, JobOutcome]):
    """Each job's outcome by id, built when first read: most runs (campaigns, environments) never
    read them, and KTH-SP2's 27,954 took ~25 ms of each run.  Pickled as the plain dict."""

    __slots__ = ("_jobs", "_outcomes")

    def __init__(self, jobs: dict[str, Job]):
        self._jobs = jobs       # (the ended run's jobs, which nothing changes any more)
        self._outcomes: Optional[dict[str, JobOutcome]] = None

    def _built(self) -> dict[str, JobOutcome]:
        if self._outcomes is None:
            self._outcomes = {job_id: _outcome(job) for job_id, job in self._jobs.items()}
            self._jobs = {}
        return self._outcomes

    def __getitem__(self, job_id: str) -> JobOutcome:
        return self._built()[job_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._jobs) if self._outcomes is None else len(self._outcomes)

    def __repr__(self) -> str:
        return repr(self._built())

    def __reduce__(self):
        return dict, (self._built(),)


@dataclass
class SimulationResult:
    end_time: float
    consumed_energy: Optional[float]
    jobs: Mapping[str, JobOutcome]      # a JobOutcomes
    output_prefix: Optional[Path]
    messages: int
    complete: bool


def run_engine(platform: str | Path, workloads: Sequence[str | Path], exchange: Exchange, *,
               output_prefix: str | Path | None = None, energy: bool = False,
               events: Sequence[str | Path] = (), mmax: int = 0, mmax_workload: bool = False,
               master_host: str = "master_host", progress: bool = False,
               options: Optional[EngineOptions] = None, machine_states: bool = True,
               thermal: Optional[ThermalParams] = None) -> SimulationResult:
    """Load inputs, answer each request with ``exchange``; outputs are closed (marked incomplete on error).
    ``machine_states=False`` (Batsim's --disable-machine-state-tracing) writes no PREFIX_machine_states.csv;
    ``thermal`` turns the processor power/temperature model on (PREFIX_thermal.csv, see thermal.py)."""
    with _quiet_gc(), _inputs_untraversed() as loaded:
        emulation = Emulation(platform, workloads, output_prefix=output_prefix, energy=energy, events=events,
                              mmax=mmax, mmax_workload=mmax_workload, master_host=master_host,
                              progress=progress, options=options, machine_states=machine_states,
                              thermal=thermal)
        loaded()
        with emulation:
            drive(exchange, emulation.engine)     # (its compiled start/send: see Emulation.send)
        return emulation.closed()


class Emulation:
    """One simulation driven by its caller, one request at a time (sans-IO, no thread): the
    emulator's :class:`~batsched_py.transport.backend.Backend`::

        with Emulation(platform, [workload]) as emulation:
            request = emulation.start()
            while request is not None:
                request = emulation.send(scheduler_reply_to(request))
        emulation.result

    Leaving the ``with`` block (or ``close()``) closes the output files, marked incomplete unless
    the simulation ended (an error, or a caller that stops early: ``unfinished`` says why, else
    'unknown error'); ``result`` then holds what was simulated.  The time between a request given
    and its reply is the scheduler's (the outputs' ``scheduling_time``), as Batsim counts it."""

    def __init__(self, platform: str | Path, workloads: Sequence[str | Path], *,
                 output_prefix: str | Path | None = None, energy: bool = False,
                 events: Sequence[str | Path] = (), mmax: int = 0, mmax_workload: bool = False,
                 master_host: str = "master_host", progress: bool = False,
                 options: Optional[EngineOptions] = None, machine_states: bool = True,
                 thermal: Optional[ThermalParams] = None, unfinished: Optional[str] = None):
        self.started = time.perf_counter()
        options = options or EngineOptions()
        options.energy = energy
        if mmax_workload:
            mmax = max((_nb_res(w) for w in workloads), default=0)
        plat = load_platform(platform, mmax=mmax, energy=energy, master_host=master_host)
        free_network = _has_no_links(platform)
        if plat.network_note:
            # Batsim's actors tell the server (on the master host) of job ends, switches and the
            # like with 1-byte messages that cross the platform's links (see network.py).
            warnings.warn(NetworkNotModelledWarning(
                f"{platform}: the emulator does not model this platform's network ({plat.network_note}): real "
                "Batsim's messages from its actors to its server cross links and arrive their latency later, "
                "while the emulator delivers them at once, so event times can differ from real Batsim's by that "
                "latency"), stacklevel=3)
        wls = [load_workload(w, f"w{i}", nb_hosts=plat.nb_hosts, free_network=free_network)
               for i, w in enumerate(workloads)]
        evs = [load_events(e, nb_hosts=plat.nb_hosts) for e in events]
        self.writers = None
        if output_prefix is not None:
            try:
                self.writers = OutputWriters(str(output_prefix), energy=energy, machine_states=machine_states)
            except OSError as exc:
                raise EmulatorError(f"output prefix {output_prefix}: cannot write {exc.filename} "
                                    f"({exc.strerror or exc})") from None
        self.output_prefix = Path(output_prefix) if output_prefix is not None else None
        self.energy = energy
        self.machines = Machines(plat, self.writers, energy_enabled=energy)
        self._thermal_file = None
        if thermal is not None:
            if output_prefix is not None:
                self._thermal_file = open(f"{output_prefix}{THERMAL_SUFFIX}", "w", buffering=1 << 16)
            self.machines.thermal = ThermalModel(thermal, plat.nb_hosts, self._thermal_file)
        update, self._close_bar = progress_bar(progress, sum(len(w.jobs) for w in wls))
        self.engine = Engine(plat, wls, evs, self.machines, self.writers, options, update)
        self.unfinished = unfinished
        self.error: Optional[str] = None
        self.result: Optional[SimulationResult] = None

    @property
    def now(self) -> float:
        """Simulated time."""
        return self.engine.now

    @property
    def complete(self) -> bool:
        """The simulation ended (its last reply applied)."""
        return self.engine.complete

    def start(self) -> p.Message:
        """The first request (SIMULATION_BEGINS and what comes with it)."""
        return self.engine.start()

    def send(self, reply: p.Message) -> Optional[p.Message]:
        """Apply the scheduler's ``reply``; the next request, or None once the simulation ended.
        (The Engine's, whose compiled start/send run_engine drives directly: a call less per message.)"""
        return self.engine.send(reply)

    def __enter__(self) -> "Emulation":
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if exc is not None and self.error is None:
            # (a scheduler crash, a protocol error, Ctrl-C or SIGTERM through signals_interrupt():
            # the incomplete outputs say what it was)
            self.error = (str(exc) if isinstance(exc, EmulatorError) else interruption(exc)
                          if isinstance(exc, KeyboardInterrupt) else f"{kind.__name__}: {exc}")
        self.close()

    def close(self) -> None:
        """Close the outputs (idempotent): ``result`` then holds what was simulated."""
        self.closed()

    def closed(self) -> SimulationResult:
        """Close the outputs (idempotent) and return the result of what was simulated."""
        if self.result is not None:
            return self.result
        engine, machines = self.engine, self.machines
        if not self.complete and self.error is None:
            self.error = self.unfinished
        try:
            self._close_bar()
            if machines.thermal is not None:
                machines.thermal.close(engine.now)
                if self._thermal_file is not None:
                    self._thermal_file.close()
            if self.writers is not None:
                self.writers.close(engine.now, machines.stats(engine.now), nb_jobs=engine.nb_submitted,
                                   scheduling_time=engine.scheduling_time,
                                   simulation_time=time.perf_counter() - self.started,
                                   complete=self.complete, error=self.error)
            self.result = SimulationResult(
                end_time=engine.now,
                consumed_energy=machines.consumed_energy(engine.now) if self.energy else None,
                jobs=JobOutcomes(engine.jobs),
                output_prefix=self.output_prefix, messages=engine.messages, complete=self.complete)
        finally:
            engine.close()
            engine.release()
        return self.result


def _nb_res(path: str | Path) -> int:
    """The ``nb_res`` of a workload file, for --mmax-workload."""
    try:
        data, _, _ = read_workload_file(path)
    except WorkloadError as exc:
        raise EmulatorError(f"--mmax-workload: {path}: {exc}") from None
    return nb_res_of(data, f"--mmax-workload: {path}")


@contextmanager
def _quiet_gc(young: int = 100_000):
    """Python's cyclic GC made rarer during a run: a run allocates millions of short-lived
    tuples and events, nearly all freed by reference counting, and keeps its inputs (jobs,
    profiles) until the end, so the default collections (every 700 allocations, full ones
    over every live object) find next to nothing.  Collections every ``young`` allocations
    saved ~4% of the whole KTH-SP2 run (SimGrid-free instruction counts).  The previous
    settings come back afterwards."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(young, thresholds[0]), max(50, thresholds[1]), max(100, thresholds[2]))
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


@contextmanager
def _inputs_untraversed() -> Generator[Callable[[], None], None, None]:
    """The cyclic GC kept off a run's inputs: off while they load (JSON documents, profiles and
    jobs hold no cycles, and KTH-SP2's load made one collection over them, ~10 ms), then, once the
    caller calls the function yielded, everything alive is frozen (gc.freeze): the run's
    collections never traverse it.  It is unfrozen (into the oldest generation) at the end.  Left
    alone when the caller froze objects itself or turned the GC off."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield lambda: None
        return

    def loaded() -> None:
        gc.freeze()
        gc.enable()

    gc.disable()
    try:
        yield loaded
    finally:
        gc.unfreeze()
        gc.enable()


def _has_no_links(platform: str | Path) -> bool:
    """True when the platform declares no link, backbone or cluster bandwidth: SimGrid then
    moves data instantly, so profiles with communications are exact without a network model."""
    try:
        text = Path(platform).read_text()
    except OSError:
        return False
    return re.search(r"<\s*(link|backbone)\b|<\s*cluster\b[^>]*\bbw\s*=", text) is None


def _outcome(j: Job) -> JobOutcome:
    started = j.start >= 0
    return JobOutcome(j.id, j.workload, j.profile, j.subtime, j.res,
                      -1.0 if j.walltime is None else j.walltime, j.state,
                      j.start if started else -1.0,
                      (j.finish - j.start) if started and j.finish >= 0 else -1.0,
                      j.finish, j.alloc, float(j.energy), j.metadata)


def simulate(platform: str | Path, workloads: Sequence[str | Path], scheduler: Any, *,
             output_prefix: str | Path | None = None, energy: bool = False,
             events: Sequence[str | Path] = (), mmax: int = 0, progress: bool = False,
             **batsim_options: Any) -> SimulationResult:
    """Run ``scheduler`` (a Scheduler, or a callable Message -> Message) in-process.

    batsim_options: forward_profiles, dynamic_jobs, ack_dynamic_jobs, profile_reuse,
    sched_config, forward_unknown_events, mmax_workload, master_host, machine_states,
    thermal (a thermal.ThermalParams: the processor power/temperature model, off by default).
    """
    if callable(scheduler) and not hasattr(scheduler, "schedule"):
        exchange = scheduler
    else:
        exchange = Session(scheduler).handle
    extra = {k: batsim_options.pop(k) for k in ("mmax_workload", "master_host", "machine_states", "thermal")
             if k in batsim_options}
    try:
        options = EngineOptions(**batsim_options)
    except TypeError as exc:
        raise EmulatorError(f"simulate(): {exc}") from None
    return run_engine(platform, workloads, exchange, output_prefix=output_prefix, energy=energy,
                      events=events, mmax=mmax, progress=progress, options=options, **extra)
