"""The paper's network and PPO settings.

Separate actor and critic networks, each: three GRU encoders of 64 units read the queue, the
running agenda and the last 20 snapshots in parallel; their last outputs, concatenated, feed a
dense layer of 128 (ReLU), then the softmax policy / the linear value.  PPO: gamma 0.97, GAE lambda
0.95, clip 0.2, 360 steps per actor per update, 6 epochs, minibatches of 180, 16 actors.  The paper
lets an impossible choice pass time; ``--masking`` (sb3-contrib's MaskablePPO) removes them instead,
and then the actor is a pointer head over the same encoders (pointer.py).
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from .baselines import BASELINES  # noqa: F401  (the paper's: train --imitate, evaluate --policies)
from .mdp import SchedulingScheduler
from .pointer import PointerPolicy

TRAINED_OPTIONS = SchedulingScheduler.TRAINED_OPTIONS

ENV = "batsched_py/Scheduling-v0"
ACTORS = 16
N_STEPS = 360
HYPERPARAMETERS = dict(gamma=0.97, gae_lambda=0.95, clip_range=0.2, n_steps=N_STEPS, n_epochs=6, batch_size=180)
PARTS = ("queue", "running", "snapshots")


class ThreeGRUs(BaseFeaturesExtractor):
    def __init__(self, observation_space: gym.spaces.Dict, units: int = 64):
        super().__init__(observation_space, features_dim=units * len(PARTS))
        self.grus = torch.nn.ModuleDict({k: torch.nn.GRU(_width(observation_space[k]), units, batch_first=True)
                                         for k in PARTS})

    def forward(self, observations: dict) -> torch.Tensor:
        return torch.cat([self.grus[k](observations[k])[0][:, -1] for k in PARTS], dim=1)


def _width(space: gym.Space) -> int:
    """Features per row of a (rows x features) Box."""
    assert space.shape is not None
    return space.shape[-1]


def policy(masking: bool) -> Any:
    """The SB3 policy: the paper's network, or with masking the pointer-head actor."""
    return PointerPolicy if masking else "MultiInputPolicy"


def policy_kwargs(masking: bool) -> dict:
    if masking:
        return dict(units=64, share_features_extractor=False)
    return dict(features_extractor_class=ThreeGRUs, features_extractor_kwargs=dict(units=64),
                share_features_extractor=False, net_arch=dict(pi=[128], vf=[128]),
                activation_fn=torch.nn.ReLU)
