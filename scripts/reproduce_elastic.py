#!/usr/bin/env python3
"""Perez et al., "Responsive Elastic Computing": their Tables 2-5 layout with our figures.

Workload: two windows of 9,500 jobs cut from the Parallel Workloads Archive's LPC-EGEE trace
(140 CPUs, an EGEE/LCG site) standing in for the paper's EGEE LAL trace (about 9,500 jobs on 81
cores over seven weeks; it is not public), converted by ``swf2json --job-fields`` (VO = the SWF
group).  No LPC-EGEE window has both the paper's job count and span (every seven-week window holds
over 33,000 jobs; LCG-2005 spans 11 days in all), so the windows follow a rule fixed before any
run, matching either the job count or the span (``batsched_py.workloads.windows.train_test``):
``--window sparsest`` (the default) takes for testing the 9,500-job window with the longest span
(the lightest arrival rate), for training the longest-span one that ends before it;
``--window seven-weeks`` takes for testing the seven-week window with the fewest jobs, for
training the seven-week window with the fewest jobs that is over before it starts.
``--window busy`` takes the earlier fixed windows (cleaned jobs 152,000 on for training, 176,000
on for testing: 6.3 days, saturated).  Platform: ``platforms/elastic_140.xml`` (140 hosts with
sleep pstates, ``batsched-py platform cluster -n 140``).

Schedulers on the test window: FCFS on a fixed 81-core pool (stand-in for the site's native
scheduler), EDF (the teacher), SARSA with an echo state network on the fixed pool (rigid RL), its
feed-forward variant, and SARSA-ESN choosing the pool too (elastic RL), rewarded with
R = 0.8 W + 0.2 F and, charging for hosts, with R = 0.8 W + 0.2 U.  Agents are pre-trained on
EDF over the training window, then learn for ``--episodes`` epsilon-greedy episodes there.  Metrics
leave out the first and last 500 jobs.  Usage:

    python scripts/reproduce_elastic.py [--shared ../shared] [--out out/elastic] [--episodes 2]
                                        [--window sparsest|seven-weeks|busy] [--skip-ff]
"""
from __future__ import annotations

import argparse
import csv
import heapq
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gymnasium as gym  # noqa: E402

import batsched_py.envs  # noqa: E402,F401
from batsched_py.argtypes import count, positive_count  # noqa: E402
from batsched_py.agents.elastic import SarsaAgent, run_episode  # noqa: E402
from batsched_py.models.platform import load_platform  # noqa: E402
from batsched_py.agents.elastic.env import busiest_vos  # noqa: E402
from batsched_py.agents.elastic.baselines import BASELINES  # noqa: E402
from batsched_py.workloads.convert import ConvertOptions, convert_trace, prepare  # noqa: E402
from batsched_py.workloads.swf import read_swf  # noqa: E402
from batsched_py.workloads.windows import fewest_jobs, train_test  # noqa: E402

PLATFORM = ROOT / "platforms" / "elastic_140.xml"
TRACE = "data/swf/LPC-EGEE-2004-1.2-cln.swf.gz"
BUSY = {"train": 152_000, "test": 176_000}    # --window busy: the first windows, chosen by hand
PAPER_SPAN = 49 * 86400.0                    # the paper's seven weeks (s)
TARGETS = {"rigid_W": 0.85, "elastic_W": 0.95, "above_fcfs": 0.2, "delay_cut": 0.45}


def windows(shared: Path, out: Path, jobs: int, rule: str) -> dict[str, Path]:
    opts = ConvertOptions(job_fields=True)
    trace = read_swf(shared / TRACE)
    cuts = {name: (skip, jobs) for name, skip in BUSY.items()}       # name: (first cleaned job, jobs)
    if rule != "busy":
        submits = [j.submit for j in prepare(trace, opts)[0]]
        start, count = fewest_jobs(submits, PAPER_SPAN)
        print(f"the seven-week window with the fewest jobs holds {count} (cleaned jobs {start} on): "
              f"no window has the paper's {jobs} jobs in seven weeks")
        cuts = train_test(submits, "jobs" if rule == "sparsest" else "span", jobs, PAPER_SPAN)
    paths = {}
    for name, (skip, count) in cuts.items():
        path = out / f"lpc_egee_{name}_{skip}_{count}.json"
        if not path.exists():
            opts.skip_jobs, opts.max_jobs = skip, count
            workload, _ = convert_trace(trace, opts, command=f"batsched-py swf2json {TRACE} --job-fields "
                                                             f"--skip-jobs {skip} --max-jobs {count}")
            path.write_text(json.dumps(workload))
        paths[name] = path
        submits = [j["subtime"] for j in json.loads(path.read_text())["jobs"]]
        print(f"{name} window: cleaned jobs {skip}-{skip + count - 1}, {(submits[-1] - submits[0]) / 86400:.1f} days")
    return paths


