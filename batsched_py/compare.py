"""Several policies on the same inputs, side by side: a small campaign on the campaign executor
(local processes or Ray), each run's Batsim files in ``OUTDIR/LABEL/``, a comparison table
(``OUTDIR/comparison.csv``) and plots.  :func:`compare` is the library function behind
``batsched-py compare``::

    from batsched_py.compare import CompareOptions, compare, parse_schedulers
    result = compare(CompareOptions(platform=Path("platform.xml"), workloads=(Path("w.json"),),
                                    runs=tuple(parse_schedulers("easy,fcfs")), outdir=Path("out")))
    result.rows        # one dict per run: the table's columns
"""
from __future__ import annotations

import os
import sys
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .campaigns.executor import Task, make_executor, progress
from .campaigns.simulation import SimulationSpec, check_inputs, simulate_to_files, with_inputs, write_files
from .emulator.outputs import remove_previous_outputs
from .errors import BatschedError, InputError
from .interrupts import signals_interrupt
from .metrics import compare_table, write_csv
from .metrics.time_unit import record_time_unit
from .platforms.time_unit import resolve_time_unit
from .plots.compare import comparison_plots
from .plots.gantt import plot_gantt
from .plots.power import plot_power_states
from .preflight import Notify, check_mmax, check_policy, check_published, plots_possible
from .scheduler.creation import json_object

#: One run of a comparison: (label, policy name, policy options), as :func:`parse_schedulers` gives.
RunSpec = tuple[str, str, dict[str, Any]]


@dataclass(frozen=True)
class CompareOptions:
    """What to compare, on which inputs, and where the outputs go.

    ``runs``: (label, policy, options) per run, e.g. from :func:`parse_schedulers`; labels name
    the folders ``outdir/LABEL``.  ``include_published``: directories of other schedulers' Batsim
    outputs (``out_jobs.csv``, ...) added to the table as ``published:NAME``.  ``jobs``: parallel
    local processes (0: one per core); ``address``: run on Ray instead ('local', 'auto',
    'ray://HOST:10001').  ``time_unit``: of the inputs, for labels (None: detected from the
    platform).  ``show_progress``: a progress bar on a terminal.
    """
    platform: Path
    workloads: tuple[Path, ...]
    runs: tuple[RunSpec, ...]
    outdir: Path
    energy: bool = False
    events: tuple[Path, ...] = ()
    mmax: int = 0
    include_published: tuple[Path, ...] = ()
    jobs: int = 0
    address: Optional[str] = None
    plots: bool = True
    time_unit: Optional[str] = None
    show_progress: bool = False


@dataclass
class Comparison:
    """What :func:`compare` wrote: ``rows`` (the table, in the order of the runs, published runs
    last), ``table`` (its CSV), ``plots`` (the figures drawn), ``results`` (the output prefix
    of each finished run, published ones included), ``failed`` (label -> error of each run that failed: raise
    :class:`RunsFailed` with it to fail as the command line does) and the ``time_unit`` used."""
    rows: list[dict[str, Any]]
    table: Path
    time_unit: str
    results: dict[str, Path]
    failed: dict[str, str] = field(default_factory=dict)
    plots: list[Path] = field(default_factory=list)


class RunsFailed(BatschedError):
    """Runs of a comparison failed: one line naming each run and its error."""

    def __init__(self, failed: dict[str, str]):
        super().__init__("; ".join(f"run {label} failed: {error}" for label, error in failed.items()))
        self.failed = failed


