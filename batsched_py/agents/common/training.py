"""Training an agent with Stable-Baselines3: vectorised environments, checkpoints, resume,
TensorBoard logs, a progress bar, and a record of how the model was made next to it."""
from __future__ import annotations

import json
import math
import os
import platform as host
import shlex
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NoReturn, Optional, Sequence

import gymnasium as gym
import numpy as np

from ... import envs  # noqa: F401  (registers the environments)
from ...campaigns.executor import describe_error
from ...campaigns.ray_vec_env import RayVecEnv
from ...errors import BatschedError
from ...interrupts import interruption, signals_deferred
from ...textfiles import write_whole
from .checkpoints import WholeCheckpoints, fit_fault, latest_checkpoint, save_agent, save_whole, stats_of
from .hyper import HyperError, ppo_settings
from .imitation import ImitationError, clone, demonstrations, merge
from .papers import BaselineOptionsError, UnknownAgentError, baseline_maker, paper


class TrainError(BatschedError, ValueError):
    """A bad training argument, named."""


class ActorError(TrainError):
    """An episode failed in an actor (a day, a policy or the simulation): the training stops."""


#: environments one machine's processes hold (--vec-env subprocess or dummy); Ray spreads more
MAX_LOCAL_ACTORS = 256

# what a previous training left in an output folder
TRAINING_FILES = ("checkpoints", "model.zip", "model.json", "imitation.zip", "imitation.json", "_INCOMPLETE", "tensorboard")


@dataclass
class TrainConfig:
    agent: str                                   # shutdown | scheduling
    platform: Path
    workloads: list[Path]
    out: Path
    total_steps: int = 1_000_000
    actors: int = 16
    seed: int = 0
    masking: bool = False                         # scheduling only: MaskablePPO
    checkpoint_every: int = 100_000               # steps (all actors together)
    resume: bool = False
    overwrite: bool = False                       # replace what a previous training left in ``out``
    progress: bool = True
    torch_threads: int = 1
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    hyperparameters: dict[str, Any] = field(default_factory=dict)   # overrides of the paper's
    vec_env: str = "subprocess"                   # subprocess | dummy | ray
    ray_address: Optional[str] = None
    # Rewards scaled by a running estimate of the returns' spread (SB3's VecNormalize, rewards only):
    # the actor and critic share one optimiser and one gradient-norm clip, and a critic chasing
    # returns of -100 otherwise takes the whole clipped step.  Training only: a saved agent's
    # actions do not depend on it.
    normalize_reward: bool = True
    # Behaviour cloning of a baseline (T0, SAF, ...) before PPO (see imitation.py): days it plays, epochs
    imitate: Optional[str] = None
    imitate_options: dict[str, Any] = field(default_factory=dict)   # the baseline's arguments
    imitate_episodes: int = 64
    imitate_epochs: int = 10
    imitate_rounds: int = 3                       # 1: plain cloning; more: DAgger rounds, the clone playing


def paper_settings(agent: str) -> tuple[str, dict, Callable[[bool], Any], Callable[[bool], dict]]:
    """The paper's environment, PPO settings, SB3 policy and its arguments (given whether actions are masked)."""
    settings = _paper(agent)
    return settings.ENV, dict(settings.HYPERPARAMETERS), settings.policy, settings.policy_kwargs


def env_factory(env_id: str, platform: Path, workloads: Sequence[Path], env_kwargs: dict, seed: int,
                errors: Optional[Path] = None, wrap: Optional[Callable[[Any], Any]] = None) -> Callable:
    """An actor's environment (``wrap``: applied to the environment first, e.g. a teacher's
    guidance).  ``errors`` (actors in subprocesses only): the folder where the actor writes the one
    line of the error that ends it, for the learner to say, and exits at once (no traceback); such
    an actor also leaves SIGINT and SIGTERM to the learner, which closes it."""
    def make():
        from stable_baselines3.common.monitor import Monitor    # (optional: the rl extra)
        if errors is not None:
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_IGN)
        try:
            env = gym.make(env_id, platform=str(platform), workloads=[str(w) for w in workloads], **env_kwargs)
        except Exception as exc:
            if errors is None:
                raise
            _end_actor(errors, f"an actor could not make its environment: {_one_line(exc)}")
        if wrap is not None:
            env = wrap(env)
        env = ActorGuard(Monitor(env, info_keywords=("energy_waste", "nb_switches")), errors)
        env.reset(seed=seed)
        return env
    return make


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def _end_actor(errors: Path, line: str) -> NoReturn:
    """An actor subprocess's end: its error written for the learner, no traceback."""
    write_whole(errors / f"actor-{os.getpid()}.txt", line + "\n")
    os._exit(1)