VOS: list = []     # the training window's busiest VOs: class c means the same VO in every run


def make_env(workload: Path, mode: str, prefix: Path | None = None, second: str = "fairness"):
    return gym.make("batsched_py/Elastic-v0", platform=str(PLATFORM), workloads=[str(workload)], mode=mode,
                    second=second, vos=VOS or None, output_prefix=None if prefix is None else str(prefix))


def energy_kwh(prefix: Path) -> float:
    with open(f"{prefix}_schedule.csv") as f:
        return float(next(csv.DictReader(f))["consumed_joules"]) / 3.6e6


def _settle(platform: Path) -> float:
    """A host's switch on plus switch off on ``platform`` (s, the slowest host's): how late after a
    pool change the switches it causes can come."""
    hosts = load_platform(platform, energy=True).hosts
    return max(h.switch_on_time(s) + h.switch_off_time(s) for h in hosts for s in h.sleep_pstates)


SETTLE = _settle(PLATFORM)     # 157.6 s on platforms/elastic_140.xml


def pool_checks(prefix: Path) -> dict[str, float | None]:
    """The pool's constraints read back from the Batsim outputs: the fewest hosts in it at any time
    (on, or switching on) and the shortest time between two pool changes (None if it never changes
    after the first pool is set, at time 0).  A change is a host starting to switch on or off, with
    the switches up to ``SETTLE`` s after it (a host that changes sides mid-switch is switched once
    its switch ends)."""
    with open(f"{prefix}_machine_states.csv") as f:
        fewest = min(int(r["nb_idle"]) + int(r["nb_computing"]) + int(r["nb_switching_on"])
                     for r in csv.DictReader(f))
    with open(f"{prefix}_pstate_changes.csv") as f:
        # -1 / -2: a host starts switching on / off
        switches = sorted({float(r["time"]) for r in csv.DictReader(f) if int(r["new_pstate"]) < 0})
    changes: list[float] = []
    for t in switches:
        if not changes or t > changes[-1] + SETTLE:
            changes.append(t)
    gaps = [b - a for a, b in zip(changes, changes[1:])]
    return {"pool_fewest": fewest, "pool_stable": min(gaps) if gaps else None}


class InteractiveFirst:
    """A reference, not the paper's: the oldest interactive job first, else the oldest batch job;
    what any class choice can reach on a fixed pool whose cores are all busy."""

    def bind(self, scheduler) -> None:
        self.s = scheduler

    def __call__(self, obs) -> int:
        heads = [(c % 2, q[0].subtime, c) for c, q in enumerate(self.s.queues) if q]
        return min(heads)[2] if heads else 0


def evaluate(name: str, workload: Path, mode: str, out: Path, agent: SarsaAgent | None = None,
             baseline: str | None = None, second: str = "fairness") -> dict:
    prefix = out / name
    env = make_env(workload, mode, prefix, second)
    t = time.time()
    if agent is not None:
        agent.learning = False
        info = run_episode(env, agent, seed=0, explore=False)
    else:
        obs, _ = env.reset(seed=0)
        policy = InteractiveFirst() if baseline == "IF" else BASELINES[baseline]()
        policy.bind(env.unwrapped.scheduler)
        done = False
        while not done:
            obs, _, term, trunc, info = env.step(policy(obs))
            done = term or trunc
    meter = env.unwrapped.meter
    on = meter.host_time_of("computing") + meter.host_time_of("idle")
    info["U"] = meter.host_time_of("computing") / on if on else math.nan
    info["pool_mean"] = on / max(1.0, info["time"])
    info["energy_kwh"] = energy_kwh(prefix)
    info.update(pool_checks(prefix))
    info["wall_s"] = time.time() - t
    env.close()
    print(f"  {name:<16} interactive W {info['interactive_W']:.3f}  batch W {info['batch_W']:.3f}  "
          f"({info['wall_s']:.0f} s)", flush=True)
    return info


def train(kind: str, mode: str, paths: dict[str, Path], episodes: int, seed: int, second: str) -> SarsaAgent:
    env = make_env(paths["train"], mode, second=second)
    s = env.unwrapped
    agent = SarsaAgent(s.observation_space.shape[0], 2 * s.options["nb_vos"],
                       len(s.options["pool_steps"]) if mode == "elastic" else 0, kind=kind, seed=seed)
    t = time.time()
    info = run_episode(env, agent, seed=seed, teacher="EDF", epsilon=0.2)
    agent.refit_all()
    print(f"  {kind}/{mode}: pre-trained on EDF (mean reward {info['mean_reward']:.3f}, {time.time() - t:.0f} s)",
          flush=True)
    for e in range(episodes):
        info = run_episode(env, agent, seed=seed + 1 + e)
        agent.refit_all()
        print(f"  {kind}/{mode}: episode {e + 1}: mean reward {info['mean_reward']:.3f}, interactive W "
              f"{info['interactive_W']:.3f}", flush=True)
    env.close()
    return agent


