"""DeepScheduling: PPO on Scheduling-v0 (MaskablePPO with --masking)."""
from .config import ENV, HYPERPARAMETERS, ThreeGRUs, policy_kwargs

__all__ = ["ENV", "HYPERPARAMETERS", "ThreeGRUs", "policy_kwargs"]
