"""Seeds and training budgets of the thermal-aware DQN (Yi; issue 18), chosen without the held-out days.

One DQN per (seed, training decisions) is trained on the physical model, in parallel processes, on
the same training window as ``thermal_allocation_study.py`` (the first ``--days - --test-days``
days of LPC-EGEE). Each is scored on a validation window, the last ``--val-days`` of that training
window (days the agent trained on, never the held-out ones), and on the held-out days. The run with
the best validation score (power saving + alpha x temperature reduction against round robin) is
copied to ``--models``; every run's held-out figures are reported, so the spread over seeds shows.

References on both windows: round robin, greedy consolidation (fullest processor with room, with
the agent's overheating fallback) and "greedy with cool room" (fullest processor that takes the job
without settling above the limit: what the state's spare cores ``c`` let an agent see).

    python scripts/thermal_allocation_seeds.py --processors 8 --seeds 0-7 --steps 30000,100000
    python scripts/thermal_allocation_seeds.py --summary results/thermal_allocation/seeds
"""
from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

import batsched_py.envs  # noqa: E402,F401
from batsched_py.agents.allocation.cluster import ALLOCATORS, room  # noqa: E402
from batsched_py.agents.allocation.cluster_jobs import load_jobs  # noqa: E402
from batsched_py.argtypes import non_negative, positive, positive_count  # noqa: E402
from thermal_allocation_study import TRACE, add_trace_arguments, write_csv  # noqa: E402
from thermal_allocation_study import play as play_episode  # noqa: E402


def greedy_cool_room(env) -> int:
    """The fullest processor whose spare cores that do not overheat take the head job (greedy's
    choice where none does)."""
    cluster = env.agent
    cores = cluster.head_cores()
    ok = room(cluster.model, env.max_temperature) >= cores
    if not ok.any():
        return ALLOCATORS["greedy"](cluster, cores)
    return int(np.argmin(np.where(ok, cluster.free, np.iinfo(np.int64).max)))


def play(jobs, n: int, days: float, alpha: float, choose) -> tuple[float, float]:
    """Mean power (W) and temperature (C) of one episode over ``jobs`` with ``choose(env, obs)``."""
    env = gym.make("batsched_py/Allocation-v0", jobs=jobs, nb_processors=n, episode_days=days,
                   alpha=alpha).unwrapped
    summary, _ = play_episode(env, lambda obs: choose(env, obs))
    return summary["agent_power_W"], summary["agent_temperature_C"]


def rule(name: str):
    """A baseline allocator of cluster.py as a choose(env, obs)."""
    return lambda env, obs: ALLOCATORS[name](env.agent, env.agent.head_cores())


def baselines(jobs, days: float, n: int, alpha: float) -> dict[str, tuple[float, float]]:
    rules = {"round_robin": rule("round_robin"), "greedy": rule("greedy"),
             "greedy_cool_room": lambda env, obs: greedy_cool_room(env)}
    return {name: play(jobs, n, days, alpha, choose) for name, choose in rules.items()}


def one_run(seed: int, steps: int, windows: dict, n: int, alpha: float, episode_days: float, reward: str,
            out: Path) -> dict:
    """Train one DQN and score it on every window (a worker process)."""
    from batsched_py.agents.allocation.dqn import train
    from batsched_py.agents.allocation.saved import greedy_action
    path = out / f"dqn-a{alpha:g}-s{seed}-n{steps}.zip"
    began = time.perf_counter()
    model = train({"jobs": windows["train"][0], "nb_processors": n, "episode_days": episode_days, "alpha": alpha,
                   "reward": reward},
                  steps, path, seed=seed)
    row = {"seed": seed, "steps": steps, "train_s": round(time.perf_counter() - began, 1), "model": path.name}
    for name in ("validation", "held_out"):
        jobs, days = windows[name]
        row[f"{name}_power_W"], row[f"{name}_temperature_C"] = play(
            jobs, n, days, alpha, lambda env, obs: greedy_action(model, obs))
    return row


