"""``batsched-py campaign run|status FILE``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

from ..argtypes import count
from ..campaigns.campaign import campaign_status, run_campaign
from ..campaigns.executor import make_executor
from ..campaigns.spec import load_campaign
from ..interrupts import exit_status, interruption
from .common import KNOWN_ERRORS, error_text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="batsched-py campaign",
        description="Run a campaign file (TOML, or YAML with pyyaml): platforms x workloads x policies x seeds "
                    "x repetitions. Each finished run is stored at once (a folder of Batsim CSVs and a row in "
                    "OUTPUT/results.sqlite); running it again resumes with the runs not done.")
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    rp = sub.add_parser("run", help="run the runs not done yet")
    rp.add_argument("file", type=Path)
    rp.add_argument("-j", "--jobs", type=count, default=0, help="local worker processes (default 0: number of cores)")
    rp.add_argument("--address", help="run on Ray: 'local' (a Ray instance started here), 'auto' (the cluster "
                                      "this machine belongs to) or 'ray://HOST:10001' (Ray Client)")
    rp.add_argument("--retries", type=count, default=2, help="retries of a run whose worker died (default 2)")
    rp.add_argument("--no-progress", action="store_true",
                    help="no progress bar on a terminal, no line per finished run elsewhere")
    sp = sub.add_parser("status", help="count the runs done, failed, interrupted and missing")
    sp.add_argument("file", type=Path)
    sp.add_argument("-v", "--verbose", action="store_true", help="list every run not done")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args) if args.action == "run" else _status(args)
    except KeyboardInterrupt as exc:     # before any run started (reading the file, starting Ray)
        print(f"batsched-py campaign {args.action}: {interruption(exc)}", file=sys.stderr)
        return exit_status(exc)
    except KNOWN_ERRORS as exc:
        print(f"batsched-py campaign {args.action}: error: {error_text(exc)}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    campaign = load_campaign(args.file)
    executor = make_executor(args.address, args.jobs, max_retries=args.retries)
    try:
        report = run_campaign(campaign, executor, show_progress=not args.no_progress)
    except KeyboardInterrupt as exc:
        partial = getattr(exc, "report", None)
        done = len(partial.done) if partial else 0
        left = len(partial.interrupted) if partial else 0
        print(f"batsched-py campaign run: {interruption(exc)}: {_runs(done)} finished and kept, {left} marked "
              f"interrupted; run it again to resume", file=sys.stderr)
        return exit_status(exc)
    finally:
        executor.close()
    print(f"campaign {campaign.path.name}: {_runs(len(report.done))} done now, {report.skipped} before, "
          f"{len(report.failed)} failed; results in {campaign.database}", file=sys.stderr)
    for run in campaign.runs:       # in the campaign's order, not the order the runs ended in
        if run.key in report.failed:
            print(f"  failed: {run.key}: {report.failed[run.key]}", file=sys.stderr)
    return 1 if report.failed else 0


def _status(args: argparse.Namespace) -> int:
    campaign = load_campaign(args.file, check_policies=False)
    states = campaign_status(campaign)
    total = len(campaign.runs)
    print(f"{campaign.path}: {_runs(total)}: " + ", ".join(f"{len(v)} {k}" for k, v in states.items()))
    if args.verbose:
        for state in ("failed", "interrupted", "missing"):
            for key in states[state]:
                print(f"  {state}: {key}")
    return 0


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"
