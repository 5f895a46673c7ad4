"""A pointer-style actor for DeepScheduling with action masking.

The paper's actor maps each queue position to its logit through one dense layer over the GRUs'
128-unit summary, so a rule as plain as "the smallest job that fits" must be relearnt for every
position.  Here one small network scores each queued job from its own row (size, walltime,
confidence, position) beside the summary, and another scores waiting: a rule that ranks jobs by
their own figures (SAF's area, EASY's order) is one function shared by every position, which is
what lets a clone of SAF play like SAF.  The critic reads the same encoders.
"""
from __future__ import annotations

import gymnasium as gym
import torch
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor


class EncodersAndQueue(BaseFeaturesExtractor):
    """A GRU encoder per part of the observation (rows x features; their last outputs, as the
    paper's), followed by the queue's rows as they are."""

    def __init__(self, observation_space: gym.spaces.Dict, units: int = 64):
        queue = observation_space["queue"].shape
        assert queue is not None
        parts = {k: s.shape[-1] for k, s in observation_space.spaces.items() if s.shape is not None}
        super().__init__(observation_space, features_dim=units * len(parts) + queue[0] * queue[1])
        self.grus = torch.nn.ModuleDict({k: torch.nn.GRU(w, units, batch_first=True) for k, w in parts.items()})

    def forward(self, observations: dict) -> torch.Tensor:
        summary = [gru(observations[k])[0][:, -1] for k, gru in self.grus.items()]
        return torch.cat([*summary, observations["queue"].flatten(1)], dim=1)


class PointerHead(torch.nn.Module):
    """Logits [wait, job 1, ..., job Q] (the actor's latent is its logits: the policy's action layer
    is the identity); the critic's latent from the whole feature vector."""

    def __init__(self, summary: int, rows: int, width: int, hidden: int = 128):
        super().__init__()
        self.summary, self.rows, self.width = summary, rows, width
        self.latent_dim_pi = rows + 1
        self.latent_dim_vf = hidden
        self.score: torch.nn.Sequential = torch.nn.Sequential(torch.nn.Linear(width + 1 + summary, hidden), torch.nn.ReLU(),
                                         torch.nn.Linear(hidden, 1))
        self.wait: torch.nn.Sequential = torch.nn.Sequential(torch.nn.Linear(summary, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))
        # (named as SB3's MlpExtractor names its critic: imitation clips the critic's gradient apart by name)
        self.value_net = torch.nn.Sequential(torch.nn.Linear(summary + rows * width, hidden), torch.nn.ReLU())
        self.position: torch.Tensor
        self.register_buffer("position", torch.linspace(0.0, 1.0, rows).view(1, rows, 1))

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        summary = features[:, :self.summary]
        rows = features[:, self.summary:].view(-1, self.rows, self.width)
        n = rows.shape[0]
        each = torch.cat([rows, self.position.expand(n, -1, -1), summary.unsqueeze(1).expand(-1, self.rows, -1)], dim=2)
        return torch.cat([self.wait(summary), self.score(each).squeeze(-1)], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features)


class PointerPolicy(MaskableMultiInputActorCriticPolicy):
    """MaskablePPO's policy with :class:`PointerHead` as its actor (``units``: GRU size)."""

    def __init__(self, *args, units: int = 64, **kwargs):
        self.units = units
        kwargs.setdefault("features_extractor_class", EncodersAndQueue)
        kwargs.setdefault("features_extractor_kwargs", dict(units=units))
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        space = self.observation_space
        assert isinstance(space, gym.spaces.Dict) and space["queue"].shape is not None
        queue = space["queue"].shape
        self.mlp_extractor = PointerHead(self.units * len(space.spaces), queue[0], queue[1])  # type: ignore[assignment]

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = torch.nn.Identity()
        # (small last layers: the first policy is near uniform over the valid actions, as SB3's 0.01 gain gives)
        head = self.mlp_extractor
        assert isinstance(head, PointerHead)
        for last in (head.score[-1], head.wait[-1]):
            assert isinstance(last, torch.nn.Linear)
            torch.nn.init.orthogonal_(last.weight, gain=0.01)
            torch.nn.init.zeros_(last.bias)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),  # type: ignore[call-arg]
                                              **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict:
        return {**super()._get_constructor_parameters(), "units": self.units}

