"""Generate homogeneous Batsim 4 / SimGrid 3.32 cluster platforms.

Energy model (Batsim's energy plugin): each host lists its pstates' speeds and,
in ``wattage_per_state``, ``idle:epsilon:allcores`` watts per pstate. Sleeping is
a pstate with a negligible speed; switching off and on are *virtual* pstates:
Batsim runs a 1-flop task on them, so a pstate of speed 1/T flop/s makes the
transition last T time units (as in Grid'5000's taurus_168 Batsim 4 file).
``sleep_pstates="sleep:off:on"`` names those three pstates.

There is no network: routing is Full with no links, enough for delay and
parallel_homogeneous profiles with ``com = 0``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from ..models.network import MAX_CLUSTER_HOSTS

MASTER_HOST = "master_host"
SLEEP_SPEED = 0.001  # flop/s: a sleeping host computes (practically) nothing


@dataclass(frozen=True)
class Pstate:
    speed: float      # flop per second (per time unit)
    idle: float       # watts when idle
    full: float       # watts with all cores busy
    epsilon: float | None = None  # watts with a tiny load; defaults to idle

    def wattage(self) -> str:
        eps = self.idle if self.epsilon is None else self.epsilon
        return f"{self.idle!r}:{eps!r}:{self.full!r}"


@dataclass
class ClusterSpec:
    """A homogeneous cluster; ``sleep_pstates`` is (sleep, off, on) indices or None."""

    nb_hosts: int
    pstates: list[Pstate]
    default_pstate: int = 0
    sleep_pstates: tuple[int, int, int] | None = None
    wattage_off: float | None = None
    cores: int = 1
    host_prefix: str = ""
    properties: dict[str, str] = field(default_factory=dict)

    def validate(self) -> None:
        if self.nb_hosts < 1 or self.cores < 1:
            raise ValueError("nb_hosts and cores must be >= 1")
        if self.nb_hosts > MAX_CLUSTER_HOSTS:
            raise ValueError(f"{self.nb_hosts:,} hosts, more than the {MAX_CLUSTER_HOSTS:,} the emulator builds")
        if not self.pstates or any(p.speed <= 0 for p in self.pstates):
            raise ValueError("every pstate needs a speed > 0")
        used = [self.default_pstate, *(self.sleep_pstates or ())]
        if any(not 0 <= i < len(self.pstates) for i in used):
            raise ValueError(f"pstate index out of range 0..{len(self.pstates) - 1}")
        if self.default_pstate in (self.sleep_pstates or ()):
            raise ValueError(f"hosts would start in sleep or switching pstate {self.default_pstate}: Batsim 4.2.1 "
                             "with -E aborts at the first job on them")


def energy_cluster(nb_hosts: int, speeds: list[float], idle_w: float | list[float],
                   compute_w: float | list[float], sleep_w: float, off_time: float, off_w: float,
                   on_time: float, on_w: float, cores: int = 1,
                   wattage_off: float | None = None) -> ClusterSpec:
    """Computing pstates 0..k-1 (one per speed), then sleep, switching-off, switching-on.

    This is the layout of Batsim's energy_platform_homogeneous_no_net_*.xml.
    """
    k = len(speeds)
    idles = idle_w if isinstance(idle_w, list) else [idle_w] * k
    fulls = compute_w if isinstance(compute_w, list) else [compute_w] * k
    if len(idles) != k or len(fulls) != k:
        raise ValueError("one idle and one compute wattage per speed")
    if off_time <= 0 or on_time <= 0:
        raise ValueError("switching times must be > 0")
    pstates = [Pstate(s, i, f) for s, i, f in zip(speeds, idles, fulls)]
    pstates += [Pstate(SLEEP_SPEED, sleep_w, sleep_w), Pstate(1.0 / off_time, off_w, off_w),
                Pstate(1.0 / on_time, on_w, on_w)]
    return ClusterSpec(nb_hosts, pstates, 0, (k, k + 1, k + 2),
                       sleep_w if wattage_off is None else wattage_off, cores)


def taurus_cluster(nb_hosts: int = 16, off_time: float = 3, on_time: float = 1) -> ClusterSpec:
    """Grid'5000 Lyon Taurus energy profile as used by the research runs.

    95 W idle, 190 W computing, 9 W asleep (and off), switching off takes
    ``off_time`` time units at 101 W, switching on ``on_time`` at 125 W, 1 Mflop/s,
    12 cores. Times are in the workload's unit: the research uses minutes
    (one simulated second stands for one minute). Pstate layout follows
    taurus_168_batsim4.xml: 0 sleep, 1 compute (default), 2 switching on,
    3 switching off, so schedulers configured for that file work unchanged.
    """
    pstates = [Pstate(SLEEP_SPEED, 9.0, 9.0), Pstate(1e6, 95.0, 190.0),
               Pstate(1.0 / on_time, 125.0, 125.0), Pstate(1.0 / off_time, 101.0, 101.0)]
    return ClusterSpec(nb_hosts, pstates, default_pstate=1, sleep_pstates=(0, 3, 2),
                       wattage_off=9.0, cores=12)


def plain_cluster(nb_hosts: int, speed: float, cores: int = 1) -> ClusterSpec:
    """A cluster without energy properties (do not run Batsim with -E on it)."""
    return ClusterSpec(nb_hosts, [Pstate(speed, 0.0, 0.0)], cores=cores)


def _host(host_id: str, spec: ClusterSpec, extra: dict[str, str], energy: bool) -> list[str]:
    speeds = ", ".join(f"{p.speed!r}f" for p in spec.pstates)
    core = f' core="{spec.cores}"' if spec.cores > 1 else ""
    lines = [f'    <host id={quoteattr(host_id)} pstate="{spec.default_pstate}" speed="{speeds}"{core}>']
    props = dict(extra)
    if energy:
        props["wattage_per_state"] = ", ".join(p.wattage() for p in spec.pstates)
        props["wattage_off"] = repr(spec.wattage_off if spec.wattage_off is not None
                                    else spec.pstates[spec.default_pstate].idle)
        if spec.sleep_pstates:
            props["sleep_pstates"] = ":".join(str(i) for i in spec.sleep_pstates)
    lines += [f"      <prop id={quoteattr(k)} value={quoteattr(v)}/>" for k, v in props.items()]
    lines.append("    </host>")
    return lines


def platform_xml(spec: ClusterSpec, energy: bool = True, zone_id: str = "AS0") -> str:
    """Render the SimGrid 4.1 XML of a cluster with a master host first."""
    spec.validate()
    energy = energy and any(p.full or p.idle for p in spec.pstates)
    lines = ['<?xml version="1.0"?>',
             '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">',
             f'  <zone id={quoteattr(zone_id)} routing="Full">']
    lines += [f"    <prop id={quoteattr(k)} value={quoteattr(v)}/>" for k, v in spec.properties.items()]
    # No role property on it: Batsim makes the host named master_host the master itself and
    # aborts on "master,master" when the host also says role=master.
    lines += _host(MASTER_HOST, spec, {}, energy)
    for i in range(spec.nb_hosts):
        lines += _host(f"{spec.host_prefix}{i}", spec, {}, energy)
    lines += ["  </zone>", "</platform>", ""]
    return "\n".join(lines)
