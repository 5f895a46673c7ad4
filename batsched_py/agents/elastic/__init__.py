"""Perez et al.'s elastic provisioning: SARSA with an echo state network (or feed-forward)
action-value approximator, pre-trained on earliest deadline first; ``scripts/reproduce_elastic.py``
trains it and gives the paper's tables.

- mdp.py: the decision points (which job class takes a free core; the pool level) and their MDP;
  baselines.py: FCFS, EDF;
- env.py: ``Elastic-v0`` (the rl extra), with the paper's measures in responsiveness.py;
- approximators.py, sarsa.py, training.py: the learner; scheduler.py: the ``elastic-agent`` scheduler.
"""
from .approximators import KINDS, Readout, Reservoir
from .sarsa import SarsaAgent, SarsaPolicy, load_sarsa
from .training import run_episode

__all__ = ["KINDS", "Reservoir", "Readout", "SarsaAgent", "SarsaPolicy", "load_sarsa", "run_episode"]
