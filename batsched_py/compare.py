"""``batsched-py compare``: several policies, identical inputs, one table and one set of plots."""
import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from .cli import CliError, json_object, time_unit
from .runner import run_simulation


def parse_schedulers(spec: str) -> list[tuple[str, str, dict[str, Any]]]:
    """``'easy,fcfs,T5:timeout={"timeout": 5}'`` -> [(label, scheduler, options), ...].

    Commas inside a JSON object do not split.  ``LABEL:`` names a run; without
    it the label shows the options (``timeout(timeout=5)``); repeats get ``#2``.
    """
    items, depth, start = [], 0, 0
    for i, ch in enumerate(spec + ","):
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            if spec[start:i].strip():
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
    if not runs:
        raise CliError("--schedulers needs at least one policy name")
    return runs


def _short(options: dict[str, Any]) -> str:
    return "(" + ",".join(f"{k}={v}" for k, v in options.items()) + ")"


def _one(args: tuple) -> tuple[str, str]:
    label, name, options, platform, workloads, energy, events, mmax, export = args
    run_simulation(platform, workloads, name, options, export=export, energy=energy, events=events, mmax=mmax)
    return label, export


def compare(args: argparse.Namespace) -> list[dict[str, Any]]:
    from .metrics import compare_table, format_table, write_csv
    from .preflight import check_before_running
    runs = parse_schedulers(args.schedulers)
    plots = check_before_running(runs, args)      # a bad input fails here, before any run starts
    args.time_unit = time_unit(args)
    outdir: Path = args.outdir
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"-o {outdir}: cannot create the output directory ({exc.strerror or exc})") from None
    tasks = [(label, name, options, args.platform, args.workload, args.energy, args.events, args.mmax,
              str(outdir / _safe(label) / "out")) for label, name, options in runs]
    workers = args.jobs or os.cpu_count() or 1
    results: dict[str, Path] = {}
    print(f"compare: {_count(len(tasks), 'run')} on {_count(min(workers, len(tasks)), 'process')}", file=sys.stderr)
    with ProcessPoolExecutor(max_workers=min(workers, len(tasks))) as pool:
        for label, prefix in pool.map(_one, tasks):
            print(f"  done: {label}", file=sys.stderr)
            results[label] = Path(prefix)
    for directory in args.include_published:
        results[f"published:{directory.name}"] = directory / "out"
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
    return rows


def _count(n: int, noun: str) -> str:
    """``1 run``, ``2 runs``, ``1 process``, ``2 processes``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}{'es' if noun.endswith('s') else 's'}"


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.#" else "_" for c in label)
