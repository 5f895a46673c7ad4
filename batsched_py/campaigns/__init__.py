"""Many simulations at once: executors (local processes or Ray), campaign files with resumable
results, and Ray-backed helpers for training (a VecEnv of Ray actors, hyperparameter sweeps)."""
from .executor import Executor, LocalExecutor, Outcome, RayExecutor, Task, make_executor

__all__ = ["Executor", "LocalExecutor", "RayExecutor", "Task", "Outcome", "make_executor"]
