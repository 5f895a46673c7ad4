"""A stable-baselines3 ``VecEnv`` whose environments live in Ray actors, one per environment, so a
training run can spread 16 or 64 of them over a cluster's machines.

It behaves as SB3's ``SubprocVecEnv``: an episode that ends is reset in its actor, its last
observation in ``info["terminal_observation"]``; seeds and options apply at the next ``reset()``.
Environment factories must be picklable by cloudpickle (Ray ships them to the actors).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

try:
    import gymnasium as gym
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices
    # SB3's own stacking, so observations come out exactly as SubprocVecEnv gives them
    from stable_baselines3.common.vec_env.subproc_vec_env import _stack_obs
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError(f"RayVecEnv needs gymnasium and stable-baselines3 ({exc.name} is missing): "
                      "pip install 'batsched_py[rl]'") from None
try:
    import ray
except ImportError:     # (training imports this module with the rl extra alone: only a RayVecEnv needs Ray)
    ray = None  # type: ignore[assignment]

__all__ = ["RayVecEnv"]


class _EnvActor:
    """One environment, stepped by its actor as SubprocVecEnv's worker steps it."""

    def __init__(self, env_fn: Callable[[], gym.Env]):
        from stable_baselines3.common.vec_env.patch_gym import _patch_env
        self.env = _patch_env(env_fn())

    def step(self, action) -> tuple:
        observation, reward, terminated, truncated, info = self.env.step(action)
        done = terminated or truncated
        info["TimeLimit.truncated"] = truncated and not terminated
        reset_info: dict[str, Any] = {}
        if done:
            info["terminal_observation"] = observation
            observation, reset_info = self.env.reset()
        return observation, reward, done, info, reset_info

    def reset(self, seed: Optional[int], options: dict) -> tuple:
        return self.env.reset(seed=seed, **({"options": options} if options else {}))

    def spaces(self) -> tuple:
        return self.env.observation_space, self.env.action_space

    def render(self):
        return self.env.render()

    def get_attr(self, name: str):
        return self.env.get_wrapper_attr(name)

    def has_attr(self, name: str) -> bool:
        try:
            self.env.get_wrapper_attr(name)
            return True
        except AttributeError:
            return False

    def set_attr(self, name: str, value) -> None:
        setattr(self.env, name, value)

    def env_method(self, name: str, args: tuple, kwargs: dict):
        return self.env.get_wrapper_attr(name)(*args, **kwargs)

    def is_wrapped(self, wrapper_class: type) -> bool:
        from stable_baselines3.common.env_util import is_wrapped
        return is_wrapped(self.env, wrapper_class)

    def close(self) -> None:
        self.env.close()


class RayVecEnv(VecEnv):
    """``env_fns``: one factory per environment.  ``address``: as ``ray.init`` takes it (None
    starts a local Ray unless one is running already).  ``actor_options``: Ray resources per actor
    (default one CPU each; ``{"num_cpus": 0.5}`` packs two per core, ``{"scheduling_strategy":
    "SPREAD"}`` spreads them over the nodes)."""

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], address: Optional[str] = None,
                 actor_options: Optional[dict[str, Any]] = None):
        if not env_fns:
            raise ValueError("RayVecEnv needs at least one environment factory")
        if ray is None:
            raise ImportError("RayVecEnv needs ray: pip install 'batsched_py[ray]'")
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False if address is None else None, log_to_driver=False)
        actor = ray.remote(_EnvActor).options(**{"num_cpus": 1, **(actor_options or {})})
        self.actors: list[Any] = [actor.remote(fn) for fn in env_fns]
        self.closed = False
        self._pending: Optional[list] = None
        observation_space, action_space = ray.get(self.actors[0].spaces.remote())
        super().__init__(len(env_fns), observation_space, action_space)

    def _each(self, method: str, indices: VecEnvIndices = None, *args) -> list:
        return ray.get([getattr(self.actors[i], method).remote(*args) for i in self._get_indices(indices)])

    def reset(self):
        results = ray.get([a.reset.remote(self._seeds[i], self._options[i]) for i, a in enumerate(self.actors)])
        observations, self.reset_infos = zip(*results)
        self._reset_seeds()   # seeds and options are used once, as in SB3's own VecEnvs
        self._reset_options()
        return _stack_obs(list(observations), self.observation_space)

    def step_async(self, actions: np.ndarray) -> None:
        self._pending = [a.step.remote(action) for a, action in zip(self.actors, actions)]

    def step_wait(self):
        assert self._pending is not None, "step_wait() without step_async()"
        pending, self._pending = self._pending, None     # answered, even by an error: nothing left to wait for
        try:
            results = ray.get(pending)
        except ray.exceptions.RayError:
            for ref in pending:       # (every answer taken: an error left unread is logged with its traceback)
                try:
                    ray.get(ref)
                except ray.exceptions.RayError:
                    pass
            raise
        observations, rewards, dones, infos, self.reset_infos = zip(*results)
        return _stack_obs(list(observations), self.observation_space), np.stack(rewards), np.stack(dones), infos

    def close(self) -> None:
        if self.closed:
            return
        try:
            if self._pending is not None:
                ray.get(self._pending)
            ray.get([a.close.remote() for a in self.actors])
        except ray.exceptions.RayError:   # a step that failed, an actor that died: the actors go all the same
            pass
        finally:
            for a in self.actors:
                ray.kill(a)
            self.closed = True

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        return self._each("render")

    def has_attr(self, attr_name: str) -> bool:
        return all(self._each("has_attr", None, attr_name))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return self._each("get_attr", indices, attr_name)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        self._each("set_attr", indices, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        return self._each("env_method", indices, method_name, method_args, method_kwargs)

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return self._each("is_wrapped", indices, wrapper_class)

