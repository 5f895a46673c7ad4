"""The deployable allocation schedulers: ``thermal-allocation`` (a baseline allocator or a saved DQN as
its policy) and ``dqn-allocation`` (a saved DQN, option ``model``), over the decision of
:class:`batsched_py.agents.allocation.mdp.AllocationScheduler`."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ...policies.options import PolicyOptionError
from .mdp import AllocationScheduler
from .saved import load_dqn


class ThermalAllocation(AllocationScheduler):
    description = ("thermal-aware FCFS allocation of one-processor jobs: option 'policy' = round_robin, greedy, "
                   "coolest, online_opt1 or a saved DQN (.zip); cores_per_node (24), J (1), alpha (0.5), "
                   "max_temperature (85 C), leakage_model (linear or exponential, the model it observes)")
    SAVED_POLICIES = " or a saved DQN (.zip)"

    def make_policy(self, spec: Any) -> Any:
        if isinstance(spec, str) and spec.endswith(".zip"):
            return load_dqn(spec)
        return super().make_policy(spec)


class DQNAllocation(ThermalAllocation):
    description = ("a trained thermal-aware allocation DQN: option 'model' = its .zip "
                   "(batsched_py.agents.allocation.dqn.train); cores_per_node, J, max_temperature as in training")
    OPTIONS = ThermalAllocation.OPTIONS | {"model"}

    @classmethod
    def option_defaults(cls) -> dict[str, Any]:
        return {**super().option_defaults(), "model": None}

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        options = dict(options or {})
        model = options.pop("model", None)
        if not isinstance(model, str):
            raise PolicyOptionError("dqn-allocation needs option model: the path of a trained DQN (.zip)")
        self.model_path = model
        super().__init__(options)

    def make_policy(self, spec: Any) -> Any:
        return load_dqn(self.model_path)
