#!/usr/bin/env python3
"""Benchmark the in-process emulator: the whole KTH-SP2 golden case, then SWF scaling runs.

1. KTH-SP2 (27,954 jobs, ``--mmax 100``) with EASY: wall time, jobs/s, peak RSS, jobs whose start
   or hosts differ from real Batsim + batsched easy_bf, and (second run, under cProfile) the share
   of the engine side (everything but ``Session.handle``, i.e. engine + machines + outputs).
2. HPC2N and SDSC-BLUE (``convert_swf``, delay profiles) cut at 25k, 50k, 100k, 200k jobs:
   jobs/s per length and the fitted exponent of time vs n (least squares on log-log).

Usage: python scripts/bench_emulator.py [--quick]   (--quick: KTH only)
"""
from __future__ import annotations

import cProfile
import csv
import gzip
import json
import math
import pstats
import resource
import sys
import tempfile
import time
from pathlib import Path

from batsched_py.emulator import simulate
from batsched_py.platforms.generate import plain_cluster, platform_xml
from batsched_py.scheduler import create
from batsched_py.workloads import ConvertOptions, convert_swf

SHARED = Path(__file__).resolve().parents[2] / "shared"
KTH = SHARED / "golden" / "large-kth_sp2"
SWF = SHARED / "data" / "swf"
TRACES = ("HPC2N-2002-2.2-cln.swf.gz", "SDSC-BLUE-2000-4.2-cln.swf.gz")
LENGTHS = (25_000, 50_000, 100_000, 200_000)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_kth(rows: list) -> None:
    inputs = KTH / "inputs"
    platform, workload = inputs / "energy_platform_homogeneous_no_net_128.xml", inputs / "kth_sp2.json"
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        res = simulate(platform, [workload], create("easy"), output_prefix=Path(tmp) / "out", mmax=100)
        dt = time.perf_counter() - t0
    with gzip.open(KTH / "easy_bf_jobs.csv.gz", "rt") as f:
        want = {r["job_id"]: (r["starting_time"], r["allocated_resources"]) for r in csv.DictReader(f)}
    diff = sum(1 for jid, j in res.jobs.items()
               if want.get(jid.split("!", 1)[1]) != (f"{j.starting_time:.6f}", str(j.allocated_resources)))
    print(f"KTH-SP2 easy: {len(res.jobs)} jobs in {dt:.2f} s ({len(res.jobs) / dt:,.0f} jobs/s), "
          f"{res.messages} messages, peak RSS {peak_mb():.0f} MB, {diff} jobs differ from Batsim easy_bf",
          flush=True)
    prof = cProfile.Profile()
    with tempfile.TemporaryDirectory() as tmp:
        prof.enable()
        simulate(platform, [workload], create("easy"), output_prefix=Path(tmp) / "out", mmax=100)
        prof.disable()
    stats = pstats.Stats(prof)
    total = stats.total_tt
    handle = sum(v[3] for k, v in stats.stats.items() if k[2] == "handle" and "scheduler" in k[0])
    share = (total - handle) / total if total else 0.0
    print(f"  under cProfile: {total:.2f} s, Session.handle {handle:.2f} s, engine side {share:.0%} "
          f"(~{dt * share:.2f} s of the unprofiled run)", flush=True)
    rows.append(("KTH-SP2 easy (whole run)", f"{dt:.2f} s", f"{len(res.jobs) / dt:,.0f}",
                 f"engine ~{dt * share:.2f} s", f"{peak_mb():.0f} MB", f"{diff} differ"))


def fit_exponent(points: list[tuple[int, float]]) -> float:
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def run_swf(rows: list) -> None:
    for name in TRACES:
        path = SWF / name
        if not path.exists():
            print(f"{name}: absent, skipped")
            continue
        t0 = time.perf_counter()
        data, _report = convert_swf(path, ConvertOptions(max_jobs=max(LENGTHS), renumber=True))
        print(f"{name}: converted {len(data['jobs'])} jobs in {time.perf_counter() - t0:.1f} s", flush=True)
        points = []
        with tempfile.TemporaryDirectory() as tmp:
            plat = Path(tmp) / "platform.xml"
            plat.write_text(platform_xml(plain_cluster(int(data["nb_res"]), 1e6), energy=False))
            for n in LENGTHS:
                if n > len(data["jobs"]):
                    break
                jobs = data["jobs"][:n]
                used = {j["profile"] for j in jobs}
                wl = Path(tmp) / f"w{n}.json"
                wl.write_text(json.dumps(dict(data, jobs=jobs, profiles={k: v for k, v in data["profiles"].items()
                                                                          if k in used})))
                t0 = time.perf_counter()
                res = simulate(plat, [wl], create("easy"))
                dt = time.perf_counter() - t0
                points.append((n, dt))
                print(f"  {n:>7} jobs: {dt:6.2f} s  {len(res.jobs) / dt:>8,.0f} jobs/s  peak RSS {peak_mb():.0f} MB",
                      flush=True)
                rows.append((f"{name.split('-')[0]} {n}", f"{dt:.2f} s", f"{n / dt:,.0f}", "", f"{peak_mb():.0f} MB", ""))
        if len(points) > 1:
            k = fit_exponent(points)
            print(f"  fitted exponent of time vs n: {k:.2f}", flush=True)
            rows.append((f"{name.split('-')[0]} exponent", f"{k:.2f}", "", "", "", ""))


def main() -> None:
    if not KTH.exists():
        sys.exit(f"{KTH} not found")
    rows: list = []
    run_kth(rows)
    if "--quick" not in sys.argv:
        run_swf(rows)
    print("\n| run | time | jobs/s | split | peak RSS | vs Batsim |\n|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
