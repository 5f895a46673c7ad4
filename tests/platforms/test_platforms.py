import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from batsched_py.models.platform import PlatformError, host_powers, load_platform
from batsched_py.platforms import energy_cluster, platform_xml, taurus_cluster, upgrade_platform_file
from batsched_py.cli.platform import main
from helpers import SHARED as _SHARED

SHARED = _SHARED / "data"
REPO = Path(__file__).parents[2]


def _hosts(xml_text):
    return {h.get("id"): h for h in ET.fromstring(xml_text).iter("host")}


def test_taurus_preset_matches_grid5000_batsim4(tmp_path):
    out = tmp_path / "t.xml"
    assert main(["taurus", "-n", "168", str(out)]) == 0
    hosts = _hosts(out.read_text())
    # No role property on master_host: Batsim makes it the master itself and aborts on "master,master".
    assert len(hosts) == 169 and hosts["master_host"].find("prop[@id='role']") is None
    assert [h.name for h in load_platform(out, energy=True).hosts] == sorted(map(str, range(168)))
    ours = host_powers(out)
    reference = SHARED / "gridgym" / "taurus_168_batsim4.xml"
    if reference.exists():
        theirs = host_powers(reference)
        assert ours == theirs
        assert hosts["0"].get("speed") == _hosts(reference.read_text())["0"].get("speed")
    h = ours[0]
    assert (h.idle_w, h.compute_w, h.state_w("sleep"), h.state_w("off"), h.state_w("on")) == \
        (95, 190, 9, 101, 125)


def test_switching_speed_gives_duration():
    spec = energy_cluster(4, [1e9, 5e8], [95, 90], [190, 150], 9, off_time=6.1, off_w=101,
                          on_time=151.5, on_w=125, cores=2)
    root = ET.fromstring(platform_xml(spec))
    assert root.get("version") == "4.1"
    host = _hosts(platform_xml(spec))["3"]
    speeds = [float(s.strip().rstrip("f")) for s in host.get("speed").split(",")]
    assert 1 / speeds[3] == pytest.approx(6.1) and 1 / speeds[4] == pytest.approx(151.5)
    assert host.find("prop[@id='sleep_pstates']").get("value") == "2:3:4"
    assert host.get("core") == "2"
    with pytest.raises(ValueError):
        energy_cluster(4, [1e9], [95, 1], [190], 9, 1, 1, 1, 1)


def test_shipped_taurus_examples_are_current():
    for n in (16, 168):
        assert (REPO / "platforms" / f"taurus_{n}.xml").read_text() == platform_xml(taurus_cluster(n))


@pytest.mark.parametrize("path", sorted((REPO / "platforms").glob("*.xml")), ids=lambda p: p.name)
def test_shipped_platforms_pass_batsims_checks(path):
    """The emulator's reader refuses what Batsim 4.2.1's refuses (roles, pstates, -E's checks)."""
    assert load_platform(path, energy=True).hosts


@pytest.mark.parametrize("args", [["taurus", "-n", "3"], ["cluster", "-n", "3"],
                                  ["cluster", "-n", "3", "--no-energy"]])
def test_generated_platforms_pass_batsims_checks(tmp_path, args):
    out = tmp_path / "p.xml"
    assert main([*args, str(out)]) == 0
    assert len(load_platform(out, energy="--no-energy" not in args).hosts) == 3


def test_upgrade_drops_the_master_role_batsim_aborts_on(tmp_path, capsys):
    old = tmp_path / "old.xml"
    old.write_text('<platform version="4"><AS id="AS0" routing="Full">'
                   '<host id="master_host" speed="1Mf"><prop id="role" value="master"/></host>'
                   '<host id="0" speed="1Mf"><prop id="watt_per_state" value="95:190"/></host></AS></platform>')
    with pytest.raises(PlatformError, match="'master,master'"):
        load_platform(old)
    assert main(["upgrade", str(old), str(tmp_path / "new.xml")]) == 0
    assert "role=master removed" in capsys.readouterr().out
    assert load_platform(tmp_path / "new.xml").master_host == "master_host"