def parse_schedulers(spec: str) -> list[RunSpec]:
    """``'easy,fcfs,T5:timeout={"timeout": 5}'`` -> [(label, scheduler, options), ...].

    Commas inside a JSON object do not split.  ``LABEL:`` names a run; without
    it the label shows the options (``timeout(timeout=5)``); repeats get ``#2``.
    """
    items: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(spec + ","):
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            if not spec[start:i].strip():     # ('easy,,fcfs': a policy lost in editing, most likely)
                raise InputError(f"--schedulers {spec!r}: entry {len(items) + 1} is empty; name a policy "
                                 "between each two commas")
            items.append(spec[start:i].strip())
            start = i + 1
    if depth != 0:
        raise InputError(f"--schedulers {spec!r}: unbalanced braces in the options")
    runs: list[RunSpec] = []
    seen: dict[str, int] = {}
    for item in items:
        label = None
        if ":" in item.partition("{")[0]:  # LABEL:NAME[=JSON] names the run in tables and plots
            label, item = item.split(":", 1)
        name, _, text = item.partition("=")
        options = json_object(text, f"--schedulers: options of {name!r}") if text else {}
        base = label or (name + _short(options) if options else name)
        seen[base] = seen.get(base, 0) + 1
        runs.append((base if seen[base] == 1 else f"{base}#{seen[base]}", name, options))
    return runs


def _short(options: dict[str, Any]) -> str:
    return "(" + ",".join(f"{k}={v}" for k, v in options.items()) + ")"


def compare(options: CompareOptions, notify: Optional[Notify] = None) -> Comparison:
    """Run every policy of ``options.runs`` on the same inputs (in parallel), then write the
    comparison table and, when ``options.plots`` and matplotlib allow, the plots.

    A bad input raises :class:`~batsched_py.errors.InputError` before any run starts (each policy
    answers the simulation's first message first).  Runs that fail are listed in the result's
    ``failed``; when none finished, :class:`RunsFailed` is raised.  Notes and per-run progress
    lines go to ``notify`` (nothing is printed; with ``show_progress`` on a terminal, the per-run
    lines are written above the progress bar); Ctrl-C or SIGTERM stops the runs, the finished
    ones are kept and KeyboardInterrupt propagates.
    """
    say = notify or _silent
    runs = list(options.runs)
    published = _published_labels(list(options.include_published))
    _check_folders([label for label, _, _ in runs] + list(published), options.outdir)
    check_mmax(options.mmax, options.platform)
    # A bad input fails here, before any run starts.
    for label, name, policy_options in runs:
        check_policy(label, name, policy_options, platform=options.platform, workloads=options.workloads,
                     energy=options.energy, events=options.events, mmax=options.mmax)
    check_published(options.include_published, options.platform if options.energy else None, say)
    plots = options.plots and plots_possible(say)
    unit, note = resolve_time_unit(options.time_unit, options.platform)
    if note:
        say(f"batsched-py compare: {note}")
    outdir = options.outdir
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"-o {outdir}: cannot create the output directory ({exc.strerror or exc})") from None
    _forget_earlier_results(outdir, [label for label, _, _ in runs])
    results, failed = _run_all(options, runs, unit, say)
    for label, directory in published.items():
        results[label] = directory / "out"
    platform = options.platform if options.energy else None
    rows = compare_table(results, platform)
    write_csv(rows, outdir / "comparison.csv")
    paths: list[Path] = []
    if plots:
        paths = comparison_plots(results, outdir, platform=platform, time_unit=unit)
        for label, source in results.items():
            rundir = outdir / _safe(label)  # published runs are read, never written into
            rundir.mkdir(exist_ok=True)
            paths += plot_gantt(source, rundir / "gantt", title=f"{label}: jobs", time_unit=unit)
            paths += plot_power_states(source, rundir / "power_states", time_unit=unit,
                                       title=f"{label}: power and machine states")
    return Comparison(rows, outdir / "comparison.csv", unit, results, failed, paths)


def _silent(line: str) -> None:
    """The default ``notify``: a library caller that passes none hears nothing."""


def _forget_earlier_results(outdir: Path, labels: list[str]) -> None:
    """An earlier compare's table and these runs' files: left there, a run that does not finish
    now (interrupted, failed) would look finished."""
    (outdir / "comparison.csv").unlink(missing_ok=True)
    for label in labels:
        remove_previous_outputs(str(outdir / _safe(label) / "out"))


