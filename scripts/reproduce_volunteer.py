#!/usr/bin/env python3
"""Forshaw & McGough, "Reduction of wasted energy in a volunteer computing system through Reinforcement
Learning": good and wasted HTC energy (MWh) and mean overhead (min) for random placement (HTCondor's
default) and the reward-history learner, over epsilon (the paper's Fig. 7-9), over sigma (Fig. 10-11)
and at the four levels (Fig. 12-13).

The pool, its logins and its HTC jobs are generated (platforms/volunteer.py, workloads/volunteer.py;
the Newcastle traces are not public), then each policy runs the same period on the emulator,
learning online from the start as in the paper (the environment gives the scheduler the logins
file: it starts no switch that a login or logout falls into, which Batsim 4.2.1 would abort on,
docs/fidelity.md).  The default is a scaled-down pool and period
(150 PCs in 10 rooms, 8 weeks from January 1st, 15 jobs/h): the paper's size is

    python scripts/reproduce_volunteer.py --pcs 1359 --clusters 37 --days 364 --jobs-per-hour 60

Usage: python scripts/reproduce_volunteer.py [--out out/volunteer] [--pcs N] [--clusters C] [--days D] [--headline]
Writes ``volunteer.csv`` (one row per run) and ``volunteer.png`` in ``--out``; ``--headline`` runs only
what the targets are about (random, and the cluster level at epsilon 0.1 and 0.01), without the figure.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gymnasium as gym  # noqa: E402

import batsched_py.envs  # noqa: E402,F401
from batsched_py.agents.volunteer import make_policy, run_episode  # noqa: E402
from batsched_py.interrupts import exit_status, interruption, signals_interrupt  # noqa: E402
from batsched_py.platforms.volunteer import PoolError, generate_pool, write_pool_platform  # noqa: E402
from batsched_py.workloads.progress import progress  # noqa: E402
from batsched_py.workloads.volunteer import generate_jobs, generate_logins, write_events  # noqa: E402

EPSILONS = (0.01, 0.05, 0.1, 0.2, 0.5)
SIGMAS = (0.0, 0.25, 0.5, 0.75, 1.0)
LEVELS = ("computer", "cluster", "cluster-week", "system")
TARGETS = {"eps0.1_cut": 0.25, "small_eps_cut": 0.40}
FIELDS = ("run", "policy", "level", "epsilon", "sigma", "good_mwh", "wasted_mwh", "miscreant_mwh", "total_mwh",
          "overhead_min", "completed", "evictions", "seconds")


def inputs(args) -> dict[str, Path]:
    args.out.mkdir(parents=True, exist_ok=True)
    pool = generate_pool(args.pcs, args.clusters, seed=args.seed)
    paths = {"platform": args.out / "pool.xml", "events": args.out / "logins.jsonl", "workloads": args.out / "jobs.json"}
    write_pool_platform(pool, paths["platform"])
    write_events(generate_logins(pool, args.days, seed=args.seed), paths["events"], seed=args.seed)
    paths["workloads"].write_text(json.dumps(generate_jobs(args.days, args.pcs, jobs_per_hour=args.jobs_per_hour,
                                                           seed=args.seed)))
    return paths


def runs() -> list[dict]:
    todo = [{"run": "random", "policy": "random", "level": "system", "epsilon": "", "sigma": ""}]
    seen = set()
    for eps, sigma, level in ([(e, 0.5, "cluster") for e in EPSILONS] + [(0.1, s, "cluster") for s in SIGMAS]
                              + [(0.1, 0.5, lv) for lv in LEVELS]):
        if (eps, sigma, level) not in seen:
            seen.add((eps, sigma, level))
            todo.append({"run": f"bandit {level} eps={eps} sigma={sigma}", "policy": "bandit", "level": level,
                         "epsilon": eps, "sigma": sigma})
    return todo


def figure(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    random = rows[0]
    for ax, key, xs, label in ((axes[0], "epsilon", EPSILONS, "epsilon (sigma 0.5, cluster level)"),
                               (axes[1], "sigma", SIGMAS, "sigma (epsilon 0.1, cluster level)")):
        pick = [next(r for r in rows if r["policy"] == "bandit" and r["level"] == "cluster" and r[key] == x
                     and r["sigma" if key == "epsilon" else "epsilon"] == (0.5 if key == "epsilon" else 0.1))
                for x in xs]
        for field, style in (("good_mwh", "o-"), ("wasted_mwh", "s-"), ("total_mwh", "^-")):
            ax.plot(xs, [r[field] for r in pick], style, label=field.replace("_mwh", ""))
            ax.axhline(random[field], ls=":", color=ax.lines[-1].get_color())
        twin = ax.twinx()
        twin.plot(xs, [r["overhead_min"] for r in pick], "k--", label="overhead")
        twin.set_ylabel("mean overhead (min)")
        ax.set_xlabel(label)
        ax.set_ylabel("HTC energy (MWh); dotted: random")
        ax.legend(loc="upper left")
    level_rows = [next(r for r in rows if r["level"] == lv and r["epsilon"] == 0.1 and r["sigma"] == 0.5) for lv in LEVELS]
    names = ["random", *LEVELS]
    bars = [random, *level_rows]
    axes[2].bar(names, [r["good_mwh"] for r in bars], label="good")
    axes[2].bar(names, [r["wasted_mwh"] for r in bars], bottom=[r["good_mwh"] for r in bars], label="wasted")
    axes[2].set_ylabel("HTC energy (MWh)")
    axes[2].set_title("levels (epsilon 0.1, sigma 0.5)")
    axes[2].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def simulate(spec: dict, paths: dict, seed: int) -> dict:
    """One run of the study: its row of volunteer.csv (printed too)."""
    env = gym.make("batsched_py/VolunteerPool-v0", platform=paths["platform"], workloads=paths["workloads"],
                   events=paths["events"], level=spec["level"],
                   sigma=spec["sigma"] if spec["sigma"] != "" else 0.5, seed=seed).unwrapped
    params = {} if spec["policy"] == "random" else {"epsilon": spec["epsilon"], "sigma": spec["sigma"]}
    started = time.perf_counter()
    figures = run_episode(env, make_policy(spec["policy"], seed=seed, **params), seed=seed)
    env.close()
    r = {**spec, **{k: float(figures[k]) for k in FIELDS[5:-1]}, "seconds": round(time.perf_counter() - started, 1)}
    print(f"{r['run']:38s} good {r['good_mwh']:.3f} MWh  wasted {r['wasted_mwh']:.3f} MWh  total "
          f"{r['total_mwh']:.3f} MWh  overhead {r['overhead_min']:.1f} min  completed {r['completed']:.0f} jobs  "
          f"({r['seconds']} s)", flush=True)
    return r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("out/volunteer"), help="output folder (default out/volunteer)")
    ap.add_argument("--pcs", type=int, default=150, help="PCs in the pool (paper: 1359; default 150)")
    ap.add_argument("--clusters", type=int, default=10, help="rooms (paper: 37; default 10)")
    ap.add_argument("--days", type=float, default=56, help="simulated days from January 1st (paper: a year; default 56)")
    ap.add_argument("--jobs-per-hour", type=float, default=15.0, help="mean HTC submissions per hour (default 15)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the pool, logins, jobs and agents (default 1)")
    ap.add_argument("--headline", action="store_true",
                    help="only random and the cluster level at epsilon 0.1 and 0.01, sigma 0.5 (no figure)")
    args = ap.parse_args(argv)
    try:
        paths = inputs(args)
    except PoolError as exc:
        print(f"reproduce_volunteer: {exc}", file=sys.stderr)
        return 2
    todo = runs()
    if args.headline:
        todo = [r for r in todo if r["policy"] == "random"
                or (r["level"] == "cluster" and r["sigma"] == 0.5 and r["epsilon"] in (0.1, min(EPSILONS)))]
    rows = []
    # (a row as each run ends: Ctrl-C keeps the runs done)
    with open(args.out / "volunteer.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        writer.writeheader()
        try:
            with signals_interrupt():
                for spec in progress(todo, "simulations", every=1, unit="runs"):
                    rows.append(simulate(spec, paths, args.seed))
                    writer.writerow(rows[-1])
                    f.flush()
        except KeyboardInterrupt as exc:
            print(f"reproduce_volunteer: {interruption(exc)}; {len(rows)} of {len(todo)} runs are in "
                  f"{args.out / 'volunteer.csv'}", file=sys.stderr)
            return exit_status(exc)
    if not args.headline:
        figure(rows, args.out / "volunteer.png")
    random = rows[0]

    def cut(r):
        return 1 - r["total_mwh"] / random["total_mwh"]
    at01 = next(r for r in rows if r["level"] == "cluster" and r["epsilon"] == 0.1 and r["sigma"] == 0.5)
    small = next(r for r in rows if r["level"] == "cluster" and r["epsilon"] == min(EPSILONS) and r["sigma"] == 0.5)
    print(f"\ncluster level, epsilon 0.1: total energy cut {cut(at01):.1%} (target >= {TARGETS['eps0.1_cut']:.0%}), "
          f"overhead {at01['overhead_min']:.1f} min vs random {random['overhead_min']:.1f} min (target: no worse)")
    print(f"cluster level, epsilon {min(EPSILONS)}: total energy cut {cut(small):.1%} (target >= "
          f"{TARGETS['small_eps_cut']:.0%}), overhead {small['overhead_min']:.1f} min (paper: higher than random)")
    print(f"completed jobs: random {random['completed']:.0f}, epsilon 0.1 {at01['completed']:.0f}, epsilon "
          f"{min(EPSILONS)} {small['completed']:.0f}")
    print(f"wrote {args.out / 'volunteer.csv'}" + ("" if args.headline else f" and {args.out / 'volunteer.png'}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
