"""``batsched-py compare``: the command line of :func:`batsched_py.compare.compare`."""
import argparse
import sys
from pathlib import Path

from ..argtypes import count, time_unit as time_unit_arg
from ..compare import CompareOptions, RunsFailed, compare, parse_schedulers
from ..metrics import format_table
from .common import say, simulation_args
from .run import TIME_UNIT_HELP


def add_compare(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    cp = sub.add_parser("compare", help="run several policies on the same inputs and compare them",
                        description="Run each policy on identical inputs (in parallel), then write a "
                                    "comparison table (terminal and CSV) and plots into DIR.")
    simulation_args(cp)
    cp.add_argument("--schedulers", required=True,
                    help="comma-separated policies; NAME=JSON gives options and LABEL: names the run, "
                         "e.g. 'easy,fcfs,T5:timeout={\"timeout\":5}'")
    cp.add_argument("-o", "--outdir", required=True, type=Path, help="directory for outputs, table and plots")
    cp.add_argument("--include-published", nargs="*", default=[], type=Path, metavar="DIR",
                    help="directories holding Batsim outputs of other schedulers (out_jobs.csv, ...)")
    cp.add_argument("-j", "--jobs", type=count, default=0,
                    help="parallel local processes (default 0: number of cores; with --address, Ray's CPUs decide)")
    cp.add_argument("--address", help="run on Ray instead of local processes: 'local' (a Ray instance started "
                                      "here), 'auto' (this machine's cluster) or 'ray://HOST:10001' (the input "
                                      "files travel with the runs)")
    cp.add_argument("--no-plots", action="store_true", help="skip the plots")
    cp.add_argument("--time-unit", type=time_unit_arg, help=TIME_UNIT_HELP)


def cmd_compare(args: argparse.Namespace) -> int:
    options = CompareOptions(
        platform=args.platform, workloads=tuple(args.workload), runs=tuple(parse_schedulers(args.schedulers)),
        outdir=args.outdir, energy=args.energy, events=tuple(args.events), mmax=args.mmax,
        include_published=tuple(args.include_published), jobs=args.jobs, address=args.address,
        plots=not args.no_plots, time_unit=args.time_unit, show_progress=True)
    result = compare(options, say)
    print(format_table(result.rows, time_unit=result.time_unit))
    for path in result.plots:
        print(f"plot: {path}", file=sys.stderr)
    print(f"table: {result.table}", file=sys.stderr)
    if result.failed:
        raise RunsFailed(result.failed)
    return 0
