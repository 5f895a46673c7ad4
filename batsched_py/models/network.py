"""The route of Batsim's 1-byte messages from each host to the master host, as SimGrid 3.32 builds it.

Batsim 4.2.1 runs SimGrid's ``ptask_L07`` model.  Its actors send the server (on the master host)
1-byte messages; each one starts moving once the server takes it (one at a time) and takes:

- a *latency phase*: the route's latency, the links' latencies summed in route order;
- a *bandwidth phase*: 1 byte at the route's rate, its slowest link's bandwidth, bounded by
  ``network/TCP-gamma / (2 * latency)`` (4194304 B by default).  As the server receives one
  message at a time, no two messages ever share a link, so this is the whole model.

A route without links takes its latency only (none: no time at all, as on the platforms without
links, where the emulator keeps its simpler rules).

Routes are resolved the way SimGrid 3.32 does it (``NetZoneImpl::get_global_route``): the common
ancestor zone's local route first (its latencies counted first), then the source side's route to
its gateway, then the destination side's, recursively.  Zones modelled:

- ``Full``: ``<route>``/``<zoneRoute>`` (symmetrical unless ``symmetrical="NO"``; ``<link_ctn
  direction="UP|DOWN">`` of split-duplex links swap in the reverse route), a missing route within
  the zone is empty; in a zone with hosts or routers and no sub-zone, a host without a route to
  itself gets SimGrid's loopback link (``network/loopback-bw``, 10 GB/s, and
  ``network/loopback-lat``, 0 s, FATPIPE);
- ``<cluster>`` (flat topology, SimGrid's star zone): per host an optional limiter link, its
  private link (split-duplex by default: ``_UP`` going to the router, ``_DOWN`` coming back) and
  the backbone, each link counted once per local route; ``loopback_bw``/``loopback_lat`` give each
  host a loopback link; the router (``router_id``, or ``PREFIX+ID+_router+SUFFIX``) is the
  cluster's gateway;
- ``routing="Cluster"`` zones (star zones) with ``<host_link>``, ``<cabinet>`` and ``<backbone>``;
- ``None`` zones as containers only (a route inside one makes SimGrid abort);
- ``Vivaldi`` zones without ``<peer>``: no links, the latency of the coordinates' distance.

Anything else that bears on a message's time raises :class:`NotModelled` with the reason
(Floyd/Dijkstra/Wifi zones, torus/fat-tree/dragonfly clusters, bypass routes, peers, link
traces, non-default network settings, a link twice in a route); a route SimGrid cannot compute
(it aborts) raises :class:`Unroutable`.
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Optional
from ..errors import BatschedError

__all__ = ["Link", "Route", "NotModelled", "Unroutable", "message_routes", "parse_bandwidth", "parse_time",
           "radical_ids", "split_quantity", "DEFAULT_TCP_GAMMA", "DEFAULT_LOOPBACK_BW"]

DEFAULT_TCP_GAMMA = 4194304.0       # SimGrid's network/TCP-gamma
DEFAULT_LOOPBACK_BW = 10e9          # network/loopback-bw
DEFAULT_LOOPBACK_LAT = 0.0          # network/loopback-lat

_NUMBER_RE = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S*)\s*$")


def _scales(unit: str, scale: float, base: int) -> dict[str, float]:
    """SimGrid's unit table (xbt unit_scale): each prefix multiplies the previous scale."""
    prefixes = (["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"] if base == 2
                else ["k", "M", "G", "T", "P", "E", "Z", "Y"])
    mult = 1024.0 if base == 2 else 1000.0
    out = {unit: scale}
    for prefix in prefixes:
        scale = scale * mult
        out[prefix + unit] = scale
    return out


_BANDWIDTH_UNITS = {**_scales("bps", 0.125, 2), **_scales("bps", 0.125, 10),
                    **_scales("Bps", 1.0, 2), **_scales("Bps", 1.0, 10)}
