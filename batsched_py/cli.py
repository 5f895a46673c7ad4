"""``batsched-py``: the command line.  Each sub-command is a thin shell over a library call."""
import argparse
import json
import os
import sys
import warnings
from importlib import import_module
from pathlib import Path
from typing import Any, Optional, Sequence

from . import __version__, compiled_modules
from .argtypes import count, non_negative, time_unit as time_unit_arg
from .interrupts import exit_status, interruption, signals_interrupt
from .textfiles import json_fault, not_utf8, os_error
from .errors import BatschedError

# Tools with their own parsers, mounted as sub-commands: name -> (module, one-line help).
DELEGATED = {
    "emulate": ("batsched_py.emulator.cli:main", "run the Batsim emulator as a drop-in `batsim` (REQ side, Batsim's flags)"),
    "swf2json": ("batsched_py.workloads.cli:main", "convert, clean, slice and split SWF traces into Batsim workloads"),
    "workload": ("batsched_py.workloads.cli:workload_main",
                 "characterise workloads (sequential submissions per day) and upgrade Batsim 3 workloads"),
    "platform": ("batsched_py.platforms.cli:main", "generate energy-aware cluster platforms, upgrade Batsim 3 platforms"),
    "metrics": ("batsched_py.metrics.cli:main", "compute scheduling and energy metrics from Batsim output files"),
    "plot": ("batsched_py.plots.cli:main", "draw Gantt charts, power/state timelines, CDFs and comparisons"),
    "train": ("batsched_py.agents.common.cli:train_main",
              "train a DeepShutdown or DeepScheduling PPO agent on the emulator (rl extra)"),
    "evaluate": ("batsched_py.agents.common.cli:evaluate_main",
                 "run agents and baselines on every day of a workload folder: days.csv, summary.csv, figures"),
    "campaign": ("batsched_py.campaigns.cli:main",
                 "run a campaign file (platforms x workloads x policies x seeds), resumable, locally or on Ray"),
}


class CliError(BatschedError):
    """A user-facing failure: printed as one line, exit code 2."""


def _known_errors() -> tuple[type[BaseException], ...]:
    # Every error type that already names what and where; anything else is a bug and keeps its traceback.
    from .protocol import ProtocolError
    from .scheduler import DecisionError, PowerModelError, SessionError
    from .scheduler.registry import UnknownSchedulerError
    from .scheduler.failure import SchedulerFailure
    from .transport.zmq_server import PeerTimeout
    errors: list[type[BaseException]] = [CliError, ProtocolError, DecisionError, SessionError, PowerModelError,
                                         UnknownSchedulerError, PeerTimeout, SchedulerFailure, OSError]
    for module, names in (("batsched_py.models.errors", ("EmulatorError",)),
                          ("batsched_py.models.platform", ("PlatformError",)),
                          ("batsched_py.launcher", ("LaunchError",)),
                          ("batsched_py.policies.base", ("PolicyOptionError",)),
                          ("batsched_py.policies.profile", ("TimeResolutionError",)),
                          ("batsched_py.models.document", ("WorkloadError",)),
                          ("batsched_py.campaigns.executor", ("ExecutorError",))):
        try:
            mod = import_module(module)
        except ImportError:
            continue
        errors += [getattr(mod, n) for n in names if hasattr(mod, n)]
    return tuple(errors)


def parse_options(text: Optional[str]) -> dict[str, Any]:
    """``--config``: a JSON object given inline or as a path to a file."""
    if not text:
        return {}
    source = "--config"
    if not text.lstrip().startswith("{"):
        path = Path(text)
        if not path.is_file():
            raise CliError(f"--config {text!r} is neither a JSON object nor an existing file")
        try:
            source, text = str(path), path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise CliError(f"--config {text}: {not_utf8(exc)}") from None
    return json_object(text, source)


def json_object(text: str, source: str) -> dict[str, Any]:
    """Scheduler options: ``text`` must hold a JSON object; errors name ``source``."""
    try:
        options = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise CliError(f"{source}: {json_fault(exc)}") from None
    if not isinstance(options, dict):
        raise CliError(f"{source}: scheduler options must be a JSON object")
    return options


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="batsched-py",
        description="Python decision process for the Batsim simulator (Batsim 4.x JSON protocol), "
                    "with an embedded pure-Python Batsim 4.2.1 emulator.",
        epilog="Run `batsched-py COMMAND --help` for each command's options.")
    compiled = compiled_modules()
    parser.add_argument("--version", action="version", version=f"batsched-py {__version__}"
                        + (f" (compiled: {len(compiled)} modules)" if compiled else ""))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    sp = sub.add_parser("serve", help="serve one simulation to a real Batsim (bind a ZeroMQ REP socket)",
                        description="Bind a ZeroMQ REP socket, answer one Batsim simulation, exit.")
    _scheduler_args(sp)
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

    rp = sub.add_parser("run", help="run a whole simulation (emulator by default) and print a summary",
                        description="Simulate PLATFORM + WORKLOAD with a policy, write Batsim's output files "
                                    "and print a summary. Default backend: the embedded emulator.")
    _simulation_args(rp)
    _scheduler_args(rp)
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

    cp = sub.add_parser("compare", help="run several policies on the same inputs and compare them",
                        description="Run each policy on identical inputs (in parallel), then write a "
                                    "comparison table (terminal and CSV) and plots into DIR.")
    _simulation_args(cp)
    cp.add_argument("--schedulers", required=True,
                    help="comma-separated policies; NAME=JSON gives options and LABEL: names the run, "
                         "e.g. 'easy,fcfs,T5:timeout={\"timeout\":5}'")
    cp.add_argument("-o", "--outdir", required=True, type=Path, help="directory for outputs, table and plots")
    cp.add_argument("--include-published", nargs="*", default=[], type=Path, metavar="DIR",
                    help="directories holding Batsim outputs of other schedulers (out_jobs.csv, ...)")
    cp.add_argument("-j", "--jobs", type=count, default=0,
                    help="parallel local processes (default: number of cores; with --address, Ray's CPUs decide)")
    cp.add_argument("--address", help="run on Ray instead of local processes: 'local' (a Ray instance started "
                                      "here), 'auto' (this machine's cluster) or 'ray://HOST:10001' (the input "
                                      "files travel with the runs)")
    cp.add_argument("--no-plots", action="store_true", help="skip the plots")
    for q in (rp, cp):
        q.add_argument("--time-unit", type=time_unit_arg,
                       help="time unit of the inputs, for labels (default: detected from the platform: min when "
                            "its hosts switch on and off within 10 time units, as the Grid'5000 Taurus examples "
                            "do, whose energies are then in W·min; else s)")
    for name, (module, text) in DELEGATED.items():
        sub.add_parser(name, help=text, add_help=False)
    return parser


