"""``batsched_py/VolunteerPool-v0``: Forshaw & McGough, "Reduction of wasted energy in a volunteer computing
system through Reinforcement Learning" -- where each HTC job runs on a pool of PCs whose users take
them back.

The platform, the HTC workload(s) and the logins (``events``, a Batsim ``--events`` file) come from
platforms/volunteer.py and workloads/volunteer.py.  One step per job to place: the action and
observation of :mod:`batsched_py.agents.volunteer.mdp` at level ``level`` (its MDP, for the
platform's rooms); ``info["action_mask"]`` says which actions are open (full PCs and rooms
removed), ``info["job"]`` which job is placed (its base id, shared by its resubmitted copies).
Reward after a step: the rewards of the runs that ended since the last step (completed
``(1 - sigma) + sigma * efficiency``, evicted or killed -1), and ``info["outcomes"]`` lists them
for a learner with its own sigma.  An episode ends with the workload (or at ``max_time`` s,
truncated: the scheduler's option, its MDP's ``horizon``); ``info`` then holds the good and
wasted energy (MWh), the mean overhead (min) and the eviction counts.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from .mdp import LEVELS, VolunteerScheduler
from ...models.errors import EmulatorError
from ...models.events_file import load_events
from ...models.platform import load_platform
from ...envs.core import BatsimEnv, EnvError, agent_scheduler


class VolunteerEnv(BatsimEnv):
    def __init__(self, platform: "str | Path", workloads: "str | Path | Sequence[str | Path]",
                 events: "str | Path", *, level: str = "cluster", sigma: float = 0.5, cycle: float = 300.0,
                 patience: float = 7 * 86400.0, seed: int = 0, backend: str = "emulator",
                 max_time: Optional[float] = None,
                 output_prefix: Optional[str] = None):
        super().__init__(platform, workloads, backend, output_prefix)
        if not Path(events).is_file():
            raise EnvError(f"events: {events} is not a file (a Batsim --events file of logins)")
        try:           # (read now: a bad line is named here, not in the first reset)
            load_events(events, nb_hosts=self.nb_hosts)
        except EmulatorError as exc:
            raise EnvError(f"events: {exc}") from None
        if level not in LEVELS:
            raise EnvError(f"level: {level!r} is not one of {', '.join(LEVELS)}")
        if isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not 0 <= sigma <= 1:
            raise EnvError(f"sigma: {sigma!r} is not a number in [0, 1]")
        if max_time is not None and (not isinstance(max_time, (int, float)) or not max_time > 0):
            raise EnvError(f"max_time: {max_time!r} is not a positive number")
        self.events, self.level, self.sigma = Path(events), level, sigma
        hosts = load_platform(self.platform, energy=True).hosts
        # the events file and switch times: the scheduler starts no switch that a login or logout falls
        # into (Batsim 4.2.1 would abort at the logout: mdp.py)
        switches = [(h.switch_off_time(s), h.switch_on_time(s)) for h in hosts for s in h.sleep_pstates]
        self.scheduler_options = {"level": level, "cycle": cycle, "patience": patience, "seed": seed,
                                  "events": str(self.events), "max_time": max_time}
        if switches:
            self.scheduler_options.update(switch_off_time=max(off for off, _ in switches),
                                          switch_on_time=max(on for _, on in switches))
        scheduler = self.make_scheduler()     # (checks the options now, with the scheduler's messages)
        try:
            nb_clusters = 1 + max(int(h.properties["cluster"]) for h in hosts if "cluster" in h.properties)
        except ValueError:
            raise EnvError(f"platform: {self.platform} is not a volunteer pool (no host property cluster): "
                           "generate one with platforms/volunteer.py") from None
        self.take_mdp(scheduler.mdp(self.nb_hosts, nb_clusters))

    def make_scheduler(self) -> VolunteerScheduler:
        return agent_scheduler(VolunteerScheduler, self.scheduler_options)

    def backend_inputs(self) -> dict[str, Any]:
        return {"events": [self.events], "flags": VolunteerScheduler.batsim_flags}

    def reward(self) -> float:
        return float(sum((1 - self.sigma) + self.sigma * o.efficiency if o.completed else -1.0
                         for o in self.scheduler.outcomes))

    def info(self) -> dict[str, Any]:
        s = self.scheduler
        outcomes, s.outcomes = s.outcomes, []
        return {**super().info(), "action_mask": s.action_mask(), "outcomes": outcomes, "job": s.job_key()}

    def episode_info(self) -> dict[str, Any]:
        return self.scheduler.figures()
