"""``batsched_py/Elastic-v0``: Perez et al., "Responsive Elastic Computing" -- which job class takes a
free core and, in mode ``elastic``, how many cores the pool holds for the next period.

Action: mode ``scheduling`` ``Discrete(2 * nb_vos)`` (the class); mode ``elastic``
``MultiDiscrete([2 * nb_vos, len(pool_steps)])`` (class, pool level).  See
:mod:`batsched_py.agents.elastic.mdp` for the decision points and the observation.  An episode
runs a workload (LPC-EGEE windows, ``scripts/reproduce_elastic.py``) to its end, or ``max_time``
seconds (truncated: the scheduler's option ``max_time``, its MDP's ``horizon``).

Reward after each action, at the next decision point: ``lam * W + (1 - lam) * X`` where W is the
responsiveness of the jobs finished since the last step and of the queued ones so far, and X the
fairness F (``second="fairness"``) or the utilisation U (``second="utilisation"``); see
responsiveness.py.  The classes' VOs are ``vos``, by default the busiest of the workloads: give
an agent the VOs of its training when it meets other workloads.  ``info`` at the end: the
per-class figures (first and last ``skip`` jobs left out), energy waste (J) and host switches.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Optional, Sequence

from .mdp import MODES, ElasticScheduler
from ...envs.core import BatsimEnv, EnvError, agent_scheduler
from .responsiveness import class_figures, fairness, step_responsiveness, utilisation

SECONDS = ("fairness", "utilisation")


def busiest_vos(workloads: Sequence[Path], field: str, n: int) -> list[Any]:
    """The ``n`` values of job field ``field`` with the most jobs over the workloads; a job without
    the field is refused (it would be put in the last class without a word)."""
    counts: Counter = Counter()
    for path in workloads:
        try:
            jobs = json.loads(Path(path).read_text()).get("jobs", [])
        except (OSError, ValueError, AttributeError) as exc:
            raise EnvError(f"workloads: {path}: not a readable Batsim workload ({exc})") from None
        jobs = [j for j in jobs if isinstance(j, dict)]
        lacking = [j.get("id") for j in jobs if field not in j]
        if lacking:
            raise EnvError(f"workloads: {path}: {len(lacking)} job(s) have no field {field!r} (vo_field: the VO "
                           f"of each job), e.g. job {lacking[0]!r}")
        counts.update(j[field] for j in jobs)
    return [v for v, _ in counts.most_common(n)]


class ElasticEnv(BatsimEnv):
    def __init__(self, platform: "str | Path", workloads: "str | Path | Sequence[str | Path]", *,
                 mode: str = "scheduling", backend: str = "emulator", pool: int = 81, min_pool: int = 30,
                 period: float = 900.0, pool_steps: Sequence[int] = (-20, -10, 0, 10, 20), nb_vos: int = 4,
                 vo_field: str = "group", vos: Optional[Sequence[Any]] = None, runtimes: str = "oracle",
                 lam: float = 0.8, second: str = "fairness",
                 skip: int = 500, max_time: Optional[float] = None, output_prefix: Optional[str] = None):
        super().__init__(platform, workloads, backend, output_prefix)
        if mode not in MODES:
            raise EnvError(f"mode: {mode!r} is not one of {', '.join(MODES)}")
        if not isinstance(lam, (int, float)) or not 0 <= lam <= 1:
            raise EnvError(f"lam: {lam!r} is not a number in [0, 1]")
        if second not in SECONDS:
            raise EnvError(f"second: {second!r} is not one of {', '.join(SECONDS)}")
        if max_time is not None and (not isinstance(max_time, (int, float)) or not max_time > 0):
            raise EnvError(f"max_time: {max_time!r} is not a positive number")
        if isinstance(nb_vos, bool) or not isinstance(nb_vos, int) or nb_vos < 1:
            raise EnvError(f"nb_vos: {nb_vos!r} is not a positive integer")
        for name, value in (("pool", pool), ("min_pool", min_pool), ("skip", skip)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise EnvError(f"{name}: {value!r} is not a non-negative integer")
        if min_pool > pool:
            raise EnvError(f"min_pool: {min_pool} is more than pool ({pool}): the pool could never be that small")
        for name, value in (("pool", pool if mode == "scheduling" else 0), ("min_pool", min_pool)):
            if value > self.nb_hosts:
                raise EnvError(f"{name}: {value} hosts, the platform has {self.nb_hosts}")
        if not isinstance(vo_field, str):
            raise EnvError(f"vo_field: {vo_field!r} is not a job field name")
        found = busiest_vos(self.workloads, vo_field, nb_vos)      # (checks every job has the field)
        self.options = {"mode": mode, "pool": pool, "min_pool": min_pool, "period": period,
                        "pool_steps": list(pool_steps), "nb_vos": nb_vos, "vo_field": vo_field,
                        "runtimes": runtimes, "max_time": max_time,
                        "vos": found if vos is None else list(vos)}
        # (making the scheduler checks the options now, with its messages; its MDP gives the spaces and
        # the episode's end)
        self.take_mdp(self.make_scheduler(self.workloads[0]).mdp(self.nb_hosts))
        self.mode, self.lam, self.second, self.skip = mode, lam, second, skip

    def make_scheduler(self, workload: Optional[Path] = None) -> ElasticScheduler:
        options = dict(self.options)
        if options["runtimes"] == "oracle":
            options["workload"] = str(workload or self.workload)
        return agent_scheduler(ElasticScheduler, options)

    def reward(self) -> float:
        s = self.scheduler
        finished, s.completed = s.completed, []
        second = fairness(s) if self.second == "fairness" else utilisation(s)
        return self.lam * step_responsiveness(s, finished) + (1.0 - self.lam) * second

    def info(self) -> dict[str, Any]:
        s = self.scheduler
        return {**super().info(), "pool": s.pool_size, "queued": s.queued_count(),
                "energy_waste": self.meter.waste if self.meter else 0.0, "nb_switches": s.switches,
                "invalid_actions": s.invalid_actions}

    def episode_info(self) -> dict[str, Any]:
        return class_figures(self.scheduler, self.scheduler.interactive, self.skip)
