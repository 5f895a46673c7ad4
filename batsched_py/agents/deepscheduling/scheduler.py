"""DeepScheduling's deployable schedulers: ``deepscheduling`` (a trained agent) and ``scheduling-agent``
(any policy of Scheduling-v0: a saved agent, a baseline or ``module:callable``), over the decision of
:class:`batsched_py.agents.deepscheduling.mdp.SchedulingScheduler`."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ..common.loading import load_policy, trained_agent
from .baselines import BASELINES
from .mdp import SchedulingScheduler


class SchedulingAgent(SchedulingScheduler):
    description = ("a DeepScheduling policy as a scheduler: option 'policy' = a saved agent (.zip), a baseline "
                   "(FF, EASY, SAF) or 'module:callable' (obs -> action)")

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        super().__init__(options)
        self.policy = load_policy(self.options.get("policy"), "scheduling", BASELINES)


class DeepScheduling(SchedulingScheduler):
    description = ("a trained DeepScheduling agent: option 'model' = its .zip (batsched-py train scheduling); "
                   "'deterministic' (default true)")
    OPTIONS = SchedulingScheduler.OPTIONS | {"model", "deterministic"}

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        policy, rest = trained_agent("deepscheduling", "scheduling", dict(options or {}), self.TRAINED_OPTIONS)
        super().__init__(rest)
        self.policy = policy
