"""DeepScheduling: PPO on Scheduling-v0 (MaskablePPO with --masking).

- config.py: the paper's network and PPO settings (the rl extra: torch, stable-baselines3);
- scheduler.py: the ``deepscheduling`` and ``scheduling-agent`` schedulers (no rl extra needed to list them).
"""
