"""SWF trace -> Batsim workload JSON, with the archive's cleaning rules.

Every job that is dropped or altered is counted under a named rule in a
:class:`ConversionReport`, so no change to the trace is silent.

Cleaning rules (checked in this order, a job counts under the first that fires):
  cancelled          status 5 (cancelled) in the log (kept with --keep-cancelled)
  no_runtime         runtime <= 0 or unknown: failed before start / not logged
  no_procs           neither requested nor allocated processors known (> 0)
  too_large          needs more processors than the platform has (res > nb_res)
  invalid_walltime   requested time 0 or negative (other than -1 = unknown)
  missing_walltime   requested time unknown (-1) and --missing-walltime drop
  short_walltime     walltime < runtime and --short-walltime drop
Adjustments (job kept, value changed) are counted in ``report.adjusted``.

Processors: requested processors if > 0, else allocated ones (see SwfJob.procs).

``legacy=True`` reproduces Batsim's historical ``swf_to_batsim_workload_compute_only.py``
(run with ``-t -gwo``): allocated processors, walltime = requested time, keep a
job only if procs > 0, runtime > 0 and walltime > runtime (strictly), ids
renumbered from 0, profile name = floor(runtime)+1 shared by jobs, profile
``cpu = (floor(runtime)+1) * speed`` (type ``parallel_homogeneous``, the Batsim 4
name of ``msg_par_hg``).
"""
from __future__ import annotations

import math
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .swf import SwfError, SwfJob, SwfTrace, read_swf

PWA_CITATION = ("Parallel Workloads Archive, D. G. Feitelson, D. Tsafrir, D. Krakov, "
                "'Experience with using the Parallel Workloads Archive', "
                "J. Parallel Distrib. Comput. 74(10):2967-2982, 2014")

TIME_UNITS = {"seconds": 1.0, "minutes": 60.0}
CANCELLED_STATUS = 5


@dataclass
class ConvertOptions:
    """How to turn SWF records into Batsim jobs (times in trace seconds)."""

    profile_type: str = "delay"            # "delay" or "compute"
    speed: float = 1e6                      # flop per time unit, compute profiles only
    time_unit: str = "seconds"              # "seconds" or "minutes"
    missing_walltime: str = "drop"          # drop | runtime | max | value:X (X in seconds)
    short_walltime: str = "raise"           # keep | drop | raise (walltime := runtime)
    keep_cancelled: bool = False
    nb_res: int | None = None               # default: header MaxProcs, else largest job
    shift_to_zero: bool = True
    start: float | None = None              # window on submit time, seconds since first submission
    end: float | None = None
    skip_jobs: int = 0                      # drop the first N cleaned jobs
    max_jobs: int | None = None             # keep at most N cleaned jobs
    renumber: bool = False                  # ids 0..n-1 instead of SWF job numbers
    legacy: bool = False
    legacy_walltime_factor: float | None = None  # legacy without -gwo: max(F*runtime, req)
    job_fields: bool = False                # also write the SWF user, group and queue of each job

    def __post_init__(self) -> None:
        if self.profile_type not in ("delay", "compute"):
            raise ValueError(f"profile_type must be delay or compute, not {self.profile_type!r}")
        if self.time_unit not in TIME_UNITS:
            raise ValueError(f"time_unit must be one of {sorted(TIME_UNITS)}")
        if self.short_walltime not in ("keep", "drop", "raise"):
            raise ValueError("short_walltime must be keep, drop or raise")
        parse_missing_walltime(self.missing_walltime)
        if self.speed <= 0:
            raise ValueError("speed must be > 0")
        if self.start is not None and self.end is not None and self.start >= self.end:
            raise ValueError(f"--start {self.start:g} is not before --end {self.end:g}: no job can be kept")
        if self.legacy_walltime_factor is not None and not self.legacy:
            raise ValueError("--legacy-walltime-factor needs --legacy")
        ignored = [flag for flag, given in (("--missing-walltime", self.missing_walltime != "drop"),
                                            ("--short-walltime", self.short_walltime != "raise"),
                                            ("--keep-cancelled", self.keep_cancelled)) if given]
        if self.legacy and ignored:
            raise ValueError(f"--legacy applies the old script's rules: {', '.join(ignored)} would be ignored")


def parse_missing_walltime(spec: str) -> tuple[str, float]:
    """Validate ``drop|runtime|max|value:X`` and split it into (mode, X); X is 0 but for value:X."""
    if spec in ("drop", "runtime", "max"):
        return spec, 0.0
    if spec.startswith("value:"):
        try:
            value = float(spec[len("value:"):])
        except ValueError:
            value = -1.0
        if value > 0:
            return "value", value
    raise ValueError(f"--missing-walltime must be drop, runtime, max or value:X (X>0), not {spec!r}")


@dataclass
class CleanJob:
    """A job kept after cleaning; times still in trace seconds, absolute."""

    job_id: int
    submit: float
    runtime: float
    walltime: float
    res: int
    user: int = -1
    group: int = -1
    queue: int = -1


