"""What ``compare`` checks before its first run, so that a bad input fails in one line at once
instead of after minutes of runs: every policy against the platform and the workloads (each
handles the simulation's first message), the published outputs it will read, and matplotlib."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .cli import CliError, create_scheduler


class _FirstMessageHandled(Exception):
    """Stops a check's simulation once the policy has answered the first message."""


def check_policy(label: str, name: str, options: dict[str, Any], args: argparse.Namespace) -> None:
    """``name`` is created with ``options`` and answers SIMULATION_BEGINS (and the jobs submitted
    at time 0) on these inputs; a CliError naming the run says why not."""
    from .emulator import simulate
    from .scheduler import Session, create
    try:
        policy = create_scheduler(create, name, options)
    except Exception as exc:
        raise CliError(f"--schedulers {label}: {exc}") from exc
    if getattr(policy, "needs_energy", False) and not args.energy:
        raise CliError(f"--schedulers {label}: {name} switches hosts on and off, which needs -E "
                       "(the energy model), as in Batsim")
    session = Session(policy)

    def first(message):
        session.handle(message)
        raise _FirstMessageHandled

    try:
        simulate(args.platform, args.workload, first, energy=args.energy, events=args.events, mmax=args.mmax)
    except _FirstMessageHandled:
        return
    except Exception as exc:
        raise CliError(f"--schedulers {label} on -p {args.platform}, -w {' '.join(map(str, args.workload))}: "
                       f"{exc}") from exc


def check_published(args: argparse.Namespace) -> None:
    """Each --include-published directory holds readable, whole outputs."""
    from .metrics import compare_table
    from .metrics.checks import run_problems
    from .metrics.io import MetricsInputError
    for directory in args.include_published:
        if not (directory / "out_jobs.csv").is_file():
            raise CliError(f"--include-published {directory}: no out_jobs.csv there")
        try:
            compare_table({directory.name: directory}, args.platform if args.energy else None)
        except (MetricsInputError, ValueError, OSError) as exc:
            raise CliError(f"--include-published {directory}: {exc}") from None
        for problem in run_problems(directory):
            print(f"compare: warning: --include-published {directory}: {problem}", file=sys.stderr)


def plots_possible(args: argparse.Namespace) -> bool:
    """False, with a note, when plots were asked for and matplotlib is missing."""
    if args.no_plots:
        return False
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("compare: matplotlib is not installed, so no plots (pip install 'batsched_py[plot]'; "
              "--no-plots silences this)", file=sys.stderr)
        return False
    return True


def check_before_running(runs: list[tuple[str, str, dict[str, Any]]], args: argparse.Namespace) -> bool:
    """Every check above; returns whether to draw plots."""
    for label, name, options in runs:
        check_policy(label, name, options, args)
    check_published(args)
    return plots_possible(args)
