"""PPO guided by a teacher: a behaviour-cloning term toward it on the agent's own states, and a
critic that sees what the actor may not (an asymmetric critic).

DAgger moves a clone toward its teacher but never past it; PPO alone, from a clone, drifts on 2
cores before it improves (docs/papers/deepshutdown.md).  Here PPO runs as usual and, after each of
its updates, the actor takes ``bc_epochs`` passes of ``bc_weight x`` cross-entropy toward the
teacher's action on the very states of the rollout (the teacher, bound to each actor's scheduler,
labels what the agent meets: DAgger's labels, on-policy).  For a deterministic teacher this
cross-entropy is the KL divergence from the teacher's policy to the agent's.  The weight may decay
to 0 over the run (``bc_decay``), handing the policy over to the reward.  The passes are separate
from PPO's loss (an auxiliary phase, as in phasic policy gradient) so that SB3's update is used as
it is.

The critic only shapes the advantages during training, so it may read privileged features (real
runtimes, the oracle's action) that no deployed agent has: its value is then less noisy where the
future depends on what the actor cannot know.  The actor reads the environment's observation
alone, so :func:`deployable` copies it into a plain agent of the base model's kind, which every
loader and scheduler reads.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Protocol

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from ...errors import BatschedError

WINDOW, PRIVILEGED, TEACHER, DECISIVE = "window", "privileged", "teacher", "decisive"


class GuidanceError(BatschedError, ValueError):
    """A bad guidance argument or model, named."""


class Privileged(Protocol):
    """Features the critic alone reads, from the scheduler (bound at each reset)."""
    size: int

    def bind(self, scheduler: Any) -> None: ...

    def __call__(self) -> np.ndarray: ...


class Guidance(gym.Wrapper):
    """The environment's observation as ``window``, beside ``privileged`` (the critic's features),
    ``teacher`` (the action a fresh ``teacher()``, bound to the day's scheduler, takes here) and
    ``decisive`` (1 where ``decisive(scheduler)`` holds: a state whose action changes the day, such
    as Shutdown-v0's with a job that could start; 0 everywhere without it).  PPO's rollout buffer
    stores them with the observation, so the BC term finds its labels and weights there."""

    def __init__(self, env: gym.Env, teacher: Callable[[], Any], privileged: Privileged,
                 decisive: Optional[Callable[[Any], bool]] = None):
        super().__init__(env)
        if not isinstance(env.action_space, gym.spaces.Discrete):
            raise GuidanceError(f"guidance needs a Discrete action space, not {env.action_space}")
        self.teacher, self.privileged, self.decisive = teacher, privileged, decisive
        n = int(env.action_space.n)
        self.observation_space = gym.spaces.Dict({
            WINDOW: env.observation_space,
            PRIVILEGED: gym.spaces.Box(0.0, 1.0, (privileged.size,), np.float32),
            TEACHER: gym.spaces.Box(0.0, float(n - 1), (1,), np.float32),
            DECISIVE: gym.spaces.Box(0.0, 1.0, (1,), np.float32)})
        self._policy: Any = None
        self._scheduler: Any = None

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        scheduler = self._scheduler = self.env.unwrapped.scheduler
        self._policy = self.teacher()
        self._policy.bind(scheduler)
        self.privileged.bind(scheduler)
        return self._observe(obs, False), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._observe(obs, terminated or truncated), reward, terminated, truncated, info

    def _observe(self, obs: np.ndarray, done: bool) -> dict[str, np.ndarray]:
        # (past the day's end the teacher's state is gone: the label of a final state is never trained on)
        label = 0 if done else int(self._policy(obs))
        decisive = not done and self.decisive is not None and self.decisive(self._scheduler)
        return {WINDOW: obs, PRIVILEGED: np.clip(self.privileged(), 0.0, 1.0).astype(np.float32),
                TEACHER: np.array([label], np.float32), DECISIVE: np.array([float(decisive)], np.float32)}


class ActorView(BaseFeaturesExtractor):
    """The base model's extractor, on the ``window`` alone (what a deployed agent sees)."""

    def __init__(self, observation_space: gym.spaces.Dict, extractor: type, extractor_kwargs: Optional[dict] = None):
        net = extractor(observation_space[WINDOW], **(extractor_kwargs or {}))
        super().__init__(observation_space, features_dim=net.features_dim)
        self.net = net

    def forward(self, observations: dict) -> torch.Tensor:
        return self.net(observations[WINDOW])


class CriticView(BaseFeaturesExtractor):
    """The base model's extractor on the ``window``, its features mixed with the ``privileged``
    ones into as many (the policy's networks take one width).  The mix starts as the identity on
    the window's features, so the critic starts as the base model's."""

    def __init__(self, observation_space: gym.spaces.Dict, extractor: type, extractor_kwargs: Optional[dict] = None):
        net = extractor(observation_space[WINDOW], **(extractor_kwargs or {}))
        super().__init__(observation_space, features_dim=net.features_dim)
        self.net = net
        privileged = int(np.prod(observation_space[PRIVILEGED].shape or (0,)))
        self.mix = torch.nn.Linear(net.features_dim + privileged, net.features_dim)
        self.start_as_base()

    def start_as_base(self) -> None:
        with torch.no_grad():
            self.mix.weight.zero_()
            self.mix.weight[:, :self.net.features_dim] = torch.eye(self.net.features_dim)
            self.mix.bias.zero_()

    def forward(self, observations: dict) -> torch.Tensor:
        return self.mix(torch.cat([self.net(observations[WINDOW]), observations[PRIVILEGED]], dim=1))


class AsymmetricPolicy(ActorCriticPolicy):
    """Actor on :class:`ActorView`, critic on :class:`CriticView` (features_extractor_kwargs name the
    base extractor for both)."""

    def _build(self, lr_schedule) -> None:
        # (SB3 made the critic's extractor like the actor's; it is replaced before the networks and
        # the optimiser are built over it)
        space: Any = self.observation_space
        self.vf_features_extractor = CriticView(space, **self.features_extractor_kwargs)
        super()._build(lr_schedule)
        self.vf_features_extractor.start_as_base()


class GuidedPPO(PPO):
    """PPO, then after each update ``bc_epochs`` passes over the rollout of ``bc_weight x`` the
    cross-entropy of the actor's policy at the teacher's action (decayed linearly to 0 over the
    run when ``bc_decay``).  A decisive state weighs ``bc_decisive`` times an other one in it:
    where most states have one obvious action (Shutdown-v0: nothing to start, every idle node off)
    the mean is won on them while the agent still errs where its action matters."""
    bc_weight: float = 1.0
    bc_epochs: int = 1
    bc_decay: bool = False
    bc_decisive: float = 1.0

    def train(self) -> None:
        super().train()
        self._teacher_term()

    def _teacher_term(self) -> None:
        me: Any = self      # (SB3's attributes are typed loosely)
        weight = self.bc_weight * (self._current_progress_remaining if self.bc_decay else 1.0)
        hits = seen = decisive_hits = decisive_seen = 0
        losses = []
        if weight > 0:
            me.policy.set_training_mode(True)
            for _ in range(self.bc_epochs):
                for batch in me.rollout_buffer.get(me.batch_size):
                    labels = batch.observations[TEACHER].long().flatten()
                    decisive = batch.observations[DECISIVE].flatten()
                    weights = 1.0 + (self.bc_decisive - 1.0) * decisive
                    distribution = me.policy.get_distribution(batch.observations)
                    loss = -(weights * distribution.log_prob(labels)).sum() / weights.sum()
                    me.policy.optimizer.zero_grad()
                    (weight * loss).backward()
                    torch.nn.utils.clip_grad_norm_(me.policy.parameters(), me.max_grad_norm)
                    me.policy.optimizer.step()
                    with torch.no_grad():
                        agree = distribution.mode() == labels
                        hits += int(agree.sum())
                        decisive_hits += int((agree & (decisive > 0)).sum())
                    seen += len(labels)
                    decisive_seen += int((decisive > 0).sum())
                    losses.append(float(loss.detach()))
            me.logger.record("teacher/agreement", hits / seen)
            if decisive_seen:
                me.logger.record("teacher/decisive_agreement", decisive_hits / decisive_seen)
                me.logger.record("teacher/decisive_share", decisive_seen / seen)
            me.logger.record("teacher/cross_entropy", float(np.mean(losses)))
        me.logger.record("teacher/weight", weight)


def guided_model(base: Any, env: Any, *, bc_weight: float, bc_epochs: int = 1, bc_decay: bool = False,
                 bc_decisive: float = 1.0, device: str = "cpu", **ppo_kwargs: Any) -> Any:
    """A guided copy of ``base`` (a saved agent, loaded) on ``env`` (a VecEnv of :class:`Guidance`
    environments): the same actor and critic weights, the critic's privileged mix at the identity;
    ``device``: where its networks learn; ``ppo_kwargs``: PPO's hyperparameters (learning rate,
    clip range, n_steps...)."""
    if bc_weight < 0 or bc_epochs < 0:
        raise GuidanceError(f"bc_weight {bc_weight} and bc_epochs {bc_epochs} must not be negative")
    if not bc_decisive >= 1:
        raise GuidanceError(f"bc_decisive {bc_decisive}: a decisive state weighs at least as much as an other (>= 1)")
    if isinstance(base, MaskablePPO):
        raise GuidanceError("the base model is a MaskablePPO agent (DeepScheduling's): guidance is built for "
                            "PPO agents without action masks (DeepShutdown's)")
    window = env.observation_space[WINDOW]
    if base.observation_space.shape != window.shape or base.action_space != env.action_space:
        raise GuidanceError(f"the base model ({base.observation_space.shape}, {base.action_space}) does not fit "
                            f"the environment ({window.shape}, {env.action_space})")
    old: Any = base.policy
    if old.share_features_extractor:
        raise GuidanceError("the base model shares its extractor between actor and critic: "
                            "an asymmetric critic needs its own")
    kwargs = dict(features_extractor_class=ActorView, share_features_extractor=False,
                  features_extractor_kwargs=dict(extractor=old.features_extractor_class,
                                                 extractor_kwargs=dict(old.features_extractor_kwargs)),
                  net_arch=old.net_arch, activation_fn=old.activation_fn)
    model = GuidedPPO(AsymmetricPolicy, env, policy_kwargs=kwargs, device=device, **ppo_kwargs)
    model.bc_weight, model.bc_epochs, model.bc_decay, model.bc_decisive = bc_weight, bc_epochs, bc_decay, bc_decisive
    new: Any = model.policy
    new.pi_features_extractor.net.load_state_dict(old.pi_features_extractor.state_dict())
    new.vf_features_extractor.net.load_state_dict(old.vf_features_extractor.state_dict())
    for part in ("mlp_extractor", "action_net", "value_net"):
        getattr(new, part).load_state_dict(getattr(old, part).state_dict())
    return model


def deployable(model: Any, base: Any) -> Any:
    """``base`` (a loaded agent of the kind ``model`` was made from) with ``model``'s actor: what
    loaders and schedulers read.  Its critic stays the base's (the trained one needs privileged
    features no deployed agent has)."""
    new, old = model.policy, base.policy
    old.pi_features_extractor.load_state_dict(new.pi_features_extractor.net.state_dict())
    old.mlp_extractor.policy_net.load_state_dict(new.mlp_extractor.policy_net.state_dict())
    old.action_net.load_state_dict(new.action_net.state_dict())
    # (the base's Adam moments belong to its own training, not to this actor: a fresh optimiser,
    # which also keeps the file a third of the size)
    old.optimizer = old.optimizer_class(old.parameters(), lr=old.optimizer.param_groups[0]["lr"],
                                        **old.optimizer_kwargs)
    return base
