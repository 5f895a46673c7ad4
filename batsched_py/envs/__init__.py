"""Gymnasium environments over the emulator or a real Batsim; importing this registers them.

    import gymnasium as gym
    import batsched_py.envs  # noqa: F401
    env = gym.make("batsched_py/Shutdown-v0", platform="platforms/taurus_deepshutdown.xml",
                   workloads=["workloads/deepshutdown/train"], backend="emulator")

- core.py: the Gymnasium face over an agent scheduler (reset/step over a backend);
- backends.py: the emulator in-process, or a real Batsim (subprocess, container);
- meter.py: energy waste and job figures from the scheduler's view;
- shutdown.py (``Shutdown-v0``), scheduling.py (``Scheduling-v0``), elastic.py (``Elastic-v0``, with
  Perez et al.'s measures in responsiveness.py), volunteer.py (``VolunteerPool-v0``); allocation.py
  (``Allocation-v0``, model-based: thermal-aware placement over the emulator's power/temperature
  model or a learned predictor).
The decisions themselves live in :mod:`batsched_py.policies.agent`, so that any policy for an
environment also runs as a scheduler (``run``, ``serve``, ``compare``).
"""
from gymnasium.envs.registration import register, registry

from .core import BatsimEnv, EnvError
from .elastic import ElasticEnv
from .scheduling import SchedulingEnv
from .shutdown import ShutdownEnv
from .volunteer import VolunteerEnv

ENVS = {"batsched_py/Shutdown-v0": "batsched_py.envs.shutdown:ShutdownEnv",
        "batsched_py/Scheduling-v0": "batsched_py.envs.scheduling:SchedulingEnv",
        "batsched_py/Elastic-v0": "batsched_py.envs.elastic:ElasticEnv",
        "batsched_py/Allocation-v0": "batsched_py.envs.allocation:AllocationEnv",
        "batsched_py/VolunteerPool-v0": "batsched_py.envs.volunteer:VolunteerEnv"}
for _id, _entry in ENVS.items():
    if _id not in registry:
        register(id=_id, entry_point=_entry, disable_env_checker=True)

__all__ = ["BatsimEnv", "EnvError", "ShutdownEnv", "SchedulingEnv", "ElasticEnv", "VolunteerEnv", "ENVS"]
