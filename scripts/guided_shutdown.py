#!/usr/bin/env python3
"""PPO on a saved Shutdown-v0 agent, guided by a teacher: a behaviour-cloning term toward the
teacher's action on the agent's own states after each update, and a critic that reads the real
runtimes and the authors' oracle's action (batsched_py.agents.common.guided).

Every ``--checkpoint-every`` steps the actor is saved as a plain agent (``step_N.zip``, readable
by ``evaluate``, ``run`` and the schedulers), and ``guided.json`` records the settings and each
checkpoint's teacher agreement and mean episode reward.  Choose among them on validation days the
run never trained on (``--exclude-days``: a ``rounds.json`` of dagger_rounds.py, whose
``validation`` days are then left out), e.g. with ``batsched-py evaluate`` and
``scripts/choose_checkpoint.py``.  Interrupted (Ctrl-C), it keeps the checkpoints written and says
at which step it stopped.

    python scripts/guided_shutdown.py models/deepshutdown-taurus.zip -o runs/guided --steps 460800 \\
        --teacher 'OR*' --teacher-options '{"max_stretch": 0.25}' --bc-weight 1 \\
        -w ../shared/data/deepshutdown/lyon_*/workloads/train --exclude-days results/shutdown/dagger_budget/rounds_B.json
"""
from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gymnasium as gym  # noqa: E402
import torch  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecNormalize  # noqa: E402

from batsched_py.agents.common.guided import Guidance, deployable, guided_model  # noqa: E402
from batsched_py.agents.common.training import ProgressLines, actor_failure, close_actors, env_factory  # noqa: E402
from batsched_py.agents.deepshutdown.baselines import BASELINES  # noqa: E402
import batsched_py.envs  # noqa: E402,F401  (registers the environments)
from batsched_py.agents.deepshutdown.config import ENV, HYPERPARAMETERS, TRAINED_OPTIONS  # noqa: E402
from batsched_py.agents.common.checkpoints import save_agent  # noqa: E402
from batsched_py.agents.common.loading import trained_with  # noqa: E402
from batsched_py.agents.deepshutdown.privileged import RealRuntimes  # noqa: E402
from batsched_py.envs.core import workload_files  # noqa: E402
from batsched_py.agents.common.papers import BaselineOptionsError, baseline_maker, paper  # noqa: E402
from batsched_py.interrupts import interruption, run_command, signals_deferred, signals_interrupt  # noqa: E402
from dagger_rounds import json_arguments  # noqa: E402


class Guide:
    """The actor's wrapper (picklable for subprocess actors): Guidance with a fresh teacher."""

    def __init__(self, teacher: str, options: dict):
        self.teacher, self.options = teacher, options

    def make_teacher(self):
        return BASELINES[self.teacher](**self.options)

    def __call__(self, env):
        return Guidance(env, self.make_teacher, RealRuntimes.of(env), could_start)


def could_start(scheduler) -> bool:
    """Shutdown-v0's decisive states: a queued job could start now, and the action decides whether it waits."""
    return bool(scheduler.startable())


class Checkpoints(BaseCallback):
    """Every ``every`` steps (at the end of a rollout's update), the actor saved as a plain agent."""

    def __init__(self, every: int, out: Path, base: Path, record: dict):
        super().__init__()
        self.every, self.out, self.base, self.record = every, out, base, record
        self.next = every

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        # (called after the previous rollout's update: the figures logged are that update's)
        if self.num_timesteps >= self.next:
            self.save(f"step_{self.num_timesteps}")
            self.next += self.every

    def save(self, name: str) -> None:
        plain = deployable(self.model, PPO.load(str(self.base), device="cpu"))
        # (whole or absent, even if interrupted; its record beside it)
        save_agent(self.out / f"{name}.zip", lambda part: plain.save(str(part)), self.record["env_kwargs"],
                   made_by=f"scripts/guided_shutdown.py from {self.base}, {self.num_timesteps} steps (guided.json)")
        values = self.model.logger.name_to_value
        rewards = [e["r"] for e in self.model.ep_info_buffer]
        self.record["checkpoints"].append({
            "name": f"{name}.zip", "steps": self.num_timesteps,
            "teacher_agreement": _number(values.get("teacher/agreement")),
            "decisive_agreement": _number(values.get("teacher/decisive_agreement")),
            "mean_episode_reward": sum(rewards) / len(rewards) if rewards else None,
            "wall_time_s": round(time.time() - self.record["started"])})
        write_record(self.out, self.record)


def _number(value):
    return None if value is None else float(value)