@dataclass
class ConversionReport:
    source: str
    n_records: int = 0
    malformed: list[tuple[int, str]] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    adjusted: dict[str, int] = field(default_factory=dict)
    n_jobs: int = 0
    n_profiles: int = 0
    nb_res: int = 0

    def drop(self, rule: str) -> None:
        self.dropped[rule] = self.dropped.get(rule, 0) + 1

    def adjust(self, rule: str) -> None:
        self.adjusted[rule] = self.adjusted.get(rule, 0) + 1

    def to_dict(self) -> dict:
        return {"source": Path(self.source).name, "records": self.n_records,
                "malformed_lines": len(self.malformed), "dropped": dict(self.dropped),
                "adjusted": dict(self.adjusted), "jobs": self.n_jobs,
                "profiles": self.n_profiles, "nb_res": self.nb_res}

    def format(self) -> str:
        lines = [f"{self.source}: {self.n_records} records -> {self.n_jobs} jobs, "
                 f"{self.n_profiles} profiles, nb_res={self.nb_res}"]
        if self.malformed:
            lines.append(f"  malformed lines skipped: {len(self.malformed)} "
                         f"(first: {self.malformed[0][1]})")
        lines += [f"  dropped  {rule:<22} {n}" for rule, n in self.dropped.items()]
        lines += [f"  adjusted {rule:<22} {n}" for rule, n in self.adjusted.items()]
        return "\n".join(lines)


def _legacy_job(job: SwfJob, opts: ConvertOptions, report: ConversionReport) -> CleanJob | None:
    walltime = job.req_time
    if opts.legacy_walltime_factor is not None:
        walltime = max(opts.legacy_walltime_factor * job.runtime, job.req_time)
    if job.alloc_procs <= 0:
        report.drop("no_procs")
    elif job.runtime <= 0:
        report.drop("no_runtime")
    elif walltime <= job.runtime:
        report.drop("walltime_not_above_runtime")
    else:
        return CleanJob(job.job_id, max(0.0, job.submit), job.runtime, walltime, job.alloc_procs)
    return None


def _walltime(job: SwfJob, opts: ConvertOptions, max_req: float,
              report: ConversionReport) -> float | None:
    """Walltime for a job, or None when a rule drops it (counted in report)."""
    walltime = job.req_time
    if walltime == -1:
        mode, value = parse_missing_walltime(opts.missing_walltime)
        if mode == "drop":
            report.drop("missing_walltime")
            return None
        report.adjust(f"missing_walltime_{mode}")
        walltime = {"runtime": job.runtime, "max": max_req, "value": value}[mode]
    elif walltime <= 0:
        report.drop("invalid_walltime")
        return None
    if walltime < job.runtime:
        if opts.short_walltime == "drop":
            report.drop("short_walltime")
            return None
        if opts.short_walltime == "raise":
            report.adjust("walltime_raised_to_runtime")
            walltime = job.runtime
        else:
            report.adjust("walltime_below_runtime_kept")
    return walltime


def clean_jobs(trace: SwfTrace, opts: ConvertOptions, nb_res: int,
               report: ConversionReport) -> list[CleanJob]:
    """Apply the cleaning rules (module docstring) to every record."""
    if opts.legacy:
        return [j for j in (_legacy_job(job, opts, report) for job in trace.jobs) if j]
    max_req = max((j.req_time for j in trace.jobs if j.req_time > 0), default=0.0)
    if opts.missing_walltime == "max" and max_req <= 0:
        raise ValueError(f"{trace.path}: --missing-walltime max but no job has a walltime")
    kept = []
    lines: dict[int, int] = {}      # job number -> line of the kept job that has it
    for job in trace.jobs:
        if job.status == CANCELLED_STATUS and not opts.keep_cancelled:
            report.drop("cancelled")
        elif job.runtime <= 0:
            report.drop("no_runtime")
        elif job.procs <= 0:
            report.drop("no_procs")
        elif job.procs > nb_res:
            report.drop("too_large")
        else:
            walltime = _walltime(job, opts, max_req, report)
            if walltime is not None:
                if not opts.renumber and lines.setdefault(job.job_id, job.line) != job.line:
                    # (Batsim refuses a workload whose job ids repeat)
                    raise ValueError(f"{trace.path}:{job.line}: job number {job.job_id} was already used at line "
                                     f"{lines[job.job_id]}; --renumber numbers the jobs 0..n-1 instead")
                kept.append(CleanJob(job.job_id, job.submit, job.runtime, walltime, job.procs, job.user, job.group,
                                         job.queue))
    return kept


def select_jobs(jobs: list[CleanJob], opts: ConvertOptions, origin: float,
                report: ConversionReport) -> list[CleanJob]:
    """Time window then job-count slicing; removed jobs are counted too."""
    selected = []
    for job in jobs:
        rel = job.submit - origin
        if (opts.start is not None and rel < opts.start) or (opts.end is not None and rel >= opts.end):
            report.drop("outside_time_window")
        else:
            selected.append(job)
    head = selected[:opts.skip_jobs]
    tail = selected[opts.skip_jobs:]
    if opts.max_jobs is not None:
        tail, beyond = tail[:opts.max_jobs], tail[opts.max_jobs:]
        if beyond:
            report.dropped["beyond_max_jobs"] = len(beyond)
    if head:
        report.dropped["skipped_first_jobs"] = len(head)
    return tail


