"""Routes of Batsim's messages to the master host (network.py), as SimGrid 3.32 builds them.

The expected links below are read off the XML by hand; latencies are summed in SimGrid's order
(the common zone's own route first, then the source side's, then the destination side's).  Every
value was also checked against SimGrid 3.32 itself (python3-simgrid ``Host.route_to``), which
test_routes_equal_simgrids does on this machine when the bindings are installed.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from batsched_py.models.network import parse_bandwidth, parse_time
from batsched_py.models.platform import PlatformError, load_platform
from helpers import SHARED

NET = Path(__file__).resolve().parents[1] / "data" / "network"
BATSIM_PLATFORMS = SHARED / "data" / "batsim" / "platforms"
GAMMA = 4194304.0


def _lat(*latencies: float) -> float:
    total = 0.0
    for x in latencies:
        total += x
    return total


def _check(route, names: list[str], latency: float, rate: float) -> None:
    assert [link.name for link in route.links] == names
    assert route.latency == latency
    assert route.rate == rate


def test_units():
    assert parse_bandwidth("125MBps") == 125e6 and parse_bandwidth("10Gbps") == 1.25e9
    assert parse_bandwidth("1KiBps") == 1024.0 and parse_bandwidth("1.25E8") == 1.25e8
    assert parse_time("50us") == 50 * 1e-6 and parse_time("1.461517ms") == 1.461517 * 1e-3
    assert parse_time("0") == 0.0 and parse_time("2.4E-5s") == 2.4e-5


def test_cluster_routes():
    # cluster16.xml: hosts host0..15 in cluster "cluster_compute" (private links split-duplex,
    # 125 MBps / 50 us; backbone 2.25 GBps / 500 us), master_host0 in "cluster_master" (the
    # same), and a 1.25 GBps / 500 us link "backbone" between the two clusters' routers.
    p = load_platform(NET / "cluster16.xml")
    assert p.routes is not None and p.master_route is not None and not p.network_note
    # the zoneRoute's link first, then host0 up to its router, then down to the master
    bb, link = 500 * 1e-6, 50 * 1e-6         # "500us", "50us"
    lat = _lat(bb, link, bb, bb, link)
    _check(p.routes[p.hosts[0].id], ["cluster_compute_link_0_UP", "cluster_compute_backbone", "backbone",
                                     "cluster_master_backbone", "cluster_master_link_0_DOWN"], lat, 125e6)
    assert lat == 0.0016000000000000001
    assert all(r.latency == lat and r.rate == 125e6 for r in p.routes)
    # the master to itself: up its link, its backbone once, down its link
    _check(p.master_route, ["cluster_master_link_0_UP", "cluster_master_backbone", "cluster_master_link_0_DOWN"],
           _lat(link, bb, link), 125e6)


def test_full_zone_routes():
    # small8.xml: routes from master_host to each host (symmetrical: reversed for ours), the
    # master's own loopback route (498 MBps FATPIPE, 15 us).
    p = load_platform(NET / "small8.xml")
    by_name = {h.name: p.routes[h.id] for h in p.hosts}
    # SimGrid reads "41.279125MBps" as 41.279125 * 1e6 and "59.904us" as 59.904 * 1e-6.
    links = {"0": (41.279125, 59.904), "1": (34.285625, 514.433), "2": (118.6825, 136.931),
             "3": (34.285625, 514.433), "4": (10.099625, 479.78), "6": (41.279125, 59.904),
             "7": (11.618875, 189.98), "8": (8.158, 270.544), "9": (7.20975, 1461.517)}
    us = {n: (lat * 1e-6 if n != "9" else 1.461517 * 1e-3) for n, (_, lat) in links.items()}
    for host, path in {"Mercury": "9", "Venus": "8 1 0 2 3 4", "Mars": "7 6 1 0 2 3 4", "Jupiter": "7 9",
                       "Neptune": "1 4"}.items():
        names = path.split()      # the reverse of the master's route to the host
        latency = _lat(*(us[n] for n in names))
        rate = min(min(links[n][0] * 1e6 for n in names), GAMMA / (2 * latency))
        _check(by_name[host], names, latency, rate)
    assert by_name["Mercury"].latency == 0.001461517 and by_name["Mercury"].rate == 7.20975e6
    _check(p.master_route, ["loopback"], 15 * 1e-6, 498e6)


def test_vivaldi_coordinates_give_latency(tmp_path):
    path = tmp_path / "v.xml"
    path.write_text("""<?xml version='1.0'?><platform version="4.1"><zone id="AS0" routing="Vivaldi">
      <host id="master_host" coordinates="1.5 -2 0.25" speed="1Gf"/>
      <host id="h0" coordinates="0 0 0" speed="1Gf"/><host id="h1" coordinates="10.1 3.7 1.3" speed="1Gf"/>
      </zone></platform>""")
    p = load_platform(path)
    # (sqrt(dx^2 + dy^2) + |z_src| + |z_dst|) / 1000: milliseconds; no link
    assert p.routes[0].latency == (2.5 + 0.0 + 0.25) / 1000 and p.routes[0].rate == 0.0
    assert p.routes[1].latency == 0.011867460927960909
    assert p.master_route.latency == 0.5 / 1000 and not p.master_route.links


def test_platforms_without_links_keep_the_simple_rules():
    p = load_platform(Path(__file__).resolve().parents[2] / "platforms" / "taurus_16.xml")
    assert p.routes is None and p.master_loopback_bw == 10e9 and not p.network_note


@pytest.mark.parametrize("body,reason", [
    ('<zone id="AS0" routing="Floyd"><host id="master_host" speed="1Gf"/><host id="h" speed="1Gf"/>'
     '<link id="l" bandwidth="1GBps" latency="1us"/></zone>', "routing='Floyd'"),
    ('<zone id="AS0" routing="Full"><cluster id="c" prefix="h" suffix="" radical="0-3" speed="1Gf" bw="1GBps" '
     'lat="1us" topology="TORUS" topo_parameters="2,2"/><host id="master_host" speed="1Gf"/></zone>',
     "topology=TORUS"),
    ('<zone id="AS0" routing="Full"><host id="master_host" speed="1Gf"/><host id="h" speed="1Gf"/>'
     '<link id="l" bandwidth="1GBps" latency="1us"/><bypassRoute src="h" dst="master_host">'
     '<link_ctn id="l"/></bypassRoute></zone>', "bypassRoute"),
    ('<zone id="AS0" routing="Full"><host id="master_host" speed="1Gf"/><host id="h" speed="1Gf"/>'
     '<link id="l" bandwidth="1GBps" latency="1us"/><route src="h" dst="master_host">'
     '<link_ctn id="l"/><link_ctn id="l"/></route></zone>', "twice"),
], ids=["floyd", "torus", "bypass", "link-twice"])
def test_unmodelled_forms_are_named(tmp_path, body, reason):
    path = tmp_path / "p.xml"
    path.write_text(f'<?xml version="1.0"?><platform version="4.1">{body}</platform>')
    p = load_platform(path)
    assert p.routes is None and reason in p.network_note


def test_route_simgrid_cannot_compute_refuses_the_platform(tmp_path):
    # The master in a routing="None" zone: SimGrid aborts on its first message to itself.
    path = tmp_path / "p.xml"
    path.write_text('<?xml version="1.0"?><platform version="4.1"><zone id="AS0" routing="Full">'
                    '<zone id="m" routing="None"><host id="master_host" speed="1Gf"/></zone>'
                    '<cluster id="c" prefix="h" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"/>'
                    '<link id="l" bandwidth="1GBps" latency="1us"/>'
                    '<zoneRoute src="c" dst="m" gw_src="hc_router" gw_dst="master_host"><link_ctn id="l"/></zoneRoute>'
                    '</zone></platform>')
    with pytest.raises(PlatformError, match="None.*aborts"):
        load_platform(path)


# ------------------------------------------------------------------ against SimGrid itself

_SIMGRID_ROUTES = """
import json, sys, simgrid
path, master, hosts = json.load(sys.stdin)
e = simgrid.Engine(["x", "--cfg=host/model:ptask_L07", "--log=root.thres:critical"])
e.load_platform(path)
e.netzone_root.seal()
m = e.host_by_name(master)
out = {}
for name in hosts + [master]:
    links, latency = e.host_by_name(name).route_to(m)
    out[name] = [repr(latency), [link.name for link in links]]
