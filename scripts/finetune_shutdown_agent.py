#!/usr/bin/env python3
"""More PPO on a saved Shutdown-v0 agent (a clone from ``train --imitate``, say): small steps.

``train`` starts PPO from a fresh network or its own checkpoints; this continues from any saved
agent, with a smaller learning rate and clip range so that PPO improves the clone rather than
drifting away from it in its first updates.  Rewards are scaled as ``train`` scales them
(VecNormalize, rewards only).  The shipped ``models/deepshutdown-taurus.zip`` was made by two runs
of it (46,080 then 92,160 steps) on the DAgger clone of OR*; ``models/deepshutdown-taurus.json``
holds the commands.

    python scripts/finetune_shutdown_agent.py MODEL.zip OUT.zip --steps 92160 \\
        -w '../shared/data/deepshutdown/lyon_[12345]/workloads/train/*.json'
"""
from __future__ import annotations

import argparse
import glob
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", type=Path, help="a saved Shutdown-v0 agent (.zip)")
    ap.add_argument("out", type=Path, help="where to save the fine-tuned agent (.zip)")
    ap.add_argument("--steps", type=int, default=46080, help="environment steps, all actors (46,080)")
    ap.add_argument("-w", "--workloads", default=str(ROOT.parent / "shared/data/deepshutdown/lyon_[12345]/workloads/train/*.json"),
                    help="training days (a glob; never the test days)")
    ap.add_argument("-p", "--platform", type=Path, default=ROOT / "platforms/taurus_deepshutdown.xml")
    ap.add_argument("--actors", type=int, default=2)
    ap.add_argument("--learning-rate", type=float, default=5e-5)
    ap.add_argument("--clip-range", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=100, help="first actor's reset seed (the others follow)")
    args = ap.parse_args(argv)
    days = sorted(glob.glob(args.workloads))
    if not days:
        print(f"finetune_shutdown_agent: {args.workloads} matches no day", file=sys.stderr)
        return 2
    if not args.model.is_file():
        print(f"finetune_shutdown_agent: {args.model}: no such file", file=sys.stderr)
        return 2
    import gymnasium as gym
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    import batsched_py.envs  # noqa: F401
    from batsched_py.agents.common.loading import trained_with
    from batsched_py.agents.deepshutdown.config import TRAINED_OPTIONS

    torch.set_num_threads(1)
    trained = trained_with(str(args.model), TRAINED_OPTIONS)     # (its observation and shield)

    def actor(i: int):
        def make():
            env = Monitor(gym.make("batsched_py/Shutdown-v0", platform=str(args.platform), workloads=days,
                                   **trained))
            env.reset(seed=args.seed + i)
            return env
        return make
    venv = VecNormalize(DummyVecEnv([actor(i) for i in range(args.actors)]), norm_obs=False, norm_reward=True)
    model = PPO.load(args.model, env=venv, device="cpu",
                     custom_objects={"learning_rate": args.learning_rate, "clip_range": args.clip_range})
    t0 = time.time()
    model.learn(total_timesteps=args.steps, reset_num_timesteps=False)
    model.save(args.out)
    print(f"{args.out}: {args.steps} more steps in {time.time() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
