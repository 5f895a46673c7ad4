#!/usr/bin/env python3
"""Yi's thermal-aware DQN allocation (NTU/NSCC thesis, ch. 4) reproduced on a public trace.

Trace: the Parallel Workloads Archive's LPC-EGEE (every job on one core, so every job fits one
processor), cut to its first ``--days`` (default 182: six months); the last ``--test-days`` are
held out for evaluation, the months before are for telemetry, predictors and training.
Machines: ``--processors`` processors of 24 cores (default the thesis' 1,152) under the emulator's
power/temperature model (batsched_py/models/thermal.py); on a small machine pass fewer.

Prints and writes (``--out``, CSV):
- Table 4.1: prediction error and accuracy of the tandem and single LSTM predictors and of the
  GMM-clustered tandem (K=3) on the held-out telemetry (round robin, 10-minute steps);
- Table 4.3: relative power saving (%) and temperature reduction (C) of the DQN, per alpha, against
  round robin, greedy consolidation and the online optimiser of horizon 1 (same alpha), always on
  the physical model: the DQN trained on the physical model, and at ``--predictor-alphas`` also
  the DQN trained on the tandem predictor (as the thesis trains offline on its learned model);
- Table 4.4: decision latency per job (CPU microseconds);
- mean waiting and completion times (s) of each allocator;
- references (references.csv): first fit in rack order, and packing the busy cores perfectly at
  every instant (a bound under linear leakage only).
``--leakage exponential`` runs it all under the exponential leakage model (models/thermal.py);
its alpha 0.5 models are then named ``thermal-allocation-dqn-exp[-predictor]-a0.5``.
The thesis' own per-alpha Table 4.3 and 4.4 values are not available to us; its abstract states
"more than 10% power and more than 4 C" against its baselines, printed for reference.

    python scripts/thermal_allocation_study.py --processors 8 --steps 20000 [--shared ../shared]
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import batsched_py.envs  # noqa: E402,F401
from batsched_py.argtypes import non_negative_list, positive, positive_count  # noqa: E402
from batsched_py.agents.allocation.cluster import ALLOCATORS, Cluster, online_opt1  # noqa: E402
from batsched_py.agents.allocation.dqn import train  # noqa: E402
from batsched_py.agents.allocation.saved import greedy_action  # noqa: E402
from batsched_py.agents.allocation.cluster_jobs import load_jobs  # noqa: E402
from batsched_py.agents.allocation.predictor import (KINDS, evaluate, evaluate_clustered,  # noqa: E402
                                                     read_predictor, record_telemetry, save_predictor,
                                                     train_clustered, train_predictor)
from batsched_py.models.errors import EmulatorError  # noqa: E402
from batsched_py.models.thermal import LEAKAGE_MODELS, ThermalModel, ThermalParams  # noqa: E402
from batsched_py.agents.allocation.env import cluster_figures  # noqa: E402

TRACE = "data/swf/LPC-EGEE-2004-1.2-cln.swf.gz"
THESIS_HEADLINE = "thesis abstract: > 10% power and > 4 C less than its baselines (per-alpha tables not available)"


def play(env, choose):
    """One held-out episode; (summary, CPU seconds per decision)."""
    env.reset(options={"start": 0})
    done, decisions, cpu = False, 0, 0.0
    obs = env._observe()
    while not done:
        began = time.process_time()
        action = choose(obs)
        cpu += time.process_time() - began
        obs, _, done, _, info = env.step(action)
        decisions += 1
    completion = np.nanmean(env.agent.wait + env.agent.jobs.runtime)
    return {**info, "completion_s": float(completion)}, cpu / decisions


def packed(jobs, wait, n, params):
    """Mean power (W) and temperature (C) if, at every instant, the busy cores were packed onto
    the fewest processors, coolest racks first (as if jobs migrated freely), for jobs starting
    ``wait`` s after submission: under the concave power model with linear leakage no allocator
    starting jobs at these times does better, so it bounds what any placement can save (with
    exponential leakage, full processors run hot and leak more: no longer a bound)."""
    start = jobs.submit + wait
    events = sorted([(t, int(c)) for t, c in zip(start, jobs.cores)]
                    + [(t + r, -int(c)) for t, r, c in zip(start, jobs.runtime, jobs.cores)])
    model, busy = ThermalModel(params, 24 * n), 0
    for t, cores in events:
        model.advance(t)
        busy += cores
        model.busy[:] = np.clip(busy - 24 * np.arange(n), 0, 24)
    return model.energy.sum() / model.now, model.degree_seconds.sum() / model.now / n


def alphas(text: str) -> str:
    """Comma-separated temperature weights >= 0, or '' (none); checked, kept as written."""
    if text.strip():
        non_negative_list(text)
    return text


def add_trace_arguments(ap: argparse.ArgumentParser) -> None:
    """--shared, --days and --test-days: the trace and its held-out end (the thermal scripts')."""
    ap.add_argument("--shared", default=os.environ.get("BATSCHED_PY_SHARED", str(ROOT.parent / "shared")),
                    help="the shared data folder (default %(default)s)")
    ap.add_argument("--days", type=positive, default=182.0, help="days of the trace used (default %(default)s)")
    ap.add_argument("--test-days", type=positive, default=30.0, help="held-out days at the end (default %(default)s)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_trace_arguments(ap)
    ap.add_argument("--processors", type=positive_count, default=1152, help="processors of 24 cores (default %(default)s)")
    ap.add_argument("--steps", type=positive_count, default=20_000, help="DQN training decisions per alpha (default %(default)s)")
    ap.add_argument("--alphas", type=alphas, default="0,0.5,1,2,3,4",
                    help="temperature weights; '' for Table 4.1 only (default %(default)s)")
    ap.add_argument("--episode-days", type=positive, default=2.0, help="training episode length (default %(default)s)")
    ap.add_argument("--predictor-alphas", type=alphas, default="0.5",
                    help="alphas at which a second DQN is trained on the tandem predictor (the thesis' offline "
                         "training) and evaluated on the physical model, beside the one trained on the physical "
                         "model; '' for none (default %(default)s)")
    ap.add_argument("--predictor-epochs", type=positive_count, default=3, help="(default %(default)s)")
    ap.add_argument("--out", default="results/thermal_allocation", help="CSV folder (default %(default)s)")
    ap.add_argument("--models", default="models", help="where the alpha 0.5 DQN is saved (default %(default)s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--leakage", choices=LEAKAGE_MODELS, default="linear",
                    help="leakage model of the machines (default %(default)s)")
    ap.add_argument("--leakage-growth", type=float, default=ThermalParams.leakage_growth,
                    help="exponential leakage's growth per K (default %(default)s, HotSpot's)")
    args = ap.parse_args(argv)
    try:
        params = ThermalParams(leakage_model=args.leakage, leakage_growth=args.leakage_growth)
    except EmulatorError as exc:
        print(f"thermal_allocation_study: error: {exc} (--leakage, --leakage-growth)", file=sys.stderr)
        return 2
    thermal = {} if args.leakage == "linear" else {"leakage_model": args.leakage, "leakage_growth": args.leakage_growth}
    tag = "" if args.leakage == "linear" else "-exp"
    trace = Path(args.shared) / TRACE
    if not trace.is_file():
        print(f"thermal_allocation_study: error: {trace} not found (--shared)", file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = load_jobs(trace, 24, days=args.days)
    split = (args.days - args.test_days) * 86400
    train_jobs, test_jobs = jobs.window(0, split), jobs.window(split, args.test_days * 86400)
    n = args.processors
    print(f"{trace.name}: {len(train_jobs)} training jobs, {len(test_jobs)} held-out jobs; {n} processors x 24 cores, "
          f"{args.leakage} leakage")

    # Table 4.1
    began = time.perf_counter()
    telemetry = record_telemetry(train_jobs, n, params, progress=True)
    held_telemetry = record_telemetry(test_jobs, n, params)
    rows41 = []
    for kind in KINDS:
        saved, losses = train_predictor(telemetry, kind, epochs=args.predictor_epochs, seed=args.seed)
        path = out / f"predictor-{kind}.pt"
        save_predictor(saved, path, params.leakage_model)
        net, saved = read_predictor(path, 24)
        rows41.append({"predictor": kind, "final_train_loss": losses[-1], **evaluate(net, saved, held_telemetry, 180.0)})
    mixture, saved_parts = train_clustered(telemetry, 3, epochs=args.predictor_epochs, seed=args.seed)
    rows41.append({"predictor": "gmm3-tandem", "final_train_loss": float("nan"),
                   **evaluate_clustered(mixture, saved_parts, held_telemetry, 180.0)})
    print(f"\nTable 4.1: next-step prediction on the held-out telemetry ({time.perf_counter() - began:.0f} s)")
    print(f"{'predictor':11s} {'T MAE C':>8s} {'T RMSE C':>9s} {'T acc %':>8s} {'P MAE W':>8s} {'P RMSE W':>9s} {'P acc %':>8s}")
    for r in rows41:
        print(f"{r['predictor']:11s} {r['temperature_MAE_C']:8.2f} {r['temperature_RMSE_C']:9.2f} "
              f"{r['temperature_accuracy_pct']:8.2f} {r['power_MAE_W']:8.2f} {r['power_RMSE_W']:9.2f} {r['power_accuracy_pct']:8.2f}")
    write_csv(out / "table4_1.csv", rows41)
    if not args.alphas.strip():
        return 0

    # Tables 4.3 / 4.4 and waiting times
    env_kw = dict(nb_processors=n, episode_days=args.episode_days, **({"thermal": thermal} if thermal else {}))
    on_predictor = {float(a) for a in args.predictor_alphas.split(",") if a.strip()}
    rows43, rows_jobs, latency = [], [], {}
    for alpha in [float(a) for a in args.alphas.split(",")]:
        env = gym.make("batsched_py/Allocation-v0", jobs=test_jobs, **{**env_kw, "episode_days": args.test_days,
                                                                        "alpha": alpha}).unwrapped
        policies = {name: (lambda a: lambda obs: a(env.agent, env.agent.head_cores()))(a)
                    for name, a in [("round_robin", ALLOCATORS["round_robin"]), ("greedy", ALLOCATORS["greedy"]),
                                    ("online_opt1", online_opt1(alpha))]}
        trained = {}
        # the thesis trains on the learned model and evaluates on the machines (here the physical model)
        for backend in ["physics"] + (["predictor"] if alpha in on_predictor else []):
            suffix = "" if backend == "physics" else "-predictor"
            path = Path(args.models if alpha == 0.5 else out) / f"thermal-allocation-dqn{tag}{suffix}-a{alpha:g}.zip"
            extra = {} if backend == "physics" else {"backend": "predictor", "predictor": out / "predictor-tandem.pt"}
            began = time.perf_counter()
            model = train({"jobs": train_jobs, **env_kw, "alpha": alpha, **extra}, args.steps, path, seed=args.seed,
                          progress=True)
            trained[backend] = time.perf_counter() - began
            policies[f"dqn{suffix}"] = (lambda m: lambda obs: greedy_action(m, obs))(model)
        results = {}
        for name, choose in policies.items():
            results[name], latency[name] = play(env, choose)
            if name == "round_robin":
                rr_wait = env.agent.wait.copy()
        power = {k: v["agent_power_W"] for k, v in results.items()}
        temp = {k: v["agent_temperature_C"] for k, v in results.items()}
        for backend, seconds in trained.items():
            dqn = "dqn" if backend == "physics" else "dqn-predictor"
            row = {"alpha": alpha, "trained_on": backend, "train_s": round(seconds, 1)}
            for base in ("round_robin", "greedy", "online_opt1"):
                row[f"power_saving_vs_{base}_pct"] = 100 * (power[base] - power[dqn]) / power[base]
                row[f"temperature_reduction_vs_{base}_C"] = temp[base] - temp[dqn]
            rows43.append(row)
        for name, r in results.items():
            rows_jobs.append({"alpha": alpha, "allocator": name, "power_W": r["agent_power_W"],
                              "temperature_C": r["agent_temperature_C"], "waiting_s": r["agent_wait_s"],
                              "completion_s": r["completion_s"]})
        print(f"alpha {alpha:g}: trained {args.steps} steps in " + ", ".join(f"{s:.0f} s ({b})" for b, s in trained.items())
              + "; " + ", ".join(f"{k} {power[k]:.1f} W {temp[k]:.2f} C" for k in power))
    print("\nTable 4.3: the DQN's relative power saving (%) / temperature reduction (C) on the held-out days")
    print(f"{'alpha':>5s} {'trained on':>10s} | {'vs round robin':>16s} | {'vs greedy':>16s} | {'vs online-opt1':>16s}")
    for r in rows43:
        print(f"{r['alpha']:5g} {r['trained_on']:>10s} | " + " | ".join(
            f"{r[f'power_saving_vs_{b}_pct']:6.2f}% {r[f'temperature_reduction_vs_{b}_C']:6.2f} C"
            for b in ("round_robin", "greedy", "online_opt1")))
    print(THESIS_HEADLINE)
    # references: what placement alone can give under this model
    rr = next(r for r in rows_jobs if r["allocator"] == "round_robin")
    first = Cluster(test_jobs, n, params)   # first fit, processors in rack order (coolest inlet first)
    first.run(lambda cluster, cores: int(np.flatnonzero(cluster.fits(cores))[0]))
    first.model.advance(first.now)
    ff = cluster_figures(first, "ff")
    references = [("first fit, coolest rack first", ff["ff_power_W"], ff["ff_temperature_C"]),
                  ("every instant packed, as with free migration, round robin's start times"
                   + (" (bound)" if args.leakage == "linear" else " (not a bound with exponential leakage)"),
                   *packed(test_jobs, rr_wait, n, params))]
    rows_ref = [{"reference": name, "power_saving_vs_round_robin_pct": 100 * (rr["power_W"] - power) / rr["power_W"],
                 "temperature_reduction_vs_round_robin_C": rr["temperature_C"] - temperature}
                for name, power, temperature in references]
    for r in rows_ref:
        print(f"{r['reference']}: {r['power_saving_vs_round_robin_pct']:.2f}% / "
              f"{r['temperature_reduction_vs_round_robin_C']:.2f} C vs round robin")
    print("\nTable 4.4: decision latency per job (CPU microseconds, at the last alpha each ran)")
    for name, seconds in latency.items():
        print(f"  {name:12s} {1e6 * seconds:10.1f} us")
    print("\nWaiting and completion times (s), per allocator and alpha: " + str(out / "jobs.csv"))
    for r in rows_jobs:
        if r["alpha"] == 0.5:
            print(f"  {r['allocator']:12s} waiting {r['waiting_s']:9.1f} s  completion {r['completion_s']:9.1f} s")
    write_csv(out / "table4_3.csv", rows43)
    write_csv(out / "table4_4.csv", [{"allocator": k, "latency_us": 1e6 * v} for k, v in latency.items()])
    write_csv(out / "jobs.csv", rows_jobs)
    write_csv(out / "references.csv", rows_ref)
    return 0


def write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
