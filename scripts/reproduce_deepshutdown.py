#!/usr/bin/env python3
"""DeepShutdown's evaluation: baselines and trained agents on the held-out days, per group.

Runs ``evaluate`` (Shutdown-v0) for T0, T1, T5, T10, OR* and each agent given (deterministic, and
``--repeat`` stochastic repetitions as the paper's 4), on the test days of the data set's groups,
less those identical to a training day; writes OUT/days.csv and OUT/summary.csv as ``evaluate``
does, then prints the table per group and overall with the ratios the issue's targets name.

    python scripts/reproduce_deepshutdown.py --agent models/deepshutdown-taurus.zip -o results/shutdown
"""
from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from batsched_py.agents.common.evaluate import PolicySpec, dedupe, evaluate  # noqa: E402
from batsched_py.envs.core import workload_files  # noqa: E402

BASELINES = ("T0", "T1", "T5", "T10", "OR*")
FIGURES = (("energy_waste", "waste (W·min)", "{:,.0f}"), ("nb_switches", "switches", "{:.1f}"),
           ("waiting_time", "wait (min)", "{:.2f}"), ("slowdown", "slowdown", "{:.2f}"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/deepshutdown",
                    help="the data set: GROUP/workloads/{train,test}/*.json")
    ap.add_argument("-p", "--platform", type=Path, default=ROOT / "platforms/taurus_deepshutdown.xml")
    ap.add_argument("--agent", type=Path, nargs="*", default=[], help="trained agents (.zip)")
    ap.add_argument("--repeat", type=int, default=4, help="stochastic repetitions of each agent (the paper: 4)")
    ap.add_argument("-o", "--out", type=Path, required=True)
    ap.add_argument("-j", "--jobs", type=int, default=0, help="parallel processes (0: all CPUs)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N held-out days (a quick look)")
    args = ap.parse_args(argv)
    groups = sorted(p.parent.parent.name for p in args.data.glob("*/workloads/test"))
    if not groups:
        print(f"reproduce_deepshutdown: no GROUP/workloads/test under {args.data}", file=sys.stderr)
        return 2
    test = workload_files([args.data / g / "workloads/test" for g in groups])
    train = workload_files([args.data / g / "workloads/train" for g in groups])
    days, dropped = dedupe(test, train)
    print(f"{len(days)} held-out days ({len(dropped)} left out: equal to a training day)", file=sys.stderr)
    if args.limit:
        days = days[:args.limit]
    specs = [PolicySpec(b, b) for b in BASELINES]
    for agent in args.agent:
        specs.append(PolicySpec(agent.stem, str(agent)))
        if args.repeat > 0:
            specs.append(PolicySpec(f"{agent.stem} (stochastic)", str(agent), {"deterministic": False}))
    evaluate("shutdown", args.platform, days, specs, args.out, repeat=max(1, args.repeat), jobs=args.jobs)
    with open(args.out / "days.csv") as f:
        rows = list(csv.DictReader(f))
    print(report(rows, [s.label for s in specs]))
    return 0


def report(rows: list[dict], labels: list[str]) -> str:
    by = defaultdict(list)
    for r in rows:
        by[(r["policy"], r["group"])].append(r)
        by[(r["policy"], "all")].append(r)
    groups = sorted({r["group"] for r in rows}) + ["all"]
    lines = []
    for g in groups:
        n = len({r["day"] for r in rows if g in ("all", r["group"])})
        lines.append(f"\n{g} ({n} days): mean per day")
        lines.append(f"{'policy':24} " + " ".join(f"{name:>14}" for _, name, _ in FIGURES))
        for label in labels:
            rs = by.get((label, g))
            if rs:
                lines.append(f"{label:24} " + " ".join(
                    f"{fmt.format(statistics.mean(float(r[k]) for r in rs)):>14}" for k, _, fmt in FIGURES))
    mean = {label: {k: statistics.mean(float(r[k]) for r in by[(label, "all")]) for k, _, _ in FIGURES}
            for label in labels if by.get((label, "all"))}
    lines.append("\nratios over every day (waste, switches, wait):")
    for label in labels:
        if label in BASELINES or label not in mean:
            continue
        m = mean[label]
        lines.append(f"{label}: waste / T5 {m['energy_waste'] / mean['T5']['energy_waste']:.3f}, "
                     f"/ T0 {m['energy_waste'] / mean['T0']['energy_waste']:.3f}, "
                     f"/ OR* {m['energy_waste'] / mean['OR*']['energy_waste']:.3f}; switches / T0 "
                     f"{m['nb_switches'] / mean['T0']['nb_switches']:.3f}; wait / T5 "
                     f"{m['waiting_time'] / mean['T5']['waiting_time']:.3f}")
    lines.append(f"OR*: waste / T0 {mean['OR*']['energy_waste'] / mean['T0']['energy_waste']:.3f}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
