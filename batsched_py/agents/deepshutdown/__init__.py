"""DeepShutdown (Casagrande et al., "Don't Hurry Be Green"): PPO on Shutdown-v0.

- config.py: the paper's network and PPO settings (the rl extra: torch, stable-baselines3);
- scheduler.py: the ``deepshutdown`` and ``shutdown-agent`` schedulers (no rl extra needed to list them).
"""