def order_bound(workload: Path, cores: int = 81, interactive: float = 900.0, skip: int = 500) -> dict[str, float]:
    """What job order alone can give on a fixed pool: ``cores`` cores serving the window's single-core
    jobs first-come first-served, and shortest first with known runtimes (no classes, no
    estimates); interactive mean W = exec / (exec + wait), the first and last ``skip`` jobs left out.
    A check outside the environment: its FCFS should give the environment's FCFS figures.
    "interactive alone" serves the interactive jobs only (FCFS): what a scheduler that kept cores
    free for them, whatever it cost the batch jobs, could reach."""
    data = json.loads(workload.read_text())
    jobs = sorted(((float(j["subtime"]), float(data["profiles"][j["profile"]]["delay"]), i)
                   for i, j in enumerate(data["jobs"])))
    out = {}
    for order in ("FCFS", "shortest first", "interactive alone"):
        served = [j for j in jobs if j[1] < interactive] if order == "interactive alone" else jobs
        free = [0.0] * cores                  # when each core frees (a heap)
        queue: list = []                      # (key, submit, runtime, index)
        waits: dict[int, float] = {}
        k, now = 0, 0.0
        while k < len(served) or queue:
            # the next event: a submission, or a core freeing while jobs wait
            if k < len(served) and (not queue or served[k][0] <= free[0]):
                now = served[k][0]
                sub, run, i = served[k]
                heapq.heappush(queue, ((run if order == "shortest first" else sub), sub, run, i))
                k += 1
            else:
                now = max(now, free[0])
            while queue and free[0] <= now:
                _, sub, run, i = heapq.heappop(queue)
                waits[i] = now - sub
                heapq.heapreplace(free, now + run)
        kept = jobs[skip:len(jobs) - skip] if len(jobs) > 2 * skip else jobs
        w = [run / (run + waits[i]) if run + waits[i] > 0 else 1.0 for _, run, i in kept if run < interactive]
        out[order] = sum(w) / len(w)
    return out


def row(label: str, unit: str, results: dict, key: str, fmt: str) -> str:
    cells = [format(results[c][key], fmt) if results.get(c, {}).get(key) is not None else "-" for c in COLUMNS]
    return f"| {label} ({unit}) | " + " | ".join(cells) + " |"


COLUMNS = ["FCFS (81)", "EDF (81)", "interactive first (81)", "RL rigid ESN", "RL rigid FF", "EDF elastic", "RL elastic ESN",
           "RL elastic ESN, R with U"]
# (column, approximator, mode, second part of R); "R with U" charges for hosts: U = busy / pool hosts
AGENTS = [("RL rigid ESN", "esn", "scheduling", "fairness"), ("RL rigid FF", "ff", "scheduling", "fairness"),
          ("RL elastic ESN", "esn", "elastic", "fairness"), ("RL elastic ESN, R with U", "esn", "elastic", "utilisation")]


def tables(r: dict) -> str:
    head = "| | " + " | ".join(COLUMNS) + " |\n|---|" + "---|" * len(COLUMNS)
    lines = ["Table 2. Responsiveness W = exec / (exec + wait), mean over jobs", head,
             row("interactive W", "0-1", r, "interactive_W", ".3f"), row("batch W", "0-1", r, "batch_W", ".3f"),
             "", "Table 3. Queuing delay", head,
             row("interactive mean", "s", r, "interactive_delay", ".0f"),
             row("interactive median", "s", r, "interactive_delay_median", ".0f"),
             row("batch mean", "s", r, "batch_delay", ".0f"), row("batch median", "s", r, "batch_delay_median", ".0f"),
             "", "Table 4. Utilisation over the run", head,
             row("U = computing / on host-time", "0-1", r, "U", ".3f"),
             row("mean hosts on", "hosts", r, "pool_mean", ".1f"),
             row("fewest hosts in the pool, floor 30", "hosts", r, "pool_fewest", ".0f"),
             row("shortest time between pool changes, at least 900", "s", r, "pool_stable", ".0f"),
             "", "Table 5. What elasticity costs", head,
             row("energy", "kWh", r, "energy_kwh", ".1f"), row("host switches", "count", r, "nb_switches", ".0f"),
             row("jobs measured", "jobs", r, "nb_jobs", ".0f")]
    return "\n".join(lines)