class ActorGuard(gym.Wrapper):
    """An episode's error as one line naming its day: an ActorError here; in an actor subprocess
    (``errors`` set), the actor's end (see env_factory)."""

    def __init__(self, env: Any, errors: Optional[Path]):
        super().__init__(env)
        self.errors = errors

    def reset(self, **kwargs):
        return self._guarded(self.env.reset, **kwargs)

    def step(self, action):
        return self._guarded(self.env.step, action)

    def _guarded(self, call, *args, **kwargs):
        try:
            return call(*args, **kwargs)
        except Exception as exc:
            line = f"an episode on {getattr(self.env.unwrapped, 'workload', None) or 'a day'} failed: {_one_line(exc)}"
            if self.errors is None:
                raise ActorError(line) from exc
            _end_actor(self.errors, line)


def make_vec_env(config: TrainConfig, env_id: str, errors: Path):
    detached = config.vec_env == "subprocess" and config.actors > 1
    fns = [env_factory(env_id, config.platform, config.workloads, config.env_kwargs, config.seed + i,
                       errors if detached else None)
           for i in range(config.actors)]
    if config.vec_env == "ray":
        import ray    # (optional: the ray extra)
        if not ray.is_initialized():
            try:
                ray.init(address=config.ray_address, include_dashboard=False, log_to_driver=False)
            except Exception as exc:
                raise TrainError(f"--ray-address {config.ray_address or '(local)'}: cannot connect to Ray "
                                 f"({describe_error(exc)})") from None
        # one CPU per actor where the cluster has them, else packed: every actor must get a place
        share = min(1.0, ray.cluster_resources().get("CPU", 1.0) / config.actors)
        return RayVecEnv(fns, actor_options={"num_cpus": share, "scheduling_strategy": "SPREAD"})
    if config.vec_env == "dummy" or config.actors == 1:
        from stable_baselines3.common.vec_env import DummyVecEnv    # (optional: the rl extra)
        return DummyVecEnv(fns)
    from stable_baselines3.common.vec_env import SubprocVecEnv    # (optional: the rl extra)
    return SubprocVecEnv(fns, start_method="forkserver")


RUNNING = ("training running or interrupted: checkpoints/ holds the steps saved so far (continue with --resume); "
           "model.zip and model.json are not this training's\n")


