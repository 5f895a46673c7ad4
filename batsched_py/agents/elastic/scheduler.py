"""The deployable ``elastic-agent`` scheduler: the decision of
:class:`batsched_py.agents.elastic.mdp.ElasticScheduler` with a baseline, a SARSA agent of this
paper (sarsa.py's ``.npz``) or ``module:callable`` as its policy."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ..common.loading import load_policy
from .baselines import BASELINES
from .mdp import ElasticScheduler
from .sarsa import load_sarsa


class ElasticAgent(ElasticScheduler):
    description = ("Perez et al.'s elastic provisioning as a scheduler: option 'policy' = FCFS, EDF, a SARSA agent "
                   "(.npz from scripts/reproduce_elastic.py) or 'module:callable'; 'mode' scheduling|elastic")

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        super().__init__(options)
        self.policy = load_policy(self.options.get("policy"), "elastic", BASELINES, {".npz": load_sarsa})