def _scheduler_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheduler", required=True, help="policy name (see list-schedulers)")
    p.add_argument("--config", help="policy options: a JSON object, inline or a file path")


def _simulation_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-p", "--platform", required=True, type=Path, help="SimGrid platform XML")
    p.add_argument("-w", "--workload", required=True, action="append", type=Path,
                   help="Batsim workload JSON (repeat for several workloads)")
    p.add_argument("-E", "--energy", action="store_true", help="enable the energy model and energy outputs")
    p.add_argument("--events", action="append", default=[], type=Path, help="external events file")
    p.add_argument("--mmax", type=count, default=0, help="use at most this many compute hosts (0: all)")


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    return f"batsched-py: warning: {message}\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    warnings.formatwarning = _one_line_warning   # a command line user needs no source location
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:
        module, _, function = DELEGATED[argv[0]][0].partition(":")
        return getattr(import_module(module), function)(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        with signals_interrupt():   # SIGTERM too closes the outputs, marked incomplete
            return COMMANDS[args.command](args)
    except KeyboardInterrupt as exc:
        print(f"batsched-py {args.command}: {interruption(exc)}", file=sys.stderr)
        return exit_status(exc)
    except _known_errors() as exc:
        print(f"batsched-py {args.command}: error: {os_error(exc) if isinstance(exc, OSError) else exc}",
              file=sys.stderr)
        return 2


def cmd_serve(args: argparse.Namespace) -> int:
    from .scheduler import create
    from .transport.zmq_server import serve
    scheduler = create_scheduler(create, args.scheduler, parse_options(args.config))
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


def create_scheduler(create, name: str, options: dict[str, Any]):
    """The policy, or one line saying why its constructor refused (a bad option, usually)."""
    try:
        return create(name, options)
    except _known_errors():
        raise
    except Exception as exc:
        from .scheduler.failure import describe
        raise CliError(f"scheduler {name!r} failed to start with options {json.dumps(options)}: "
                       f"{describe(exc)}") from exc


def cmd_list(args: argparse.Namespace) -> int:
    from .policies.options import describe_options
    from .scheduler import available
    schedulers = available()
    width = max(map(len, schedulers), default=0)
    for name, cls in schedulers.items():
        print(f"{name:<{width}}  {cls.description}")
        defaults = getattr(cls, "option_defaults", None)
        for line in describe_options(defaults()) if defaults else ():    # (a plugin's may not say)
            print(f"{'':<{width}}    {line}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from .runner import run_simulation, print_summary
    from .scheduler import create
    from .metrics.time_unit import record_time_unit
    policy = create_scheduler(create, args.scheduler, parse_options(args.config))
    export = str(args.outdir / "out") if args.outdir else export_prefix(args.export)
    check_mmax(args)
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
        raise CliError(f"-e {text!r}: an output prefix must not be empty; e.g. -e out/run writes "
                       "out/run_jobs.csv, ...")
    if text.endswith(("/", os.sep)):
        why = f"files would be {text}_jobs.csv, ..."
    elif Path(text).is_dir():
        why = f"metrics and plot would read {Path(text) / 'out'}_jobs.csv, ... in it, not {text}_jobs.csv"
    else:
        return text
    raise CliError(f"-e {text}: this prefix names a folder: {why}; give a file prefix such as "
                   f"-e {Path(text) / 'out'}, or -o {text}")


def check_mmax(args: argparse.Namespace) -> None:
    """--mmax above the platform's compute hosts limits nothing (Batsim ignores it): a mistake."""
    if args.mmax:
        from .models.platform import load_platform
        hosts = len(load_platform(args.platform).hosts)
        if args.mmax > hosts:
            raise CliError(f"--mmax {args.mmax}: the platform {args.platform} has only {hosts} compute hosts")


def time_unit(args: argparse.Namespace) -> str:
    """--time-unit, or the platform's detected one (said on stderr), or s."""
    from .platforms.time_unit import resolve_time_unit
    unit, note = resolve_time_unit(args.time_unit, args.platform)
    if note:
        print(f"batsched-py {args.command}: {note}", file=sys.stderr)
    return unit


def cmd_compare(args: argparse.Namespace) -> int:
    from .compare import compare
    compare(args)
    return 0


COMMANDS = {"serve": cmd_serve, "list-schedulers": cmd_list, "run": cmd_run, "compare": cmd_compare}

if __name__ == "__main__":
    sys.exit(main())
