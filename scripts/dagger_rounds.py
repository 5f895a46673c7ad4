#!/usr/bin/env python3
"""More DAgger rounds for a saved clone (``imitation.zip`` of ``batsched-py train --imitate``, or any
saved agent of the paper), aimed at the training days where it falls behind its teacher.

A deterministic clone that agrees with its teacher on 99.7% of the labelled states can still, on a
day whose states it was never shown, keep waiting where the teacher starts a job (DeepScheduling's
pointer clone of SAF: one held-out day of 315 carried its whole gap to SAF).  Each round here:

1. plays the clone and the teacher on the training days (all, or ``--days`` drawn from them;
   validation on training days only: the held-out days are for ``batsched-py evaluate``) and
   ranks the days by the clone's excess over the teacher in ``--figure`` (the day's mean waiting
   time by default; DeepShutdown's: ``energy_waste``);
2. lets the clone play the ``--hard`` worst days (twice each, differently seeded) with the teacher
   labelling what it meets, plus ``--fresh`` days the teacher plays itself (so that its own states
   are not forgotten), merged with the earlier rounds';
3. fits the clone on everything labelled so far (``--epochs``) and saves it.

Usage (the figures of docs/papers/deepscheduling.md)::

    python scripts/dagger_rounds.py --model runs/dsched/imitation.zip --teacher SAF \\
        -p platforms/taurus_deepshutdown.xml -w ../shared/data/deepshutdown/lyon_*/workloads/train \\
        -o runs/dagger --rounds 3

A DeepShutdown agent (PPO, no action masks) with the authors' oracle as teacher::

    python scripts/dagger_rounds.py --agent shutdown --no-masks --teacher 'OR*' --figure energy_waste \
        --model models/deepshutdown-taurus.zip -p platforms/taurus_deepshutdown.xml \
        -w ../shared/data/deepshutdown/lyon_*/workloads/train -o runs/dagger-shutdown --days 120 --hard 20 --fresh 30

Waiting times are in the platform's time unit (minutes on the Taurus platform), waste in W·min.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.running_mean_std import RunningMeanStd  # noqa: E402

import batsched_py.envs  # noqa: E402,F401  (registers the environments)
from batsched_py.agents.common.imitation import clone, demonstrations, merge  # noqa: E402
from batsched_py.agents.common.papers import paper  # noqa: E402
from batsched_py.envs.core import workload_files  # noqa: E402


def play_day(env, day: str, act, figure: str, masking: bool) -> float:
    """``figure`` of one day played by ``act(obs, mask)`` (a baseline, bound to the day's
    scheduler, when it has ``bind``)."""
    obs, info = env.reset(seed=0, options={"workload": day})
    if hasattr(act, "bind"):
        act.bind(env.scheduler)
    done = False
    while not done:
        obs, _, term, trunc, info = env.step(act(obs, env.action_masks() if masking else None))
        done = term or trunc
    return float(info[figure])


class Labelled:
    """A baseline as ``act(obs, mask)``."""

    def __init__(self, rule):
        self.rule = rule

    def bind(self, scheduler) -> None:
        self.rule.bind(scheduler)

    def __call__(self, obs, mask) -> int:
        return self.rule(obs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True, help="the saved clone (a MaskablePPO .zip)")
    parser.add_argument("--agent", default="scheduling", help="its paper (train's agent name; default scheduling)")
    parser.add_argument("--teacher", default="SAF", help="the baseline it clones (default SAF)")
    parser.add_argument("--no-masks", action="store_true", help="a PPO agent without action masks (DeepShutdown's)")
    parser.add_argument("--figure", default="waiting_time", help="what ranks the days (default waiting_time; "
                        "energy_waste for DeepShutdown)")
    parser.add_argument("--days", type=int, default=0, help="validation days drawn from the training days (default: all)")
    parser.add_argument("-p", "--platform", type=Path, required=True)
    parser.add_argument("-w", "--workloads", type=Path, nargs="+", required=True, help="training days (files or folders)")
    parser.add_argument("-o", "--out", type=Path, required=True, help="folder for the clone of each round and rounds.json")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hard", type=int, default=60, help="worst days the clone plays each round (default 60)")
    parser.add_argument("--fresh", type=int, default=150, help="days the teacher plays each round (default 150)")
    parser.add_argument("--epochs", type=int, default=3, help="cloning epochs each round (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    settings = paper(args.agent)
    teacher = settings.BASELINES[args.teacher]
    gamma = settings.HYPERPARAMETERS["gamma"]
    days = [str(d) for d in workload_files(args.workloads)]
    pool = days     # (the clone's and the teacher's days: all training days)
    if 0 < args.days < len(days):
        days = sorted(np.random.default_rng(args.seed).choice(days, args.days, replace=False).tolist())
    args.out.mkdir(parents=True, exist_ok=True)
    masking = not args.no_masks
    model = (MaskablePPO if masking else PPO).load(str(args.model), device="cpu")

    def make_env():
        return gym.make(settings.ENV, platform=str(args.platform), workloads=pool)

    env = make_env().unwrapped

    def student(obs, mask):
        if mask is None:
            return int(model.predict(obs, deterministic=True)[0])
        return int(model.predict(obs, deterministic=True, action_masks=mask)[0])

    t0 = time.time()
    taught = {}
    for i, day in enumerate(days):
        taught[day] = play_day(env, day, Labelled(teacher()), args.figure, masking)
        if i % 50 == 0:
            print(f"teacher: {i}/{len(days)} days ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    demos, rounds = None, []
    for r in range(args.rounds + 1):
        t1 = time.time()
        waits = {day: play_day(env, day, student, args.figure, masking) for day in days}
        excess = sorted(days, key=lambda d: waits[d] - taught[d], reverse=True)
        behind = [d for d in days if waits[d] > taught[d] + 1e-6]
        figures = {"round": r, "figure": args.figure, "clone_mean": float(np.mean(list(waits.values()))),
                   "teacher_mean": float(np.mean(list(taught.values()))), "validation_days": len(days),
                   "days_behind": len(behind), "days_ahead": sum(waits[d] < taught[d] - 1e-6 for d in days),
                   "worst_excess": waits[excess[0]] - taught[excess[0]], "validation_s": round(time.time() - t1)}
        print(f"round {r}: clone {figures['clone_mean']:.3f} vs {args.teacher} {figures['teacher_mean']:.3f} "
              f"(mean {args.figure} over {len(days)} training days); behind on {len(behind)}, ahead on {figures['days_ahead']}; "
              f"worst excess {figures['worst_excess']:.1f}", file=sys.stderr, flush=True)
        rounds.append(figures)
        (args.out / "rounds.json").write_text(json.dumps(rounds, indent=1) + "\n")
        if r == args.rounds:
            break
        hard = excess[:args.hard]
        more = demonstrations(make_env, teacher, [Path(d) for d in hard], episodes=2 * len(hard), gamma=gamma,
                              seed=args.seed + r, student=student, masking=masking)
        fresh = demonstrations(make_env, teacher, [Path(d) for d in pool], episodes=args.fresh, gamma=gamma,
                               seed=args.seed + 100 + r, masking=masking)
        new = merge(more, fresh)
        demos = new if demos is None else merge(demos, new)
        rms = RunningMeanStd(shape=())
        rms.update(demos.running)
        fit = clone(model, demos, epochs=args.epochs, return_scale=float(np.sqrt(rms.var + 1e-8)), seed=args.seed + r,
                    report=lambda line: print(line, file=sys.stderr, flush=True))
        rounds[-1].update({"labelled_steps": len(demos), "accuracy": fit["accuracy"]})
        model.save(str(args.out / f"clone_round{r + 1}.zip"))
    env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
