"""The Gymnasium face over an agent scheduler: reset/step drive a backend one request at a time.

An episode simulates one workload file (drawn with the environment's seeded generator, or
``reset(options={"workload": path})``) with a fresh agent scheduler.  Between two actions the
simulation runs, Batsim's requests answered by the scheduler's ordinary policy, until the next
decision point; then the observation goes to the agent and its action becomes decisions in the
reply.  The scheduler's MDP gives the spaces and where an episode is truncated (a simulated time,
or a number of decisions); an environment adds the reward.  Nothing here touches a socket: the
backend (backends.py) is the only I/O.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..models.errors import EmulatorError
from ..models.platform import PlatformError, load_platform
from ..models.workload import load_workload
from ..errors import BatschedError
from ..policies.agent import MDP, AgentMixin
from ..scheduler import Session
from .backends import BACKENDS, Backend, make_backend
from .meter import EnergyMeter

S = TypeVar("S", bound=AgentMixin)


class EnvError(BatschedError, ValueError):
    """A bad environment argument: names the argument and what is wrong with it."""


def workload_files(workloads: "str | Path | Sequence[str | Path]") -> list[Path]:
    """Workload files from paths and folders (every ``*.json`` in a folder, sorted)."""
    if isinstance(workloads, (str, Path)):
        workloads = [workloads]
    if not isinstance(workloads, (list, tuple)):
        raise EnvError(f"workloads: {workloads!r} is not a path or a list of paths")
    files: list[Path] = []
    for w in workloads:
        if not isinstance(w, (str, Path)):
            raise EnvError(f"workloads: {w!r} is not a path")
        path = Path(w)
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            if not found:
                raise EnvError(f"workloads: folder {path} holds no *.json workload")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise EnvError(f"workloads: {path} is neither a workload file nor a folder")
    if not files:
        raise EnvError("workloads: give at least one workload file or folder")
    return files


def platform_hosts(platform: "str | Path") -> tuple[Path, int, dict[str, str]]:
    """The platform's path, its number of compute hosts and its zone properties.  Checked now, as
    Batsim -E reads it (a bad platform is an error at construction, not in the first reset): the
    environments switch nodes off, so every compute host needs sleep pstates."""
    if not isinstance(platform, (str, Path)):
        raise EnvError(f"platform: {platform!r} is not a path")
    path = Path(platform)
    if not path.is_file():
        raise EnvError(f"platform: {path} is not a file")
    try:
        plat = load_platform(path, energy=True)
    except (EmulatorError, PlatformError) as exc:
        raise EnvError(f"platform: {exc}") from None
    mute = [h.name for h in plat.hosts if not h.sleep_pstates]
    if mute:
        raise EnvError(f"platform: {path}: the environments need hosts with sleep pstates (property "
                       f"sleep_pstates); {len(mute)} host(s) have none, e.g. {mute[0]}")
    return path, plat.nb_hosts, dict(plat.hosts[0].zone_properties) if plat.hosts else {}


# workloads read whole already in this process: (path, size, mtime, platform hosts)
_CHECKED: set[tuple[str, int, int, int]] = set()


def check_workloads(files: Sequence[Path], nb_hosts: int) -> None:
    """Read every workload as the emulator will (invalid JSON, a NaN subtime, a job larger than the
    platform...): a bad day is named now, not in the episode that draws it, in an actor process."""
    for path in files:
        try:
            stat = path.stat()
        except OSError as exc:
            raise EnvError(f"workloads: {path}: {exc.strerror}") from None
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, nb_hosts)
        if key in _CHECKED:
            continue
        try:
            load_workload(path, "w0", nb_hosts=nb_hosts)
        except EmulatorError as exc:
            raise EnvError(f"workloads: {exc}") from None
        _CHECKED.add(key)


def node_size(cores_per_node: Any, nb_hosts: int) -> int:
    """``cores_per_node`` checked against the platform: a node larger than it would make every
    action but one meaningless (the whole platform a single node)."""
    if isinstance(cores_per_node, bool) or not isinstance(cores_per_node, int) or cores_per_node < 1:
        raise EnvError(f"cores_per_node: {cores_per_node!r} is not a positive integer")
    if cores_per_node > nb_hosts:
        raise EnvError(f"cores_per_node: {cores_per_node} is more than the platform's {nb_hosts} hosts")
    return cores_per_node


def reset_options(options: Any, known: Sequence[str]) -> dict[str, Any]:
    """``reset(options=...)`` checked: a dict of known keys (a misspelt one would be ignored)."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise EnvError(f"reset(options={options!r}): not a dict")
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise EnvError(f"reset(options=...): unknown key(s) {', '.join(map(repr, unknown))}; this environment's: "
                       f"{', '.join(map(repr, known))}")
    return options


def agent_scheduler(cls: Callable[[Mapping[str, Any]], S], options: Mapping[str, Any]) -> S:
    """``cls(options)``, its refusal of an option (a ValueError) as an EnvError."""
    try:
        return cls(options)
    except ValueError as exc:
        raise EnvError(str(exc)) from None


def spaces_of(mdp: MDP) -> tuple[spaces.Space, spaces.Space]:
    """(observation space, action space) of a decision-point scheduler's MDP."""
    if mdp.levels:
        observation: spaces.Space = spaces.MultiDiscrete(list(mdp.levels))
    elif isinstance(mdp.shape, Mapping):
        observation = spaces.Dict({k: spaces.Box(0.0, mdp.high, shape, np.float32) for k, shape in mdp.shape.items()})
    else:
        observation = spaces.Box(0.0, mdp.high, mdp.shape, np.float32)
    action = (spaces.Discrete(mdp.actions) if isinstance(mdp.actions, int)
              else spaces.MultiDiscrete(list(mdp.actions)))
    return observation, action


