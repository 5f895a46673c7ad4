"""The scheduler API: write a policy as a :class:`Scheduler` subclass, drive it with a :class:`Session`."""
from ..models.power import PowerModel, PowerModelError, PStatePower, SleepPStates, read_power_model
from .base import DecisionError, Scheduler
from .registry import available, create, register
from .session import Session, SessionError
from .view import HostState, Job, Jobs, JobStatus, Platform, Resource

__all__ = ["Scheduler", "DecisionError", "Session", "SessionError", "Platform", "Resource", "HostState",
           "Job", "Jobs", "JobStatus", "PowerModel", "PowerModelError", "PStatePower", "SleepPStates",
           "read_power_model", "register", "available", "create"]
