#!/usr/bin/env python3
"""Benchmark the in-process emulator: the whole KTH-SP2 golden case, then SWF scaling runs.

Times the build of batsched_py that is imported: pure Python, or compiled with mypyc
(``batsched_py.compiled_modules()``); the output and the table's row labels say which.

1. KTH-SP2 (27,954 jobs, ``--mmax 100``) with EASY, best of 3: wall time, jobs/s, peak RSS, jobs
   whose start or hosts differ from real Batsim + batsched easy_bf, and the split between the
   scheduler (``Session.handle``: the ``scheduling_time`` the run itself measures) and the engine
   side (the rest: loading, engine, machines, outputs, result); then the same with FCFS, whose
   decisions cost next to nothing, and what the target leaves the scheduler side once the
   engine side is paid.
   Reference, same inputs and policy: real Batsim over ZeroMQ when a ``batsim`` binary is on PATH
   (or ``$BATSCHED_PY_BATSIM`` names one), timed in this run; otherwise a recording: real Batsim
   4.2.1 + batsched 1.4.0 easy_bf, 14.28 s, measured by issue 22's author on this kind of machine
   (2-core VM, both built from source, 3 interleaved runs); the golden case's own
   ``simulation_time`` (an earlier, slower run) is printed beside it.  Targets (issue 22): pure
   Python at least 12x the reference, the compiled build at least 20x, peak RSS under 300 MB.
2. HPC2N and SDSC-BLUE (``convert_swf``, delay profiles) cut at 25k, 50k, 100k, 200k, 500k and 1M
   jobs (a trace shorter than a length is repeated: each copy submitted after the previous one's
   last submission, renumbered), each run in a fresh process (its own peak RSS): jobs/s per length
   and the fitted exponent of time vs n (least squares on log-log).

Usage: python scripts/bench_emulator.py [--quick] [--runs N] [--max-jobs M]
(--quick: KTH only; N: best of, default 3; M: longest scaling run, default 1,000,000)
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from batsched_py import compiled_modules
from batsched_py.emulator import simulate
from batsched_py.platforms.generate import plain_cluster, platform_xml
from batsched_py.scheduler import create
from batsched_py.workloads import ConvertOptions, convert_swf

SHARED = Path(os.environ.get("BATSCHED_PY_SHARED", Path(__file__).resolve().parents[2] / "shared"))
KTH = SHARED / "golden" / "large-kth_sp2"
SWF = SHARED / "data" / "swf"
TRACES = ("HPC2N-2002-2.2-cln.swf.gz", "SDSC-BLUE-2000-4.2-cln.swf.gz")
LENGTHS = (25_000, 50_000, 100_000, 200_000, 500_000, 1_000_000)
ISSUE_22_BATSIM_S = 14.28    # live Batsim 4.2.1 + batsched easy_bf on whole KTH-SP2 (see above)
_COMPILED = compiled_modules()
BUILD = f"compiled with mypyc: {len(_COMPILED)} modules" if _COMPILED else "pure Python"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def best_run(platform: Path, workload: Path, policy: str, runs: int):
    """The fastest of ``runs`` runs of ``policy``: (wall s, scheduler s, its result)."""
    best = None
    res = None
    for _ in range(runs):
        res = None      # (runs are identical: only the last result is kept, and not during the next run)
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            res = simulate(platform, [workload], create(policy), output_prefix=Path(tmp) / "out", mmax=100)
            dt = time.perf_counter() - t0
            with open(Path(tmp) / "out_schedule.csv") as f:
                sched = float(next(csv.DictReader(f))["scheduling_time"])
        if best is None or dt < best[0]:
            best = (dt, sched)
    assert best is not None and res is not None
    return best[0], best[1], res


def run_kth(rows: list, runs: int) -> None:
    inputs = KTH / "inputs"
    platform, workload = inputs / "energy_platform_homogeneous_no_net_128.xml", inputs / "kth_sp2.json"
    dt, sched, res = best_run(platform, workload, "easy", runs)
    with gzip.open(KTH / "easy_bf_jobs.csv.gz", "rt") as f:
        want = {r["job_id"]: (r["starting_time"], r["allocated_resources"]) for r in csv.DictReader(f)}
    diff = sum(1 for jid, j in res.jobs.items()
               if want.get(jid.split("!", 1)[1]) != (f"{j.starting_time:.6f}", str(j.allocated_resources)))
    print(f"KTH-SP2 easy: {len(res.jobs)} jobs in {dt:.2f} s ({len(res.jobs) / dt:,.0f} jobs/s; scheduler "
          f"{sched:.2f} s, engine side {dt - sched:.2f} s), {res.messages} messages, peak RSS {peak_mb():.0f} MB, "
          f"{diff} jobs differ from Batsim easy_bf", flush=True)
    rows.append((f"KTH-SP2 easy (whole run; {BUILD})", f"{dt:.2f} s", f"{len(res.jobs) / dt:,.0f}",
                 f"scheduler {sched:.2f} s, engine {dt - sched:.2f} s", f"{peak_mb():.0f} MB", f"{diff} differ"))
    messages = res.messages
    res = None
    # FCFS decides next to nothing (the head of the queue fits or not): its scheduler side is
    # about the least a policy answering these messages costs in this build.
    f_dt, f_sched, f_res = best_run(platform, workload, "fcfs", runs)
    print(f"KTH-SP2 fcfs: {len(f_res.jobs)} jobs in {f_dt:.2f} s (scheduler {f_sched:.2f} s, engine side "
          f"{f_dt - f_sched:.2f} s), {f_res.messages} messages", flush=True)
    rows.append((f"KTH-SP2 fcfs (whole run; {BUILD})", f"{f_dt:.2f} s", f"{len(f_res.jobs) / f_dt:,.0f}",
                 f"scheduler {f_sched:.2f} s, engine {f_dt - f_sched:.2f} s", "", ""))
    f_res = None
    label, ref = real_batsim_reference(platform, workload)
    target = 20 if _COMPILED else 12
    print(f"reference: {label}: {ref:.2f} s; in-process emulator ({BUILD}) {ref / dt:.1f}x faster "
          f"(target: {target}x, time under {ref / target:.2f} s: {'met' if dt <= ref / target else 'not met'}; "
          f"peak RSS under 300 MB: {'met' if peak_mb() < 300 else 'not met'})", flush=True)
    left = ref / target - (dt - sched)
    print(f"budget: {target}x leaves {ref / target:.2f} s; EASY's engine side takes {dt - sched:.2f} s, which leaves "
          f"{left:.2f} s ({1e6 * left / messages:.1f} us per message) for the scheduler side, against "
          f"{sched:.2f} s for EASY and {f_sched:.2f} s for FCFS now", flush=True)
    rows.append((f"reference: {label}", f"{ref:.2f} s", "", f"ours {ref / dt:.1f}x faster (target {target}x)", "", ""))


def real_batsim_reference(platform: Path, workload: Path) -> tuple[str, float]:
    """Real Batsim with the same policy over ZeroMQ, timed now when there is a binary; else the
    wall time real Batsim 4.2.1 + batsched easy_bf recorded for this case."""
    from batsched_py.launcher.process import ENV_COMMAND, batsim_command
    if os.environ.get(ENV_COMMAND) or shutil.which("batsim"):
        command = " ".join(batsim_command())
        from batsched_py.runner import run_simulation
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            run_simulation(platform, [workload], "easy", export=str(Path(tmp) / "out"), mmax=100,
                           backend="batsim")
            return f"`{command}` + our easy over ZeroMQ (this run)", time.perf_counter() - t0
    with open(KTH / "easy_bf_schedule.csv") as f:
        golden = float(next(csv.DictReader(f))["simulation_time"])
    return (f"no batsim on PATH, so a recording: real Batsim 4.2.1 + batsched 1.4.0 easy_bf, live, measured by "
            f"issue 22's author on this kind of machine (2-core VM, 3 interleaved runs; the golden case "
            f"recorded {golden:.2f} s on an earlier, slower run)", ISSUE_22_BATSIM_S)


_CHILD = """
import json, sys, time
from batsched_py.emulator import simulate
from batsched_py.scheduler import create
t0 = time.perf_counter()
res = simulate(sys.argv[1], [sys.argv[2]], create("easy"))
dt = time.perf_counter() - t0
# VmHWM: this process's peak (ru_maxrss would keep the parent's peak across fork + exec)
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"time": dt, "jobs": len(res.jobs), "rss": hwm / 1024}))
"""


def run_child(platform: Path, workload: Path) -> dict:
    """One simulation in a fresh interpreter: its time and its own peak RSS.  It runs in this
    script's folder, which is this process's sys.path[0]: it imports the same build (a source tree
    in the current folder would shadow a compiled install)."""
    out = subprocess.run([sys.executable, "-c", _CHILD, str(platform), str(workload)], check=True,
                         capture_output=True, text=True, cwd=Path(__file__).resolve().parent).stdout
    return json.loads(out.strip().splitlines()[-1])


def fit_exponent(points: list[tuple[int, float]]) -> float:
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def repeated(jobs: list[dict], n: int) -> list[dict]:
    """The first ``n`` jobs of ``jobs`` played again and again: each copy starts one second after
    the previous copy's last submission; ids renumbered 1..n."""
    span = jobs[-1]["subtime"] - jobs[0]["subtime"] + 1.0
    out = []
    for i in range(n):
        copy, j = divmod(i, len(jobs))
        out.append(dict(jobs[j], id=str(i + 1), subtime=jobs[j]["subtime"] + copy * span))
    return out


