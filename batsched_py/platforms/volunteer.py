"""A multi-use volunteer pool (Forshaw & McGough's Newcastle HTCondor pool): clusters of PCs in open-access
rooms, each with opening hours, a machine type and a popularity, and its Batsim platform.

Machine types (the paper's Table 1; active / idle / sleep watts): Normal 57/40/2 W, High End
114/67/3 W, Legacy 100-180/50-80/4 W (drawn per cluster).  An HTC job takes a whole PC (one Batsim
host per PC: the energy an HTC run costs is the PC's active power for its duration).  Every PC has
speed 1 flop/s, so a job's ``parallel_homogeneous`` cpu amount is its runtime in seconds.  Sleeping
is pstate 1; switching off takes 10 s and on 30 s (pstates 2 and 3).  Host properties carry what the
scheduler reads: ``cluster`` (index), ``kind``, ``active_w``, ``opens`` and ``closes`` (hours; 0 and
24 for a room open round the clock), ``weekends`` (1 if open on Saturdays and Sundays).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .generate import MASTER_HOST, ClusterSpec, Pstate, SLEEP_SPEED, _host
from ..errors import BatschedError

#: (active, idle, sleep) watts, each a (low, high) range drawn once per cluster
MACHINE_TYPES = {"normal": ((57, 57), (40, 40), 2.0), "high_end": ((114, 114), (67, 67), 3.0),
                 "legacy": ((100, 180), (50, 80), 4.0)}
#: share of the clusters of each type
TYPE_SHARES = {"normal": 0.6, "high_end": 0.25, "legacy": 0.15}
#: opening hours (opens, closes, open at weekends) and share of the rooms with them
OPENING = (((0, 24, 1), 0.2), ((8, 22, 1), 0.4), ((9, 17, 0), 0.4))
OFF_TIME, ON_TIME = 10.0, 30.0


class PoolError(BatschedError, ValueError):
    """A bad pool parameter, named."""


@dataclass(frozen=True)
class Cluster:
    name: str
    nb_pcs: int
    kind: str
    active_w: float
    idle_w: float
    sleep_w: float
    opens: int
    closes: int
    weekends: bool
    popularity: float     # relative login rate per PC (1 = average room)

    def is_open(self, hour: float, weekday: int) -> bool:
        return (self.weekends or weekday < 5) and self.opens <= hour < self.closes


def generate_pool(nb_pcs: int = 1359, nb_clusters: int = 37, seed: int = 0) -> list[Cluster]:
    """``nb_pcs`` PCs in ``nb_clusters`` rooms of random sizes (at least 1 PC each)."""
    for name, value in (("nb_pcs", nb_pcs), ("nb_clusters", nb_clusters)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise PoolError(f"{name}: {value!r} is not a positive integer")
    if nb_clusters > nb_pcs:
        raise PoolError(f"nb_clusters: {nb_clusters} rooms need at least as many PCs (nb_pcs={nb_pcs})")
    rng = np.random.default_rng(seed)
    sizes = 1 + rng.multinomial(nb_pcs - nb_clusters, rng.dirichlet(np.full(nb_clusters, 2.0)))
    kinds = rng.choice(list(TYPE_SHARES), nb_clusters, p=list(TYPE_SHARES.values()))
    hours = rng.choice(len(OPENING), nb_clusters, p=[s for _, s in OPENING])
    popularity = rng.lognormal(0.0, 0.6, nb_clusters)
    popularity /= popularity.mean()
    clusters = []
    for i in range(nb_clusters):
        (a_lo, a_hi), (i_lo, i_hi), sleep = MACHINE_TYPES[kinds[i]]
        u = rng.random()
        opens, closes, weekends = OPENING[hours[i]][0]
        clusters.append(Cluster(f"room{i}", int(sizes[i]), str(kinds[i]), round(a_lo + u * (a_hi - a_lo), 1),
                                round(i_lo + u * (i_hi - i_lo), 1), sleep, opens, closes, bool(weekends),
                                round(float(popularity[i]), 3)))
    return clusters


def _spec(c: Cluster) -> ClusterSpec:
    pstates = [Pstate(1.0, c.idle_w, c.active_w), Pstate(SLEEP_SPEED, c.sleep_w, c.sleep_w),
               Pstate(1.0 / OFF_TIME, c.idle_w, c.idle_w), Pstate(1.0 / ON_TIME, c.active_w, c.active_w)]
    return ClusterSpec(c.nb_pcs, pstates, 0, (1, 2, 3), c.sleep_w)


def pool_platform_xml(clusters: list[Cluster]) -> str:
    """The SimGrid 4.1 platform: a master host, then the PCs, cluster after cluster."""
    lines = ['<?xml version="1.0"?>', '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', '  <zone id="AS0" routing="Full">']
    lines += _host(MASTER_HOST, _spec(clusters[0]), {}, True)
    for k, c in enumerate(clusters):
        spec = _spec(c)
        props = {"cluster": str(k), "kind": c.kind, "active_w": repr(c.active_w), "opens": str(c.opens),
                 "closes": str(c.closes), "weekends": str(int(c.weekends))}
        for i in range(c.nb_pcs):
            lines += _host(f"{c.name}_{i}", spec, props, True)
    lines += ["  </zone>", "</platform>", ""]
    return "\n".join(lines)


def write_pool_platform(clusters: list[Cluster], path: "str | Path") -> Path:
    path = Path(path)
    path.write_text(pool_platform_xml(clusters))
    return path


__all__ = ["Cluster", "PoolError", "MACHINE_TYPES", "generate_pool", "pool_platform_xml", "write_pool_platform"]
