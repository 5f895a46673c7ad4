"""DeepShutdown (Casagrande et al., "Don't Hurry Be Green"): PPO on Shutdown-v0."""
from .config import ENV, HYPERPARAMETERS, LSTMWindow, policy_kwargs

__all__ = ["ENV", "HYPERPARAMETERS", "LSTMWindow", "policy_kwargs"]
