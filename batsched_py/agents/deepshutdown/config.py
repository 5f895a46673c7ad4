"""The paper's network and PPO settings.

Separate actor and critic networks, each: an LSTM of 128 units over the 20-observation window
(its last output, with the present row beside it), a dense layer of 64 with leaky ReLU, then a
softmax policy / a linear value.
PPO: gamma 0.99, GAE lambda 0.95, clip 0.2, 1440 steps per actor per update (one day), 4 epochs,
16 minibatches, learning rate 5e-4, entropy coefficient 0.005, 16 parallel actors.
"""
from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from .baselines import BASELINES  # noqa: F401  (the paper's: train --imitate, evaluate --policies)
from .mdp import ShutdownScheduler

TRAINED_OPTIONS = ShutdownScheduler.TRAINED_OPTIONS

ENV = "batsched_py/Shutdown-v0"
ACTORS = 16
N_STEPS = 1440
HYPERPARAMETERS = dict(gamma=0.99, gae_lambda=0.95, clip_range=0.2, n_steps=N_STEPS, n_epochs=4,
                       learning_rate=5e-4, ent_coef=0.005, minibatches=16)


class LSTMWindow(BaseFeaturesExtractor):
    """The last output of an LSTM read over the observation window (history x features), beside the
    present row itself: the paper's network sees the present only through the LSTM, which clones a
    teacher far more slowly (the present state decides most of a reservation)."""

    def __init__(self, observation_space: gym.spaces.Box, units: int = 128):
        super().__init__(observation_space, features_dim=units + observation_space.shape[-1])
        self.lstm = torch.nn.LSTM(observation_space.shape[-1], units, batch_first=True)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(observations)
        return torch.cat([out[:, -1], observations[:, -1]], dim=1)


def policy(masking: bool) -> str:
    return "MlpPolicy"


def policy_kwargs(masking: bool) -> dict:
    return dict(features_extractor_class=LSTMWindow, features_extractor_kwargs=dict(units=128),
                share_features_extractor=False, net_arch=dict(pi=[64], vf=[64]),
                activation_fn=torch.nn.LeakyReLU)