def test_upgrade_refuses_what_batsim_would(tmp_path, capsys):
    old = tmp_path / "old.xml"
    old.write_text('<platform version="4"><AS id="AS0" routing="Full"><host id="master_host" speed="1Mf"/>'
                   '<host id="0" speed="1Mf"><prop id="role" value="compute"/></host></AS></platform>')
    assert main(["upgrade", str(old), str(tmp_path / "new.xml")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Batsim 4.2.1 would refuse it" in err and "host '0'" in err and "'compute'" in err


@pytest.mark.skipif(not SHARED.exists(), reason="needs ../shared beside the repository")
@pytest.mark.parametrize("name", ["gridgym/others/platforms/lyon_taurus.xml",
                                  "gridgym/others/platforms/lyon_taurus_2.xml",
                                  "batsim/platforms/energy128_batsched.xml"])
def test_upgraded_batsim3_platforms_pass_batsims_checks(tmp_path, name):
    out = tmp_path / "new.xml"
    assert main(["upgrade", str(SHARED / name), str(out)]) == 0
    assert load_platform(out).hosts


@pytest.mark.skipif(not SHARED.exists(), reason="needs ../shared beside the repository")
def test_upgrade_batsim3_platforms(tmp_path):
    out = tmp_path / "e128.xml"
    changes = upgrade_platform_file(SHARED / "batsim/platforms/energy128_batsched.xml", out)
    assert "<AS id='AS0'> -> <zone>" in changes
    assert host_powers(out) == host_powers(SHARED / "batsim/platforms/energy_platform_homogeneous_no_net_128.xml")
    assert "contexts/stack-size" in out.read_text()
    out2 = tmp_path / "taurus.xml"
    upgrade_platform_file(SHARED / "gridgym/others/platforms/lyon_taurus_2.xml", out2)
    assert host_powers(out2) == host_powers(SHARED / "gridgym/taurus_168_batsim4.xml")


def test_upgrade_errors_name_file_and_element(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text('<platform version="4">\n<AS id="x">\n<host id="a"/>\n</platform>\n')
    with pytest.raises(PlatformError, match=r"bad\.xml:4:\d+: invalid XML"):
        upgrade_platform_file(bad, tmp_path / "o.xml")
    bad.write_text('<platform version="4"><AS id="x"><host id="h7" speed="1f">'
                   '<prop id="watt_per_state" value="1:zz"/></host></AS></platform>')
    with pytest.raises(PlatformError, match=r"bad\.xml: <host id='h7'> <prop id='watt_per_state'>"):
        upgrade_platform_file(bad, tmp_path / "o.xml")
    assert main(["upgrade", str(bad), str(tmp_path / "o.xml")]) == 2


@pytest.mark.parametrize("args", [["taurus"], ["cluster", "-n", "3"], ["upgrade", str(REPO / "platforms" / "taurus_16.xml")]])
def test_output_in_a_new_folder_is_written(tmp_path, args):
    out = tmp_path / "new" / "folder" / "p.xml"
    assert main([*args, str(out)]) == 0
    assert load_platform(out).hosts


@pytest.mark.parametrize("args, words", [
    (["cluster", "-n", "3", "--no-energy", "--idle", "50"], "--no-energy: --idle would be ignored"),
    (["cluster", "-n", "3", "--no-energy", "--sleep", "1", "--on-time", "3"],
     "--no-energy: --sleep, --on-time would be ignored"),
    (["cluster", "-n", "5000000"], "5,000,000 hosts, more than the 1,000,000"),
])
def test_refusals_are_one_line_and_write_nothing(tmp_path, capsys, args, words):
    out = tmp_path / "p.xml"
    assert main([*args, str(out)]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1, err
    assert not out.exists()


def test_unwritable_output_is_named(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert main(["taurus", str(tmp_path / "file" / "p.xml")]) == 2
    assert capsys.readouterr().err == f"platform: error: {tmp_path / 'file'}: file exists\n"


ASLEEP = """<?xml version="1.0"?>
<platform version="4">
  <AS id="AS0" routing="Full">
    <host id="master_host" pstate="1" speed="0.001f, 1000000.0f, 1.0f, 0.3333333333333333f">
      <prop id="watt_per_state" value="9:9, 95.0:190.0, 125.0:125.0, 101.0:101.0" />
      <prop id="sleep_pstates" value="0:3:2" />
    </host>
    <host id="0" pstate="0" speed="0.001f, 1000000.0f, 1.0f, 0.3333333333333333f">
      <prop id="watt_per_state" value="9:9, 95.0:190.0, 125.0:125.0, 101.0:101.0" />
      <prop id="sleep_pstates" value="0:3:2" />
    </host>
    <host id="1" pstate="0" speed="0.001f, 1000000.0f, 1.0f, 0.3333333333333333f">
      <prop id="watt_per_state" value="9:9, 95.0:190.0, 125.0:125.0, 101.0:101.0" />
      <prop id="sleep_pstates" value="0:3:2" />
    </host>
  </AS>
</platform>
"""


def test_upgrade_says_when_hosts_start_asleep_and_awake_fixes_it(tmp_path, capsys):
    """Real Batsim 4.2.1 with -E reports hosts declared in a sleep pstate idle, then aborts at the
    first job on one: upgrade says so and offers --awake, which starts them in pstate 1."""
    old = tmp_path / "old.xml"
    old.write_text(ASLEEP)
    assert main(["upgrade", str(old), str(tmp_path / "asleep.xml")]) == 0
    err = capsys.readouterr().err
    assert "hosts id='0' and 1 more start in sleep or switching pstate 0" in err and "--awake" in err
    assert {h.get("id"): h.get("pstate") for h in ET.parse(tmp_path / "asleep.xml").iter("host")}["0"] == "0"
    assert main(["upgrade", "--awake", str(old), str(tmp_path / "awake.xml")]) == 0
    out, err = capsys.readouterr()
    assert "host id='1': pstate 0 -> 1" in out and "warning" not in err
    assert [h.get("pstate") for h in ET.parse(tmp_path / "awake.xml").iter("host")] == ["1", "1", "1"]
    assert load_platform(tmp_path / "awake.xml", energy=True).hosts[0].default_pstate == 1


def test_readers_and_check_refuse_hosts_starting_asleep_with_batsims_reason(tmp_path, capsys):
    assert main(["upgrade", str(_write(tmp_path / "old.xml", ASLEEP)), str(tmp_path / "asleep.xml")]) == 0
    capsys.readouterr()
    with pytest.raises(PlatformError, match=r"host '0' \(and 1 more compute hosts\) starts in pstate 0, a sleep pstate: "
                                      r".*machine 0 \(hostname='0'\) is not in a computation pstate \(ps=0\)"):
        load_platform(tmp_path / "asleep.xml", energy=True)
    assert load_platform(tmp_path / "asleep.xml").nb_hosts == 2       # without -E Batsim knows no sleep pstate
    assert main(["check", str(tmp_path / "asleep.xml")]) == 0
    assert main(["check", "-E", str(tmp_path / "asleep.xml")]) == 2
    assert "is not in a computation pstate (ps=0)" in capsys.readouterr().err
    assert main(["check", "-E", str(REPO / "platforms" / "taurus_deepshutdown.xml")]) == 0
    assert "ok: 168 compute hosts" in capsys.readouterr().out


def test_the_shipped_deepshutdown_platform_starts_hosts_computing():
    hosts = load_platform(REPO / "platforms" / "taurus_deepshutdown.xml", energy=True).hosts
    assert {h.default_pstate for h in hosts} == {1} and all(h.is_compute_pstate(1) for h in hosts)


def test_generated_clusters_never_start_asleep():
    spec = taurus_cluster(2)
    spec.default_pstate = spec.sleep_pstates[0]
    with pytest.raises(ValueError, match="start in sleep or switching pstate 0"):
        spec.validate()


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
