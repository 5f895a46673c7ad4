"""One episode of Elastic-v0 with a SARSA agent: learning (optionally from a teacher), or not."""
from __future__ import annotations

from typing import Any, Optional

from .baselines import BASELINES
from .sarsa import SarsaAgent


def run_episode(env: Any, agent: SarsaAgent, *, seed: Optional[int] = None, workload: Optional[str] = None,
                teacher: Optional[str] = None, explore: bool = True,
                epsilon: Optional[float] = None) -> dict[str, Any]:
    """Run one episode; ``teacher`` (a baseline name, EDF for pre-training) picks the actions while
    the agent learns their values (``epsilon``, for this episode only, the share of random actions:
    pre-training explores more, so that the values of the teacher's neighbours are learned too).
    Returns the last step's info and the mean reward."""
    options = {"workload": workload} if workload else None
    obs, info = env.reset(seed=seed, options=options)
    agent.begin_episode()
    guide = None
    if teacher is not None:
        guide = BASELINES[teacher]()
        guide.bind(env.unwrapped.scheduler)
    total, steps, done = 0.0, 0, False
    saved, agent.epsilon = agent.epsilon, agent.epsilon if epsilon is None else epsilon
    try:
        while not done:
            action = agent.act(obs, teacher=None if guide is None else guide(obs), explore=explore)
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            agent.reward(reward, done)
            total += reward
            steps += 1
    finally:
        agent.epsilon = saved
    return {**info, "mean_reward": total / max(1, steps), "steps": steps}