def run_swf(rows: list, max_jobs: int) -> None:
    lengths = [n for n in LENGTHS if n <= max_jobs] or [max_jobs]
    for name in TRACES:
        path = SWF / name
        if not path.exists():
            print(f"{name}: absent, skipped")
            continue
        t0 = time.perf_counter()
        data, _report = convert_swf(path, ConvertOptions(max_jobs=max(lengths), renumber=True))
        print(f"{name}: converted {len(data['jobs'])} jobs in {time.perf_counter() - t0:.1f} s", flush=True)
        points = []
        with tempfile.TemporaryDirectory() as tmp:
            plat = Path(tmp) / "platform.xml"
            plat.write_text(platform_xml(plain_cluster(int(data["nb_res"]), 1e6), energy=False))
            files = []
            for n in lengths:
                jobs = repeated(data["jobs"], n)
                used = {j["profile"] for j in jobs}
                wl = Path(tmp) / f"w{n}.json"
                wl.write_text(json.dumps(dict(data, jobs=jobs, profiles={k: v for k, v in data["profiles"].items()
                                                                          if k in used})))
                files.append((n, wl))
            print(f"  (trace of {len(data['jobs'])} jobs, repeated beyond that)", flush=True)
            del data, jobs
            for n, wl in files:
                r = run_child(plat, wl)
                dt = r["time"]
                points.append((n, dt))
                print(f"  {n:>7} jobs: {dt:6.2f} s  {r['jobs'] / dt:>8,.0f} jobs/s  peak RSS {r['rss']:.0f} MB",
                      flush=True)
                rows.append((f"{name.split('-')[0]} {n} ({BUILD})", f"{dt:.2f} s", f"{n / dt:,.0f}", "",
                             f"{r['rss']:.0f} MB", ""))
        if len(points) > 1:
            k = fit_exponent(points)
            print(f"  fitted exponent of time vs n: {k:.2f} (n log n from 25k to 1M jobs: about 1.08)", flush=True)
            rows.append((f"{name.split('-')[0]} exponent", f"{k:.2f}", "", "", "", ""))


def main() -> None:
    if not KTH.exists():
        sys.exit(f"{KTH} not found")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="KTH-SP2 only, no scaling runs")
    ap.add_argument("--runs", type=int, default=3, help="KTH-SP2 runs, best of (default %(default)s)")
    ap.add_argument("--max-jobs", type=int, default=LENGTHS[-1],
                    help="longest scaling run, in jobs (default %(default)s)")
    args = ap.parse_args()
    rows: list = []
    print(f"build: {BUILD}", flush=True)
    run_kth(rows, max(1, args.runs))
    if not args.quick:
        run_swf(rows, max(1, args.max_jobs))
    print("\n| run | time | jobs/s | split | peak RSS | vs Batsim |\n|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
