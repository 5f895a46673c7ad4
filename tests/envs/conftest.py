import pytest

pytest.importorskip("gymnasium", reason="the environments need the rl extra: pip install 'batsched_py[rl]'")


@pytest.fixture
def emulate_as_batsim(monkeypatch):
    from helpers.rl import emulate_command
    monkeypatch.setenv("BATSCHED_PY_BATSIM", emulate_command())