print(json.dumps(out))
"""


def _simgrid_python() -> str | None:
    """An interpreter with SimGrid's Python bindings (python3-simgrid), if any."""
    for exe in dict.fromkeys([sys.executable, shutil.which("python3") or "", "/usr/bin/python3"]):
        if exe and Path(exe).exists():
            if subprocess.run([exe, "-c", "import simgrid"], capture_output=True).returncode == 0:
                return exe
    return None


def _routed_platforms() -> list[Path]:
    """The platforms whose routes the emulator models (the others are refused or have no links)."""
    paths = sorted(NET.glob("*.xml")) + sorted(BATSIM_PLATFORMS.rglob("*.xml"))
    routed = []
    for path in paths:
        try:
            if load_platform(path).routes is not None:
                routed.append(path)
        except PlatformError:
            pass
    return routed


@pytest.mark.parametrize("path", _routed_platforms(), ids=lambda p: p.name)
def test_routes_equal_simgrids(path):
    p = load_platform(path)
    exe = _simgrid_python()
    if exe is None:
        pytest.skip("SimGrid's Python bindings (python3-simgrid) are not installed")
    hosts = [h.name for h in p.hosts]
    proc = subprocess.run([exe, "-c", _SIMGRID_ROUTES], input=json.dumps([str(path), p.master_host, hosts]),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for h in p.hosts:
        route = p.routes[h.id]
        assert got[h.name] == [repr(route.latency), [link.name for link in route.links]], h.name
    assert got[p.master_host] == [repr(p.master_route.latency), [link.name for link in p.master_route.links]]