def weight(name: str, value: Any) -> float:
    """A reward weight: a finite number (a NaN would make every reward NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise EnvError(f"{name}: {value!r} is not a finite number")
    return float(value)


class BatsimEnv(gym.Env):
    """Base of the environments: subclasses make the scheduler and the reward; the scheduler's MDP
    (:meth:`take_mdp`) gives the spaces and where an episode is truncated."""

    metadata = {"render_modes": []}

    def __init__(self, platform: "str | Path", workloads: "str | Path | Sequence[str | Path]",
                 backend: str = "emulator", output_prefix: Optional[str] = None):
        if backend not in BACKENDS:
            raise EnvError(f"backend {backend!r}: choose one of {', '.join(BACKENDS)}")
        if output_prefix is not None and (not isinstance(output_prefix, str) or not output_prefix.strip()):
            raise EnvError(f"output_prefix: {output_prefix!r} is not a file prefix (e.g. 'out/episode')")
        self.platform, self.nb_hosts, self.zone_properties = platform_hosts(platform)
        self.workloads = workload_files(workloads)
        check_workloads(self.workloads, self.nb_hosts)
        self.backend_name = backend
        self.output_prefix = output_prefix
        self.scheduler: Any = None
        self.mdp: Optional[MDP] = None      # (set by take_mdp())
        # (set by reset(): one per episode)
        self.session: Any = None
        self.backend: Optional[Backend] = None
        self.meter: Any = None
        # the hosts of each multi-core node (set by environments of nodes; empty: one core a host):
        # its idle cores are not waste while it computes (see meter.py)
        self.masks: list[int] = []
        self.workload: Optional[Path] = None
        self.steps = 0
        self.ended = True

    # --- what subclasses define -------------------------------------------------------------
    def make_scheduler(self) -> AgentMixin:
        raise NotImplementedError

    def reward(self) -> float:
        raise NotImplementedError

    def make_meter(self) -> EnergyMeter:
        return EnergyMeter(self.scheduler, self.masks or None)

    def episode_info(self) -> dict[str, Any]:
        return {}

    def simulated_workload(self, workload: Path) -> Path:
        """The file the simulation reads for ``workload`` (an environment may prepare a copy)."""
        return workload

    def after_action(self) -> None:
        """Called once the agent's action became decisions, before the simulation moves on."""

    def backend_inputs(self) -> dict[str, Any]:
        """More inputs of the simulation (make_backend's ``events`` and ``flags``)."""
        return {}

    # --- the MDP ---------------------------------------------------------------------------------
    def take_mdp(self, mdp: MDP) -> None:
        """The spaces and the episode's end of the scheduler's ``mdp`` (subclasses call it once)."""
        self.mdp = mdp
        self.observation_space, self.action_space = spaces_of(mdp)

    def truncated(self) -> bool:
        """Whether the episode stops here: its MDP's number of decisions made, or its horizon reached."""
        mdp = self.mdp
        assert mdp is not None
        return ((mdp.max_steps is not None and self.steps >= mdp.max_steps)
                or (mdp.horizon is not None and self.scheduler.now >= mdp.horizon))

    # --- Gymnasium's contract -----------------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict[str, Any]] = None):
        super().reset(seed=seed)
        self._close_backend()
        workload = reset_options(options, ("workload",)).get("workload")
        if workload is None:
            workload = self.workloads[int(self.np_random.integers(len(self.workloads)))]
        elif not Path(workload).is_file():
            raise EnvError(f"reset(options={{'workload': ...}}): {workload} is not a workload file")
        self.workload = Path(workload)
        simulated = self.simulated_workload(self.workload)
        self.scheduler = self.make_scheduler()
        self.scheduler.workload_path = str(simulated)
        self.session = Session(self.scheduler)
        self.meter = self.make_meter()
        self.steps = 0
        self.ended = False
        self.backend = make_backend(self.backend_name, self.platform, simulated, energy=True,
                                    output_prefix=self.output_prefix, **self.backend_inputs())
        self._receive(self.backend.start())
        self._run_to_decision()
        return self.observe(), self.info()

    def step(self, action: Any):
        if self.scheduler is None or self.ended:
            raise EnvError("step() after the episode ended (or before reset()): call reset() first")
        self.scheduler.act(action)
        self.after_action()
        self.steps += 1
        try:
            self._run_to_decision()
        except BaseException:
            # (the backend or the scheduler failed: the episode is over, and a later step says so
            # rather than 'act() outside a decision point')
            self.ended = True
            self._close_backend()
            raise
        reward = self.reward()
        truncated = not self.ended and self.truncated()
        terminated = self.ended
        if truncated:
            self.ended = True
        info = self.info()
        if self.ended:
            info.update(self.episode_info())
            self._close_backend()
        return self.observe(), reward, terminated, truncated, info

    def observe(self) -> Any:
        return self.scheduler.observe()

    def info(self) -> dict[str, Any]:
        return {"time": self.scheduler.now, "workload": str(self.workload)}

    def close(self) -> None:
        self._close_backend()
        self.ended = True
        super().close()

    # --- the simulation between decision points -------------------------------------------------
    def _run_to_decision(self) -> None:
        s, session, backend, meter = self.scheduler, self.session, self.backend, self.meter
        assert backend is not None
        while not s.awaiting:
            meter.snapshot()
            request = backend.send(session.respond())
            if request is None:
                self.ended = True
                return
            self._receive(request)

    def _receive(self, request) -> None:
        self.meter.advance(request.now)
        self.session.receive(request)

    def _close_backend(self) -> None:
        if self.backend is not None:
            backend, self.backend = self.backend, None
            backend.close()

    def __del__(self) -> None:
        try:
            self._close_backend()
        except Exception:
            pass