def _published_labels(directories: list[Path]) -> dict[str, Path]:
    """``published:NAME`` per --include-published folder; repeats get ``#2``, as in --schedulers."""
    labels: dict[str, Path] = {}
    for directory in directories:
        base = label = f"published:{directory.name}"
        n = 1
        while label in labels:
            n += 1
            label = f"{base}#{n}"
        labels[label] = directory
    return labels


def _check_folders(labels: list[str], outdir: Path) -> None:
    """Each run's files and plots go into ``DIR/LABEL``: two labels must not share one."""
    seen: dict[str, str] = {}
    for label in labels:
        folder = _safe(label)
        if folder in (".", ".."):
            raise InputError(f"--schedulers: label {label!r} cannot name a folder in {outdir}")
        if seen.get(folder) == label:     # ('easy#2:fcfs,easy,easy': the repeat is numbered easy#2 too)
            raise InputError(f"--schedulers: label {label!r} names two runs; give them distinct labels")
        if folder in seen:
            raise InputError(f"--schedulers: labels {seen[folder]!r} and {label!r} would share the folder "
                           f"{outdir / folder}; give them distinct labels")
        seen[folder] = label


def _count(n: int, noun: str) -> str:
    """``1 run``, ``2 runs``, ``1 process``, ``2 processes``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}{'es' if noun.endswith('s') else 's'}"


def _run_all(options: CompareOptions, runs: list[RunSpec], unit: str,
             say: Notify) -> tuple[dict[str, Path], dict[str, str]]:
    """Every run on the executor, its files written into ``DIR/LABEL/`` as soon as it ends.
    Ctrl-C or SIGTERM: no run starts any more, running ones stop, finished ones stay."""
    outdir = options.outdir
    specs = {label: SimulationSpec(str(options.platform), tuple(map(str, options.workloads)), name, policy_options,
                                   options.energy, tuple(map(str, options.events)), options.mmax)
             for label, name, policy_options in runs}
    for spec in specs.values():      # a missing input fails here, before any run starts
        problem = check_inputs(spec, "compare")
        if problem:
            raise InputError(problem)
    executor = make_executor(options.address, min(options.jobs or os.cpu_count() or 1, len(runs)))
    finished: dict[str, Path] = {}
    failed: dict[str, str] = {}
    bar = None
    try:
        tasks = [Task(label, simulate_to_files, (with_inputs(spec) if executor.ships_inputs else spec,))
                 for label, spec in specs.items()]
        say(f"compare: {_count(len(tasks), 'run')} on {executor.describe()}")
        bar = progress(len(tasks), "runs", options.show_progress)
        with signals_interrupt(), closing(executor.run(tasks)) as outcomes:
            for outcome in outcomes:
                if outcome.ok:
                    prefix = outdir / _safe(outcome.name) / "out"
                    write_files(outcome.value, prefix)
                    record_time_unit(prefix, unit, options.platform)
                    finished[outcome.name] = prefix
                else:
                    failed[outcome.name] = outcome.error or ""
                line = f"  {'done' if outcome.ok else 'failed'}: {outcome.name}"
                if bar is not None:
                    bar.update()
                    bar.write(line, file=sys.stderr)   # above the bar, not through it
                else:
                    say(line)
    except KeyboardInterrupt:
        left = [label for label, _, _ in runs if label not in finished and label not in failed]
        say(f"compare: interrupted; {_count(len(finished), 'finished run')} kept in {outdir}"
            + (f" ({', '.join(finished)})" if finished else "") + f"; not finished: {', '.join(left)}")
        raise
    finally:
        if bar is not None:
            bar.close()
        executor.close()
    # Tables and messages keep the order of --schedulers, whatever order the runs ended in.
    failed = {label: failed[label] for label, _, _ in runs if label in failed}
    if not finished:
        raise RunsFailed(failed)
    return {label: finished[label] for label, _, _ in runs if label in finished}, failed


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.#" else "_" for c in label)
