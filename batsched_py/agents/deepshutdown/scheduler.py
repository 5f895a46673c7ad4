"""DeepShutdown's deployable schedulers: ``deepshutdown`` (a trained agent) and ``shutdown-agent`` (any
policy of Shutdown-v0: a saved agent, a baseline or ``module:callable``), over the decision of
:class:`batsched_py.agents.deepshutdown.mdp.ShutdownScheduler`."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ..common.loading import load_policy, trained_agent
from .baselines import BASELINES
from .mdp import ShutdownScheduler


class ShutdownAgent(ShutdownScheduler):
    description = ("a DeepShutdown policy as a scheduler: option 'policy' = a saved agent (.zip), a baseline "
                   "(T0, T1, T5, T10, OR*, QB) or 'module:callable' (obs -> nodes to keep off)")

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        super().__init__(options)
        self.policy = load_policy(self.options.get("policy"), "shutdown", BASELINES)


class DeepShutdown(ShutdownScheduler):
    description = ("a trained DeepShutdown agent: option 'model' = its .zip (batsched-py train shutdown); "
                   "'deterministic' (default true)")
    OPTIONS = ShutdownScheduler.OPTIONS | {"model", "deterministic"}

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        policy, rest = trained_agent("deepshutdown", "shutdown", dict(options or {}), self.TRAINED_OPTIONS)
        super().__init__(rest)
        self.policy = policy
