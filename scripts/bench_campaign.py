#!/usr/bin/env python3
"""The 52-week Taurus study as a campaign: sequential in this process vs the local executor
(and optionally a local Ray instance), wall time and speed-up on this machine.

4 policies (easy; easy with timeout shutdown T=5, 1 and 0 minutes, 12 cores per node) x the 52
weekly Grid'5000 Lyon Taurus workloads of 2016 (GridGym's ``lyon_taurus_2016_*.json``, from
``../shared/data/gridgym`` or ``$BATSCHED_PY_SHARED``) on ``platforms/taurus_168.xml``, energy on.
Without the shared data, the stand-in is the repository's one Taurus week
(``workloads/taurus_2016-03-27.json``) copied 52 times, which has the same size per run but not
the year's variety; the output says which was used.

Each mode runs the whole campaign into its own folder (Batsim's CSVs per run plus
results.sqlite); the script then checks that every mode wrote the same bytes (schedule.csv's
wall-clock columns aside).

Usage: python scripts/bench_campaign.py [--quick] [--jobs N] [--ray] [--address ADDR]
  --quick: 8 weeks instead of 52;  --ray: also a local Ray instance;  --address: also that Ray cluster
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from batsched_py.campaigns.campaign import run_campaign  # noqa: E402
from batsched_py.campaigns.executor import Executor, LocalExecutor, Outcome, RayExecutor, Task  # noqa: E402
from batsched_py.campaigns.simulation import without_wall_clock  # noqa: E402
from batsched_py.campaigns.spec import load_campaign  # noqa: E402

SHARED = Path(os.environ.get("BATSCHED_PY_SHARED", REPO.parent / "shared"))
WEEKS = SHARED / "data" / "gridgym" / "others" / "workloads" / "lyon_2016"
PLATFORM = REPO / "platforms" / "taurus_168.xml"
STAND_IN = REPO / "workloads" / "taurus_2016-03-27.json"
POLICIES = {"easy": ("easy", {}), **{f"T{t}": ("timeout", {"base": "easy", "timeout": t, "cores_per_node": 12})
                                     for t in (5, 1, 0)}}


class InProcess(Executor):
    """The baseline: one run after the other in this process."""

    def describe(self) -> str:
        return "this process, one run at a time"

    def run(self, tasks):
        for task in tasks:
            started = time.perf_counter()
            yield Outcome(task.name, task.fn(*task.args), wall_s=time.perf_counter() - started)


def weeks(count: int, folder: Path) -> tuple[list[Path], str]:
    found = sorted(WEEKS.glob("lyon_taurus_2016_2016-*.json"))[:count]
    if len(found) == count:
        return found, f"{count} Grid'5000 Lyon Taurus weeks of 2016 ({WEEKS})"
    copies = []
    for i in range(count):
        copies.append(folder / f"standin_week{i:02d}.json")
        shutil.copyfile(STAND_IN, copies[-1])
    return copies, f"STAND-IN: {STAND_IN.name} copied {count} times ({WEEKS} not found)"


def write_campaign(folder: Path, workloads: list[Path]) -> Path:
    path = folder / "campaign.toml"
    lines = ['output = "out"', "energy = true", f"[platforms]\ntaurus = {json.dumps(str(PLATFORM))}",
             "[workloads]", "weeks = [" + ", ".join(json.dumps(str(w)) for w in workloads) + "]"]
    for name, (scheduler, options) in POLICIES.items():
        lines += [f"[policies.{name}]", f'scheduler = "{scheduler}"', f"options = {json.dumps(json.dumps(options))}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): without_wall_clock(p.name, p.read_bytes()) for p in sorted(folder.rglob("*.csv"))}


def timed(label: str, campaign_file: Path, make: Callable[[], Executor]) -> tuple[float, dict[str, bytes]]:
    """Wall time of the whole command: the executor's start (Ray's is seconds), the runs and the
    stores, as a user's ``campaign run`` would pay it."""
    campaign = load_campaign(campaign_file)
    started = time.perf_counter()
    executor = make()
    try:
        report = run_campaign(campaign, executor, show_progress=True)
        where = executor.describe()
    finally:
        executor.close()
    elapsed = time.perf_counter() - started
    if report.failed:
        raise SystemExit(f"{label}: {len(report.failed)} runs failed, e.g. {next(iter(report.failed.items()))}")
    print(f"{label:<26} {elapsed:8.2f} s   ({len(report.done)} runs on {where})", flush=True)
    return elapsed, tree(campaign.output / "runs")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 weeks instead of 52")
    parser.add_argument("--jobs", type=int, default=0, help="local worker processes (default: number of cores)")
    parser.add_argument("--ray", action="store_true", help="also time a local Ray instance started here")
    parser.add_argument("--address", help="also time this Ray cluster ('auto' or 'ray://HOST:10001')")
    args = parser.parse_args(argv)
    count = 8 if args.quick else 52
    modes: list[tuple[str, Callable[[], Executor]]] = [("sequential (in process)", InProcess),
                                                       ("local executor", lambda: LocalExecutor(args.jobs))]
    if args.ray:
        modes.append(("Ray, local instance", lambda: RayExecutor(None)))
    if args.address:
        modes.append((f"Ray at {args.address}", lambda: RayExecutor(args.address)))
    with tempfile.TemporaryDirectory(prefix="bench-campaign-") as tmp:
        root = Path(tmp)
        workloads, source = weeks(count, root)
        print(f"{count} weeks x {len(POLICIES)} policies = {count * len(POLICIES)} runs; {source}; "
              f"{os.cpu_count()} cores", flush=True)
        results = {}
        for i, (label, make) in enumerate(modes):
            folder = root / f"mode{i}"
            folder.mkdir()
            results[label] = timed(label, write_campaign(folder, workloads), make)
        base_label, (base, reference) = next(iter(results.items()))
        for label, (elapsed, files) in list(results.items())[1:]:
            same = "identical outputs" if files == reference else "OUTPUTS DIFFER"
            print(f"speed-up of {label}: {base / elapsed:.2f}x over {base_label}; {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
