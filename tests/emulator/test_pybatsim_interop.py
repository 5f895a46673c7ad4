"""pybatsim 3.2.1 schedulers against `batsched-py emulate` (skipped when pybatsim is absent)."""
import pytest

pybatsim = pytest.importorskip("pybatsim", reason="pybatsim 3.2.1 is not installed in this environment")


def test_pybatsim_available():
    # The full interop run (easyBackfill / fillerSched vs the golden schedules) needs pybatsim's
    # launcher; it is written once pybatsim is installable here.
    assert pybatsim