def targets(r: dict) -> str:
    fcfs, rigid, elastic = r["FCFS (81)"], r["RL rigid ESN"], r.get("RL elastic ESN")
    out = ["Targets of issue 17 (paper's claims), ours:",
           f"- interactive mean W, rigid RL >= {TARGETS['rigid_W']}: {rigid['interactive_W']:.3f} "
           f"({'met' if rigid['interactive_W'] >= TARGETS['rigid_W'] else 'missed'})",
           f"- rigid RL >= FCFS + {TARGETS['above_fcfs']}: {rigid['interactive_W'] - fcfs['interactive_W']:+.3f} "
           f"({'met' if rigid['interactive_W'] - fcfs['interactive_W'] >= TARGETS['above_fcfs'] else 'missed'})"]
    if elastic:
        cut = 1 - elastic["interactive_delay"] / rigid["interactive_delay"] if rigid["interactive_delay"] else math.nan
        out += [f"- interactive mean W, elastic RL >= {TARGETS['elastic_W']}: {elastic['interactive_W']:.3f} "
                f"({'met' if elastic['interactive_W'] >= TARGETS['elastic_W'] else 'missed'})",
                f"- elastic RL >= FCFS + {TARGETS['above_fcfs']}: {elastic['interactive_W'] - fcfs['interactive_W']:+.3f}"
                f" ({'met' if elastic['interactive_W'] - fcfs['interactive_W'] >= TARGETS['above_fcfs'] else 'missed'})",
                f"- interactive queuing delay, elastic vs rigid RL, >= {TARGETS['delay_cut']:.0%} shorter: "
                f"{cut:.0%} ({'met' if cut >= TARGETS['delay_cut'] else 'missed'})"]
    for column in ("RL elastic ESN", "RL elastic ESN, R with U"):
        if column in r:
            out.append(f"- energy, {column} vs FCFS's fixed 81 hosts: "
                       f"{r[column]['energy_kwh'] / fcfs['energy_kwh'] - 1:+.0%}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared",
                    help="the shared folder, holding data/swf/LPC-EGEE-2004-1.2-cln.swf.gz (default ../shared)")
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "elastic",
                    help="folder of the windows, Batsim outputs, tables and figures (default out/elastic)")
    ap.add_argument("--episodes", type=count, default=2,
                    help="epsilon-greedy training episodes after pre-training (default 2)")
    ap.add_argument("--jobs", type=positive_count, default=9500, help="jobs per window (sparsest, busy; default 9500)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the agents' exploration and reservoirs (default 0)")
    ap.add_argument("--skip-ff", action="store_true", help="leave out the feed-forward variant")
    ap.add_argument("--window", choices=("sparsest", "seven-weeks", "busy"), default="sparsest",
                    help="sparsest: the --jobs windows with the longest spans (test; training: before it); "
                         "seven-weeks: the seven-week windows with the fewest jobs (test; training: before "
                         "it); busy: --jobs jobs from cleaned jobs 152,000 and 176,000 on")
    args = ap.parse_args(argv)
    if not (args.shared / TRACE).is_file():
        print(f"reproduce_elastic: {args.shared / TRACE} not found (give --shared)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        paths = windows(args.shared, args.out, args.jobs, args.window)
    except ValueError as exc:
        print(f"reproduce_elastic: {args.shared / TRACE}: {exc}", file=sys.stderr)
        return 2
    VOS[:] = busiest_vos([paths["train"]], "group", 4)
    print(f"VOs (SWF groups) of the classes: {VOS}")
    results: dict[str, dict] = {}
    print("baselines on the test window:")
    results["FCFS (81)"] = evaluate("fcfs", paths["test"], "scheduling", args.out, baseline="FCFS")
    results["EDF (81)"] = evaluate("edf", paths["test"], "scheduling", args.out, baseline="EDF")
    results["interactive first (81)"] = evaluate("interactive_first", paths["test"], "scheduling", args.out,
                                                 baseline="IF")
    for cores in (81, 140):      # the fixed pool, and every host of the platform (what any pool allows)
        bound = order_bound(paths["test"], cores)
        print(f"job order alone ({cores} cores, single jobs, known runtimes; a check outside the environment): "
              f"interactive mean W, FCFS {bound['FCFS']:.3f}, shortest first {bound['shortest first']:.3f} "
              f"(+{bound['shortest first'] - results['FCFS (81)']['interactive_W']:.3f} over FCFS on 81), "
              f"interactive jobs alone {bound['interactive alone']:.3f}")
    results["EDF elastic"] = evaluate("edf_elastic", paths["test"], "elastic", args.out, baseline="EDF")
    for column, kind, mode, second in AGENTS:
        if kind == "ff" and args.skip_ff:
            continue
        print(f"training {column}:")
        agent = train(kind, mode, paths, args.episodes, args.seed, second)
        name = f"sarsa_{kind}_{mode}" + ("_U" if second == "utilisation" else "")
        agent.save(args.out / f"{name}.npz")
        results[column] = evaluate(name, paths["test"], mode, args.out, agent=agent, second=second)
    print()
    print(tables(results))
    print()
    print(targets(results))
    (args.out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
