"""``batsched-py train`` and ``batsched-py evaluate``."""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Optional, Sequence

from ..agents.common.figures import draw
from ..argtypes import count, positive_count, time_unit
from ..errors import BatschedError
from ..interrupts import exit_status, interruption, signals_interrupt


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def _env_arguments(text: str) -> dict:
    """Environment arguments: a JSON object that leaves the platform and the days to -p and -w."""
    value = _json_object(text)
    given = [key for key in ("platform", "workloads") if key in value]
    if given:
        raise argparse.ArgumentTypeError(f"{' and '.join(map(repr, given))}: given by -p and -w, not here")
    return value


def train_main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="batsched-py train", description=(
        "Train a DeepShutdown (shutdown) or DeepScheduling (scheduling) PPO agent on the emulator. Writes OUT/model.zip, "
        "OUT/model.json (command, seed, steps, wall time, machine), OUT/checkpoints/ and OUT/tensorboard/ "
        "(tensorboard --logdir OUT/tensorboard)."))
    ap.add_argument("agent", choices=("shutdown", "scheduling"))
    ap.add_argument("-p", "--platform", type=Path, required=True, help="platform XML with sleep pstates")
    ap.add_argument("-w", "--workloads", type=Path, nargs="+", required=True,
                    help="training day workloads: files or folders of *.json (never the test days)")
    ap.add_argument("-o", "--out", type=Path, required=True, help="output folder")
    ap.add_argument("--total-steps", type=positive_count, default=1_000_000,
                    help="environment steps, all actors, rounded up to whole rollouts of n_steps x actors (1,000,000)")
    ap.add_argument("--actors", type=positive_count, default=16, help="parallel environments (16, as the papers)")
    ap.add_argument("--seed", type=count, default=0, help="seed of the network and of actor i's days (seed + i)")
    ap.add_argument("--masking", action="store_true", help="scheduling: MaskablePPO, impossible actions masked")
    ap.add_argument("--checkpoint-every", type=positive_count, default=100_000,
                    help="steps between checkpoints (100,000)")
    ap.add_argument("--resume", action="store_true",
                    help="continue from the newest whole checkpoint of this agent in OUT/checkpoints")
    ap.add_argument("--overwrite", action="store_true",
                    help="replace the training OUT holds (else a used OUT is refused: --resume continues it)")
    ap.add_argument("--env", type=_env_arguments, default={}, metavar="JSON",
                    help="environment arguments, e.g. '{\"energy_weight\": 1.0}'")
    ap.add_argument("--hyper", type=_json_object, default={}, metavar="JSON",
                    help="PPO settings overriding the paper's, e.g. '{\"learning_rate\": 3e-4}'")
    ap.add_argument("--vec-env", choices=("subprocess", "dummy", "ray"), default="subprocess",
                    help="where the actors run: subprocesses (default), this process, or Ray actors")
    ap.add_argument("--ray-address", default=None, help="with --vec-env ray: an existing cluster (auto, ray://HOST:PORT)")
    ap.add_argument("--torch-threads", type=positive_count, default=1, help="threads of the learner (1)")
    ap.add_argument("--raw-reward", action="store_true",
                    help="train on the environment's rewards as they are (default: scaled by VecNormalize)")
    ap.add_argument("--imitate", default=None, metavar="BASELINE",
                    help="first clone a baseline (T0, T1, T5, OR*, QB / FF, EASY, SAF) on training days, then PPO")
    ap.add_argument("--imitate-options", type=_json_object, default=None, metavar="JSON",
                    help="the baseline's arguments, e.g. '{\"max_stretch\": 0.25, \"real_runtimes\": false}' for OR*")
    ap.add_argument("--imitate-days", type=positive_count, help="days the baseline plays for cloning (64)")
    ap.add_argument("--imitate-epochs", type=positive_count, help="cloning epochs over those days (10)")
    ap.add_argument("--imitate-rounds", type=positive_count,
                    help="1: plain cloning; N: N-1 more rounds where the clone plays half as many days and the "
                         "baseline labels them (DAgger) (3)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    # (gymnasium, torch and stable-baselines3, the rl extra: imported once the arguments are read)
    from ..agents.common.training import TrainConfig, TrainError, train
    from ..envs.core import workload_files
    imitation = {"episodes": args.imitate_days, "epochs": args.imitate_epochs, "rounds": args.imitate_rounds,
                 "options": args.imitate_options}
    try:
        given = [f"--imitate-{'days' if k == 'episodes' else k}" for k, v in imitation.items() if v is not None]
        if given and args.imitate is None:
            raise TrainError(f"{', '.join(given)}: apply with --imitate BASELINE only")
        config = TrainConfig(args.agent, args.platform, workload_files(args.workloads), args.out, args.total_steps,
                             args.actors, args.seed, args.masking, args.checkpoint_every, args.resume,
                             overwrite=args.overwrite, progress=not args.no_progress,
                             torch_threads=args.torch_threads, env_kwargs=args.env, hyperparameters=args.hyper,
                             vec_env=args.vec_env, ray_address=args.ray_address,
                             normalize_reward=not args.raw_reward, imitate=args.imitate,
                             **{f"imitate_{k}": v for k, v in imitation.items() if v is not None})
        with signals_interrupt():      # (SIGTERM too: the checkpoints stay, OUT/_INCOMPLETE says why)
            path = train(config, ["train", *argv])
    except BatschedError as exc:
        print(f"batsched-py train: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"batsched-py train: {interruption(exc)}; the checkpoints saved are in {args.out / 'checkpoints'} "
              "(continue with --resume)", file=sys.stderr)
        return exit_status(exc)
    record = json.loads((path.parent / "model.json").read_text())
    print(f"model: {path} ({record['steps']} steps in {record['wall_time_s']} s); record: {path.parent / 'model.json'}")
    return 0


def evaluate_main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="batsched-py evaluate", description=(
        "Run policies on every day of workload folders through the Shutdown-v0 or Scheduling-v0 environment, "
        "in parallel. Writes OUT/days.csv (a row per policy, day and repetition), OUT/summary.csv (per policy: "
        "mean/std/min/max of energy waste, switches, delay, stretch, slowdown, waiting time) and figures."))
    ap.add_argument("--env", required=True, choices=("shutdown", "scheduling"))
    ap.add_argument("--policies", required=True, help=(
        "comma-separated [LABEL=]NAME[:OPTIONS]: baselines T0,T1,T5,T10,OR*,QB (shutdown) or FF,EASY,SAF (scheduling), "
        "a trained agent MODEL.zip, or module:callable; OPTIONS a JSON object: a baseline's arguments, or an "
        "agent's deterministic and env (its own environment arguments, over its record and --env-args), e.g. "
        "'OR*-0.25=OR*:{\"max_stretch\": 0.25}' or "
        "'agent=models/deepshutdown-taurus.zip:{\"deterministic\": false, \"env\": {\"shield_wait\": 30}}'"))
    ap.add_argument("-p", "--platform", type=Path, required=True)
    ap.add_argument("-w", "--workloads", type=Path, nargs="+", required=True,
                    help="day files or folders, in order (e.g. train then test: the figures keep it)")
    ap.add_argument("-o", "--out", type=Path, required=True, help="output folder")
    ap.add_argument("--repeat", type=positive_count, default=1, help="repetitions of stochastic agents (the paper: 4)")
    ap.add_argument("-j", "--jobs", type=count, default=0, help="parallel processes (0: all CPUs)")
    ap.add_argument("--env-args", type=_env_arguments, default={}, metavar="JSON", help="environment arguments")
    ap.add_argument("--time-unit", type=time_unit, default="min",
                    help="the platform's time unit, for labels (min on Grid'5000)")
    ap.add_argument("--address", default=None,
                    help="run on Ray: 'local', 'auto' or 'ray://HOST:10001' (day files readable on every node)")
    ap.add_argument("--dedupe-against", type=Path, nargs="+", default=[], metavar="WORKLOADS",
                    help="drop evaluation days whose jobs equal those of a day here (the training days)")
    ap.add_argument("--no-figures", action="store_true")
    args = ap.parse_args(argv)
    # (gymnasium: the rl extra)
    from ..agents.common.evaluate import EvaluateError, dedupe, evaluate, parse_policies, table
    from ..envs.core import platform_hosts, workload_files
    try:
        platform_hosts(args.platform)
        days = workload_files(args.workloads)
        if args.dedupe_against:
            days, dropped = dedupe(days, workload_files(args.dedupe_against))
            print(f"batsched-py evaluate: {len(dropped)} day(s) equal to a day of --dedupe-against left out"
                  + (f": {', '.join(str(d) for d in dropped)}" if dropped else ""), file=sys.stderr)
            if not days:
                raise EvaluateError("every evaluation day is also a --dedupe-against day")
        specs = parse_policies(args.policies)
        if args.repeat > 1 and not any(spec.stochastic for spec in specs):
            raise EvaluateError(f"--repeat {args.repeat}: no policy is stochastic (a trained agent with "
                                '{"deterministic": false}): each would play every day once')
        summary = evaluate(args.env, args.platform, days, specs, args.out, repeat=args.repeat, jobs=args.jobs,
                           env_kwargs=args.env_args, address=args.address)
    except BatschedError as exc:
        print(f"batsched-py evaluate: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"batsched-py evaluate: {interruption(exc)}; finished days are in {args.out / 'days.csv'}",
              file=sys.stderr)
        return exit_status(exc)
    print(table(summary, args.time_unit))
    if not args.no_figures:
        with open(args.out / "days.csv") as f:
            rows = list(csv.DictReader(f))
        for path in draw(rows, days, args.out, args.time_unit):
            print(f"figure: {path}")
    print(f"days: {args.out / 'days.csv'}; summary: {args.out / 'summary.csv'}")
    return 0
