"""``batsched-py metrics``: summaries and per-job tables from Batsim outputs."""
from __future__ import annotations

import argparse
import glob
import sys
from pathlib import Path
from typing import Iterable

from ..argtypes import time_unit
from ..errors import BatschedError
from ..textfiles import os_error, refuse_overwriting
from ..metrics.checks import refuse_untrusted
from ..metrics.compare import compare_table, format_table, write_csv
from ..metrics.io import MetricsInputError, output_path, require_path
from ..metrics.jobs import read_jobs
from ..metrics.summary import write_job_table
from ..metrics.time_unit import runs_time_unit


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="batsched-py metrics",
        description="Compute scheduling and energy metrics from Batsim (or emulator) outputs. "
                    "Each SOURCE is an output prefix (PREFIX_jobs.csv exists) or a directory "
                    "with out_jobs.csv; name it with NAME=SOURCE.")
    p.add_argument("sources", nargs="+", metavar="[NAME=]SOURCE")
    p.add_argument("-p", "--platform", help="platform XML, for wasted energy (idle + switching)")
    p.add_argument("-o", "--output", help="write the summary table as CSV")
    p.add_argument("--jobs-csv", metavar="DIR",
                   help="write one per-job metrics CSV per run into DIR (NAME_job_metrics.csv)")
    p.add_argument("--all-columns", action="store_true", help="print every summary column")
    p.add_argument("--time-unit", type=time_unit, help="time unit of the runs, for the table's units (default: "
                                                      "the one `run` recorded, else detected from -p's switching "
                                                      "times, else s; energies are in watts times it)")
    p.add_argument("--force", action="store_true",
                   help="report on runs marked incomplete (PREFIX_INCOMPLETE) or holding files left by an "
                        "earlier run, with a warning, instead of refusing them")
    return p


def parse_sources(items: list[str]) -> dict[str, Path]:
    """``NAME=SOURCE`` or ``SOURCE`` (named after its last path component); two sources of one
    name are refused, as one would hide the other."""
    out: dict[str, Path] = {}
    for item in items:
        name, sep, source = item.partition("=")
        if not sep or output_path(item, "jobs") is not None:   # a path may hold '=' (lr=0.1/out)
            name, source = "", item
        name = name or Path(source).name
        if name in out:
            raise MetricsInputError(f"{out[name]} and {source} are both named {name!r}: "
                                    f"name them NAME={out[name]} OTHER={source}")
        out[name] = Path(source)
    return out


def _refuse_overwriting_runs(output: str, sources: Iterable[Path]) -> None:
    """-o naming one of the runs' files (PREFIX_jobs.csv, ...) would replace it by the table."""
    for source in sources:
        files = source.glob("out_*") if source.is_dir() else source.parent.glob(glob.escape(source.name) + "_*")
        for path in files:
            refuse_overwriting(output, path, "-o", "run's file")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        results = parse_sources(args.sources)
        refuse_untrusted(results.values(), args.force, "metrics")
        rows = compare_table(results, args.platform)
        if args.jobs_csv:
            Path(args.jobs_csv).mkdir(parents=True, exist_ok=True)
            for name, source in results.items():
                table = read_jobs(require_path(source, "jobs"))
                write_job_table(table, Path(args.jobs_csv) / f"{name}_job_metrics.csv")
        if args.output:
            _refuse_overwriting_runs(args.output, results.values())
            write_csv(rows, args.output)
        unit, note = runs_time_unit(args.time_unit, args.platform, results.values())
    except (BatschedError, ValueError, OSError) as exc:
        print(f"metrics: error: {os_error(exc) if isinstance(exc, OSError) else exc}", file=sys.stderr)
        return 2
    columns = list(rows[0]) if args.all_columns and rows else None
    if note:
        print(f"metrics: {note}", file=sys.stderr)
    print(format_table(rows, columns, unit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
