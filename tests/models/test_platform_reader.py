"""One platform reader (models/platform.py): the emulator's load_platform, the energy figures of
host_powers and the platform upgrade read a file alike and refuse it with the same PlatformError."""
import pytest

from batsched_py.models.platform import PlatformError, host_powers, load_platform
from batsched_py.platforms import upgrade_platform_file

CLUSTER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
  <cluster id="c" prefix="n" suffix="" radical="0-10" speed="1f,0.5f" bw="1GBps" lat="0s">
    <prop id="wattage_per_state" value="10:20, 5:8"/>
    <prop id="sleep_pstates" value="1:1:1"/>
  </cluster>
  <host id="master_host" speed="1f">
    <prop id="wattage_per_state" value="99:99, 99:99"/>
  </host>
</zone>
</platform>
"""


def test_host_powers_reads_cluster_hosts_in_batsims_order(tmp_path):
    """Cluster hosts count (the reader expands <cluster> as SimGrid does), in Batsim's machine
    order (names sorted byte-wise), the master host set aside."""
    path = tmp_path / "cluster.xml"
    path.write_text(CLUSTER)
    hosts = host_powers(path)
    assert [h.host for h in hosts] == sorted((f"n{i}" for i in range(11)), key=str.encode)
    assert [h.host for h in hosts][:3] == ["n0", "n1", "n10"]
    assert {(h.idle_w, h.compute_w, h.state_w("sleep")) for h in hosts} == {(10.0, 20.0, 5.0)}


def test_host_powers_follow_the_emulators_host_ids(tmp_path):
    path = tmp_path / "hosts.xml"
    path.write_text('<platform version="4.1"><zone id="z" routing="Full">'
                    + "".join(f'<host id="h{i}" speed="1f"><prop id="wattage_per_state" value="{i}:{i + 1}"/></host>'
                              for i in (2, 10, 1))
                    + '<host id="master_host" speed="1f"/></zone></platform>')
    assert [h.host for h in host_powers(path)] == [h.name for h in load_platform(path).hosts] == ["h1", "h10", "h2"]
    assert [h.idle_w for h in host_powers(path)] == [1.0, 10.0, 2.0]


def test_one_platform_error_for_every_reader(tmp_path):
    """A broken file: the emulator's reader, the energy figures and the upgrade raise the same
    exception class with the same file:line:column message."""
    bad = tmp_path / "bad.xml"
    bad.write_text('<platform version="4">\n<zone id="x">\n<host id="a" speed="1f">\n</platform>\n')
    messages = set()
    for read in (load_platform, host_powers, lambda p: upgrade_platform_file(p, tmp_path / "o.xml")):
        with pytest.raises(PlatformError, match=r"bad\.xml:4:\d+: invalid XML \(mismatched tag\)") as raised:
            read(bad)
        messages.add(str(raised.value))
    assert len(messages) == 1
