"""Platform loading as Batsim 4.2.1 does it, checked against golden SIMULATION_BEGINS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from batsched_py.models.platform import (PlatformError, compute_resources_json, load_platform,
                                           parse_speed)
from test_machines import ALL_CASES, GOLDEN, read_transcript
from helpers import SHARED

DATA = SHARED / "data"
PLATFORMS = sorted((DATA / "batsim" / "platforms").rglob("*.xml")) + [
    DATA / "gridgym" / "taurus_168_batsim4.xml"] + sorted(GOLDEN.glob("*/inputs/*.xml"))


@pytest.mark.parametrize("path", [p for p in PLATFORMS if p.exists()], ids=lambda p: p.name)
def test_every_known_platform_loads(path):
    try:
        p = load_platform(path)
    except PlatformError as exc:  # Batsim refuses these too (no master_host), or aborts on them
        assert ("no master host" in str(exc) or "aborts" in str(exc)) and str(path) in str(exc)
        return
    assert p.hosts and all(h.id == i for i, h in enumerate(p.hosts))
    assert p.master_host not in {h.name for h in p.hosts}


@pytest.mark.parametrize("case", ALL_CASES)
def test_compute_resources_equal_golden(case):
    meta = json.loads((GOLDEN / case / "meta.json").read_text())
    args = meta["batsim_args"]
    platform = load_platform(GOLDEN / case / args[args.index("-p") + 1], energy="-E" in args)
    begins = read_transcript(case)[0]["msg"]["events"][0]["data"]
    assert compute_resources_json(platform) == begins["compute_resources"]
    assert len(platform.hosts) == begins["nb_compute_resources"]


def test_lexicographic_ids_and_mmax():
    path = GOLDEN / "easy_bf-e128-hpc250/inputs/energy_platform_homogeneous_no_net_128.xml"
    names = [h.name for h in load_platform(path).hosts]
    assert names[:4] == ["host0", "host1", "host10", "host100"]
    small = load_platform(path, mmax=100)
    assert len(small.hosts) == 100 and [h.name for h in small.hosts] == names[:100]


def test_pstates_sleep_and_energy_values():
    p = load_platform(GOLDEN / "sleeper-e128-load50-E/inputs/energy_platform_homogeneous_no_net_128.xml",
                      energy=True)
    h = p.hosts[0]
    assert h.pstates[0].speed == 100e6 and h.pstates[0].all_cores == 190.738
    assert h.pstates[13].speed == pytest.approx(1e-3)
    assert h.sleep_pstates[0].sleep_pstate == 13 and h.wattage_off == 10.0
    assert h.switch_off_time(h.sleep_pstates[0]) == pytest.approx(6.1)
    assert h.switch_on_time(h.sleep_pstates[0]) == pytest.approx(151.52)
    assert h.is_compute_pstate(0) and not h.is_compute_pstate(14) and h.is_sleep_pstate(13)


@pytest.mark.skipif(not (DATA / "batsim/platforms").is_dir(), reason="needs Batsim's platforms in ../shared")
def test_two_value_wattage_and_clusters():
    p = load_platform(DATA / "batsim/platforms/cluster_energy_128.xml", energy=True)
    h = p.hosts[0]
    assert (h.pstates[0].idle, h.pstates[0].epsilon, h.pstates[0].all_cores) == (95.0, 95.0, 190.738)
    assert len(p.hosts) == 128 and p.master_host == "master_host0"
    pfs = load_platform(DATA / "batsim/platforms/cluster512_pfs.xml")
    assert len(pfs.hosts) == 512 and [s.name for s in pfs.storage_hosts] == ["pfs0"]


@pytest.mark.parametrize("text,value", [("100Mf", 1e8), ("1e-9Mf", 1e-3), ("0.5f", 0.5),
                                        ("2Gf", 2e9), ("3kf", 3e3), ("1Tf", 1e12),
                                        ("1Pf", 1e15), ("1Ef", 1e18), ("1Zf", 1e21),
                                        ("1Yf", 1e24), ("7flops", 7.0)])
def test_speed_units(text, value):
    assert parse_speed(text) == pytest.approx(value)


def _write(tmp_path, body: str, name="p.xml") -> Path:
    path = tmp_path / name
    path.write_text('<?xml version="1.0"?>\n<platform version="4.1"><zone id="z" routing="Full">'
                    '<host id="master_host" speed="1Gf"><prop id="wattage_per_state" value="1:2"/></host>' + body + "</zone></platform>")
    return path


@pytest.mark.parametrize("body,energy,words", [
    ('<host id="h0" speed="1Qf"/>', False, ["h0", "unknown speed unit", "Qf"]),
    ('<host id="h0"/>', False, ["h0", "missing speed"]),
    ('<host id="h0" speed="1Gf, 2Gf"><prop id="wattage_per_state" value="1:2"/></host>', True,
     ["h0", "1 wattage entries for 2 pstate"]),
    ('<host id="h0" speed="1Gf"><prop id="wattage_per_state" value="1:2:3:4"/></host>', True,
     ["h0", "2 or 3 values"]),
    ('<host id="h0" speed="1Gf"><prop id="wattage_per_state" value="1:2"/>'
     '<prop id="sleep_pstates" value="0:1:2"/></host>', True,
     ["h0", "sleep_pstates names pstate 1"]),
    ('<host id="h0" speed="1Gf" pstate="3"/>', False, ["h0", "pstate=3"]),
    ('<host id="h0" speed="1Gf"/><host id="h0" speed="1Gf"/>', False, ["h0", "twice"]),
    ('<cluster id="c" prefix="h" suffix="" radical="0-99999999999" speed="1Gf" bw="1Gbps" lat="0us"/>', False,
     ["cluster 'c'", "bad radical '0-99999999999'", "100,000,000,000 hosts, more than the 1,000,000"]),
    ('<cluster id="c" prefix="h" suffix="" radical="0-abc" speed="1Gf" bw="1Gbps" lat="0us"/>', False,
     ["cluster 'c'", "bad radical '0-abc' (not a list of N or N-M ranges)"]),
])
def test_bad_platforms_name_file_and_element(tmp_path, body, energy, words):
    path = _write(tmp_path, body)
    with pytest.raises(PlatformError) as exc:
        load_platform(path, energy=energy)
    assert str(path) in str(exc.value)
    for w in words:
        assert w in str(exc.value)


def _roles_platform(tmp_path, hosts: str) -> Path:
    path = tmp_path / "roles.xml"
    path.write_text(f'<platform version="4.1"><zone id="z" routing="Full">{hosts}</zone></platform>')
    return path


def _host(name: str, role: str | None = None) -> str:
    prop = "" if role is None else f'<prop id="role" value="{role}"/>'
    return f'<host id="{name}" speed="1Gf">{prop}</host>'


@pytest.mark.parametrize("hosts,master_host,words", [
    # Batsim appends "master" to the role of the host --master-host names (issue 20's Taurus files).
    (_host("master_host", "master") + _host("h0"), "master_host",
     ["host 'master_host'", "'master,master'", "must carry no role property"]),
    (_host("master_host", "compute_node") + _host("h0"), "master_host", ["'compute_node,master'"]),
    (_host("boss", "master") + _host("h0", "master"), "master_host", ["host 'h0'", "two master hosts"]),
    (_host("master_host") + _host("h0", "compute"), "master_host", ["host 'h0'", "'compute'"]),
    (_host("m", "master") + _host("h0", "Master"), "master_host", ["host 'h0'", "'Master'"]),
    (_host("h0") + _host("h1"), "master_host", ["Cannot find the \"master\" role"]),
    (_host("boss", "master") + _host("h0"), "h0", ["host 'h0'", "two master hosts"]),
])
def test_roles_batsim_aborts_on_are_refused(tmp_path, hosts, master_host, words):
    path = _roles_platform(tmp_path, hosts)
    with pytest.raises(PlatformError) as exc:
        load_platform(path, master_host=master_host)
    assert str(path) in str(exc.value) and "Batsim 4.2.1 aborts" in str(exc.value)
    for w in words:
        assert w in str(exc.value)


@pytest.mark.parametrize("hosts,master_host,master,compute", [
    (_host("master_host") + _host("h0"), "master_host", "master_host", ["h0"]),
    (_host("boss", "master") + _host("h0", "compute_node"), "master_host", "boss", ["h0"]),
    (_host("h0") + _host("h1"), "h1", "h1", ["h0"]),
    (_host("m", "master") + _host("s", "storage") + _host("h0", ""), "master_host", "m", ["h0"]),
])
def test_roles_batsim_accepts(tmp_path, hosts, master_host, master, compute):
    p = load_platform(_roles_platform(tmp_path, hosts), master_host=master_host)
    assert p.master_host == master and [h.name for h in p.hosts] == compute


def test_inconsistent_wattage_tolerated_without_energy(tmp_path):
    path = _write(tmp_path, '<host id="h0" speed="1Gf, 2Gf"><prop id="wattage_per_state" value="1:2"/></host>')
    assert load_platform(path).hosts[0].pstates[1].all_cores == 0.0


def test_broken_xml(tmp_path):
    path = tmp_path / "broken.xml"
    path.write_text("<platform><zone id='z'><host id='h0' speed='1Gf'></zone>")
    with pytest.raises(PlatformError, match="broken.xml.*cannot parse"):
        load_platform(path)


def _platform_xml(tmp_path, zone_attrs: str, extra: str = "") -> Path:
    path = tmp_path / "p.xml"
    path.write_text(f'<?xml version="1.0"?><platform version="4.1">{extra}<zone id="z" {zone_attrs}>'
                    '<host id="master_host" speed="1f"/><host id="0" speed="1f"/></zone></platform>')
    return path


@pytest.mark.parametrize("routing, bw", [("Full", 10e9), ("Floyd", 10e9), ("Vivaldi", 0.0), ("None", 0.0)])
def test_master_loopback_follows_zone_routing(tmp_path, routing, bw):
    # SimGrid's Full/Floyd/Dijkstra zones give each host an implicit loopback link (10 GB/s).
    assert load_platform(_platform_xml(tmp_path, f'routing="{routing}"')).master_loopback_bw == bw


def test_master_loopback_bandwidth_from_config(tmp_path):
    config = '<config><prop id="network/loopback-bw" value="1e9"/></config>'
    assert load_platform(_platform_xml(tmp_path, 'routing="Full"', config)).master_loopback_bw == 1e9
    bad = '<config><prop id="network/loopback-bw" value="1GBps"/></config>'
    with pytest.raises(PlatformError, match="loopback-bw"):
        load_platform(_platform_xml(tmp_path, 'routing="Full"', bad))


def test_golden_platform_loopbacks():
    assert load_platform(GOLDEN / "idle_sleeper-taurus-2016w13-E" / "inputs" / "taurus_168.xml"
                         ).master_loopback_bw == 10e9
    assert load_platform(GOLDEN / "energy_bf-e128-hpc250-E" / "inputs" /
                         "energy_platform_homogeneous_no_net_128.xml").master_loopback_bw == 0.0
