"""``batsched-py serve``, ``list-schedulers`` and ``run``: one policy, served to Batsim or run whole."""
import argparse
import os
import sys
from pathlib import Path

from ..argtypes import non_negative, time_unit as time_unit_arg
from ..errors import InputError
from ..metrics.time_unit import record_time_unit
from ..policies.options import describe_options
from ..preflight import check_mmax
from ..runner import print_summary, run_simulation
from ..scheduler import available
from ..scheduler.creation import create_scheduler
from ..transport.zmq_server import serve
from .common import parse_options, scheduler_args, simulation_args, time_unit

TIME_UNIT_HELP = ("time unit of the inputs, for labels (default: detected from the platform: min when its hosts "
                  "switch on and off within 10 time units, as the Grid'5000 Taurus examples do, whose energies "
                  "are then in W·min; else s)")


def add_serve(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    sp = sub.add_parser("serve", help="serve one simulation to a real Batsim (bind a ZeroMQ REP socket)",
                        description="Bind a ZeroMQ REP socket, answer one Batsim simulation, exit.")
    scheduler_args(sp)
    sp.add_argument("-s", "--socket", default="tcp://127.0.0.1:28000",
                    help="endpoint to bind (default: %(default)s, loopback only)")
    sp.add_argument("--timeout", type=non_negative, default=600.0,
                    help="give up when Batsim is silent this many seconds (0: wait forever; default %(default)s)")
    sp.add_argument("--busy-wait", type=non_negative, default=0.0, metavar="MICROSECONDS",
                    help="after each reply, poll this long for the next request before sleeping: a shorter "
                         "round trip on an idle machine, for at most this much CPU per message; do not use "
                         "it when simulations share the cores (default %(default)g: always sleep)")
    sp.add_argument("--transport", choices=("auto", "zmtp", "libzmq"), default="auto",
                    help="zmtp: speak ZeroMQ's wire protocol on a plain socket (tcp:// and ipc:// endpoints; the "
                         "shorter round trip); libzmq: pyzmq's REP socket (any endpoint libzmq binds); auto: zmtp "
                         "when the endpoint allows it (default)")
    sp.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")

    sub.add_parser("list-schedulers", help="list the registered policies and their options",
                   description="List the registered policies, each with a one-line description and its "
                               "options (--config) with their defaults.")


def add_run(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    rp = sub.add_parser("run", help="run a whole simulation (emulator by default) and print a summary",
                        description="Simulate PLATFORM + WORKLOAD with a policy, write Batsim's output files "
                                    "and print a summary. Default backend: the embedded emulator.")
    simulation_args(rp)
    scheduler_args(rp)
    where = rp.add_mutually_exclusive_group()
    where.add_argument("-e", "--export", default="out/out", metavar="PREFIX",
                       help="output prefix, as Batsim's -e: PREFIX_jobs.csv, PREFIX_schedule.csv, ... "
                            "(default %(default)s)")
    where.add_argument("-o", "--outdir", type=Path, metavar="DIR",
                       help="output directory, as compare's -o: DIR/out_jobs.csv, ... (the same as -e DIR/out)")
    rp.add_argument("--backend", choices=("emulator", "batsim", "docker"), default="emulator",
                    help="emulator (in-process, default), batsim (a local batsim binary) or docker (oarteam/batsim)")
    rp.add_argument("--timeout", type=non_negative, default=600.0,
                    help="batsim and docker backends: give up when Batsim is silent this many seconds (0: wait "
                         "forever; default %(default)g); the emulator does not wait, so it has none")
    rp.add_argument("--no-progress", action="store_true", help="no progress bar")
    rp.add_argument("--time-unit", type=time_unit_arg, help=TIME_UNIT_HELP)


def cmd_serve(args: argparse.Namespace) -> int:
    scheduler = create_scheduler(args.scheduler, parse_options(args.config))
    session = serve(scheduler, args.socket, timeout=args.timeout or None, busy_wait=args.busy_wait / 1e6,
                    transport=args.transport, on_bound=lambda bound: _tell_chosen_port(args.socket, bound))
    if not args.quiet:
        jobs = scheduler.jobs
        print(f"batsched-py serve: simulation ended at t={scheduler.now:g} after {session.messages} messages; "
              f"{len(jobs.finished)} jobs finished, {len(jobs.queue)} left in queue", file=sys.stderr)
    return 0


def _tell_chosen_port(asked: str, bound: str) -> None:
    # (even with -q: Batsim cannot connect to a port nobody knows)
    if bound != asked:
        print(f"batsched-py serve: listening on {bound}", file=sys.stderr, flush=True)


def cmd_list(args: argparse.Namespace) -> int:
    schedulers = available()
    width = max(map(len, schedulers), default=0)
    for name, cls in schedulers.items():
        print(f"{name:<{width}}  {cls.description}")
        defaults = getattr(cls, "option_defaults", None)
        for line in describe_options(defaults()) if defaults else ():    # (a plugin's may not say)
            print(f"{'':<{width}}    {line}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    policy = create_scheduler(args.scheduler, parse_options(args.config))
    export = str(args.outdir / "out") if args.outdir else export_prefix(args.export)
    check_mmax(args.mmax, args.platform)
    prefix = run_simulation(args.platform, args.workload, policy,
                            export=export, energy=args.energy, events=args.events, mmax=args.mmax,
                            backend=args.backend, timeout=args.timeout, progress=not args.no_progress)
    unit = time_unit(args)
    record_time_unit(prefix, unit, args.platform)
    print_summary(prefix, args.scheduler, args.platform, energy=args.energy, time_unit=unit)
    return 0


def export_prefix(text: str) -> str:
    """-e PREFIX: files are PREFIX_jobs.csv, ...; a prefix naming a folder would write them as
    out/_jobs.csv, which nothing reads back."""
    if not text.strip():
        raise InputError(f"-e {text!r}: an output prefix must not be empty; e.g. -e out/run writes "
                         "out/run_jobs.csv, ...")
    if text.endswith(("/", os.sep)):
        why = f"files would be {text}_jobs.csv, ..."
    elif Path(text).is_dir():
        why = f"metrics and plot would read {Path(text) / 'out'}_jobs.csv, ... in it, not {text}_jobs.csv"
    else:
        return text
    raise InputError(f"-e {text}: this prefix names a folder: {why}; give a file prefix such as "
                     f"-e {Path(text) / 'out'}, or -o {text}")
