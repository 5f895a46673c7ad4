"""Perez et al.'s elastic-provisioning learner for ``Elastic-v0``: SARSA with an echo state network
(or feed-forward) action-value approximator, pre-trained on earliest deadline first; see
``scripts/reproduce_elastic.py`` for training and the paper's tables."""
from .approximators import KINDS, Readout, Reservoir
from .sarsa import SarsaAgent, SarsaPolicy, load_sarsa
from .training import run_episode

__all__ = ["KINDS", "Reservoir", "Readout", "SarsaAgent", "SarsaPolicy", "load_sarsa", "run_episode"]
