"""``batsched-py``: the command line, the one place that knows argparse and prints to the user.
Each sub-command is a thin shell over a library call; its module here parses and prints."""
import argparse
import sys
import warnings
from typing import Callable, NoReturn, Optional, Sequence

from .. import __version__, compiled_modules
from ..interrupts import exit_status, interruption, run_command, signals_interrupt
from . import agents, campaign, emulate, metrics, platform, plot, workloads
from .common import KNOWN_ERRORS, error_text
from .compare import add_compare, cmd_compare
from .run import add_run, add_serve, cmd_list, cmd_run, cmd_serve

Main = Callable[[list[str]], int]


# Tools with their own parsers, mounted as sub-commands: name -> (main, one-line help).
DELEGATED: dict[str, tuple[Main, str]] = {
    "emulate": (emulate.main, "run the Batsim emulator as a drop-in `batsim` (REQ side, Batsim's flags)"),
    "swf2json": (workloads.main, "convert, clean, slice and split SWF traces into Batsim workloads"),
    "workload": (workloads.workload_main,
                 "characterise workloads (sequential submissions per day) and upgrade Batsim 3 workloads"),
    "platform": (platform.main, "generate energy-aware cluster platforms, upgrade Batsim 3 platforms"),
    "metrics": (metrics.main, "compute scheduling and energy metrics from Batsim output files"),
    "plot": (plot.main, "draw Gantt charts, power/state timelines, CDFs and comparisons"),
    "train": (agents.train_main, "train a DeepShutdown or DeepScheduling PPO agent on the emulator (rl extra)"),
    "evaluate": (agents.evaluate_main, "run agents and baselines on every day of a workload folder: days.csv, summary.csv, "
                            "figures"),
    "campaign": (campaign.main,
                 "run a campaign file (platforms x workloads x policies x seeds), resumable, locally or on Ray"),
}

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "serve": cmd_serve, "list-schedulers": cmd_list, "run": cmd_run, "compare": cmd_compare}


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
    add_serve(sub)
    add_run(sub)
    add_compare(sub)
    for name, (_, text) in DELEGATED.items():
        sub.add_parser(name, help=text, add_help=False)
    return parser


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    return f"batsched-py: warning: {message}\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    warnings.formatwarning = _one_line_warning   # a command line user needs no source location
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:
        return DELEGATED[argv[0]][0](argv[1:])
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
    except KNOWN_ERRORS as exc:
        print(f"batsched-py {args.command}: error: {error_text(exc)}", file=sys.stderr)
        return 2


def command() -> NoReturn:
    """The ``batsched-py`` process: :func:`main`, a signal anywhere ending it with its status."""
    run_command("batsched-py", main)
