"""The deployable ``volunteer-agent`` scheduler: the decision of
:class:`batsched_py.agents.volunteer.mdp.VolunteerScheduler` with this paper's policies (bandit.py)."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ...policies.options import PolicyOptionError
from .bandit import make_policy
from .mdp import VolunteerScheduler


class VolunteerAgent(VolunteerScheduler):
    description = ("Forshaw & McGough's volunteer pool as a scheduler: option 'policy' random (HTCondor's default) or "
                   "bandit (the reward-history learner, learning online; options epsilon, sigma, history, "
                   "explorations: per job); 'level' computer|cluster|cluster-week|system")

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        super().__init__(options)
        o = self.options
        try:
            self.policy = make_policy(o.get("policy", "random"), seed=o.get("seed", 0),
                                      **{k: o[k] for k in ("epsilon", "sigma", "history", "explorations")
                                         if k in o})
        except ValueError as exc:
            raise PolicyOptionError(f"option {exc}") from None
