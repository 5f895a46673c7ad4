#!/usr/bin/env python3
"""Benchmark the Gymnasium environments: steps per second with random actions on Taurus days.

1. ``Shutdown-v0`` and ``Scheduling-v0`` on the emulator backend, in this process: whole episodes
   on DeepShutdown's Taurus days (``workloads/deepshutdown`` in the repository, or
   ``--workloads DIR``, e.g. ``../shared/data/deepshutdown/lyon_2/workloads/train``) with uniformly
   random actions (seeded), and also with a policy-like agent (Shutdown: the T5 baseline, which
   switches far less than random actions; Scheduling: random valid actions from action_masks()),
   and for Shutdown the floor: an agent that never switches a node off (action 0 throughout), so
   that the cost of what random actions switch (nodes per step, microseconds per node) is printed.
2. The same episodes on the ``batsim`` backend: a Batsim process per episode over ZeroMQ.  The
   binary is ``$BATSCHED_PY_BATSIM`` or ``batsim`` on PATH when there is one, else
   ``batsched-py emulate`` standing in for it (said in the output).  Ratio emulator / subprocess.

References (from the issue, on this kind of machine): RLScheduler's HPCEnv 4,000-5,500 steps/s;
GridGym's day episodes 2-3 s (500-850 steps/s).

Usage: python scripts/bench_env.py [--episodes N] [--subprocess-episodes M] [--workloads DIR]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import batsched_py.envs  # noqa: F401
from batsched_py.agents.deepshutdown.baselines import BASELINES

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "platforms" / "taurus_deepshutdown.xml"


def episodes(name: str, workloads: list[Path], n: int, backend: str, agent: str) -> tuple[int, float, float, int]:
    """Steps, wall seconds, this process's CPU seconds (CPU time does not count what other
    processes on a busy machine take; the batsim backend's peer runs apart) and node switches
    (Shutdown-v0) of ``n`` episodes."""
    env = gym.make(f"batsched_py/{name}-v0", platform=str(PLATFORM), workloads=workloads, backend=backend).unwrapped
    rng = np.random.default_rng(0)
    steps, elapsed, cpu, switches = 0, 0.0, 0.0, 0
    for ep in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        obs, _ = env.reset(seed=ep)
        policy = None
        if agent == "T5":
            policy = BASELINES["T5"]()
            policy.bind(env.scheduler)
        done = False
        while not done:
            if policy is not None:
                action = policy(obs)
            elif agent == "masked":
                action = rng.choice(np.flatnonzero(env.action_masks()))
            elif agent == "never":
                action = 0
            else:
                action = rng.integers(env.action_space.n)
            obs, _, term, trunc, info = env.step(action)
            steps += 1
            done = term or trunc
        elapsed += time.perf_counter() - t0
        cpu += time.process_time() - c0
        switches += info.get("nb_switches", 0)
    env.close()
    return steps, elapsed, cpu, switches


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=6, help="episodes per measurement, emulator backend (6)")
    ap.add_argument("--subprocess-episodes", type=int, default=2, help="episodes on the batsim backend (2)")
    ap.add_argument("--workloads", type=Path, default=ROOT / "workloads" / "deepshutdown" / "train",
                    help="folder of day workloads (default: the repository's DeepShutdown days)")
    args = ap.parse_args()
    workloads = sorted(args.workloads.glob("*.json"))
    if not workloads:
        sys.exit(f"bench_env: no *.json workload in {args.workloads}")
    real = os.environ.get("BATSCHED_PY_BATSIM") or shutil.which("batsim")
    if not real:
        os.environ["BATSCHED_PY_BATSIM"] = f"'{shutil.which('batsched-py') or 'batsched-py'}' emulate"
    print(f"workloads: {len(workloads)} days from {args.workloads}; platform {PLATFORM.name}")
    print(f"subprocess backend: {'real Batsim: ' + real if real else 'batsched-py emulate standing in for batsim'}")
    print(f"{'environment':<15} {'actions':<10} {'backend':<10} {'steps':>7} {'time (s)':>9} {'steps/s':>9} "
          f"{'CPU (s)':>8} {'steps/CPU-s':>12}")
    rows = {}
    switched = {}
    for name, agents in (("Shutdown", ("random", "T5", "never")), ("Scheduling", ("random", "masked"))):
        for agent in agents:
            for backend, n in (("emulator", args.episodes), ("batsim", args.subprocess_episodes)):
                steps, t, cpu, switches = episodes(name, workloads, n, backend, agent)
                rows[name, agent, backend] = steps / t
                if backend == "emulator":
                    switched[name, agent] = switches / steps
                print(f"{name:<15} {agent:<10} {backend:<10} {steps:>7} {t:>9.2f} {steps / t:>9.0f} "
                      f"{cpu:>8.2f} {steps / cpu:>12.0f}")
    print("(steps/CPU-s: this process only; for the batsim backend the peer's CPU is not in it)")
    print("ratios, emulator / subprocess backend (steps/s over steps/s, wall clock, same episodes' seeds):")
    for name, agent, backend in rows:
        if backend == "emulator":
            print(f"  {name:<12} {agent:<8} {rows[name, agent, 'emulator'] / rows[name, agent, 'batsim']:.1f}x")
    floor, rand = rows["Shutdown", "never", "emulator"], rows["Shutdown", "random", "emulator"]
    per_node = (1e6 / rand - 1e6 / floor) / max(switched["Shutdown", "random"], 1e-9)
    print(f"Shutdown-v0 floor (no node ever switched): {floor:,.0f} steps/s, {1e6 / floor:.0f} us/step; random "
          f"actions switch {switched['Shutdown', 'random']:.2f} nodes/step and take {1e6 / rand:.0f} us/step: "
          f"{per_node:.0f} us per node switched (emulator and scheduler together)")
    print("targets (pure Python): Shutdown-v0 >= 20,000 steps/s, Scheduling-v0 >= 10,000 steps/s, "
          "emulator >= 20x subprocess")
    return 0


if __name__ == "__main__":
    sys.exit(main())
