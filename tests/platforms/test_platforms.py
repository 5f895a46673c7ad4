import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from batsched_py.platforms import (PlatformError, energy_cluster, host_powers, platform_xml,
                                   taurus_cluster, upgrade_platform_file)
from batsched_py.emulator.platform import PlatformError as Refused, load_platform
from batsched_py.platforms.cli import main
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
    with pytest.raises(Refused, match="'master,master'"):
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