def train(config: TrainConfig, argv: Optional[Sequence[str]] = None) -> Path:
    """Train; returns the saved model's path (``OUT/model.zip``, its record ``OUT/model.json``).
    Every argument, workload day and PPO setting is checked before an actor starts."""
    import torch    # (optional: the rl extra)
    from stable_baselines3 import PPO    # (optional: the rl extra)

    env_id, paper, policy_class, policy_kwargs = paper_settings(config.agent)
    hyper, minibatches = _check_settings(config, paper)
    _check_out(config)
    spaces = _check_env(config, env_id)
    _check_rollout_memory(hyper["n_steps"], config.actors, spaces[0])
    if config.imitate:
        _check_teacher(config)
    algorithm = "MaskablePPO" if config.masking else "PPO"
    checkpoints = config.out / "checkpoints"
    resumed_from = _resume_point(checkpoints, spaces, algorithm) if config.resume else None
    torch.set_num_threads(config.torch_threads)
    started = time.time()
    imitation: Optional[dict[str, Any]] = None
    marker = config.out / "_INCOMPLETE"
    previous = marker.read_text() if marker.is_file() and not config.overwrite else None
    with signals_deferred():        # (no folder without its marker, whenever a signal comes)
        _clear_out(config)
        marker.write_text(RUNNING)
    venv: Any = None
    with tempfile.TemporaryDirectory(prefix="batsched-py-actors-") as errors:
        try:
            venv = make_vec_env(config, env_id, Path(errors))
            venv = _reward_scaling(config, venv, resumed_from, hyper["gamma"])
            algo: Any = PPO
            if config.masking:
                from sb3_contrib import MaskablePPO    # (optional: the rl extra)
                algo = MaskablePPO
            policy = policy_class(config.masking)
            if resumed_from is not None:
                try:
                    model = algo.load(resumed_from, env=venv, device="cpu")
                except Exception as exc:        # (what unpickling and SB3's checks raise: anything)
                    raise TrainError(f"--resume: {resumed_from}: cannot be loaded ({type(exc).__name__}: "
                                     f"{' '.join(str(exc).split())[:200]})") from None
                model.tensorboard_log = str(config.out / "tensorboard")
                kept = _kept_settings(model, hyper)
                if kept:
                    print(f"train: --resume: the checkpoint's PPO settings are kept: "
                          f"{', '.join(f'{k} {v!r} (not {hyper[k]!r})' for k, v in kept.items())}", file=sys.stderr)
                    hyper.update(kept)          # (model.json records what trained)
            else:
                try:
                    model = algo(policy, venv, policy_kwargs=policy_kwargs(config.masking), seed=config.seed, device="cpu",
                                 verbose=0, tensorboard_log=str(config.out / "tensorboard"), **hyper)
                except (TypeError, ValueError, AssertionError) as exc:    # (SB3 checks its settings with assert)
                    raise TrainError(f"--hyper {json.dumps(config.hyperparameters)}: {exc}") from None
                if config.imitate:
                    imitation = _imitate(config, env_id, model, venv, hyper["gamma"])
                    save_agent(config.out / "imitation.zip", model.save, config.env_kwargs,   # (the clone alone)
                               made_by="train --imitate: the clone before PPO (model.json says how)")
            _learn(config, model, checkpoints, resumed_from is not None)
            path = config.out / "model.zip"
            save_whole(path, model.save)
        except KeyboardInterrupt as exc:
            _mark(marker, f"training {interruption(exc)}")
            raise
        except (EOFError, ConnectionError) as exc:      # (an actor subprocess ended: its error, if it wrote one)
            failure = ActorError(actor_failure(Path(errors), exc))
            _mark(marker, f"training failed: {failure}")
            raise failure from None
        except ActorError as exc:         # (from a Ray actor: Ray's error, an ActorError too, holds it as cause)
            failure = ActorError(str(getattr(exc, "cause", None) or exc))
            _mark(marker, f"training failed: {failure}")
            raise failure from None
        except TrainError:          # (a bad setting: this training saved nothing)
            if previous is None:
                marker.unlink()
            else:
                marker.write_text(previous)
            raise
        finally:
            if venv is not None:
                with signals_deferred():        # (a second signal: the actors are closed all the same)
                    close_actors(venv)
    record = {
        "agent": config.agent, "algorithm": algorithm,
        "command": shlex.join(["batsched-py", *(argv if argv is not None else sys.argv[1:])]),   # (to paste again)
        "platform": str(config.platform), "training_days": len(config.workloads),
        "training_folders": sorted({str(w.parent) for w in config.workloads}),
        "seed": config.seed, "steps": int(model.num_timesteps), "actors": config.actors,
        "wall_time_s": round(time.time() - started, 1), "resumed_from": str(resumed_from) if resumed_from else None,
        "machine": f"{host.node()}: {os.cpu_count()} CPUs, {host.processor() or host.machine()}, "
                   f"Python {host.python_version()}, torch {torch.__version__}",
        "hyperparameters": {k: v for k, v in {**hyper, **({"minibatches": minibatches} if minibatches else {})}.items()},
        "env_kwargs": config.env_kwargs, "normalize_reward": config.normalize_reward,
        **({"imitation": imitation} if imitation else {}),
    }
    write_whole(config.out / "model.json", json.dumps(record, indent=2) + "\n")
    marker.unlink()
    return path


def _mark(marker: Path, what: str) -> None:
    """The marker says how the training ended (a second signal waits until it is written)."""
    with signals_deferred():
        write_whole(marker, f"{what}: {RUNNING.split(': ', 1)[1]}")


