"""Forshaw & McGough's volunteer pool: the reward-history learner (bandit.py) and random placement,
HTCondor's default; ``scripts/reproduce_volunteer.py`` runs the paper's comparisons.

- mdp.py: the decision points (which PC takes the job) and their MDP;
- env.py: ``VolunteerPool-v0`` (the rl extra);
- scheduler.py: the ``volunteer-agent`` scheduler.
"""
from .bandit import POLICIES, RandomPlacement, RewardHistory, make_policy, run_episode

__all__ = ["POLICIES", "RewardHistory", "RandomPlacement", "make_policy", "run_episode"]