_TIME_UNITS = {"w": 7 * 24 * 60 * 60.0, "d": 24 * 60 * 60.0, "h": 60 * 60.0, "m": 60.0, "s": 1.0,
               "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12}


class NotModelled(BatschedError):
    """The platform uses a network form whose effect on Batsim's messages is not modelled."""


class Unroutable(BatschedError):
    """SimGrid 3.32 cannot route a message Batsim sends on this platform: real Batsim aborts."""


def split_quantity(text: str) -> Optional[tuple[float, str]]:
    """A SimGrid quantity (``"125MBps"``, ``" 1e-9 Mf"``) as (number, unit); None if malformed."""
    m = _NUMBER_RE.match(text)
    return None if m is None else (float(m[1]), m[2])


def _parse_units(text: str, units: dict[str, float], what: str) -> float:
    quantity = split_quantity(text)
    if quantity is None:
        raise NotModelled(f"invalid {what} {text!r}")
    value, unit = quantity
    if unit == "":
        return value                     # SimGrid accepts a bare number (with a warning)
    scale = units.get(unit)
    if scale is None:
        raise NotModelled(f"unknown {what} unit in {text!r}")
    return value * scale


def parse_bandwidth(text: str) -> float:
    """A SimGrid bandwidth (``"125MBps"``, ``"10Gbps"``, ``"1.25E8"``) in bytes per second."""
    return _parse_units(text, _BANDWIDTH_UNITS, "bandwidth")


def parse_time(text: str) -> float:
    """A SimGrid duration (``"50us"``, ``"1.5E-9s"``, ``"0"``) in seconds."""
    return _parse_units(text, _TIME_UNITS, "latency")


@dataclass(frozen=True, slots=True)
class Link:
    name: str
    bandwidth: float
    latency: float


@dataclass(frozen=True, slots=True)
class Route:
    """A message's route: its links in order and its latency (summed as SimGrid sums it).
    ``rate``: the bandwidth phase's rate for 1 byte (0.0 without links)."""
    links: tuple[Link, ...]
    latency: float
    rate: float

    @property
    def instant(self) -> bool:
        return not self.links and self.latency == 0.0


class _Point:
    """A SimGrid netpoint: a host, a router or a zone (``sub``), in zone ``zone``."""
    __slots__ = ("name", "zone", "sub", "coords")

    def __init__(self, name: str, zone: Optional[_Zone], sub: Optional[_Zone] = None):
        self.name, self.zone, self.sub = name, zone, sub
        self.coords: Optional[tuple[float, float, float]] = None


class _Star:
    """A star zone's route of one netpoint: up (to the center), down, loopback, gateway."""
    __slots__ = ("up", "down", "loopback", "gateway")

    def __init__(self) -> None:
        self.up: Optional[list[Link]] = None
        self.down: Optional[list[Link]] = None
        self.loopback: Optional[list[Link]] = None
        self.gateway: Optional[_Point] = None


class _Zone:
    __slots__ = ("name", "kind", "parent", "point", "children", "members", "full", "star")

    def __init__(self, name: str, kind: str, parent: Optional[_Zone]):
        self.name, self.kind, self.parent = name, kind, parent
        self.point = _Point(name, parent, self)
        self.children: list[_Zone] = []
        self.members: list[_Point] = []          # hosts and routers
        self.full: dict[tuple[str, str], tuple[Optional[_Point], Optional[_Point], list[Link]]] = {}
        self.star: dict[str, _Star] = {}

    def star_of(self, point: _Point) -> _Star:
        route = self.star.get(point.name)
        if route is None:
            route = self.star[point.name] = _Star()
        return route


_ROUTINGS = {"Full": "Full", "None": "None", "Cluster": "Star", "Vivaldi": "Vivaldi"}


class _Builder:
    """Reads the zones, netpoints, links and routes of a platform XML."""

    def __init__(self) -> None:
        self.points: dict[str, _Point] = {}
        self.links: dict[str, Link] = {}
        self.duplex: dict[str, tuple[Link, Link]] = {}
        self.gamma = DEFAULT_TCP_GAMMA
        self.loopback = Link("__loopback__", DEFAULT_LOOPBACK_BW, DEFAULT_LOOPBACK_LAT)
        self.root: Optional[_Zone] = None

    # ---------------------------------------------------------------- parsing

    def platform(self, root: ET.Element) -> _Zone:
        for child in root:
            if child.tag == "config":
                self.config(child)
            elif child.tag in ("zone", "AS"):
                self.zone(child, None)
            elif child.tag == "cluster":
                self.cluster(child, None)
            elif child.tag in ("trace", "trace_connect"):
                self.trace(child)
            elif child.tag == "include":
                raise NotModelled("<include>")
        if self.root is None:
            raise NotModelled("no root zone")
        return self.root

    def config(self, elem: ET.Element) -> None:
        for prop in elem.iter("prop"):
            key, value = prop.get("id", ""), prop.get("value", "")
            try:
                if key in ("network/TCP-gamma", "network/TCP_gamma"):
                    self.gamma = float(value)
                elif key == "network/loopback-bw":
                    self.loopback = Link("__loopback__", float(value), self.loopback.latency)
                elif key == "network/loopback-lat":
                    self.loopback = Link("__loopback__", self.loopback.bandwidth, float(value))
                elif key != "network/coordinates" and key.startswith(("network/", "host/", "cpu/", "maxmin/",
                                                                         "surf/", "precision/")):
                    raise NotModelled(f"<config> {key}={value!r}")
            except ValueError:
                raise NotModelled(f"<config> {key}={value!r}: only a plain number is supported") from None

    def trace(self, elem: ET.Element) -> None:
        if elem.tag == "trace_connect" and elem.get("kind", "") not in ("HOST_AVAIL", "SPEED"):
            raise NotModelled(f"<trace_connect> of kind {elem.get('kind')} on {elem.get('element')!r}")

    def new_zone(self, name: str, kind: str, parent: Optional[_Zone]) -> _Zone:
        zone = _Zone(name, kind, parent)
        if parent is None:
            if self.root is not None:
                raise NotModelled(f"zone {name!r}: two root zones")
            self.root = zone
        else:
            parent.children.append(zone)
        self.add_point(zone.point)
        return zone

    def add_point(self, point: _Point) -> None:
        if point.name in self.points:
            raise NotModelled(f"netpoint {point.name!r} defined twice")
        self.points[point.name] = point

    def zone(self, elem: ET.Element, parent: Optional[_Zone]) -> None:
        name, routing = elem.get("id", ""), elem.get("routing", "None")
        kind = _ROUTINGS.get(routing)
        if kind is None:
            raise NotModelled(f"zone {name!r}: routing={routing!r}")
        zone = self.new_zone(name, kind, parent)
        star_parts: list[ET.Element] = []      # <backbone>, <host_link>, <cabinet>: built at the end
        for child in elem:
            tag = child.tag
            if tag in ("zone", "AS"):
                self.zone(child, zone)
            elif tag == "cluster":
                self.cluster(child, zone)
            elif tag in ("host", "router"):
                self.member(_Point(child.get("id", ""), zone), zone, child.get("coordinates", ""))
            elif tag == "link":
                self.link(child)
            elif tag in ("backbone", "host_link", "cabinet"):
                if kind != "Star":
                    raise NotModelled(f"zone {name!r}: <{tag}> outside a routing=\"Cluster\" zone")
                star_parts.append(child)
            elif tag in ("route", "zoneRoute", "ASroute"):
                self.route(child, zone)
            elif tag in ("bypassRoute", "bypassZoneRoute", "bypassASroute"):
                raise NotModelled(f"zone {name!r}: <{tag}>")
            elif tag == "peer":
                raise NotModelled(f"zone {name!r}: <peer>")
            elif tag in ("trace", "trace_connect"):
                self.trace(child)
            elif tag == "include":
                raise NotModelled(f"zone {name!r}: <include>")
        if star_parts:
            self.star_parts(zone, star_parts)
        if kind in ("Star", "Vivaldi"):      # StarZone::do_seal: empty routes for the others
            for point in zone.members + [c.point for c in zone.children]:
                route = zone.star_of(point)
                if route.up is None and route.down is None:
                    route.up, route.down = [], []
        elif kind == "Full" and not zone.children and zone.members:
            for point in zone.members:       # FullZone::do_seal in a zone of hosts and routers
                zone.full.setdefault((point.name, point.name), (None, None, [self.loopback]))

    def member(self, point: _Point, zone: _Zone, coords: str = "") -> None:
        self.add_point(point)
        zone.members.append(point)
        if coords:
            try:
                x, y, z = (float(v) for v in coords.split(" "))
            except ValueError:
                raise Unroutable(f"{point.name!r}: bad Vivaldi coordinates {coords!r}") from None
            point.coords = (x, y, z)

    def new_link(self, name: str, bandwidth: str, latency: str, policy: str, where: str) -> Link:
        """Creates a link (two for SPLITDUPLEX: NAME_UP, NAME_DOWN); returns the first."""
        if not bandwidth:
            raise NotModelled(f"{where}: no bandwidth")
        bw, lat = parse_bandwidth(bandwidth), parse_time(latency or "0")
        if not bw > 0 or math.isinf(bw) or not lat >= 0 or math.isinf(lat):
            raise NotModelled(f"{where}: bandwidth {bandwidth!r} / latency {latency!r}")
        if policy in ("SPLITDUPLEX", "FULLDUPLEX"):
            up, down = Link(name + "_UP", bw, lat), Link(name + "_DOWN", bw, lat)
            self.duplex[name] = (up, down)
            self.links[up.name], self.links[down.name] = up, down
            return up
        if policy not in ("SHARED", "FATPIPE"):
            raise NotModelled(f"{where}: sharing_policy={policy}")
        link = self.links[name] = Link(name, bw, lat)
        return link

    def link(self, elem: ET.Element) -> None:
        name = elem.get("id", "")
        for attr in ("bandwidth_file", "latency_file", "state_file"):
            if elem.get(attr):
                raise NotModelled(f"link {name!r}: {attr}")
        self.new_link(name, elem.get("bandwidth", ""), elem.get("latency", "0"),
                      elem.get("sharing_policy", "SHARED"), f"link {name!r}")

    def link_list(self, elem: ET.Element, back: bool, where: str) -> list[Link]:
        """The ``<link_ctn>`` of a route (``back``: as SimGrid builds the reverse route, before
        reversing it: split-duplex directions swapped)."""
        out = []
        for ctn in elem:
            if ctn.tag != "link_ctn":
                continue
            name, direction = ctn.get("id", ""), ctn.get("direction", "NONE")
            if direction == "NONE":
                link = self.links.get(name)
                if link is None:
                    raise Unroutable(f"{where}: unknown link {name!r}")
                out.append(link)
                continue
            pair = self.duplex.get(name)
            if pair is None:
                raise Unroutable(f"{where}: {name!r} is not a split-duplex link (direction={direction})")
            out.append(pair[(direction == "UP") == back])
        return out

    def route(self, elem: ET.Element, zone: _Zone) -> None:
        src, dst = elem.get("src", ""), elem.get("dst", "")
        where = f"<{elem.tag} src={src!r} dst={dst!r}>"
        if zone.kind != "Full":
            raise NotModelled(f"{where} in a {zone.kind} zone")
        s, d = self.points.get(src), self.points.get(dst)
        gs, gd = self.points.get(elem.get("gw_src", "")), self.points.get(elem.get("gw_dst", ""))
        if s is None or d is None:
            raise Unroutable(f"{where}: unknown netpoint")
        links = self.link_list(elem, False, where)
        if (src, dst) in zone.full:
            raise Unroutable(f"{where}: the route already exists")
        zone.full[(src, dst)] = (gs, gd, links)
        if elem.get("symmetrical", "YES").upper() != "NO" and src != dst:
            if (dst, src) in zone.full:
                raise Unroutable(f"{where}: the reverse route already exists")
            zone.full[(dst, src)] = (gd, gs, self.link_list(elem, True, where)[::-1])

    def star_routes(self, zone: _Zone, point: _Point, up: list[Link], down: list[Link]) -> None:
        route = zone.star_of(point)
        route.up, route.down = up, down

    def cluster(self, elem: ET.Element, parent: Optional[_Zone]) -> None:
        name = elem.get("id", "")
        topology = elem.get("topology", "FLAT")
        if topology != "FLAT":
            raise NotModelled(f"cluster {name!r}: topology={topology}")
        zone = self.new_zone(name, "Star", parent)
        prefix, suffix = elem.get("prefix", ""), elem.get("suffix", "")
        backbone: Optional[Link] = None
        bb_bw, bb_lat = elem.get("bb_bw", ""), elem.get("bb_lat", "")
        if (bb_bw and parse_bandwidth(bb_bw) > 0) or (bb_lat and parse_time(bb_lat) > 0):
            backbone = self.new_link(f"{name}_backbone", bb_bw or "0", bb_lat or "0",
                                     elem.get("bb_sharing_policy", "SHARED"), f"cluster {name!r} backbone")
        policy = elem.get("sharing_policy", "SPLITDUPLEX")
        if policy not in ("SPLITDUPLEX", "FULLDUPLEX", "SHARED", "FATPIPE"):
            raise NotModelled(f"cluster {name!r}: sharing_policy={policy}")
        lb_bw, lb_lat = elem.get("loopback_bw", ""), elem.get("loopback_lat", "")
        loopback = (lb_bw and parse_bandwidth(lb_bw) > 0) or (lb_lat and parse_time(lb_lat) > 0)
        limiter = elem.get("limiter_link", "")
        for i in _radicals(elem.get("radical", ""), name):
            host = _Point(f"{prefix}{i}{suffix}", zone)
            self.member(host, zone)
            link_id = f"{name}_link_{i}"
            route = zone.star_of(host)
            if loopback:
                route.loopback = [self.new_link(link_id + "_loopback", lb_bw or "0", lb_lat or "0", "FATPIPE",
                                                f"cluster {name!r} loopback")]
            up: list[Link] = []
            down: list[Link] = []
            if limiter and parse_bandwidth(limiter) > 0:
                lim = self.new_link(link_id + "_limiter", limiter, "0", "SHARED", f"cluster {name!r} limiter")
                up.append(lim)
                down.append(lim)
            # Private link: SimGrid 3.32 makes it split-duplex, else shared whatever the policy.
            duplex = policy in ("SPLITDUPLEX", "FULLDUPLEX")
            private = self.new_link(link_id, elem.get("bw", ""), elem.get("lat", "0"),
                                    "SPLITDUPLEX" if duplex else "SHARED", f"cluster {name!r} host {host.name!r}")
            up.append(private)
            down.append(self.duplex[link_id][1] if duplex else private)
            if backbone is not None:
                up.append(backbone)
                down.append(backbone)
            route.up, route.down = up, down[::-1]
        router = _Point(elem.get("router_id") or f"{prefix}{name}_router{suffix}", zone)
        self.member(router, zone)
        self.star_routes(zone, router, [], [])

    def star_parts(self, zone: _Zone, parts: list[ET.Element]) -> None:
        """A routing="Cluster" zone's backbone, host links and cabinets, which SimGrid builds once
        the zone is complete: each host goes up its link then the backbone, and down back."""
        backbone: list[Link] = []
        for elem in parts:
            if elem.tag == "backbone":
                backbone = [self.new_link(elem.get("id", ""), elem.get("bandwidth", ""), elem.get("latency", "0"),
                                          elem.get("sharing_policy", "SHARED"), f"backbone {elem.get('id')!r}")]
        for elem in parts:
            if elem.tag == "host_link":
                name = elem.get("id", "")
                host = self.points.get(name)
                up, down = self.links.get(elem.get("up", "")), self.links.get(elem.get("down", ""))
                if host is None or up is None or down is None:
                    raise Unroutable(f"<host_link id={name!r}>: unknown host or link")
                self.star_routes(zone, host, [up] + backbone, backbone + [down])
        for elem in parts:
            if elem.tag != "cabinet":
                continue
            for i in _radicals(elem.get("radical", ""), elem.get("id", "")):
                host = _Point(f"{elem.get('prefix', '')}{i}{elem.get('suffix', '')}", zone)
                self.member(host, zone)
                where = f"cabinet {elem.get('id')!r} host {host.name!r}"
                bw, lat = elem.get("bw", ""), elem.get("lat", "0")
                up = self.new_link(f"link_{host.name}_UP", bw, lat, "SHARED", where)
                down = self.new_link(f"link_{host.name}_DOWN", bw, lat, "SHARED", where)
                self.star_routes(zone, host, [up] + backbone, backbone + [down])


#: Most hosts one cluster's radical may name: a typing slip (0-99999999999) is refused before it fills memory.
MAX_CLUSTER_HOSTS = 1_000_000


def radical_ids(text: str) -> list[int]:
    """The numbers of a cluster's ``radical`` ("0-3,7" -> 0, 1, 2, 3, 7); ValueError if bad."""
    ranges = []
    for part in text.split(","):
        bounds = part.strip().split("-")
        try:
            lo, hi = int(bounds[0]), int(bounds[-1])
        except ValueError:
            lo = hi = -1
        if len(bounds) > 2 or hi < lo or lo < 0:
            raise ValueError("not a list of N or N-M ranges")
        ranges.append(range(lo, hi + 1))
    if sum(map(len, ranges)) > MAX_CLUSTER_HOSTS:
        raise ValueError(f"{sum(map(len, ranges)):,} hosts, more than the {MAX_CLUSTER_HOSTS:,} the emulator builds")
    return [i for r in ranges for i in r]


def _radicals(text: str, where: str) -> list[int]:
    try:
        return radical_ids(text)
    except ValueError as exc:
        raise NotModelled(f"cluster {where!r}: bad radical {text!r} ({exc})") from None


# -------------------------------------------------------------------- route resolution


def _path_to_root(point: _Point) -> list[_Zone]:
    path: list[_Zone] = []
    zone = point.zone
    while zone is not None:
        path.append(zone)
        zone = zone.parent
    return path


def _ancestors(src: _Point, dst: _Point) -> tuple[_Zone, _Zone, _Zone]:
    """SimGrid's find_common_ancestors: (common ancestor, src's child of it, dst's child of it)."""
    if src.zone is dst.zone:
        assert src.zone is not None
        return src.zone, src.zone, src.zone
    path_src, path_dst = _path_to_root(src), _path_to_root(dst)
    parent: Optional[_Zone] = None
    while len(path_src) > 1 and len(path_dst) > 1 and path_src[-1] is path_dst[-1]:
        parent = path_src.pop()
        path_dst.pop()
    if path_src[-1] is path_dst[-1]:
        return path_src[-1], path_src[-1], path_dst[-1]
    if parent is None:
        raise Unroutable(f"{src.name!r} and {dst.name!r} have no common zone")
    return parent, path_src[-1], path_dst[-1]


def _local_route(zone: _Zone, src: _Point, dst: _Point
                 ) -> tuple[Optional[_Point], Optional[_Point], list[Link], float]:
    """A zone's own route between two of its netpoints: (gw_src, gw_dst, links, extra latency
    added after the links')."""
    if zone.kind == "Full":
        found = zone.full.get((src.name, dst.name))
        if found is None:
            return None, None, [], 0.0
        return found[0], found[1], list(found[2]), 0.0
    if zone.kind == "None":
        raise Unroutable(f"a route from {src.name!r} to {dst.name!r} inside routing=\"None\" zone "
                         f"{zone.name!r} (SimGrid: \"There can't be route in an Empty zone\")")
    s, d = zone.star.get(src.name), zone.star.get(dst.name)
    if s is None or d is None:
        raise Unroutable(f"zone {zone.name!r}: no route for {src.name!r} or {dst.name!r}")
    links: list[Link] = []
    if src is dst and s.loopback is not None:
        parts = [s.loopback]
    else:
        if s.up is None or d.down is None:
            raise Unroutable(f"zone {zone.name!r}: no link up from {src.name!r} or down to {dst.name!r}")
        parts = [s.up, d.down]
    for part in parts:
        for link in part:
            if not any(link is other for other in links):      # StarZone: each link once
                links.append(link)
    extra = 0.0
    if zone.kind == "Vivaldi":
        a, b = src.coords, dst.coords
        if a is None or b is None:
            raise Unroutable(f"zone {zone.name!r}: no Vivaldi coordinates for {src.name!r} or {dst.name!r}")
        dist = math.sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1])) + abs(a[2]) + abs(b[2])
        extra = dist / 1000.0
    gw_src = s.gateway if zone.kind == "Star" else None
    gw_dst = d.gateway if zone.kind == "Star" else None
    return gw_src, gw_dst, links, extra