def _ranges(text: str) -> list[int]:
    values: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        values += list(range(int(low), int(high or low) + 1))
    return values


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_trace_arguments(ap)
    ap.add_argument("--processors", type=positive_count, default=8, help="processors of 24 cores (default %(default)s)")
    ap.add_argument("--val-days", type=positive, default=30.0,
                    help="validation days: the end of the training window (default %(default)s)")
    ap.add_argument("--alpha", type=non_negative, default=0.5, help="temperature weight (default %(default)s)")
    ap.add_argument("--seeds", default="0-7", help="seeds, e.g. 0-7 or 0,3 (default %(default)s)")
    ap.add_argument("--steps", default="30000", help="training decisions, comma-separated (default %(default)s)")
    ap.add_argument("--episode-days", type=positive, default=2.0, help="training episode length (default %(default)s)")
    ap.add_argument("--reward", choices=("instant", "interval"), default="instant",
                    help="Allocation-v0's reward while training (default %(default)s)")
    ap.add_argument("--workers", type=positive_count, default=os.cpu_count(), help="processes (default: one per CPU)")
    ap.add_argument("--out", default="results/thermal_allocation/seeds", help="CSV and models (default %(default)s)")
    ap.add_argument("--summary", metavar="FOLDER",
                    help="train nothing: print one line per run folder (with a runs.csv) under FOLDER")
    ap.add_argument("--models", default="models",
                    help="where the run chosen on validation is copied (default %(default)s)")
    args = ap.parse_args(argv)
    if args.summary:
        return summary(Path(args.summary))
    try:
        seeds, budgets = _ranges(args.seeds), [int(s) for s in args.steps.split(",")]
    except ValueError:
        print(f"thermal_allocation_seeds: error: --seeds {args.seeds!r} / --steps {args.steps!r}: "
              "expected integers such as 0-7 and 30000,100000", file=sys.stderr)
        return 2
    trace = Path(args.shared) / TRACE
    if not trace.is_file():
        print(f"thermal_allocation_seeds: error: {trace} not found (--shared)", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = load_jobs(trace, 24, days=args.days)
    train_days = args.days - args.test_days
    windows = {"train": (jobs.window(0, train_days * 86400), train_days),
               "validation": (jobs.window((train_days - args.val_days) * 86400, args.val_days * 86400), args.val_days),
               "held_out": (jobs.window(train_days * 86400, args.test_days * 86400), args.test_days)}
    n, alpha = args.processors, args.alpha
    refs = {name: baselines(*windows[name], n, alpha) for name in ("validation", "held_out")}

    rows = []
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
        futures = [pool.submit(one_run, seed, steps, windows, n, alpha, args.episode_days, args.reward, out)
                   for steps in budgets for seed in seeds]
        for future in tqdm(as_completed(futures), total=len(futures), desc="DQN runs", unit="run"):
            rows.append(future.result())

    def versus(window: str, power: float, temperature: float, base: str) -> tuple[float, float]:
        p, t = refs[window][base]
        return 100 * (p - power) / p, t - temperature

    table = []
    for row in sorted(rows, key=lambda r: (r["steps"], r["seed"])):
        for window in ("validation", "held_out"):
            for base in ("round_robin", "greedy"):
                row[f"{window}_power_saving_vs_{base}_pct"], row[f"{window}_temperature_reduction_vs_{base}_C"] = \
                    versus(window, row[f"{window}_power_W"], row[f"{window}_temperature_C"], base)
        table.append(row)
    score = {id(r): r["validation_power_saving_vs_round_robin_pct"]
             + alpha * r["validation_temperature_reduction_vs_round_robin_C"] for r in table}
    chosen = max(table, key=lambda r: score[id(r)])
    for r in table:
        r["chosen_on_validation"] = r is chosen
    write_csv(out / "runs.csv", table)
    write_csv(out / "references.csv", [
        {"window": w, "allocator": name, "power_W": p, "temperature_C": t,
         "power_saving_vs_round_robin_pct": versus(w, p, t, "round_robin")[0],
         "temperature_reduction_vs_round_robin_C": versus(w, p, t, "round_robin")[1]}
        for w in refs for name, (p, t) in refs[w].items()])
    Path(args.models).mkdir(parents=True, exist_ok=True)
    target = Path(args.models) / f"thermal-allocation-dqn-a{alpha:g}.zip"
    shutil.copyfile(out / chosen["model"], target)
    shutil.copyfile((out / chosen["model"]).with_suffix(".json"), target.with_suffix(".json"))

    print(f"\n{n} processors, alpha {alpha:g}, {args.reward} reward, {args.episode_days:g}-day training episodes; "
          f"validation ({args.val_days:g} d) and held-out ({args.test_days:g} d) windows:")
    for w in refs:
        for name in ("greedy", "greedy_cool_room"):
            s, d = versus(w, *refs[w][name], "round_robin")
            print(f"  {w:10s} {name:17s} {s:5.2f}% {d:5.2f} C vs round robin")
    print(f"{'steps':>7s} {'seed':>4s} {'train s':>7s} | {'validation vs RR':>16s} | {'held-out vs RR':>16s} | "
          f"{'held-out vs greedy':>18s}")
    for r in table:
        print(f"{r['steps']:7d} {r['seed']:4d} {r['train_s']:7.0f} | "
              f"{r['validation_power_saving_vs_round_robin_pct']:6.2f}% {r['validation_temperature_reduction_vs_round_robin_C']:5.2f} C | "
              f"{r['held_out_power_saving_vs_round_robin_pct']:6.2f}% {r['held_out_temperature_reduction_vs_round_robin_C']:5.2f} C | "
              f"{r['held_out_power_saving_vs_greedy_pct']:7.2f}% {r['held_out_temperature_reduction_vs_greedy_C']:5.2f} C"
              + ("  <- chosen on validation" if r is chosen else ""))
    for steps in budgets:
        held = [r["held_out_power_saving_vs_round_robin_pct"] for r in table if r["steps"] == steps]
        print(f"  {steps} decisions: held-out power saving vs round robin over {len(held)} seeds: mean {np.mean(held):.2f}%, "
              f"min {np.min(held):.2f}%, max {np.max(held):.2f}%")
    print(f"chosen: {chosen['model']} -> {target}")
    return 0


def summary(folder: Path) -> int:
    """One line per run folder: held-out figures against round robin and greedy, over its seeds."""
    found = sorted(folder.glob("*/runs.csv"))
    if not found:
        print(f"thermal_allocation_seeds: error: no */runs.csv under {folder} (--summary)", file=sys.stderr)
        return 2
    print(f"{'runs':26s} {'seeds':>5s} | held-out power saving (%) / temperature reduction (C) vs round robin: "
          "mean, min-max, chosen on validation | chosen vs greedy")
    for path in found:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        power = np.array([float(r["held_out_power_saving_vs_round_robin_pct"]) for r in rows])
        temp = np.array([float(r["held_out_temperature_reduction_vs_round_robin_C"]) for r in rows])
        chosen = next(r for r in rows if r["chosen_on_validation"] == "True")
        print(f"{path.parent.name:26s} {len(rows):5d} | {power.mean():.2f}% / {temp.mean():.2f} C, "
              f"{power.min():.2f}-{power.max():.2f}% / {temp.min():.2f}-{temp.max():.2f} C, "
              f"{float(chosen['held_out_power_saving_vs_round_robin_pct']):.2f}% / "
              f"{float(chosen['held_out_temperature_reduction_vs_round_robin_C']):.2f} C | "
              f"{float(chosen['held_out_power_saving_vs_greedy_pct']):+.2f}% / "
              f"{float(chosen['held_out_temperature_reduction_vs_greedy_C']):+.2f} C")
    return 0


if __name__ == "__main__":
    sys.exit(main())
