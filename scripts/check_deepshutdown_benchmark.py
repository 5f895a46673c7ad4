#!/usr/bin/env python3
"""Shutdown-v0 against the DeepShutdown authors' own per-day results.

The authors published, for the 11 test days of their ``lyon_good`` data set, the figures of their
Timeout(1) and Timeout(10) agents (``results/test/benchmark.csv``: energy waste in W x min, node
switches, mean waiting time in min).  This runs the same two policies through Shutdown-v0 on the
same days and prints the per-day table with the ratios ours / theirs, then the means.

    python scripts/check_deepshutdown_benchmark.py [--data ../shared/data/deepshutdown/lyon_good]

The platform is the project's ``platforms/taurus_deepshutdown.xml`` (the authors' Taurus platform,
with its compute hosts declared in a computation pstate so that Batsim 4.2.1 runs it; the
environment switches every node off before the day starts, as the authors' platform has them).
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from batsched_py.agents.common.evaluate import PolicySpec, run_days  # noqa: E402

POLICIES = {"Timeout (1)": "T1", "Timeout (10)": "T10"}
FIGURES = (("energy_waste", "waste W·min"), ("nb_switches", "switches"), ("mean_waiting_time", "wait min"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/deepshutdown/lyon_good"),
                    help="the authors' lyon_good folder (workloads/test, results/test/benchmark.csv)")
    ap.add_argument("--platform", default=str(ROOT / "platforms/taurus_deepshutdown.xml"))
    ap.add_argument("-j", "--jobs", type=int, default=2, help="parallel processes (default 2)")
    args = ap.parse_args(argv)
    data = Path(args.data)
    bench = data / "results/test/benchmark.csv"
    if not bench.is_file():
        print(f"check_deepshutdown_benchmark: {bench} not found (give --data)", file=sys.stderr)
        return 2
    theirs = {(r["policy"], int(r["week"])): r for r in csv.DictReader(bench.open()) if r["policy"] in POLICIES}
    days = sorted({d for _, d in theirs})
    tasks = [(label, day) for label in POLICIES for day in days]
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        futures = {t: pool.submit(run_days, "shutdown", args.platform, {}, PolicySpec(t[0], POLICIES[t[0]]),
                                  [str(data / f"workloads/test/train_{t[1]}.json")], [0]) for t in tasks}
        ours = {t: f.result()[0] for t, f in futures.items()}
    worst = 0.0
    for label in POLICIES:
        print(f"\n{label}: ours / the authors' (benchmark.csv), per test day")
        print(f"{'day':>5} " + " ".join(f"{name:>28}" for _, name in FIGURES))
        sums = {k: [0.0, 0.0] for k, _ in FIGURES}
        for day in days:
            row, cells = theirs[(label, day)], []
            for key, _ in FIGURES:
                mine = ours[(label, day)]["waiting_time" if key == "mean_waiting_time" else key]
                other = float(row[key])
                sums[key][0] += mine
                sums[key][1] += other
                ratio = mine / other if other else math.nan
                if key != "mean_waiting_time":
                    worst = max(worst, abs(ratio - 1))
                cells.append(f"{mine:>11,.1f} / {other:>11,.1f} {ratio:5.2f}")
            print(f"{day:>5} " + " ".join(cells))
        print("means " + " ".join(f"{s[0] / len(days):>11,.1f} / {s[1] / len(days):>11,.1f} {s[0] / s[1]:5.2f}"
                                  for s in sums.values()))
    print(f"\nlargest per-day deviation of waste or switches: {worst:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
