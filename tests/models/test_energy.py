"""SimGrid 3.32 host energy model."""

import pytest

from batsched_py.models.energy import host_power, power
from batsched_py.models.platform import Host, PState


def test_idle_epsilon_and_linear_load():
    ps = PState(speed=1e9, idle=90.0, epsilon=100.0, all_cores=200.0)
    assert power(ps, 0.0) == 90.0          # idle is special, not epsilon
    assert power(ps, 0.25) == 125.0        # epsilon + load * (all_cores - epsilon)
    assert power(ps, 1.0) == 200.0


def test_host_power_caps_load_at_core_count():
    host = Host(0, "h", 4, (PState(1e9, 10.0, 20.0, 60.0),), 0, None, (), {}, {}, "")
    assert host_power(host, 0, 0) == 10.0
    assert host_power(host, 0, 2) == pytest.approx(40.0)
    assert host_power(host, 0, 9) == pytest.approx(60.0)
