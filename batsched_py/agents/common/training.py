"""Training an agent with Stable-Baselines3: vectorised environments, checkpoints, resume,
TensorBoard logs, a progress bar, and a record of how the model was made next to it."""
from __future__ import annotations

import json
import os
import platform as host
import re
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ...interrupts import interruption

AGENTS = ("shutdown", "scheduling")


class TrainError(ValueError):
    """A bad training argument, named."""


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
    imitate_episodes: int = 64
    imitate_epochs: int = 10
    imitate_rounds: int = 3                       # 1: plain cloning; more: DAgger rounds, the clone playing


def paper_settings(agent: str) -> tuple[str, dict, Callable[[], dict]]:
    from importlib import import_module
    if agent not in AGENTS:
        raise TrainError(f"agent {agent!r}: choose shutdown or scheduling")
    settings = import_module(f"batsched_py.agents.deep{agent}.config")
    return settings.ENV, dict(settings.HYPERPARAMETERS), settings.policy_kwargs


def env_factory(env_id: str, platform: Path, workloads: Sequence[Path], env_kwargs: dict, seed: int) -> Callable:
    def make():
        import gymnasium as gym
        from stable_baselines3.common.monitor import Monitor

        import batsched_py.envs  # noqa: F401
        env = gym.make(env_id, platform=str(platform), workloads=[str(w) for w in workloads], **env_kwargs)
        env = Monitor(env, info_keywords=("energy_waste", "nb_switches"))
        env.reset(seed=seed)
        return env
    return make


def make_vec_env(config: TrainConfig, env_id: str):
    fns = [env_factory(env_id, config.platform, config.workloads, config.env_kwargs, config.seed + i)
           for i in range(config.actors)]
    if config.vec_env == "ray":
        import ray

        from ...campaigns.ray_vec_env import RayVecEnv
        if not ray.is_initialized():
            from ...campaigns.executor import describe_error
            try:
                ray.init(address=config.ray_address, include_dashboard=False, log_to_driver=False)
            except Exception as exc:
                raise TrainError(f"--ray-address {config.ray_address or '(local)'}: cannot connect to Ray "
                                 f"({describe_error(exc)})") from None
        # one CPU per actor where the cluster has them, else packed: every actor must get a place
        share = min(1.0, ray.cluster_resources().get("CPU", 1.0) / config.actors)
        return RayVecEnv(fns, actor_options={"num_cpus": share, "scheduling_strategy": "SPREAD"})
    if config.vec_env == "dummy" or config.actors == 1:
        from stable_baselines3.common.vec_env import DummyVecEnv
        return DummyVecEnv(fns)
    from stable_baselines3.common.vec_env import SubprocVecEnv
    return SubprocVecEnv(fns, start_method="forkserver")


def latest_checkpoint(folder: Path) -> Optional[Path]:
    """The checkpoint of most steps; one cut short (a training killed while saving it) is passed over."""
    found = [(int(m.group(1)), p) for p in folder.glob("model_*_steps.zip")
             if (m := re.fullmatch(r"model_(\d+)_steps\.zip", p.name)) and zipfile.is_zipfile(p)]
    return max(found)[1] if found else None


def _stats_of(checkpoint: Optional[Path]) -> Optional[Path]:
    """The reward statistics saved with ``checkpoint`` (none if the training was killed in between)."""
    if checkpoint is None:
        return None
    stats = checkpoint.with_name(checkpoint.name.replace("model_", "model_vecnormalize_", 1)).with_suffix(".pkl")
    return stats if stats.is_file() else None


