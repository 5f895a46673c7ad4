"""SimGrid platform XML -> typed :class:`Platform`, as Batsim 4.2.1 sees it; the one reader of
platform files (the emulator's :func:`load_platform`, the energy figures of :func:`host_powers`,
the XML of :func:`parse_xml` that the platform upgrade rewrites).

Only what Batsim needs is modelled: hosts (from ``<host>`` and ``<cluster>``),
their pstates (speed + SimGrid energy-plugin wattage), Batsim's sleep pstates,
host/zone properties and roles, and the route each host's 1-byte messages take to
the master host (:mod:`.network`; on a platform without links, just the master
host's loopback link).  The engine refuses communicating profiles on platforms
with links.

Compute-host ids follow Batsim: SimGrid hands hosts over sorted by name
(plain byte-wise string order: host0, host1, host10, host100, ...), the
master host (``role=master``, or named by ``--master-host``, ``master_host`` by default: Batsim
appends "master" to that host's role, so a ``role`` property there makes it abort) and storage hosts
(``role=storage``) are set aside, the remaining ones get ids 0..n-1 in that
order, and ``--mmax N`` keeps only the first N of them.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from .power import PowerModel, PowerModelError, read_power_model, read_pstates, read_sleep_pstates
from .network import (DEFAULT_LOOPBACK_BW, NotModelled, Route, Unroutable, message_routes, radical_ids,
                      split_quantity)
from ..errors import BatschedError
from ..textfiles import not_utf8

__all__ = [
    "PlatformError",
    "NoMasterHost",
    "PState",
    "SleepSpec",
    "Host",
    "Platform",
    "load_platform",
    "parse_xml",
    "HostPower",
    "host_powers",
    "parse_speed",
    "compute_resources_json",
]

MASTER_HOST_NAME = "master_host"  # Batsim's default --master-host
# Zones where SimGrid 3.32 (ptask_L07) gives every host without a route to itself its implicit
# loopback link, of bandwidth network/loopback-bw (10 GB/s unless configured).
_LOOPBACK_ROUTINGS = ("Full", "Floyd", "Dijkstra", "DijkstraCache")

# SimGrid's speed units (xbt parse_units), value in flop/s.
_SPEED_UNITS = {
    "f": 1.0, "flops": 1.0,
    "kf": 1e3, "kiloflops": 1e3,
    "Mf": 1e6, "megaflops": 1e6,
    "Gf": 1e9, "gigaflops": 1e9,
    "Tf": 1e12, "teraflops": 1e12,
    "Pf": 1e15, "petaflops": 1e15,
    "Ef": 1e18, "exaflops": 1e18,
    "Zf": 1e21, "zettaflops": 1e21,
    "Yf": 1e24, "yottaflops": 1e24,
}


class PlatformError(BatschedError, ValueError):
    """Invalid platform (or platform XML); the message names the file, the element and the problem."""


class NoMasterHost(PlatformError):
    """No host is the master: Batsim aborts unless --master-host names one."""


@dataclass(frozen=True, slots=True)
class PState:
    """One SimGrid pstate of a host.

    speed: flop/s per core. idle: watts when no core computes. epsilon: watts
    with a vanishing load (0+). all_cores: watts with every core busy. With
    the two-value wattage form ``idle:all_cores`` SimGrid sets epsilon = idle.
    Watts are 0.0 when the host has no wattage property.
    """

    speed: float
    idle: float = 0.0
    epsilon: float = 0.0
    all_cores: float = 0.0


@dataclass(frozen=True, slots=True)
class SleepSpec:
    """One ``sleep_pstates`` triple ``sleep:off:on``.

    sleep_pstate: the pstate the host sits in while asleep. off_pstate /
    on_pstate: Batsim's *virtual* pstates; switching off (resp. on) means
    computing 1 flop on one core at that pstate, so it lasts 1/speed seconds
    and draws that pstate's power.
    """

    sleep_pstate: int
    off_pstate: int
    on_pstate: int


@dataclass(frozen=True, slots=True)
class Host:
    """A host of the platform.

    id: Batsim machine id (compute hosts), -1 for master/storage hosts.
    properties: the XML ``<prop>``s as strings, with Batsim's ``role`` key
    first ("" when absent). zone_properties: ``<prop>``s of the innermost
    enclosing zone. wattage_off: watts when off, None if not given.
    """

    id: int
    name: str
    core_count: int
    pstates: tuple[PState, ...]
    default_pstate: int
    wattage_off: float | None
    sleep_pstates: tuple[SleepSpec, ...]
    properties: dict[str, str] = field(hash=False, compare=False)
    zone_properties: dict[str, str] = field(hash=False, compare=False)
    role: str = ""
    # The sleep and virtual (switch) pstates as sets: the emulator asks for each host of each
    # SET_RESOURCE_STATE, so the triples are not scanned per question.
    _sleep: frozenset = field(init=False, repr=False, hash=False, compare=False)
    _virtual: frozenset = field(init=False, repr=False, hash=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sleep", frozenset(s.sleep_pstate for s in self.sleep_pstates))
        object.__setattr__(self, "_virtual", frozenset(
            p for s in self.sleep_pstates for p in (s.off_pstate, s.on_pstate)))

    def sleep_spec(self, sleep_pstate: int) -> SleepSpec | None:
        """The triple whose sleep pstate is ``sleep_pstate``, or None."""
        for spec in self.sleep_pstates:
            if spec.sleep_pstate == sleep_pstate:
                return spec
        return None

    def is_sleep_pstate(self, pstate: int) -> bool:
        return pstate in self._sleep

    def is_virtual_pstate(self, pstate: int) -> bool:
        """True for switch-off / switch-on pstates (not settable by schedulers)."""
        return pstate in self._virtual

    def is_compute_pstate(self, pstate: int) -> bool:
        return 0 <= pstate < len(self.pstates) and pstate not in self._sleep and pstate not in self._virtual

    def switch_off_time(self, spec: SleepSpec) -> float:
        """Seconds to fall asleep through ``spec``: 1 flop at the off pstate."""
        return 1.0 / self.pstates[spec.off_pstate].speed

    def switch_on_time(self, spec: SleepSpec) -> float:
        """Seconds to wake up through ``spec``: 1 flop at the on pstate."""
        return 1.0 / self.pstates[spec.on_pstate].speed


@dataclass(frozen=True, slots=True)
class Platform:
    """A loaded platform.

    hosts: compute hosts, ``hosts[i].id == i`` (Batsim's order, --mmax applied).
    master_host: name of the master host. storage_hosts: hosts with role
    storage (ids -1). has_energy: every compute host has a wattage list.
    master_loopback_bw: bandwidth (B/s) of the link Batsim's master-host actors cross to reach
    the server, also on the master host: SimGrid's implicit loopback, 0 when there is none.
    """

    path: str
    hosts: tuple[Host, ...]
    master_host: str
    storage_hosts: tuple[Host, ...] = ()
    master_loopback_bw: float = 0.0
    routes: Optional[tuple[Route, ...]] = None
    master_route: Optional[Route] = None
    network_note: str = ""

    @property
    def nb_hosts(self) -> int:
        return len(self.hosts)

    @property
    def has_energy(self) -> bool:
        return all(h.pstates[0].all_cores or h.pstates[0].idle for h in self.hosts)


@dataclass(frozen=True)
class HostPower:
    """What wasted-energy accounting reads of a compute host: its energy model, read and checked as
    a scheduler reads it (:func:`.power.read_power_model`), and its default pstate."""
    host: str
    model: PowerModel
    default_pstate: int

    @property
    def idle_w(self) -> float:
        return self.model.pstates[self.default_pstate].idle

    @property
    def compute_w(self) -> float:
        return self.model.pstates[self.default_pstate].all_cores

    @property
    def can_sleep(self) -> bool:
        return self.model.can_sleep()

    def state_w(self, which: str) -> float:
        """Watts while sleeping / switching off / switching on (its first sleep_pstates entry)."""
        if not self.model.sleep:
            return float("nan")
        first = self.model.sleep[0]
        index = {"sleep": first.sleep, "off": first.switch_off, "on": first.switch_on}[which]
        return self.model.pstates[index].idle


def parse_speed(text: str, *, where: str = "") -> float:
    """Parse one SimGrid speed (``"100.0Mf"``, ``"1e-9Mf"``, ``"0.5f"``) in flop/s."""
    quantity = split_quantity(text)
    if quantity is None:
        raise PlatformError(f"{where}: invalid speed {text!r}")
    value, unit = quantity
    if unit not in _SPEED_UNITS:
        raise PlatformError(f"{where}: unknown speed unit {unit!r} in {text!r} "
                            f"(known: {', '.join(_SPEED_UNITS)})")
    speed = value * _SPEED_UNITS[unit]
    if not speed > 0 or math.isinf(speed):
        raise PlatformError(f"{where}: speed must be positive and finite, got {text!r}")
    return speed


def load_platform(path: str | Path, *, mmax: int = 0, energy: bool = False,
                  master_host: str = MASTER_HOST_NAME) -> Platform:
    """Load a SimGrid platform file the way Batsim 4.2.1 does.

    mmax: Batsim's ``--mmax`` (0 = keep every compute host). energy: Batsim's
    ``-E``; then SimGrid's energy plugin is loaded, which requires a wattage
    list with one entry per pstate on every host (master included). Without
    ``-E`` bad wattage lists are tolerated, as in Batsim, and watts read 0.
    Raises PlatformError (file, element, problem) on any inconsistency.
    """
    path = str(path)
    root, master, compute, storage_raw = _read_hosts(path, master_host)
    storage = [_build_host(r, -1, path, energy) for r in storage_raw]
    if mmax < 0:
        raise PlatformError(f"{path}: --mmax must be >= 0, got {mmax}")
    if mmax and len(compute) > mmax:
        compute = compute[:mmax]
    if not compute:
        raise PlatformError(f"{path}: no compute host")
    _build_host(master, -1, path, energy)  # validated like any host by SimGrid
    hosts = tuple(_build_host(r, i, path, energy) for i, r in enumerate(compute))
    if energy:
        asleep = [h for h in hosts if not h.is_compute_pstate(h.default_pstate)]
        if asleep:
            raise PlatformError(f"{path}: {starting_asleep(asleep)}")
    loopback_bw = _loopback_bw(root, master)
    routes: Optional[tuple[Route, ...]] = None
    master_route: Optional[Route] = None
    note = ""
    if not _network_free(root):
        try:
            host_routes, master_route = message_routes(root, master.name, [h.name for h in hosts])
        except NotModelled as exc:
            note = str(exc)
        except Unroutable as exc:
            raise PlatformError(f"{path}: {exc}: real Batsim (SimGrid 3.32) cannot route its messages and "
                                "aborts") from None
        else:
            if any(not r.instant for r in host_routes) or master_route.latency > 0.0:
                routes = tuple(host_routes)
            else:     # messages as on platforms without links: the master's route, if any, at once
                loopback_bw = master_route.rate
                master_route = None
    return Platform(path=path, hosts=hosts, master_host=master.name, storage_hosts=tuple(storage),
                    master_loopback_bw=loopback_bw, routes=routes, master_route=master_route,
                    network_note=note)


def host_powers(path: str | Path) -> list[HostPower]:
    """The energy description of every compute host of the platform file ``path`` (hosts without
    wattage are skipped), in Batsim's order; the model is checked as a scheduler checks it."""
    path = str(path)
    hosts = []
    for r in _read_hosts(path, MASTER_HOST_NAME)[2]:
        try:
            model = read_power_model(r.props, r.name)
        except PowerModelError as exc:
            raise PlatformError(f"{path}: {exc}") from None
        if model is None:
            continue
        pstate = r.pstate
        if not (pstate.isascii() and pstate.isdigit() and int(pstate) < len(model.pstates)):
            raise PlatformError(f"{path}: <host id={r.name!r}> pstate={pstate!r} is not one of its "
                                f"{len(model.pstates)} pstates (0 to {len(model.pstates) - 1})")
        hosts.append(HostPower(r.name, model, int(pstate)))
    return hosts


def parse_xml(path: str | Path, *, comments: bool = True) -> ET.ElementTree[ET.Element]:
    """Parse the XML file ``path`` (keeping its comments unless ``comments`` is False); errors
    name the file, line and column.

    Leading blank lines before ``<?xml`` are tolerated (SimGrid accepts them, and some Batsim 3
    files have one, which strict parsers reject); line numbers still refer to the file.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise PlatformError(f"{path}: {not_utf8(exc)}") from None
    body = text.lstrip()
    skipped = text[:len(text) - len(body)].count("\n")
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=comments))
    try:
        parser.feed(body)
        return ET.ElementTree(parser.close())
    except ET.ParseError as exc:
        line, col = exc.position
        reason = str(exc).split(":")[0]
        raise PlatformError(f"{path}:{line + skipped}:{col}: invalid XML ({reason}): cannot parse the platform") from None


def _read_hosts(path: str, master_host: str) -> tuple[ET.Element, _RawHost, list[_RawHost], list[_RawHost]]:
    """The platform file's root and its hosts as Batsim sorts them: SimGrid's order (by name),
    the master host, the compute hosts and the storage hosts, before any check of their own."""
    try:
        root = parse_xml(path, comments=False).getroot()
    except OSError as exc:
        raise PlatformError(f"{path}: cannot read the platform ({exc.strerror or exc})") from None
    if root.tag != "platform":
        raise PlatformError(f"{path}: root element is <{root.tag}>, expected <platform>")

    raw: list[_RawHost] = []
    _walk(root, {}, "", raw, path)
    if not raw:
        raise PlatformError(f"{path}: no <host> or <cluster> element")
    names = [r.name for r in raw]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise PlatformError(f"{path}: host {dup!r}: defined twice")

    raw.sort(key=lambda r: r.name.encode())  # SimGrid's get_all_hosts order
    master = None
    compute: list[_RawHost] = []
    storage: list[_RawHost] = []
    for r in raw:
        role = _batsim_role(r, master_host, path)
        if role == "master":
            if master is not None:
                raise PlatformError(f"{path}: {r.element}: second master host (already {master.name!r}); "
                                    "real Batsim 4.2.1 aborts: 'There are two master hosts'")
            master = r
        elif role == "storage":
            storage.append(r)
        else:
            compute.append(r)
    if master is None:
        raise NoMasterHost(f"{path}: no master host (role=master or named {master_host!r}); real Batsim "
                            "4.2.1 aborts: 'Cannot find the \"master\" role in the platform file'")
    return root, master, compute, storage


def starting_asleep(hosts: Sequence[Host]) -> str:
    """Why Batsim 4.2.1 with -E cannot use compute ``hosts`` that start in a sleep or virtual
    pstate: it reports them idle, then aborts at the first job on one, and at a switch-off."""
    h = hosts[0]
    kind = "a sleep" if h.is_sleep_pstate(h.default_pstate) else "a virtual (switching)"
    awake = next((p for p in range(len(h.pstates)) if h.is_compute_pstate(p)), None)
    more = f" (and {len(hosts) - 1} more compute hosts)" if len(hosts) > 1 else ""
    return (f"host {h.name!r}{more} starts in pstate {h.default_pstate}, {kind} pstate: Batsim 4.2.1 with -E reports "
            f"it idle but aborts at the first job on it (\"Job '...': Invalid job allocation (...): machine {h.id} "
            f"(hostname='{h.name}') is not in a computation pstate (ps={h.default_pstate})\") and at a switch-off "
            f"(\"Switching from a sleep pstate to a non-computation pstate on machine {h.id} ('{h.name}') : "
            f"{h.default_pstate} -> ..., which is forbidden\"); declare a computation pstate"
            + (f" (pstate=\"{awake}\")" if awake is not None else "")
            + " or fix it with `batsched-py platform upgrade --awake`")


_ROLES = ("", "master", "compute_node", "storage")   # Batsim 4.2.1's roles ("": compute node)


def _batsim_role(r: _RawHost, master_host: str, path: str) -> str:
    """The role Batsim gives the host: its ``role`` property, and "master" for the host that
    --master-host names, appended after a comma when it has one. A role that is not one of
    Batsim's makes Batsim abort (an uncaught exception), "master,master" included."""
    role = r.props.get("role", "")
    if r.name == master_host:
        role = f"{role},master" if role else "master"
    if role not in _ROLES:
        hint = (f"; Batsim makes the host named by --master-host ({master_host!r}) the master itself, so that "
                "host must carry no role property" if r.name == master_host else "")
        raise PlatformError(f"{path}: {r.element}: real Batsim 4.2.1 aborts: cannot create any role from "
                            f"string description {role!r} (roles: master, compute_node, storage){hint}")
    return role


def compute_resources_json(platform: Platform) -> list[dict]:
    """The ``compute_resources`` array of Batsim 4.2.1's SIMULATION_BEGINS."""
    return [{"id": h.id, "name": h.name, "state": "idle",
             "properties": dict(h.properties), "zone_properties": dict(h.zone_properties)}
            for h in platform.hosts]


# --------------------------------------------------------------------------- parsing


@dataclass(slots=True)
class _RawHost:
    name: str
    speed: str
    core: str
    pstate: str
    props: dict[str, str]
    zone_props: dict[str, str]
    element: str  # for messages: '<host id="x">' / '<cluster id="c"> host "x"'
    routing: str = ""  # the routing of its zone


def _props_of(elem: ET.Element) -> dict[str, str]:
    return {p.get("id", ""): p.get("value", "") for p in elem if p.tag == "prop"}


def _walk(elem: ET.Element, zone_props: dict[str, str], routing: str, out: list[_RawHost],
          path: str) -> None:
    for child in elem:
        tag = child.tag
        if tag in ("zone", "AS"):
            _walk(child, _props_of(child), child.get("routing", ""), out, path)
        elif tag == "host":
            hid = child.get("id")
            if not hid:
                raise PlatformError(f"{path}: <host> without id attribute")
            out.append(_RawHost(hid, child.get("speed", ""), child.get("core", "1"),
                                child.get("pstate", "0"), _props_of(child), zone_props,
                                f"host {hid!r}", routing))
        elif tag in ("cluster", "cabinet"):
            _expand_cluster(child, out, path)


def _network_free(root: ET.Element) -> bool:
    """No link, backbone, cluster, cabinet or peer, and no Vivaldi coordinates but zeros: every
    message of Batsim's takes no time but the master host's own (see _loopback_bw)."""
    for elem in root.iter():
        if elem.tag in ("link", "backbone", "cluster", "cabinet", "peer", "host_link"):
            return False
        coords = elem.get("coordinates")
        if coords:
            try:
                if any(float(v) != 0.0 for v in coords.split()):
                    return False
            except ValueError:
                return False
    return True


def _loopback_bw(root: ET.Element, master: _RawHost) -> float:
    """Bandwidth of the master host's implicit loopback link (0: none). A 1-byte message between
    two actors of the master host crosses it, which takes simulated time (1e-10 s at 10 GB/s)."""
    if master.routing not in _LOOPBACK_ROUTINGS:
        return 0.0
    for route in root.iter("route"):
        if route.get("src") == master.name and route.get("dst") == master.name:
            return 0.0     # an explicit route (its links are not modelled)
    for config in root.iter("config"):
        for prop in config.iter("prop"):
            if prop.get("id") == "network/loopback-bw":
                try:
                    return float(prop.get("value", ""))
                except ValueError:
                    raise PlatformError(f"network/loopback-bw: only a plain number (B/s) is "
                                        f"supported, got {prop.get('value')!r}") from None
    return DEFAULT_LOOPBACK_BW


def _expand_cluster(elem: ET.Element, out: list[_RawHost], path: str) -> None:
    cid = elem.get("id", "?")
    radical = elem.get("radical")
    if radical is None:
        raise PlatformError(f"{path}: cluster {cid!r}: missing radical attribute")
    props = _props_of(elem)
    try:
        ids = radical_ids(radical)
    except ValueError as exc:
        raise PlatformError(f"{path}: cluster {cid!r}: bad radical {radical!r} ({exc})") from None
    for i in ids:
        name = f"{elem.get('prefix', '')}{i}{elem.get('suffix', '')}"
        # SimGrid gives every cluster host the cluster's <prop>s.
        out.append(_RawHost(name, elem.get("speed", ""), elem.get("core", "1"),
                            elem.get("pstate", "0"), dict(props), dict(props),
                            f"cluster {cid!r} host {name!r}"))


def _build_host(r: _RawHost, hid: int, path: str, energy: bool) -> Host:
    where = f"{path}: {r.element}"
    if not r.speed.strip():
        raise PlatformError(f"{where}: missing speed attribute")
    speeds = [parse_speed(s, where=where) for s in r.speed.split(",")]
    try:
        core = int(r.core)
        default = int(r.pstate)
    except ValueError:
        raise PlatformError(f"{where}: core/pstate attribute is not an integer") from None
    if core < 1:
        raise PlatformError(f"{where}: core count must be >= 1, got {core}")
    if not 0 <= default < len(speeds):
        raise PlatformError(f"{where}: pstate={default} but only {len(speeds)} pstate(s)")

    watts = _parse_wattage(r, len(speeds), where, strict=energy)
    pstates = tuple(PState(s, *w) for s, w in zip(speeds, watts))
    off = r.props.get("wattage_off", r.props.get("watt_off"))
    try:
        wattage_off = float(off) if off is not None else None
    except ValueError:
        raise PlatformError(f"{where}: wattage_off {off!r} is not a number") from None
    if energy and wattage_off is not None and not 0 <= wattage_off < math.inf:
        raise PlatformError(f"{where}: wattage_off {off!r}: watts must be finite and >= 0")

    # Batsim only reads sleep_pstates with -E.
    sleeps = (_parse_sleep_pstates(r.props.get("sleep_pstates", ""), len(speeds), where)
              if energy else ())
    props = {"role": r.props.get("role", "")}
    props.update(r.props)
    return Host(id=hid, name=r.name, core_count=core, pstates=pstates, default_pstate=default,
                wattage_off=wattage_off, sleep_pstates=sleeps, properties=props,
                zone_properties=dict(r.zone_props), role=props["role"])


def _parse_wattage(r: _RawHost, nb_pstates: int, where: str, *, strict: bool
                   ) -> list[tuple[float, float, float]]:
    """SimGrid energy plugin: ``idle:epsilon:all_cores`` or ``idle:all_cores`` per pstate."""
    text = r.props.get("wattage_per_state", r.props.get("watt_per_state"))
    zeros = [(0.0, 0.0, 0.0)] * nb_pstates
    if text is None:
        if strict:
            raise PlatformError(f"{where}: no wattage_per_state property (needed with -E)")
        return zeros
    try:
        watts = [(p.idle, p.epsilon, p.all_cores) for p in read_pstates(text, "bad wattage_per_state")]
        if len(watts) != nb_pstates:
            raise PowerModelError(f"bad wattage_per_state: {len(watts)} wattage entries for {nb_pstates} pstate(s)")
    except PowerModelError as exc:
        if strict:
            raise PlatformError(f"{where}: {exc}") from None
        return zeros
    return watts


def _parse_sleep_pstates(text: str, nb_pstates: int, where: str) -> tuple[SleepSpec, ...]:
    try:
        return tuple(SleepSpec(s.sleep, s.switch_off, s.switch_on)
                     for s in read_sleep_pstates(text, nb_pstates, where))
    except PowerModelError as exc:
        raise PlatformError(str(exc)) from None
