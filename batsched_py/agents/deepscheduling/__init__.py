"""DeepScheduling: PPO on Scheduling-v0 (MaskablePPO with --masking).

- mdp.py: the decision points (which queued job starts now) and their MDP; baselines.py: FF, EASY, SAF;
- env.py: ``Scheduling-v0``, the reward (the rl extra);
- config.py, pointer.py: the paper's network and PPO settings, the pointer actor (the rl extra);
- scheduler.py: the ``deepscheduling`` and ``scheduling-agent`` schedulers (no rl extra needed to list them).
"""
