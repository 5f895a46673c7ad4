"""DeepShutdown (Casagrande et al., "Don't Hurry Be Green"): PPO on Shutdown-v0.

- mdp.py: the decision points (how many nodes to keep off) and their MDP; baselines.py: T0..T10, OR*;
- env.py: ``Shutdown-v0``, the reward (the rl extra);
- config.py: the paper's network and PPO settings (the rl extra: torch, stable-baselines3);
- scheduler.py: the ``deepshutdown`` and ``shutdown-agent`` schedulers (no rl extra needed to list them).
"""
