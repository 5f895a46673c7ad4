#!/usr/bin/env python3
"""Choose a trained agent from ``batsched-py evaluate``'s ``summary.csv`` on validation days: the
lowest mean ``--figure`` among the candidates within every budget, a budget FIGURE:FACTOR:BASELINE
meaning a mean FIGURE of at most FACTOR x the baseline's (dagger_rounds.py's rule, here across
checkpoints and runs; ``--budget`` may be given more than once).  Where none is within the budgets
none is chosen (exit status 1): a model over a budget is not made acceptable by being over it least.

    python scripts/choose_checkpoint.py runs/val/summary.csv --budget waiting_time:1.5:T5 \
        --budget energy_waste:1:T0 --exclude T5 T0
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path


def parse_budget(text: str) -> tuple[str, float, str]:
    """``FIGURE:FACTOR:BASELINE`` (e.g. ``waiting_time:1.5:T5``).  (Here, not in dagger_rounds.py,
    which also reads it: this script then starts without torch.)"""
    try:
        figure, factor, baseline = text.split(":", 2)
        return figure, float(factor), baseline
    except ValueError:
        raise argparse.ArgumentTypeError(f"--budget {text!r}: expected FIGURE:FACTOR:BASELINE, "
                                         "e.g. waiting_time:1.5:T5") from None


def choose(rows: dict[str, dict], figure: str, budgets: list[tuple[str, float, str]], exclude: set[str]) -> dict:
    """``{"chosen": label or None, "figure", "budgets": [{budget, limit}], "candidates": [{label, figures...,
    within}]}``; the budgets' baselines are never candidates."""
    limits = {}
    for name, factor, baseline in budgets:
        if baseline not in rows:
            raise KeyError(f"the budget's baseline {baseline!r} is not in the summary ({', '.join(rows)})")
        for column in (f"{figure}_mean", f"{name}_mean"):
            if column not in rows[baseline]:
                raise KeyError(f"the summary has no column {column!r}")
        limits[f"{name} <= {factor} x {baseline}"] = (name, factor * float(rows[baseline][f"{name}_mean"]))
    baselines = {baseline for _, _, baseline in budgets}
    candidates = []
    for label, row in rows.items():
        if label in baselines or label in exclude:
            continue
        figures = {name: float(row[f"{name}_mean"]) for name in [figure, *(n for n, _, _ in budgets)]}
        candidates.append({"label": label, **figures,
                           "within": all(figures[name] <= limit for name, limit in limits.values())})
    within = [c for c in candidates if c["within"]]
    chosen = min(within, key=lambda c: c[figure])["label"] if within else None
    return {"chosen": chosen, "figure": figure,
            "budgets": [{"budget": text, "limit": limit} for text, (_, limit) in limits.items()],
            "candidates": candidates}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("summary", type=Path, help="evaluate's summary.csv (validation days)")
    ap.add_argument("--figure", default="energy_waste", help="what the choice minimises (default energy_waste)")
    ap.add_argument("--budget", type=parse_budget, required=True, action="append", metavar="FIGURE:FACTOR:BASELINE",
                    help="e.g. waiting_time:1.5:T5; more than one: a candidate must be within all")
    ap.add_argument("--exclude", nargs="*", default=[], help="policies of the summary that are not candidates")
    args = ap.parse_args(argv)
    try:
        with args.summary.open(newline="") as f:
            rows = {row["policy"]: row for row in csv.DictReader(f)}
        result = choose(rows, args.figure, args.budget, set(args.exclude))
    except (OSError, KeyError, ValueError) as exc:
        print(f"choose_checkpoint: {args.summary}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1))
    if result["chosen"] is None:
        budgets = "; ".join(f"{b['budget']}: {b['limit']:.3f}" for b in result["budgets"])
        print(f"choose_checkpoint: no candidate within the budgets ({budgets})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