def _global_route(src: _Point, dst: _Point, links: list[Link], latency: list[float]) -> None:
    """SimGrid's get_global_route: appends the route's links to ``links`` and adds each one's
    latency to ``latency[0]`` in SimGrid's order."""
    common, src_anc, dst_anc = _ancestors(src, dst)
    if src_anc is dst_anc:
        _, _, local, extra = _local_route(common, src, dst)
        for link in local:
            links.append(link)
            latency[0] += link.latency
        if extra:
            latency[0] += extra
        return
    gw_src, gw_dst, local, extra = _local_route(common, src_anc.point, dst_anc.point)
    for link in local:
        latency[0] += link.latency
    if extra:
        latency[0] += extra
    if gw_src is None or gw_dst is None:
        raise Unroutable(f"no route from {src_anc.name!r} to {dst_anc.name!r} in zone {common.name!r} "
                         "(SimGrid: \"Bad gateways\")")
    if src is not gw_src:
        _global_route(src, gw_src, links, latency)
    links.extend(local)
    if gw_dst is not dst:
        _global_route(gw_dst, dst, links, latency)


def _route(src: _Point, dst: _Point, gamma: float) -> Route:
    links: list[Link] = []
    latency = [0.0]
    _global_route(src, dst, links, latency)
    names = [link.name for link in links]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise NotModelled(f"link {dup!r} twice in the route from {src.name!r} to {dst.name!r}")
    lat = latency[0]
    rate = 0.0
    if links:
        rate = min(link.bandwidth for link in links)
        if lat > 0:
            rate = min(rate, gamma / (2.0 * lat))
    return Route(tuple(links), lat, rate)


def message_routes(root: ET.Element, master: str, hosts: list[str]) -> tuple[list[Route], Route]:
    """The routes of the messages from each of ``hosts`` to ``master``, and from ``master`` to
    itself, on the platform whose XML root is ``root``.  Raises NotModelled or Unroutable (see
    the module's docstring)."""
    builder = _Builder()
    builder.platform(root)
    points = builder.points
    target = points[master]
    return ([_route(points[h], target, builder.gamma) for h in hosts],
            _route(target, target, builder.gamma))
