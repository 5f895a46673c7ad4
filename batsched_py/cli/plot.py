"""``batsched-py plot``: Gantt charts, power/state timelines, run comparisons."""
from __future__ import annotations

import argparse
import sys

from ..argtypes import time_unit
from ..errors import BatschedError
from ..metrics.checks import refuse_untrusted
from ..metrics.time_unit import runs_time_unit
from ..plots.compare import comparison_plots
from ..plots.gantt import plot_gantt
from ..plots.power import plot_power_states
from ..textfiles import os_error
from .metrics import parse_sources


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="batsched-py plot",
                                description="Plot Batsim outputs (PNG and PDF). SOURCE is an output "
                                            "prefix (PREFIX_jobs.csv) or a directory with out_jobs.csv. "
                                            "Needs matplotlib (the 'plot' extra).")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("gantt", help="Gantt chart of the jobs")
    g.add_argument("source")
    g.add_argument("-o", "--output", required=True, help="output path without extension")
    e = sub.add_parser("power", help="power and machine states over time")
    e.add_argument("source")
    e.add_argument("-o", "--output", required=True, help="output path without extension")
    c = sub.add_parser("compare", help="bar charts and CDFs comparing runs")
    c.add_argument("sources", nargs="+", metavar="[NAME=]SOURCE")
    c.add_argument("-o", "--outdir", required=True, help="directory for the figures")
    c.add_argument("-p", "--platform", help="platform XML (for wasted energy)")
    for q in (g, e):
        q.add_argument("-p", "--platform", help="platform XML, to detect its time unit (as run does)")
    for q in (g, e, c):
        q.add_argument("--time-unit", type=time_unit,
                       help="the runs' time unit, for labels (default: the one `run` recorded, else detected from "
                            "-p's switching times, else s; energies are then W x unit)")
    for q in (g, e):
        q.add_argument("--title", help="figure title (default: names the source)")
    for q in (g, e, c):
        q.add_argument("--force", action="store_true",
                       help="draw runs marked incomplete (SOURCE_INCOMPLETE) or holding files left by an earlier "
                            "run, with a warning, instead of refusing them")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        sources = parse_sources(args.sources) if args.command == "compare" else {args.source: args.source}
        refuse_untrusted(sources.values(), args.force, "plot")
        unit, note = runs_time_unit(args.time_unit, args.platform, sources.values())
        if note:
            print(f"plot: {note}", file=sys.stderr)
        if args.command == "gantt":
            paths = plot_gantt(args.source, args.output, title=args.title, time_unit=unit)
        elif args.command == "power":
            paths = plot_power_states(args.source, args.output, time_unit=unit, title=args.title)
        else:
            paths = comparison_plots(sources, args.outdir, args.platform, unit)
    except (ImportError, BatschedError, ValueError, OSError) as exc:
        print(f"plot: error: {os_error(exc) if isinstance(exc, OSError) else exc}", file=sys.stderr)
        return 2
    for path in paths:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
