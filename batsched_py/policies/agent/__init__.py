"""Agent decision points inside schedulers (base.py): each paper's decision, the MDP its environment
exposes (shutdown.py, scheduling.py, elastic.py, allocation.py, volunteer.py), the domain models
they need (nodes.py, easy_plan.py, clock.py; cluster.py and cluster_jobs.py for allocation) and the
rule-based baselines in their action spaces (baselines.py).

The Gymnasium environments (batsched_py.envs) are thin faces over these schedulers; the deployable
schedulers that run a trained agent live with it, in batsched_py.agents.<paper>.scheduler."""
from .allocation import AllocationScheduler
from .base import MDP, ActionError, AgentMixin
from .elastic import ElasticScheduler
from .scheduling import SchedulingScheduler
from .shutdown import ShutdownScheduler
from .volunteer import VolunteerScheduler

__all__ = ["ActionError", "AgentMixin", "MDP", "ShutdownScheduler", "SchedulingScheduler", "ElasticScheduler",
           "AllocationScheduler", "VolunteerScheduler"]
