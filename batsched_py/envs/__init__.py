"""Gymnasium environments over the emulator or a real Batsim; importing this registers them.

    import gymnasium as gym
    import batsched_py.envs  # noqa: F401
    env = gym.make("batsched_py/Shutdown-v0", platform="platforms/taurus_deepshutdown.xml",
                   workloads=["workloads/deepshutdown/train"], backend="emulator")

What every environment shares:
- core.py: the Gymnasium face over an agent scheduler (reset/step over a backend);
- backends.py: the emulator in-process, or a real Batsim (subprocess, container);
- meter.py: energy waste and job figures from the scheduler's view;
- warmup.py: days that start with every node off.

Each environment lives with its paper, as ``batsched_py.agents.<paper>.env`` (its decision
points in ``mdp.py`` beside it): ``Shutdown-v0`` (deepshutdown), ``Scheduling-v0``
(deepscheduling), ``Elastic-v0`` (elastic, with Perez et al.'s measures in responsiveness.py),
``VolunteerPool-v0`` (volunteer), ``Allocation-v0`` (allocation: model-based, thermal-aware
placement over the emulator's power/temperature model or a learned predictor).  They are
registered here by name, so that ``gym.make`` imports only the one it makes.
"""
from gymnasium.envs.registration import register, registry

from .core import BatsimEnv, EnvError

ENVS = {"batsched_py/Shutdown-v0": "batsched_py.agents.deepshutdown.env:ShutdownEnv",
        "batsched_py/Scheduling-v0": "batsched_py.agents.deepscheduling.env:SchedulingEnv",
        "batsched_py/Elastic-v0": "batsched_py.agents.elastic.env:ElasticEnv",
        "batsched_py/Allocation-v0": "batsched_py.agents.allocation.env:AllocationEnv",
        "batsched_py/VolunteerPool-v0": "batsched_py.agents.volunteer.env:VolunteerEnv"}
for _id, _entry in ENVS.items():
    if _id not in registry:
        register(id=_id, entry_point=_entry, disable_env_checker=True)

__all__ = ["BatsimEnv", "EnvError", "ENVS"]