def _learn(config: TrainConfig, model: Any, checkpoints: Path, resumed: bool) -> None:
    """PPO up to the total steps, rounded up to whole rollouts (as SB3 runs them): the progress
    counts the steps that really run."""
    rollout = model.n_steps * config.actors
    remaining = config.total_steps - model.num_timesteps
    if remaining <= 0:
        return
    steps = math.ceil(remaining / rollout) * rollout
    if steps != remaining and config.progress:
        print(f"train: {steps} steps to run, not {remaining}: whole rollouts of n_steps {model.n_steps} x "
              f"{config.actors} actors", file=sys.stderr, flush=True)
    bar = config.progress and _has_progress_bar()
    callbacks = [WholeCheckpoints(max(1, config.checkpoint_every // config.actors), checkpoints,
                                  config.normalize_reward)]
    if config.progress and not bar:
        callbacks.append(ProgressLines(model.num_timesteps + steps))
    model.learn(steps, callback=callbacks, progress_bar=bar, reset_num_timesteps=not resumed,
                tb_log_name=config.agent)


def _reward_scaling(config: TrainConfig, venv: Any, resumed_from: Optional[Path], gamma: float) -> Any:
    """VecNormalize over the actors (rewards only), its statistics from the checkpoint resumed."""
    if not config.normalize_reward:
        return venv
    from stable_baselines3.common.vec_env import VecNormalize    # (optional: the rl extra)
    stats = stats_of(resumed_from) if resumed_from is not None else None
    if stats is None or not stats.is_file():
        if resumed_from is not None:
            print(f"train: --resume: {resumed_from.name} has no reward statistics beside it (a --raw-reward "
                  "training?): they start afresh", file=sys.stderr)
        return VecNormalize(venv, norm_obs=False, norm_reward=True, gamma=gamma)
    try:
        return VecNormalize.load(str(stats), venv)
    except Exception as exc:          # (an unpickling error may be anything)
        raise TrainError(f"--resume: {stats}: cannot be loaded ({type(exc).__name__}: {str(exc)[:200]})") from None


def actor_failure(errors: Path, exc: BaseException) -> str:
    """What ended an actor subprocess: the line it wrote, or the broken pipe."""
    for path in sorted(errors.glob("actor-*.txt")):      # (whole: written as .part, then renamed)
        return path.read_text().strip()
    return f"an actor process ended unexpectedly ({type(exc).__name__}: {exc or 'its pipe closed'})"


def _check_settings(config: TrainConfig, paper: dict[str, Any]) -> tuple[dict[str, Any], Optional[int]]:
    """Every option and PPO setting, before anything starts: (PPO's settings, minibatches)."""
    if config.masking and config.agent != "scheduling":
        raise TrainError("--masking applies to the scheduling agent only")
    for name, value in (("--total-steps", config.total_steps), ("--actors", config.actors),
                        ("--checkpoint-every", config.checkpoint_every), ("--torch-threads", config.torch_threads)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TrainError(f"{name} {value!r}: not a positive integer")
    top = 2 ** 32 - config.actors          # (actor i is seeded seed + i; numpy takes seeds below 2**32)
    if isinstance(config.seed, bool) or not isinstance(config.seed, int) or not 0 <= config.seed <= top:
        raise TrainError(f"--seed {config.seed!r}: a seed is an integer from 0 to {top}")
    if config.vec_env != "ray" and config.actors > MAX_LOCAL_ACTORS:
        raise TrainError(f"--actors {config.actors}: more environments than the {MAX_LOCAL_ACTORS} one machine "
                         f"runs (--vec-env {config.vec_env}); --vec-env ray spreads them over a cluster")
    if config.ray_address is not None and config.vec_env != "ray":
        raise TrainError(f"--ray-address {config.ray_address}: applies with --vec-env ray only (not {config.vec_env})")
    if config.vec_env not in ("subprocess", "dummy", "ray"):
        raise TrainError(f"--vec-env {config.vec_env!r}: choose subprocess, dummy or ray")
    for name, value in (("--imitate-days", config.imitate_episodes), ("--imitate-epochs", config.imitate_epochs),
                        ("--imitate-rounds", config.imitate_rounds)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TrainError(f"{name} {value!r}: not a positive integer")
    try:
        return ppo_settings(paper, config.hyperparameters, config.actors)
    except HyperError as exc:
        raise TrainError(str(exc)) from None


def _check_rollout_memory(n_steps: int, actors: int, observation_space: Any) -> None:
    """SB3 allocates the rollout buffer whole (n_steps x actors observations, float32) as it starts:
    one larger than the machine's memory is named now, not a numpy MemoryError."""
    need = 4 * n_steps * actors * gym.spaces.flatdim(observation_space)
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if need > memory:
        raise TrainError(f"--hyper n_steps {n_steps} x {actors} actors: the rollout buffer alone would take "
                         f"{need / 2 ** 30:,.0f} GiB, more than this machine's {memory / 2 ** 30:,.0f} GiB")


def _check_out(config: TrainConfig) -> None:
    """A folder that holds a training already is continued (--resume) or replaced (--overwrite),
    never mixed with a new one (its checkpoints would be resumed later as this one's)."""
    out = config.out
    if out.exists() and not out.is_dir():
        raise TrainError(f"--out {out}: exists and is not a folder")
    if config.resume and config.overwrite:
        raise TrainError("--resume and --overwrite: choose one (continue the training in --out, or replace it)")
    found = [name for name in TRAINING_FILES if (out / name).exists()]
    if found and not (config.resume or config.overwrite):
        raise TrainError(f"--out {out}: holds a training already ({', '.join(found)}): continue it with --resume, "
                         "or replace it with --overwrite")


def _clear_out(config: TrainConfig) -> None:
    """Make --out; with --overwrite, remove what a previous training left in it."""
    try:
        config.out.mkdir(parents=True, exist_ok=True)
        if config.overwrite:
            for name in TRAINING_FILES:
                path = config.out / name
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
    except OSError as exc:
        raise TrainError(f"--out {config.out}: {exc.strerror}") from None


def _resume_point(checkpoints: Path, spaces: tuple[Any, Any], algorithm: str) -> Optional[Path]:
    """The newest checkpoint that is whole and of this training's environment and algorithm; those
    passed over are named on stderr.  Checkpoints but none that fits: an error (not a fresh start
    over another training's files)."""
    skipped: list[str] = []
    found = latest_checkpoint(checkpoints, lambda path: fit_fault(path, *spaces, algorithm), skipped)
    if found is None and skipped:
        reasons: dict[str, list[str]] = {}          # (why -> the checkpoints, newest first)
        for line in skipped:
            name, why = line.split(": ", 1)
            reasons.setdefault(why, []).append(name)
        said = "; ".join(f"{names[0]}{f' and {len(names) - 1} older' if len(names) > 1 else ''}: {why}"
                         for why, names in reasons.items())
        raise TrainError(f"--resume: no checkpoint in {checkpoints} fits this training ({said}); start afresh "
                         "with --overwrite")
    for line in skipped:
        print(f"train: --resume: passed over {line}", file=sys.stderr)
    if found is None:
        print(f"train: --resume: no checkpoint in {checkpoints}: training from scratch", file=sys.stderr, flush=True)
    else:
        print(f"train: --resume: from {found}", file=sys.stderr, flush=True)
    return found


def _kept_settings(model: Any, hyper: dict[str, Any]) -> dict[str, Any]:
    """The PPO settings of a loaded checkpoint that differ from ``hyper`` (SB3 keeps the checkpoint's)."""
    kept = {}
    for key, value in hyper.items():
        have = getattr(model, key, value)
        if not callable(have) and have != value:
            kept[key] = have
    return kept


def _check_env(config: TrainConfig, env_id: str) -> tuple[Any, Any]:
    """Make one environment here with the training's arguments (reading every day): a bad one is
    then named, not lost in an actor process that dies.  Returns its (observation, action) spaces."""
    try:
        env = env_factory(env_id, config.platform, config.workloads, config.env_kwargs, config.seed)()
    except TrainError:
        raise
    except TypeError as exc:
        raise TrainError(f"--env {json.dumps(config.env_kwargs)}: {exc}") from None
    except ValueError as exc:        # (EnvError, and the schedulers' option errors)
        where = "" if str(exc).startswith(("workloads:", "platform:")) else "--env: "
        raise TrainError(f"{where}{exc}") from None
    spaces = env.observation_space, env.action_space
    env.close()
    return spaces


#: The longest an actor's step may take before close_actors stops waiting for its result (seconds).
ACTOR_STEP_S = 5.0


def close_actors(venv: Any) -> None:
    """Close the actors; a pipe to a dead one is no news (Ctrl-C at a terminal reaches them too, and
    the error or interrupt that killed it is what propagates)."""
    inner = getattr(venv, "unwrapped", venv)
    try:
        if getattr(inner, "waiting", False):
            # (a step interrupted while its results were being read: SB3's close would wait again
            # for those already read, forever; the others come within a step's time)
            for remote in inner.remotes:
                if remote.poll(ACTOR_STEP_S):
                    remote.recv()
            inner.waiting = False
        venv.close()
    except (EOFError, OSError):
        pass


def _paper(agent: str) -> Any:
    try:
        return paper(agent)
    except UnknownAgentError as exc:
        raise TrainError(f"agent {exc}") from None


def _check_teacher(config: TrainConfig) -> None:
    baselines = _paper(config.agent).BASELINES
    if config.imitate not in baselines:
        raise TrainError(f"--imitate {config.imitate!r}: a baseline of the {config.agent} environment "
                         f"({', '.join(baselines)})")
    try:
        baseline_maker(_paper(config.agent), str(config.imitate), config.imitate_options)
    except BaselineOptionsError as exc:
        raise TrainError(f"--imitate-options {json.dumps(config.imitate_options)}: {config.imitate} does not "
                         f"take them ({exc})") from None


def _teacher(config: TrainConfig) -> Callable[[], Any]:
    """A fresh teacher per day: the baseline with its arguments."""
    return baseline_maker(_paper(config.agent), str(config.imitate), config.imitate_options)


def _imitate(config: TrainConfig, env_id: str, model: Any, venv: Any, gamma: float) -> dict[str, Any]:
    """Clone the teacher into ``model`` on days drawn from the training days; with reward scaling,
    VecNormalize's return statistics start from the teacher's, so the critic learns returns at the
    scale PPO will give them."""
    def make_env():
        return gym.make(env_id, platform=str(config.platform), workloads=[str(w) for w in config.workloads],
                        **config.env_kwargs)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if config.progress else None
    teacher = _teacher(config)
    t0 = time.time()
    try:
        demos = demonstrations(make_env, teacher, config.workloads, episodes=config.imitate_episodes, gamma=gamma,
                               seed=config.seed, masking=config.masking)
        teacher_reward = demos.mean_episode_reward
        scale = 1.0
        if config.normalize_reward:
            venv.ret_rms.update(demos.running)
            scale = float(np.sqrt(venv.ret_rms.var + venv.epsilon))
        if say:
            say(f"imitation: {config.imitate} played {demos.episodes} days ({len(demos)} steps, mean episode reward "
                f"{demos.mean_episode_reward:.2f}) in {time.time() - t0:.0f} s")
        figures = clone(model, demos, epochs=config.imitate_epochs, return_scale=scale, seed=config.seed, report=say)
        played = []
        for round_ in range(1, config.imitate_rounds):
            more = demonstrations(make_env, teacher, config.workloads, episodes=max(1, config.imitate_episodes // 2),
                                  gamma=gamma, seed=config.seed + 1000 * round_, student=_deterministic(model),
                                  masking=config.masking)
            played.append(round(more.mean_episode_reward, 3))
            if say:
                say(f"imitation: round {round_ + 1}/{config.imitate_rounds}: the clone played {more.episodes} days "
                    f"(mean episode reward {more.mean_episode_reward:.2f}), {config.imitate} labelled them")
            demos = merge(demos, more)
            figures = clone(model, demos, epochs=max(1, config.imitate_epochs // 2), return_scale=scale,
                            seed=config.seed + round_, report=say)
    except ImitationError as exc:
        raise TrainError(str(exc)) from None
    return {"teacher": config.imitate, **({"teacher_options": config.imitate_options} if config.imitate_options else {}),
            "rounds": config.imitate_rounds, "episodes": demos.episodes, "steps": len(demos),
            "teacher_mean_episode_reward": round(teacher_reward, 3),
            "clone_mean_episode_reward": played, "epochs": config.imitate_epochs,
            "accuracy": round(figures["accuracy"], 4), "wall_time_s": round(time.time() - t0, 1)}


def _deterministic(model: Any) -> Callable[[Any, Optional[np.ndarray]], int]:
    """The model's action (among the valid ones, given a mask)."""
    def act(obs: Any, mask: Optional[np.ndarray]) -> int:
        if mask is None:
            return int(model.predict(obs, deterministic=True)[0])
        return int(model.predict(obs, deterministic=True, action_masks=mask)[0])
    return act


def ProgressLines(total: int, every_s: float = 30.0):
    """Progress as plain lines (stderr not a terminal, or no rich/tqdm): steps, rate, mean episode reward."""
    from stable_baselines3.common.callbacks import BaseCallback    # (optional: the rl extra)

    class _Lines(BaseCallback):
        def _on_training_start(self) -> None:
            self.t0 = self.last = time.time()

        def _on_step(self) -> bool:
            now = time.time()
            if now - self.last >= every_s:
                self.last = now
                rewards = [e["r"] for e in self.model.ep_info_buffer] if self.model.ep_info_buffer else []
                mean = f", mean episode reward {sum(rewards) / len(rewards):.2f}" if rewards else ""
                print(f"train: {self.num_timesteps}/{total} steps ({100 * self.num_timesteps / total:.1f}%), "
                      f"{self.num_timesteps / (now - self.t0):.0f} steps/s{mean}", file=sys.stderr, flush=True)
            return True
    return _Lines()


def _has_progress_bar() -> bool:
    try:
        import rich  # noqa: F401
        import tqdm  # noqa: F401
        return sys.stderr.isatty()
    except ImportError:
        return False
