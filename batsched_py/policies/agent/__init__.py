"""Agent decision points inside schedulers (base.py), the two DeepShutdown/DeepScheduling decisions
(shutdown.py, scheduling.py), Perez et al.'s elastic provisioning (elastic.py), thermal-aware allocation (allocation.py), rule-based baselines
in their action spaces (baselines.py), and how a policy is named in a --config object (loading.py).
The Gymnasium environments (batsched_py.envs) are thin faces over these schedulers."""
from .allocation import DQNAllocation, ThermalAllocation
from .base import ActionError, AgentMixin
from .elastic import ElasticAgent, ElasticScheduler
from .scheduling import SchedulingAgent, SchedulingScheduler
from .shutdown import ShutdownAgent, ShutdownScheduler
from .volunteer import VolunteerAgent, VolunteerScheduler

__all__ = ["ActionError", "AgentMixin", "ShutdownScheduler", "ShutdownAgent", "SchedulingScheduler",
           "SchedulingAgent", "ElasticScheduler", "ElasticAgent", "ThermalAllocation", "DQNAllocation",
           "VolunteerScheduler", "VolunteerAgent"]
