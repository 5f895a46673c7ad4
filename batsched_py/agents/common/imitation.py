"""A warm start for PPO: behaviour cloning of a baseline before the policy-gradient updates.

PPO from a random network spends its first million steps switching nodes at random on a
1,440-step day (our first DeepShutdown run never got back to the timeouts' rewards in 1.84M
steps, against the paper's 50M).  Cloning a rule-based policy first (the way Perez et al.
pre-train their SARSA agent on earliest-deadline-first) starts PPO from the teacher's behaviour:
the actor learns the teacher's actions by cross-entropy, the critic the discounted returns, on
whole days played in the same environment.  A clone that is right on 99% of the teacher's own
states still drifts, once deployed, into states the teacher never visits (a node count one off
changes what follows), so later rounds let the clone play and the teacher label what it meets
(DAgger, Ross et al. 2011: the teacher is bound to the same scheduler and reads its state).  PPO
then improves on the clone.  With action masks (MaskablePPO), the clone learns and plays among the
valid actions only, as PPO will: unmasked, it would spend itself learning which jobs fit.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np
from ...errors import BatschedError


class ImitationError(BatschedError, ValueError):
    """A bad imitation argument, named."""


@dataclass
class Demonstrations:
    """The teacher's days: observations (an array, or a dict of arrays), actions, discounted returns
    (from each step to the day's end) and running returns (from the day's start to each step: what
    SB3's VecNormalize measures to scale rewards), and the action masks when recorded."""
    observations: Any
    actions: np.ndarray
    returns: np.ndarray
    running: np.ndarray
    episodes: int
    mean_episode_reward: float
    masks: Optional[np.ndarray] = None

    def __len__(self) -> int:
        return len(self.actions)


def demonstrations(make_env: Callable[[], Any], teacher: Callable[[], Any], days: Sequence[Path], *,
                   episodes: int, gamma: float, seed: int = 0,
                   student: Optional[Callable[[Any, Optional[np.ndarray]], Any]] = None,
                   masking: bool = False) -> Demonstrations:
    """``episodes`` days drawn from ``days`` (without replacement while they last), each labelled by a
    fresh ``teacher()`` bound to the environment's scheduler, and played by the teacher or, when
    given, by ``student(observation, mask)`` (then the returns are the student's).  ``masking``: the
    environment's ``action_masks()`` are recorded and given to the student."""
    if episodes < 1:
        raise ImitationError(f"imitation episodes: {episodes} is not a positive number")
    rng = random.Random(seed)
    order: list[Path] = []
    while len(order) < episodes:
        batch = list(days)
        rng.shuffle(batch)
        order.extend(batch)
    env = make_env()
    observations: list[Any] = []
    actions: list[int] = []
    returns: list[float] = []
    running: list[float] = []
    masks: list[np.ndarray] = []
    totals = []
    try:
        for i, day in enumerate(order[:episodes]):
            obs, _ = env.reset(seed=seed + i, options={"workload": str(day)})
            policy = teacher()
            policy.bind(env.unwrapped.scheduler)
            rewards: list[float] = []
            done = False
            while not done:
                action = int(policy(obs))
                mask = np.asarray(env.unwrapped.action_masks(), bool) if masking else None
                observations.append(obs)
                actions.append(action)
                if mask is not None:
                    masks.append(mask)
                if student is not None:
                    action = int(student(obs, mask))
                obs, reward, terminated, truncated, _ = env.step(action)
                rewards.append(float(reward))
                done = terminated or truncated
            returns.extend(discounted(rewards, gamma))
            acc = 0.0
            for r in rewards:
                acc = acc * gamma + r
                running.append(acc)
            totals.append(sum(rewards))
    finally:
        env.close()
    if isinstance(observations[0], dict):
        stacked: Any = {k: np.stack([o[k] for o in observations]) for k in observations[0]}
    else:
        stacked = np.stack(observations)
    return Demonstrations(stacked, np.asarray(actions, np.int64), np.asarray(returns, np.float32),
                          np.asarray(running, np.float64), episodes, float(np.mean(totals)),
                          np.stack(masks) if masking else None)


def merge(a: Demonstrations, b: Demonstrations) -> Demonstrations:
    """Both sets of days as one (DAgger's aggregated data set)."""
    if isinstance(a.observations, dict):
        observations: Any = {k: np.concatenate([a.observations[k], b.observations[k]]) for k in a.observations}
    else:
        observations = np.concatenate([a.observations, b.observations])
    return Demonstrations(observations, np.concatenate([a.actions, b.actions]), np.concatenate([a.returns, b.returns]),
                          np.concatenate([a.running, b.running]), a.episodes + b.episodes,
                          (a.mean_episode_reward * a.episodes + b.mean_episode_reward * b.episodes)
                          / (a.episodes + b.episodes),
                          None if a.masks is None or b.masks is None else np.concatenate([a.masks, b.masks]))


def discounted(rewards: Sequence[float], gamma: float) -> list[float]:
    """Each step's discounted return, from that step to the end of the day."""
    out, acc = [0.0] * len(rewards), 0.0
    for t in range(len(rewards) - 1, -1, -1):
        acc = rewards[t] + gamma * acc
        out[t] = acc
    return out


def clone(model: Any, demos: Demonstrations, *, epochs: int, batch_size: int = 64, learning_rate: float = 1e-3,
          return_scale: float = 1.0, seed: int = 0, report: Optional[Callable[[str], None]] = None) -> dict[str, float]:
    """Fit ``model.policy`` (an SB3 actor-critic) to the demonstrations: cross-entropy on the actions,
    mean squared error on the returns divided by ``return_scale`` (the scale PPO's rewards will have).
    Returns the last epoch's figures: ``accuracy`` (deterministic action = teacher's), losses."""
    import torch    # (optional: the rl extra)
    from stable_baselines3.common.utils import obs_as_tensor    # (optional: the rl extra)

    if epochs < 1:
        raise ImitationError(f"imitation epochs: {epochs} is not a positive number")
    policy = model.policy
    critic = [p for name, p in policy.named_parameters() if name.startswith(_CRITIC)]
    actor = [p for name, p in policy.named_parameters() if not name.startswith(_CRITIC)]
    policy.set_training_mode(True)
    optimiser = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    n = len(demos)
    generator = np.random.default_rng(seed)
    targets = torch.as_tensor(demos.returns / return_scale)
    actions = torch.as_tensor(demos.actions)
    masks = demos.masks
    figures: dict[str, float] = {}
    for epoch in range(epochs):
        order = generator.permutation(n)
        hits = 0
        policy_loss = value_loss = 0.0
        for lo in range(0, n, batch_size):
            idx = order[lo:lo + batch_size]
            obs = obs_as_tensor(_take(demos.observations, idx), policy.device)
            distribution = (policy.get_distribution(obs) if masks is None
                            else policy.get_distribution(obs, action_masks=masks[idx]))
            values = policy.predict_values(obs).flatten()
            log_prob = distribution.log_prob(actions[idx])
            loss_pi = -log_prob.mean()
            loss_v = torch.nn.functional.mse_loss(values, targets[idx])
            optimiser.zero_grad()
            (loss_pi + 0.5 * loss_v).backward()
            # (each network's gradient clipped on its own: the critic's, on returns far from its
            # first guesses, would otherwise shrink the actor's step to nothing)
            for group in (actor, critic):
                torch.nn.utils.clip_grad_norm_(group, 1.0)
            optimiser.step()
            with torch.no_grad():
                hits += int((distribution.mode() == actions[idx]).sum())
            policy_loss += float(loss_pi.detach()) * len(idx)
            value_loss += float(loss_v.detach()) * len(idx)
        figures = {"epoch": epoch + 1, "accuracy": hits / n, "policy_loss": policy_loss / n, "value_loss": value_loss / n}
        if report:
            report(f"imitation: epoch {epoch + 1}/{epochs}: accuracy {figures['accuracy']:.3f}, "
                   f"action loss {figures['policy_loss']:.4f}, value loss {figures['value_loss']:.4f}")
    policy.set_training_mode(False)
    return figures


_CRITIC = ("vf_features_extractor.", "mlp_extractor.value_net.", "value_net.")   # (SB3's names)


def _take(observations: Any, idx: np.ndarray) -> Any:
    if isinstance(observations, dict):
        return {k: v[idx] for k, v in observations.items()}
    return observations[idx]
