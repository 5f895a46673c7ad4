"""Forshaw & McGough's reward-history learner for ``VolunteerPool-v0`` (bandit.py) and random placement,
HTCondor's default; ``scripts/reproduce_volunteer.py`` runs the paper's comparisons."""
from .bandit import POLICIES, RandomPlacement, RewardHistory, make_policy, run_episode

__all__ = ["POLICIES", "RewardHistory", "RandomPlacement", "make_policy", "run_episode"]
