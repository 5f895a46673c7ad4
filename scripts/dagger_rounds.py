#!/usr/bin/env python3
"""More DAgger rounds for a saved clone (``imitation.zip`` of ``batsched-py train --imitate``, or any
saved agent of the paper), aimed at the training days where it falls behind its teacher.

A deterministic clone that agrees with its teacher on 99.7% of the labelled states can still, on a
day whose states it was never shown, keep waiting where the teacher starts a job (DeepScheduling's
pointer clone of SAF: one held-out day of 315 carried its whole gap to SAF).  Each round here:

1. plays the clone and the teacher on the validation days (all training days, or ``--days`` drawn
   from them; the held-out days are for ``batsched-py evaluate``) and ranks the days by the clone's
   excess over the teacher in ``--figure`` (the day's mean waiting time by default; DeepShutdown's:
   ``energy_waste``);
2. lets the clone play the ``--hard`` worst days (twice each, differently seeded) with the teacher
   labelling what it meets, plus ``--fresh`` days the teacher plays itself (so that its own states
   are not forgotten), merged with the earlier rounds';
3. fits the clone on everything labelled so far (``--epochs``) and saves it.

With ``--holdout`` the validation days are carved out of the training days: no round labels them
(the worst days of step 2 are then found among ``--scout`` other training days), so the choice of
round below is made on days no clone was fitted on.  At the end the round with the lowest
validation mean of ``--figure`` is copied to ``chosen.zip``; with ``--budget
waiting_time:1.5:T5``, the lowest among the rounds whose mean waiting time on the same days is at
most 1.5 x T5's (the issue's "waste under a waiting-time budget"); where no round is within it,
none is chosen (exit status 1).  ``rounds.json`` records every round, the validation days, the hard
days of each round and the choice.  Interrupted (Ctrl-C, SIGTERM), it stops at once, chooses among
the rounds validated so far, says in ``rounds.json`` (``status``) which round was cut short, and
exits with the signal's status (130, 143); a round's clone is saved whole or not at all.

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
import shutil
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
from batsched_py.agents.common.loading import trained_with  # noqa: E402
from batsched_py.agents.common.papers import BaselineOptionsError, baseline_maker, paper  # noqa: E402
from batsched_py.agents.common.checkpoints import save_agent, save_whole  # noqa: E402
from batsched_py.envs.core import workload_files  # noqa: E402
from batsched_py.interrupts import exit_status, interruption, run_command, signals_interrupt  # noqa: E402
from choose_checkpoint import parse_budget  # noqa: E402


def play_day(env, day: str, act, masking: bool) -> dict:
    """The final ``info`` of one day played by ``act(obs, mask)`` (a baseline, bound to the day's
    scheduler, when it has ``bind``)."""
    obs, info = env.reset(seed=0, options={"workload": day})
    if hasattr(act, "bind"):
        act.bind(env.scheduler)
    done = False
    while not done:
        obs, _, term, trunc, info = env.step(act(obs, env.action_masks() if masking else None))
        done = term or trunc
    return info


def json_arguments(text: str) -> dict:
    """A JSON object of keyword arguments (a teacher's, an environment's)."""
    try:
        options = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc})") from None
    if not isinstance(options, dict):
        raise argparse.ArgumentTypeError(f"{text!r} is not a JSON object")
    return options


def choose(rounds: list[dict], budget: bool) -> int | None:
    """The round with the lowest validation mean of the figure, among those within the budget;
    None when none is (as choose_checkpoint.py: a round over the budget is not made acceptable by
    being over it least)."""
    within = [r for r in rounds if not budget or r["budget_ok"]]
    return min(within, key=lambda r: r["clone_mean"])["round"] if within else None


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
    parser.add_argument("--holdout", action="store_true", help="the validation days are carved out: never played for "
                        "labels; each round the clone plays --scout other training days to find its worst")
    parser.add_argument("--scout", type=int, default=0, help="with --holdout: training days the clone plays each round "
                        "to rank its worst (default: as many as --days)")
    parser.add_argument("--teacher-options", type=json_arguments, default={}, metavar="JSON",
                        help='the teacher\'s arguments, e.g. \'{"max_stretch": 0.25}\' for OR*')
    parser.add_argument("--env", type=json_arguments, default={}, metavar="JSON",
                        help='the environment\'s arguments (default: those that shape the observation are the '
                             'clone\'s, from the model.json beside it), e.g. \'{"release_features": true}\'')
    parser.add_argument("--budget", type=parse_budget, metavar="FIGURE:FACTOR:BASELINE",
                        help="the round chosen has the lowest validation --figure among those whose mean FIGURE "
                        "is at most FACTOR x BASELINE's on the same days (e.g. waiting_time:1.5:T5)")
    parser.add_argument("-p", "--platform", type=Path, required=True)
    parser.add_argument("-w", "--workloads", type=Path, nargs="+", required=True, help="training days (files or folders)")
    parser.add_argument("-o", "--out", type=Path, required=True, help="folder for the clone of each round, the chosen "
                        "one (chosen.zip) and rounds.json")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hard", type=int, default=60, help="worst days the clone plays each round (default 60)")
    parser.add_argument("--fresh", type=int, default=150, help="days the teacher plays each round (default 150)")
    parser.add_argument("--epochs", type=int, default=3, help="cloning epochs each round (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="the seed of the labelled days and of the fits")
    parser.add_argument("--split-seed", type=int, help="the seed that draws the validation days (default: --seed), "
                        "so that runs with different seeds can be chosen between on the same days")
    args = parser.parse_args()
    torch.set_num_threads(1)
    settings = paper(args.agent)
    if args.teacher not in settings.BASELINES or (args.budget and args.budget[2] not in settings.BASELINES):
        parser.error(f"--teacher and --budget name baselines of {args.agent}: {', '.join(settings.BASELINES)}")

    try:
        teacher = baseline_maker(settings, args.teacher, args.teacher_options)
    except BaselineOptionsError as exc:
        parser.error(f"--teacher-options {json.dumps(args.teacher_options)}: {args.teacher} does not take them ({exc})")
    gamma = settings.HYPERPARAMETERS["gamma"]
    days = [str(d) for d in workload_files(args.workloads)]
    rng = np.random.default_rng(args.seed)
    pool = days     # (the days the clone and the teacher play for labels)
    if 0 < args.days < len(days):
        split = np.random.default_rng(args.seed if args.split_seed is None else args.split_seed)
        days = sorted(split.choice(days, args.days, replace=False).tolist())
    if args.holdout:
        pool = [d for d in pool if d not in set(days)]
        if not pool:
            parser.error("--holdout leaves no training day to label: draw fewer --days")
    scout = min(len(pool), args.scout or len(days))
    args.out.mkdir(parents=True, exist_ok=True)
    masking = not args.no_masks
    model = (MaskablePPO if masking else PPO).load(str(args.model), device="cpu")
    try:
        args.env = trained_with(str(args.model), settings.TRAINED_OPTIONS, args.env)
    except ValueError as exc:
        parser.error(str(exc))

    def make_env():
        return gym.make(settings.ENV, platform=str(args.platform), workloads=pool + days, **args.env)

    try:
        env = make_env().unwrapped
    except (ValueError, TypeError) as exc:
        parser.error(f"--env {json.dumps(args.env)}: {exc}")
    if env.observation_space.shape != model.observation_space.shape:
        parser.error(f"{args.model} was trained on observations {model.observation_space.shape}; the environment "
                     f"with --env {json.dumps(args.env)} gives {env.observation_space.shape}")

    def student(obs, mask):
        if mask is None:
            return int(model.predict(obs, deterministic=True)[0])
        return int(model.predict(obs, deterministic=True, action_masks=mask)[0])

    def figures_of(act, on: list[str], label: str) -> dict[str, dict]:
        t0, out = time.time(), {}
        for i, day in enumerate(on):
            out[day] = play_day(env, day, act, masking)
            if i % 50 == 0:
                print(f"{label}: {i}/{len(on)} days ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
        return out

    def mean(played: dict[str, dict], figure: str) -> float:
        return float(np.mean([info[figure] for info in played.values()]))

    def known(figure: str, played: dict[str, dict], option: str) -> None:
        info = next(iter(played.values()))
        if not isinstance(info.get(figure), (int, float)):
            parser.error(f"{option} {figure}: not a figure of {settings.ENV} "
                         f"({', '.join(k for k, v in info.items() if isinstance(v, (int, float)))})")

    rounds: list[dict] = []
    state: dict = {"status": "running", "doing": "the baselines' validation days", "chosen": None}

    def save() -> None:
        record = {"chosen": state["chosen"], "status": state["status"], "validation": [Path(d).name for d in days],
                  "labelled_pool": len(pool), "teacher": args.teacher, "teacher_options": args.teacher_options,
                  "env_kwargs": args.env, "rounds": rounds}
        save_whole(args.out / "rounds.json", lambda part: part.write_text(json.dumps(record, indent=1) + "\n"))

    def play_rounds() -> None:
        first = figures_of(Labelled(teacher()), days, args.teacher)
        known(args.figure, first, "--figure")
        taught = {d: info[args.figure] for d, info in first.items()}
        limit = None
        if args.budget:
            figure, factor, baseline = args.budget
            base = figures_of(Labelled(settings.BASELINES[baseline]()), days, baseline)
            known(figure, base, "--budget")
            limit = factor * mean(base, figure)
        demos = None
        for r in range(args.rounds + 1):
            state["doing"] = f"round {r}'s validation"
            t1 = time.time()
            played = figures_of(student, days, f"round {r}")
            waits = {d: info[args.figure] for d, info in played.items()}
            excess = sorted(days, key=lambda d: waits[d] - taught[d], reverse=True)
            behind = [d for d in days if waits[d] > taught[d] + 1e-6]
            figures = {"round": r, "figure": args.figure, "clone_mean": float(np.mean(list(waits.values()))),
                       "teacher_mean": float(np.mean(list(taught.values()))), "validation_days": len(days),
                       "held_out": args.holdout,
                       "days_behind": len(behind), "days_ahead": sum(waits[d] < taught[d] - 1e-6 for d in days),
                       "worst_excess": waits[excess[0]] - taught[excess[0]], "validation_s": round(time.time() - t1)}
            if args.budget:
                figures.update({"budget_figure": args.budget[0], "budget_mean": mean(played, args.budget[0]),
                                "budget_limit": limit})
                figures["budget_ok"] = figures["budget_mean"] <= limit
            print(f"round {r}: clone {figures['clone_mean']:.3f} vs {args.teacher}"
                  f"{json.dumps(args.teacher_options) if args.teacher_options else ''} {figures['teacher_mean']:.3f} "
                  f"(mean {args.figure} over {len(days)} validation days); behind on {len(behind)}, ahead on "
                  f"{figures['days_ahead']}; worst excess {figures['worst_excess']:.1f}"
                  + (f"; mean {args.budget[0]} {figures['budget_mean']:.3f} (budget {limit:.3f})" if args.budget
                     else ""), file=sys.stderr, flush=True)
            rounds.append(figures)
            save()
            if r == args.rounds:
                break
            state["doing"] = f"round {r + 1}'s labels and fit"
            if args.holdout:
                # the worst days among training days the validation never sees
                scouted = sorted(rng.choice(pool, scout, replace=False).tolist())
                mine = {d: info[args.figure] for d, info in figures_of(student, scouted, "scout").items()}
                theirs = {d: info[args.figure]
                          for d, info in figures_of(Labelled(teacher()), scouted, "scout teacher").items()}
                hard = sorted(scouted, key=lambda d: mine[d] - theirs[d], reverse=True)[:args.hard]
            else:
                hard = excess[:args.hard]
            more = demonstrations(make_env, teacher, [Path(d) for d in hard], episodes=2 * len(hard), gamma=gamma,
                                  seed=args.seed + r, student=student, masking=masking)
            fresh = demonstrations(make_env, teacher, [Path(d) for d in pool], episodes=args.fresh, gamma=gamma,
                                   seed=args.seed + 100 + r, masking=masking)
            new = merge(more, fresh)
            demos = new if demos is None else merge(demos, new)
            rms = RunningMeanStd(shape=())
            rms.update(demos.running)
            fit = clone(model, demos, epochs=args.epochs, return_scale=float(np.sqrt(rms.var + 1e-8)),
                        seed=args.seed + r, report=lambda line: print(line, file=sys.stderr, flush=True))
            rounds[-1].update({"labelled_steps": len(demos), "accuracy": fit["accuracy"],
                               "hard_days": [Path(d).name for d in hard]})
            save_agent(args.out / f"clone_round{r + 1}.zip", lambda part: model.save(str(part)), args.env,
                       made_by=f"scripts/dagger_rounds.py round {r + 1} from {args.model} (rounds.json)")

    def choose_round() -> int:
        """Copy the round chosen among those validated to chosen.zip (none: status 1)."""
        best = choose(rounds, bool(args.budget)) if rounds else None
        if best is None:
            save()
            print(f"dagger_rounds: {'no round validated' if not rounds else 'no round within the budget'}"
                  + (f" ({args.budget[0]} <= {args.budget[1]} x {args.budget[2]})" if rounds else "")
                  + f"; no chosen.zip, the rounds are in {args.out}", file=sys.stderr, flush=True)
            return 1
        source = args.model if best == 0 else args.out / f"clone_round{best}.zip"
        save_agent(args.out / "chosen.zip", lambda part: shutil.copyfile(source, part), args.env,
                   made_by=f"scripts/dagger_rounds.py: {source.name}, the round chosen (rounds.json)")
        state["chosen"] = best
        save()
        print(f"chosen: round {best} ({source}) -> {args.out / 'chosen.zip'}", file=sys.stderr, flush=True)
        return 0

    # The choice is inside the block: once a signal has stopped the rounds, a repeat (a batch
    # system's SIGTERM again) is ignored while the choice among the validated rounds is saved.
    stopped = None
    with signals_interrupt():
        try:
            play_rounds()
            state["status"] = "finished"
        except KeyboardInterrupt as exc:
            state["status"] = (f"{interruption(exc)} during {state['doing']}: the choice is among the "
                               f"{len(rounds)} round(s) validated before")
            print(f"dagger_rounds: {state['status']}", file=sys.stderr, flush=True)
            stopped = exc
        status = choose_round()
    env.close()
    return status if stopped is None else exit_status(stopped)


if __name__ == "__main__":
    run_command("dagger_rounds", main)