def train(config: TrainConfig, argv: Optional[Sequence[str]] = None) -> Path:
    """Train; returns the saved model's path (``OUT/model.zip``, its record ``OUT/model.json``)."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import CheckpointCallback

    env_id, hyper, policy_kwargs = paper_settings(config.agent)
    if config.masking and config.agent != "scheduling":
        raise TrainError("--masking applies to the scheduling agent only")
    if config.total_steps < 1 or config.actors < 1:
        raise TrainError("total steps and actors must be positive")
    for name, value in (("--checkpoint-every", config.checkpoint_every), ("--torch-threads", config.torch_threads)):
        if value < 1:
            raise TrainError(f"{name} {value}: not a positive number")
    hyper.update(config.hyperparameters)
    minibatches = hyper.pop("minibatches", None)
    try:
        if minibatches:
            hyper["batch_size"] = max(1, hyper["n_steps"] * config.actors // minibatches)
    except TypeError:
        raise TrainError(f"--hyper: n_steps {hyper['n_steps']!r} and minibatches {minibatches!r} must be "
                         "integers") from None
    torch.set_num_threads(config.torch_threads)
    _check_env(config, env_id)
    try:
        config.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TrainError(f"--out {config.out}: {exc.strerror}") from None
    checkpoints = config.out / "checkpoints"
    started = time.time()
    imitation: Optional[dict[str, Any]] = None
    if config.imitate:
        _check_teacher(config)
    venv = make_vec_env(config, env_id)
    resumed_from = latest_checkpoint(checkpoints) if config.resume else None
    if config.resume and resumed_from is None:
        print(f"train: --resume: no checkpoint in {checkpoints}: training from scratch", file=sys.stderr, flush=True)
    if config.normalize_reward:
        from stable_baselines3.common.vec_env import VecNormalize
        stats = _stats_of(resumed_from)
        venv = (VecNormalize.load(str(stats), venv) if stats is not None
                else VecNormalize(venv, norm_obs=False, norm_reward=True, gamma=hyper["gamma"]))
    marker = config.out / "_INCOMPLETE"
    marker.write_text("training running or interrupted: checkpoints/ holds the steps saved so far "
                      "(continue with --resume); model.zip and model.json are not this training's\n")
    try:
        algo: Any = PPO
        if config.masking:
            from sb3_contrib import MaskablePPO
            algo = MaskablePPO
        policy = "MultiInputPolicy" if config.agent == "scheduling" else "MlpPolicy"
        if resumed_from is not None:
            model = algo.load(resumed_from, env=venv, device="cpu")
            model.tensorboard_log = str(config.out / "tensorboard")
            kept = _kept_settings(model, hyper)
            if kept:
                print(f"train: --resume: the checkpoint's PPO settings are kept: "
                      f"{', '.join(f'{k} {v!r} (not {hyper[k]!r})' for k, v in kept.items())}", file=sys.stderr)
                hyper.update(kept)          # (model.json records what trained)
        else:
            try:
                model = algo(policy, venv, policy_kwargs=policy_kwargs(), seed=config.seed, device="cpu", verbose=0,
                             tensorboard_log=str(config.out / "tensorboard"), **hyper)
            except (TypeError, ValueError, AssertionError) as exc:    # (SB3 checks its settings with assert)
                raise TrainError(f"--hyper {json.dumps(config.hyperparameters)}: {exc}") from None
            if config.imitate:
                imitation = _imitate(config, env_id, model, venv, hyper["gamma"])
                model.save(config.out / "imitation.zip")      # (the clone alone, to compare with PPO's)
        save_every = max(1, config.checkpoint_every // config.actors)
        remaining = config.total_steps - model.num_timesteps
        if remaining > 0:
            bar = config.progress and _has_progress_bar()
            callbacks = [CheckpointCallback(save_every, str(checkpoints), name_prefix="model",
                                            save_vecnormalize=config.normalize_reward)]
            if config.progress and not bar:
                callbacks.append(ProgressLines(config.total_steps))
            model.learn(remaining, callback=callbacks, progress_bar=bar, reset_num_timesteps=resumed_from is None,
                        tb_log_name=config.agent)
        path = config.out / "model.zip"
        model.save(path)
    except KeyboardInterrupt as exc:
        marker.write_text(f"training {interruption(exc)}: checkpoints/ holds the steps saved so far (continue "
                          "with --resume); model.zip and model.json are not this training's\n")
        raise
    except TrainError:          # (a bad setting: this training saved nothing)
        marker.unlink()
        raise
    finally:
        _close_actors(venv)
    record = {
        "agent": config.agent, "algorithm": "MaskablePPO" if config.masking else "PPO",
        "command": " ".join(["batsched-py", *(argv if argv is not None else sys.argv[1:])]),
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
    (config.out / "model.json").write_text(json.dumps(record, indent=2) + "\n")
    marker.unlink()
    return path


def _kept_settings(model: Any, hyper: dict[str, Any]) -> dict[str, Any]:
    """The PPO settings of a loaded checkpoint that differ from ``hyper`` (SB3 keeps the checkpoint's)."""
    kept = {}
    for key, value in hyper.items():
        have = getattr(model, key, value)
        if not callable(have) and have != value:
            kept[key] = have
    return kept


def _check_env(config: TrainConfig, env_id: str) -> None:
    """Make one environment here with the training's arguments: a bad one is then named, not lost
    in an actor process that dies (SubprocVecEnv's 'Connection reset by peer')."""
    from ...envs.core import EnvError
    try:
        env_factory(env_id, config.platform, config.workloads, config.env_kwargs, config.seed)().close()
    except TypeError as exc:
        raise TrainError(f"--env {json.dumps(config.env_kwargs)}: {exc}") from None
    except EnvError as exc:
        raise TrainError(f"--env: {exc}") from None


def _close_actors(venv: Any) -> None:
    """Close the actors; a pipe to a dead one is no news (Ctrl-C at a terminal reaches them too, and
    the error or interrupt that killed it is what propagates)."""
    try:
        venv.close()
    except (EOFError, OSError):
        pass


def _check_teacher(config: TrainConfig) -> None:
    from ...policies.agent.baselines import BASELINES
    if config.imitate not in BASELINES[config.agent]:
        raise TrainError(f"--imitate {config.imitate!r}: a baseline of the {config.agent} environment "
                         f"({', '.join(BASELINES[config.agent])})")


def _imitate(config: TrainConfig, env_id: str, model: Any, venv: Any, gamma: float) -> dict[str, Any]:
    """Clone the teacher into ``model`` on days drawn from the training days; with reward scaling,
    VecNormalize's return statistics start from the teacher's, so the critic learns returns at the
    scale PPO will give them."""
    import gymnasium as gym

    import batsched_py.envs  # noqa: F401
    from ...policies.agent.baselines import BASELINES
    from .imitation import ImitationError, clone, demonstrations, merge

    def make_env():
        return gym.make(env_id, platform=str(config.platform), workloads=[str(w) for w in config.workloads],
                        **config.env_kwargs)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if config.progress else None
    teacher = BASELINES[config.agent][str(config.imitate)]
    t0 = time.time()
    if config.imitate_rounds < 1:
        raise TrainError(f"imitation rounds: {config.imitate_rounds} is not a positive number")
    try:
        demos = demonstrations(make_env, teacher, config.workloads, episodes=config.imitate_episodes, gamma=gamma,
                               seed=config.seed)
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
                                  gamma=gamma, seed=config.seed + 1000 * round_, student=_deterministic(model))
            played.append(round(more.mean_episode_reward, 3))
            if say:
                say(f"imitation: round {round_ + 1}/{config.imitate_rounds}: the clone played {more.episodes} days "
                    f"(mean episode reward {more.mean_episode_reward:.2f}), {config.imitate} labelled them")
            demos = merge(demos, more)
            figures = clone(model, demos, epochs=max(1, config.imitate_epochs // 2), return_scale=scale,
                            seed=config.seed + round_, report=say)
    except ImitationError as exc:
        raise TrainError(str(exc)) from None
    return {"teacher": config.imitate, "rounds": config.imitate_rounds, "episodes": demos.episodes, "steps": len(demos),
            "teacher_mean_episode_reward": round(teacher_reward, 3),
            "clone_mean_episode_reward": played, "epochs": config.imitate_epochs,
            "accuracy": round(figures["accuracy"], 4), "wall_time_s": round(time.time() - t0, 1)}


def _deterministic(model: Any) -> Callable[[Any], int]:
    return lambda obs: int(model.predict(obs, deterministic=True)[0])


def ProgressLines(total: int, every_s: float = 30.0):
    """Progress as plain lines (stderr not a terminal, or no rich/tqdm): steps, rate, mean episode reward."""
    from stable_baselines3.common.callbacks import BaseCallback

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