def write_record(out: Path, record: dict) -> None:
    part = out / "guided.json.part"
    part.write_text(json.dumps({k: v for k, v in record.items() if k != "started"}, indent=1) + "\n")
    part.replace(out / "guided.json")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", type=Path, help="the saved Shutdown-v0 agent it starts from (.zip)")
    ap.add_argument("-o", "--out", type=Path, required=True, help="folder for step_N.zip, final.zip and guided.json")
    ap.add_argument("-w", "--workloads", type=Path, nargs="+",
                    default=sorted((ROOT.parent / "shared/data/deepshutdown").glob("lyon_*/workloads/train")),
                    help="training days (files or folders; never the test days)")
    ap.add_argument("--exclude-days", type=Path, metavar="ROUNDS_JSON",
                    help="a dagger_rounds.py rounds.json: its validation days are not trained on")
    ap.add_argument("-p", "--platform", type=Path, default=ROOT / "platforms/taurus_deepshutdown.xml")
    ap.add_argument("--steps", type=int, default=46080, help="environment steps, all actors (rounded up to rollouts)")
    ap.add_argument("--actors", type=int, default=2)
    ap.add_argument("--subprocess", action="store_true", help="actors in subprocesses (one core each)")
    ap.add_argument("--env", type=json_arguments, default={}, metavar="JSON",
                    help='the environment\'s arguments (default: those that shape the observation are the '
                         'model\'s, from the model.json beside it), e.g. \'{"release_features": true}\'')
    ap.add_argument("--teacher", default="OR*", choices=sorted(BASELINES), help="the baseline whose actions the "
                    "BC term pulls toward (default OR*)")
    ap.add_argument("--teacher-options", type=json_arguments, default={}, metavar="JSON",
                    help='its arguments, e.g. \'{"max_stretch": 0.25}\'')
    ap.add_argument("--bc-weight", type=float, default=1.0, help="weight of the cross-entropy toward the teacher "
                    "(0: plain PPO with the asymmetric critic)")
    ap.add_argument("--bc-epochs", type=int, default=1, help="passes of the BC term over each rollout")
    ap.add_argument("--bc-decay", action="store_true", help="the BC weight decays linearly to 0 over the run")
    ap.add_argument("--bc-decisive", type=float, default=1.0, help="weight in the BC term of a state where a queued "
                    "job could start, against 1 for the others (about 9 in 10 states, where every policy keeps "
                    "the idle nodes off; default 1)")
    ap.add_argument("--learning-rate", type=float, default=5e-5)
    ap.add_argument("--clip-range", type=float, default=0.1)
    ap.add_argument("--n-steps", type=int, default=HYPERPARAMETERS["n_steps"], help="steps per actor per update")
    ap.add_argument("--n-epochs", type=int, default=HYPERPARAMETERS["n_epochs"])
    ap.add_argument("--minibatches", type=int, default=HYPERPARAMETERS["minibatches"])
    ap.add_argument("--checkpoint-every", type=int, default=0, help="steps between checkpoints (default: 4 updates)")
    ap.add_argument("--seed", type=int, default=100, help="first actor's reset seed (the others follow)")
    ap.add_argument("--device", default="cpu", help="where the networks learn (cpu, cuda): with many actors the "
                    "update on one CPU thread takes longer than the rollout")
    args = ap.parse_args(argv)
    if not args.model.is_file():
        ap.error(f"{args.model}: no such file")
    if args.steps < 1 or args.actors < 1 or args.n_steps < 1 or args.minibatches < 1:
        ap.error("--steps, --actors, --n-steps and --minibatches must be positive")
    if not args.bc_decisive >= 1:
        ap.error(f"--bc-decisive {args.bc_decisive}: a decisive state weighs at least as much as an other (>= 1)")
    try:
        baseline_maker(paper("shutdown"), args.teacher, args.teacher_options)
    except BaselineOptionsError as exc:
        ap.error(f"--teacher-options {json.dumps(args.teacher_options)}: {args.teacher} does not take them ({exc})")
    try:
        days = workload_files(args.workloads)
    except ValueError as exc:
        ap.error(str(exc))
    excluded: set[str] = set()
    if args.exclude_days:
        try:
            excluded = set(json.loads(args.exclude_days.read_text())["validation"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            ap.error(f"--exclude-days {args.exclude_days}: not a rounds.json with a 'validation' list ({exc})")
        days = [d for d in days if d.name not in excluded]
    if not days:
        ap.error("no training day is left")
    try:
        args.env = trained_with(str(args.model), TRAINED_OPTIONS, args.env)
        start = PPO.load(str(args.model), device="cpu")
        width = gym.make(ENV, platform=str(args.platform), workloads=[str(days[0])], **args.env).observation_space.shape
    except (ValueError, TypeError, OSError) as exc:
        ap.error(f"{args.model} with --env {json.dumps(args.env)}: {exc}")
    if width != start.observation_space.shape:
        ap.error(f"{args.model} was trained on observations {start.observation_space.shape}; the environment with "
                 f"--env {json.dumps(args.env)} gives {width} (the model's environment arguments, e.g. "
                 "release_features, go in --env)")
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    errors = Path(tempfile.mkdtemp(prefix="guided-errors-"))
    detached = args.subprocess and args.actors > 1
    guide = Guide(args.teacher, args.teacher_options)
    fns = [env_factory(ENV, args.platform, days, args.env, args.seed + i, errors if detached else None, wrap=guide)
           for i in range(args.actors)]
    gamma = HYPERPARAMETERS["gamma"]
    venv = VecNormalize(SubprocVecEnv(fns, start_method="forkserver") if detached else DummyVecEnv(fns),
                        norm_obs=False, norm_reward=True, gamma=gamma)
    rollout = args.n_steps * args.actors
    model = guided_model(start, venv, bc_weight=args.bc_weight,
                         bc_epochs=args.bc_epochs, bc_decay=args.bc_decay, bc_decisive=args.bc_decisive,
                         device=args.device,
                         learning_rate=args.learning_rate,
                         clip_range=args.clip_range, n_steps=args.n_steps, n_epochs=args.n_epochs,
                         batch_size=max(1, rollout // args.minibatches), gamma=gamma,
                         gae_lambda=HYPERPARAMETERS["gae_lambda"], ent_coef=HYPERPARAMETERS["ent_coef"])
    steps = math.ceil(args.steps / rollout) * rollout
    record = {"command": "python scripts/guided_shutdown.py " + shlex.join(sys.argv[1:] if argv is None else argv),
              "model": str(args.model), "env_kwargs": args.env, "training_days": len(days), "excluded_days": len(excluded),
              "teacher": args.teacher, "teacher_options": args.teacher_options, "bc_weight": args.bc_weight,
              "bc_epochs": args.bc_epochs, "bc_decay": args.bc_decay, "bc_decisive": args.bc_decisive,
              "learning_rate": args.learning_rate,
              "clip_range": args.clip_range, "n_steps": args.n_steps, "actors": args.actors, "steps": steps,
              "seed": args.seed, "device": args.device,
              "critic": "asymmetric: real release time of each node's jobs, real runtime / walltime of the plan's "
              "jobs, OR*'s action", "checkpoints": [], "status": "running", "started": time.time()}
    checkpoints = Checkpoints(args.checkpoint_every or 4 * rollout, args.out, args.model, record)
    print(f"guided_shutdown: {steps} steps ({steps // rollout} updates of {rollout}), {len(days)} training days, "
          f"teacher {args.teacher}{json.dumps(args.teacher_options) if args.teacher_options else ''}, "
          f"BC weight {args.bc_weight}{' decaying' if args.bc_decay else ''}", file=sys.stderr, flush=True)
    status = 0
    # The cleanup is inside the block too: once a signal has stopped the run, a repeat (a second
    # Ctrl-C, a batch system's SIGTERM again) is ignored, not raised while guided.json is written.
    with signals_interrupt():
        try:
            model.learn(steps, callback=[checkpoints, ProgressLines(steps)])
            checkpoints.save("final")
            record["status"] = "finished"
        except KeyboardInterrupt as exc:
            record["status"] = (f"{interruption(exc)} at step {model.num_timesteps}: the checkpoints listed are "
                                "whole, the steps after the last one are lost")
            status = 130
        except (EOFError, BrokenPipeError, ConnectionResetError) as exc:
            record["status"] = f"stopped at step {model.num_timesteps}: {actor_failure(errors, exc)}"
            status = 1
        finally:
            with signals_deferred():        # (a first signal now: the record and the actors are closed all the same)
                record["wall_time_s"] = round(time.time() - record["started"])
                write_record(args.out, record)
                close_actors(venv)
    print(f"guided_shutdown: {record['status']}; {len(record['checkpoints'])} checkpoint(s) in {args.out} "
          f"({record['wall_time_s']} s)", file=sys.stderr, flush=True)
    return status


if __name__ == "__main__":
    run_command("guided_shutdown", main)
