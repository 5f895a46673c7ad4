"""``batsched-py compare``: several policies, identical inputs, one table and one set of plots."""
import argparse
import os
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

from .cli import CliError, check_mmax, json_object, time_unit


def parse_schedulers(spec: str) -> list[tuple[str, str, dict[str, Any]]]:
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
                raise CliError(f"--schedulers {spec!r}: entry {len(items) + 1} is empty; name a policy "
                               "between each two commas")
            items.append(spec[start:i].strip())
            start = i + 1
    if depth != 0:
        raise CliError(f"--schedulers {spec!r}: unbalanced braces in the options")
    runs: list[tuple[str, str, dict[str, Any]]] = []
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


def compare(args: argparse.Namespace) -> list[dict[str, Any]]:
    from .metrics import compare_table, format_table, write_csv
    from .preflight import check_before_running
    runs = parse_schedulers(args.schedulers)
    published = _published_labels(args.include_published)
    _check_folders([label for label, _, _ in runs] + list(published), args.outdir)
    check_mmax(args)
    plots = check_before_running(runs, args)      # a bad input fails here, before any run starts
    args.time_unit = time_unit(args)
    outdir: Path = args.outdir
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"-o {outdir}: cannot create the output directory ({exc.strerror or exc})") from None
    _forget_earlier_results(outdir, [label for label, _, _ in runs])
    results, failed = _run_all(args, runs, outdir)
    for label, directory in published.items():
        results[label] = directory / "out"
    platform = args.platform if args.energy else None
    rows = compare_table(results, platform)
    write_csv(rows, outdir / "comparison.csv")
    print(format_table(rows, time_unit=args.time_unit))
    if plots:
        from .plots import comparison_plots
        from .plots.gantt import plot_gantt
        from .plots.power import plot_power_states
        paths = comparison_plots(results, outdir, platform=platform, time_unit=args.time_unit)
        for label, source in results.items():
            rundir = outdir / _safe(label)  # published runs are read, never written into
            rundir.mkdir(exist_ok=True)
            paths += plot_gantt(source, rundir / "gantt", title=f"{label}: jobs", time_unit=args.time_unit)
            paths += plot_power_states(source, rundir / "power_states", time_unit=args.time_unit,
                                       title=f"{label}: power and machine states")
        for path in paths:
            print(f"plot: {path}", file=sys.stderr)
    print(f"table: {outdir / 'comparison.csv'}", file=sys.stderr)
    if failed:
        raise _failures(failed)
    return rows


def _forget_earlier_results(outdir: Path, labels: list[str]) -> None:
    """An earlier compare's table and these runs' files: left there, a run that does not finish
    now (interrupted, failed) would look finished."""
    from .emulator.outputs import remove_previous_outputs
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
            raise CliError(f"--schedulers: label {label!r} cannot name a folder in {outdir}")
        if seen.get(folder) == label:     # ('easy#2:fcfs,easy,easy': the repeat is numbered easy#2 too)
            raise CliError(f"--schedulers: label {label!r} names two runs; give them distinct labels")
        if folder in seen:
            raise CliError(f"--schedulers: labels {seen[folder]!r} and {label!r} would share the folder "
                           f"{outdir / folder}; give them distinct labels")
        seen[folder] = label


def _count(n: int, noun: str) -> str:
    """``1 run``, ``2 runs``, ``1 process``, ``2 processes``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}{'es' if noun.endswith('s') else 's'}"


def _failures(failed: dict[str, str]) -> CliError:
    return CliError("; ".join(f"run {label} failed: {error}" for label, error in failed.items()))


def _run_all(args: argparse.Namespace, runs: list[tuple[str, str, dict[str, Any]]],
             outdir: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """Every run on the executor, its files written into ``DIR/LABEL/`` as soon as it ends.
    Ctrl-C or SIGTERM: no run starts any more, running ones stop, finished ones stay."""
    from .campaigns.executor import Task, make_executor, progress
    from .interrupts import signals_interrupt
    from .campaigns.simulation import SimulationSpec, check_inputs, simulate_to_files, with_inputs, write_files
    from .metrics.time_unit import record_time_unit
    specs = {label: SimulationSpec(str(args.platform), tuple(map(str, args.workload)), name, options, args.energy,
                                   tuple(map(str, args.events)), args.mmax) for label, name, options in runs}
    for spec in specs.values():      # a missing input fails here, before any run starts
        problem = check_inputs(spec, "compare")
        if problem:
            raise CliError(problem)
    executor = make_executor(getattr(args, "address", None), min(args.jobs or os.cpu_count() or 1, len(runs)))
    finished: dict[str, Path] = {}
    failed: dict[str, str] = {}
    bar = None
    try:
        tasks = [Task(label, simulate_to_files, (with_inputs(spec) if executor.ships_inputs else spec,))
                 for label, spec in specs.items()]
        print(f"compare: {_count(len(tasks), 'run')} on {executor.describe()}", file=sys.stderr)
        bar = progress(len(tasks), "runs")
        with signals_interrupt(), closing(executor.run(tasks)) as outcomes:
            for outcome in outcomes:
                if outcome.ok:
                    prefix = outdir / _safe(outcome.name) / "out"
                    write_files(outcome.value, prefix)
                    record_time_unit(prefix, args.time_unit, args.platform)
                    finished[outcome.name] = prefix
                else:
                    failed[outcome.name] = outcome.error or ""
                line = f"  {'done' if outcome.ok else 'failed'}: {outcome.name}"
                if bar is not None:
                    bar.update()
                    bar.write(line, file=sys.stderr)   # above the bar, not through it
                else:
                    print(line, file=sys.stderr)
    except KeyboardInterrupt:
        left = [label for label, _, _ in runs if label not in finished and label not in failed]
        print(f"compare: interrupted; {_count(len(finished), 'finished run')} kept in {outdir}"
              + (f" ({', '.join(finished)})" if finished else "") + f"; not finished: {', '.join(left)}",
              file=sys.stderr)
        raise
    finally:
        if bar is not None:
            bar.close()
        executor.close()
    # Tables and messages keep the order of --schedulers, whatever order the runs ended in.
    failed = {label: failed[label] for label, _, _ in runs if label in failed}
    if not finished:
        raise _failures(failed)
    return {label: finished[label] for label, _, _ in runs if label in finished}, failed


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.#" else "_" for c in label)