def _num(value: float) -> int | float:
    """Integers as ints so profile names and JSON stay short and readable."""
    return int(value) if float(value).is_integer() else value


def build_workload(jobs: list[CleanJob], opts: ConvertOptions, nb_res: int,
                   description: str, command: str) -> dict:
    """Batsim workload dict for already cleaned and selected jobs."""
    scale = TIME_UNITS[opts.time_unit]
    origin = min((j.submit for j in jobs), default=0.0) if opts.shift_to_zero else 0.0
    first = min(jobs, key=lambda j: j.submit, default=None)
    if first is not None and first.submit - origin < 0:
        raise SwfError(f"job {first.job_id}: submit time {first.submit:g} is negative, and Batsim refuses a negative "
                       "subtime; leave out --no-shift to start the workload at 0")
    out_jobs, profiles = [], {}
    for index, job in enumerate(jobs):
        runtime = job.runtime / scale
        if opts.legacy:
            grain = math.floor(job.runtime) + 1  # legacy unit-grain rounding, in seconds
            name = str(grain)
            profiles[name] = {"type": "parallel_homogeneous", "cpu": grain * opts.speed, "com": 0.0}
        elif opts.profile_type == "delay":
            name = f"delay_{_num(runtime)}"
            profiles[name] = {"type": "delay", "delay": _num(runtime)}
        else:
            name = f"compute_{_num(runtime)}"
            profiles[name] = {"type": "parallel_homogeneous", "cpu": runtime * opts.speed, "com": 0}
        out_jobs.append({
            "id": index if (opts.renumber or opts.legacy) else job.job_id,
            "subtime": _num((job.submit - origin) / scale),
            "walltime": _num(job.walltime / scale),
            "res": job.res,
            "profile": name,
            **({"user": job.user, "group": job.group, "queue": job.queue} if opts.job_fields else {}),
        })
    return {"version": 0, "command": command, "description": description,
            "nb_res": nb_res, "jobs": out_jobs, "profiles": profiles}


def describe(trace: SwfTrace, opts: ConvertOptions) -> str:
    """Provenance text stored in the JSON: source log, contributor, PWA citation."""
    parts = [f"Converted from SWF {Path(trace.path).name}"]
    if "Installation" in trace.header:
        parts.append(f"({trace.header.get('Computer', '')} at {trace.header['Installation']})")
    if "Acknowledge" in trace.header:
        parts.append(f"log contributed by {trace.header['Acknowledge']};")
    parts.append(f"time unit: {opts.time_unit}; source: {PWA_CITATION}")
    return " ".join(parts)


def default_nb_res(trace: SwfTrace, opts: ConvertOptions) -> int:
    if opts.nb_res is not None:
        if opts.nb_res < 1:
            raise ValueError("nb_res must be >= 1")
        return opts.nb_res
    size = trace.machine_size
    if size and size > 0:
        return size
    return max((j.procs for j in trace.jobs), default=1)


def prepare(trace: SwfTrace, opts: ConvertOptions) -> tuple[list[CleanJob], int, ConversionReport]:
    """Clean and slice a parsed trace; returns the jobs, nb_res and the report."""
    report = ConversionReport(source=trace.path, n_records=len(trace.jobs),
                              malformed=list(trace.malformed))
    nb_res = default_nb_res(trace, opts)
    origin = min((j.submit for j in trace.jobs), default=0.0)
    jobs = select_jobs(clean_jobs(trace, opts, nb_res, report), opts, origin, report)
    report.nb_res = nb_res
    return jobs, nb_res, report


def convert_trace(trace: SwfTrace, opts: ConvertOptions,
                  command: str | None = None) -> tuple[dict, ConversionReport]:
    """Convert a parsed trace to a Batsim workload dict plus its report."""
    jobs, nb_res, report = prepare(trace, opts)
    command = command if command is not None else shlex.join(sys.argv)
    workload = build_workload(jobs, opts, nb_res, describe(trace, opts), command)
    report.n_jobs, report.n_profiles = len(workload["jobs"]), len(workload["profiles"])
    workload["conversion"] = report.to_dict()
    return workload, report


def convert_swf(path: str | Path, opts: ConvertOptions | None = None, *,
                skip_malformed: bool = False, max_lines: int | None = None,
                show_progress: bool = False, command: str | None = None
                ) -> tuple[dict, ConversionReport]:
    """Read an SWF file (plain or .gz) and convert it; see module docstring."""
    trace = read_swf(path, skip_malformed=skip_malformed, max_lines=max_lines,
                     show_progress=show_progress)
    return convert_trace(trace, opts or ConvertOptions(), command)
