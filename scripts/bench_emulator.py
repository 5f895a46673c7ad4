#!/usr/bin/env python3
"""Benchmark the in-process emulator on the whole KTH-SP2 golden case (+ SWF scaling runs).

Prints wall time, jobs/s, peak memory, and how many jobs start at a different time than in
real Batsim's easy_bf run (batsched's EASY and ours are different implementations).
"""
from __future__ import annotations

import csv
import gzip
import math
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from batsched_py.emulator import simulate
from batsched_py.scheduler import available, create

SHARED = Path(__file__).resolve().parents[2] / "shared"
KTH = SHARED / "golden" / "large-kth_sp2"


def policy():
    name = "easy" if "easy" in available() else "fcfs"
    return name, create(name)


def run_kth() -> None:
    inputs = KTH / "inputs"
    workload = next(inputs.glob("*.json"))
    platform = next(inputs.glob("*.xml"))
    name, sched = policy()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        res = simulate(platform, [workload], sched, output_prefix=Path(tmp) / "out", mmax=100, progress=True)
        dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"KTH-SP2 with {name}: {len(res.jobs)} jobs in {dt:.2f} s ({len(res.jobs) / dt:,.0f} jobs/s), "
          f"peak RSS {peak:.0f} MB, {res.messages} messages")
    golden = KTH / "easy_bf_jobs.csv.gz"
    if golden.exists():
        with gzip.open(golden, "rt") as f:
            want = {r["job_id"]: float(r["starting_time"]) for r in csv.DictReader(f)}
        diff = sum(1 for jid, j in res.jobs.items() if abs(want.get(jid.split("!", 1)[1], -1) - j.starting_time) > 1e-6)
        print(f"  jobs whose starting time differs from real Batsim + batsched easy_bf: {diff}")
    if shutil.which("batsim"):
        print("  a batsim binary is on PATH: compare with `batsched-py run --backend batsim`")
    else:
        print("  no batsim binary on PATH: no direct speed ratio")


def run_swf_scaling() -> None:
    try:
        from batsched_py.workloads import swf_to_workload  # type: ignore[attr-defined]
    except ImportError:
        print("SWF scaling: batsched_py.workloads has no swf_to_workload yet; skipped")
        return
    for trace in sorted((SHARED / "data" / "swf").glob("*.swf.gz")):
        points = []
        for n in (25_000, 50_000, 100_000, 200_000):
            with tempfile.TemporaryDirectory() as tmp:
                wl, nb = swf_to_workload(trace, Path(tmp) / "w.json", max_jobs=n)
                plat = Path(tmp) / "p.xml"
                from batsched_py.platforms import generate   # type: ignore
                generate.write_homogeneous(plat, nb)            # type: ignore[attr-defined]
                t0 = time.perf_counter()
                res = simulate(plat, [wl], policy()[1])
                dt = time.perf_counter() - t0
            points.append((len(res.jobs), dt))
            print(f"{trace.name}: {len(res.jobs)} jobs {dt:.2f} s ({len(res.jobs) / dt:,.0f} jobs/s)", flush=True)
        if len(points) > 1:
            (n0, t0_), (n1, t1_) = points[0], points[-1]
            print(f"  fitted growth exponent: {math.log(t1_ / t0_) / math.log(n1 / n0):.2f}")


if __name__ == "__main__":
    if not KTH.exists():
        sys.exit(f"{KTH} not found")
    run_kth()
    run_swf_scaling()
