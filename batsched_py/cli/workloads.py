"""Command-line entry points of the workloads package.

``main``          -> ``batsched-py swf2json``  (SWF trace to Batsim JSON)
``workload_main`` -> ``batsched-py workload``  (characterise, upgrade)
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from ..argtypes import count, non_negative, positive, positive_count
from ..errors import BatschedError
from ..interrupts import exit_status, interruption, signals_interrupt
from ..textfiles import os_error, refuse_overwriting, write_whole
from ..workloads.characterise import DEFAULT_GAP, sequential_shares, write_shares_csv
from ..workloads.convert import PWA_CITATION, ConversionReport, ConvertOptions, build_workload, describe, prepare
from ..workloads.episodes import split_episodes
from ..workloads.swf import SwfError, read_swf
from ..workloads.upgrade import upgrade_workload_file


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="batsched-py swf2json",
        description="Convert a Standard Workload Format trace (plain or .gz) to a Batsim "
                    "workload JSON, applying the Parallel Workloads Archive cleaning rules "
                    "(every dropped or adjusted job is counted in the printed report). "
                    f"Please cite the archive: {PWA_CITATION}.")
    p.add_argument("swf", help="input SWF file (.swf or .swf.gz)")
    p.add_argument("output", help="output JSON file; with --split, a prefix: PREFIX_<date>.json")
    g = p.add_argument_group("jobs and profiles")
    g.add_argument("--profile", choices=["delay", "compute"], default="delay",
                   help="delay profiles (default) or parallel_homogeneous with cpu = runtime*speed")
    g.add_argument("--speed", type=positive,
                   help="host speed in flop per time unit for compute profiles (default 1e6)")
    g.add_argument("--time-unit", choices=["seconds", "minutes"], default="seconds",
                   help="unit of times in the output (minutes divides all times by 60)")
    g.add_argument("--nb-res", type=positive_count, help="platform size (default: header MaxProcs/MaxNodes)")
    g.add_argument("--job-fields", action="store_true",
                   help="also write each job's SWF user, group and queue (-1: unknown), e.g. for VO shares")
    g.add_argument("--renumber", action="store_true", help="ids 0..n-1 instead of SWF job numbers")
    g.add_argument("--legacy", action="store_true",
                   help="reproduce Batsim's old swf_to_batsim_workload_compute_only.py -t -gwo "
                        "(allocated procs, keep walltime>runtime only, profile floor(runtime)+1)")
    g.add_argument("--legacy-walltime-factor", type=positive, metavar="F",
                   help="with --legacy: walltime = max(F*runtime, requested) (the old script without -gwo)")
    c = p.add_argument_group("cleaning")
    c.add_argument("--missing-walltime", default="drop", metavar="drop|runtime|max|value:X",
                   help="jobs without requested time: drop (default), use their runtime, the "
                        "largest requested time in the trace, or X seconds")
    c.add_argument("--short-walltime", choices=["keep", "drop", "raise"], default="raise",
                   help="jobs that ran longer than requested: raise walltime to runtime (default), "
                        "keep (Batsim will kill them) or drop")
    c.add_argument("--keep-cancelled", action="store_true", help="keep status-5 (cancelled) jobs that ran")
    c.add_argument("--skip-malformed", action="store_true",
                   help="count and skip malformed lines instead of failing on the first one")
    s = p.add_argument_group("slicing")
    s.add_argument("--no-shift", action="store_true", help="keep original submit times (default: first job at 0)")
    s.add_argument("--start", type=non_negative, help="keep jobs submitted >= START s after the first submission")
    s.add_argument("--end", type=non_negative, help="keep jobs submitted < END s after the first submission")
    s.add_argument("--skip-jobs", type=count, default=0, help="drop the first N cleaned jobs")
    s.add_argument("--max-jobs", type=count, help="keep at most N cleaned jobs")
    s.add_argument("--max-lines", type=positive_count, help="read only the first N lines of the file")
    s.add_argument("--split", choices=["day", "week"], help="write one workload per local day/week")
    o = p.add_argument_group("output")
    o.add_argument("--indent", type=count, help="JSON indentation (default: compact)")
    o.add_argument("--report", help="also write the conversion report as JSON to this file")
    o.add_argument("--allow-empty", action="store_true",
                   help="write a workload of 0 jobs when cleaning and slicing keep none (default: an error)")
    o.add_argument("-q", "--quiet", action="store_true", help="no progress, no report on stdout")
    return p


def _options(args: argparse.Namespace) -> ConvertOptions:
    if args.speed is not None and args.profile != "compute" and not args.legacy:
        raise ValueError("--speed sets the cpu of compute profiles (--profile compute or --legacy); "
                         "delay profiles have none")
    return ConvertOptions(
        profile_type=args.profile, speed=args.speed or ConvertOptions.speed, time_unit=args.time_unit,
        missing_walltime=args.missing_walltime, short_walltime=args.short_walltime,
        keep_cancelled=args.keep_cancelled, nb_res=args.nb_res, shift_to_zero=not args.no_shift,
        start=args.start, end=args.end, skip_jobs=args.skip_jobs, max_jobs=args.max_jobs,
        renumber=args.renumber, legacy=args.legacy,
        legacy_walltime_factor=args.legacy_walltime_factor, job_fields=args.job_fields)


def _write(data: dict, path: Path, indent: int | None) -> None:
    write_whole(path, json.dumps(data, indent=indent) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    written: list[Path] = []
    try:
        with signals_interrupt():
            return _convert(args, argv, written)
    except KeyboardInterrupt as exc:
        print(f"swf2json: {interruption(exc)}: {len(written)} workload file{'s' * (len(written) != 1)} written, "
              "whole; no other", file=sys.stderr)
        return exit_status(exc)
    except (BatschedError, ValueError, OSError) as exc:     # (OSError: unreadable input, unwritable output)
        print(f"swf2json: error: {os_error(exc) if isinstance(exc, OSError) else exc}", file=sys.stderr)
        return 2


def _refuse_overwriting_input(args: argparse.Namespace, out: Path, what: str = "output") -> None:
    """An output that is the input trace would replace it with JSON."""
    refuse_overwriting(out, args.swf, what, "input trace")


def _no_jobs(args: argparse.Namespace, report: ConversionReport) -> str:
    """Why no job is left, for the error (or the warning with --allow-empty)."""
    why = ", ".join(f"{n} {rule}" for rule, n in report.dropped.items())
    return (f"{args.swf}: no job to write: {report.n_records} records in the trace"
            + (f", dropped: {why}" if why else ""))


def _convert(args: argparse.Namespace, argv: list[str] | None, written: list[Path]) -> int:
    opts = _options(args)
    _refuse_overwriting_input(args, Path(args.output))
    if args.report:
        _refuse_overwriting_input(args, Path(args.report), "--report")
        refuse_overwriting(args.report, args.output, "--report", "output")
    if args.split and (args.output.endswith(("/", os.sep)) or Path(args.output).is_dir()):
        raise ValueError(f"{args.output}: with --split, OUTPUT is a file prefix and this one names a folder "
                         f"(files would be {Path(args.output) / '_DATE.json'}); give one such as "
                         f"{Path(args.output) / 'day'}")
    trace = read_swf(args.swf, skip_malformed=args.skip_malformed,
                     max_lines=args.max_lines, show_progress=not args.quiet)
    jobs, nb_res, report = prepare(trace, opts)
    if not jobs:
        if not args.allow_empty:
            raise ValueError(_no_jobs(args, report) + " (--allow-empty to write an empty workload)")
        print(f"swf2json: warning: {_no_jobs(args, report)}; writing an empty workload (--allow-empty)",
              file=sys.stderr)
    command = "batsched-py swf2json " + shlex.join(sys.argv[1:] if argv is None else argv)
    episodes = split_episodes(jobs, trace, args.split) if args.split else [("", jobs)]
    n_profiles = 0
    for label, episode in episodes:
        workload = build_workload(episode, opts, nb_res, describe(trace, opts), command)
        n_profiles = max(n_profiles, len(workload["profiles"]))
        out = Path(f"{args.output}_{label}.json") if label else Path(args.output)
        _refuse_overwriting_input(args, out)
        if label:
            workload["episode"] = {"period": args.split, "start": label}
        # Cleaning counts cover the whole trace (cleaning happens before slicing).
        workload["conversion"] = report.to_dict() | {"jobs": len(episode),
                                                     "profiles": len(workload["profiles"])}
        _write(workload, out, args.indent)
        written.append(out)
    report.n_jobs, report.n_profiles = len(jobs), n_profiles
    if args.report:
        _write(report.to_dict() | {"episodes": len(episodes)}, Path(args.report), 1)
    if not args.quiet:
        print(report.format())
        if args.split:
            print(f"  written {len(episodes)} {args.split} episodes as {args.output}_<date>.json")
    return 0


def _workload_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="batsched-py workload",
                                description="Workload utilities: characterise an SWF trace, "
                                            "upgrade a Batsim 3 workload to Batsim 4.")
    sub = p.add_subparsers(dest="command", required=True)
    ch = sub.add_parser("characterise", help="per-day share of sequential submissions, quartile bins")
    ch.add_argument("swf", help="input SWF file (.swf or .swf.gz)")
    ch.add_argument("-o", "--output", help="CSV output (default: table on stdout)")
    ch.add_argument("--gap", type=non_negative, default=DEFAULT_GAP,
                    help="max seconds since the previous submission to count as sequential (300)")
    ch.add_argument("--skip-malformed", action="store_true", help="skip malformed lines")
    up = sub.add_parser("upgrade", help="rename Batsim 3 profile types (msg_par_hg -> parallel_homogeneous...)")
    up.add_argument("input", help="Batsim 3 workload JSON")
    up.add_argument("output", help="Batsim 4 workload JSON to write")
    return p


def workload_main(argv: list[str] | None = None) -> int:
    args = _workload_parser().parse_args(argv)
    try:
        with signals_interrupt():
            if args.command == "upgrade":
                refuse_overwriting(args.output, args.input, "output", "Batsim 3 input")
                for change in upgrade_workload_file(args.input, args.output):
                    print(change)
            else:
                _characterise(args)
    except KeyboardInterrupt as exc:
        print(f"workload: {interruption(exc)} (outputs are written whole or not at all)", file=sys.stderr)
        return exit_status(exc)
    except (BatschedError, ValueError, OSError) as exc:
        print(f"workload: error: {os_error(exc) if isinstance(exc, OSError) else exc}", file=sys.stderr)
        return 2
    return 0


def _characterise(args: argparse.Namespace) -> None:
    if args.output:
        refuse_overwriting(args.output, args.swf, "-o", "input trace")
    rows = sequential_shares(read_swf(args.swf, skip_malformed=args.skip_malformed), args.gap)
    if not rows:
        raise SwfError(f"{args.swf}: no job to characterise")
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        write_shares_csv(rows, args.output)
        return
    print(f"{'day':<12} {'jobs':>6} {'seq':>6} {'share':>7} bin")
    for r in rows:
        print(f"{r.day:<12} {r.n_jobs:>6} {r.n_sequential:>6} {r.share:>7.3f} {r.quartile_bin:>3}")


if __name__ == "__main__":
    sys.exit(main())
