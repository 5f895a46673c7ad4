#!/usr/bin/env python3
"""Benchmark what reading numbers as Batsim does costs when the emulator loads a workload.

The emulator reads workload files with RapidJSON's number parsing
(``batsched_py.models.json_numbers.rapidjson_double``, as Batsim 4.2.1 does); numbers of up to
15 digits take a fast path (``float``), longer ones RapidJSON's digit loop in Python.  Times
``load_workload`` on synthetic workloads of N jobs whose numbers are all long (17-digit reprs of
random doubles: the worst case) or all short (6 decimals, like Batsim's own output and most
traces), best of R runs, against the same load with Python's ``float`` (the reference, measured
in this run).

Usage: python scripts/bench_workload_numbers.py [--jobs N] [--runs R]
"""
from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from batsched_py.models import workload as emulator_workload
from batsched_py.models.document import read_workload_file


def write(path: Path, jobs: int, digits: int | None) -> None:
    rng = random.Random(1)
    def number(high: float) -> float:
        x = rng.uniform(1, high)
        return x if digits is None else round(x, digits)
    data = {"nb_res": 100,
            "profiles": {f"p{k}": {"type": "delay", "delay": number(1e4)} for k in range(500)},
            "jobs": [{"id": i, "subtime": number(3e7), "res": 1, "profile": f"p{i % 500}",
                      "walltime": number(1e5)} for i in range(jobs)]}
    path.write_text(json.dumps(data))


def best(path: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        emulator_workload.load_workload(path, "w0", nb_hosts=100)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=30_000, help="jobs per workload (default 30000)")
    parser.add_argument("--runs", type=int, default=5, help="best of R runs (default 5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for label, digits in (("17-digit numbers", None), ("6-decimal numbers", 6)):
            path = Path(tmp) / "w.json"
            write(path, args.jobs, digits)
            batsim = best(path, args.runs)
            emulator_workload.read_workload_file = lambda p, parse_float=None: read_workload_file(p)
            try:
                python = best(path, args.runs)
            finally:
                emulator_workload.read_workload_file = read_workload_file
            floats = 2 * args.jobs + 500
            print(f"{label}: {args.jobs} jobs ({floats} floats): load_workload {batsim:.3f} s with "
                  f"RapidJSON's numbers, {python:.3f} s with float(): ratio {batsim / python:.2f}, "
                  f"{(batsim - python) / floats * 1e6:.1f} us more per float")


if __name__ == "__main__":
    main()
