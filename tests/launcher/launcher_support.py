"""Helpers of the launcher tests: stand-ins for the ``batsim`` binary, process checks, a fixture."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from helpers.processes import alive  # noqa: F401  (the launcher tests import it from here)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CASE = REPO / "tests" / "data" / "golden" / "fcfs_fast-e128-samesubmit"
PLATFORM = CASE / "inputs" / "energy_platform_homogeneous_no_net_128.xml"
WORKLOAD = CASE / "inputs" / "test_same_submit_time.json"

# The real stand-in for Batsim: the package's own emulator, driven through Batsim's command line.
EMULATE = [sys.executable, "-m", "batsched_py.cli", "emulate"]
# A scripted stand-in for the failure paths (crash, silence, ignored SIGTERM).
FAKE = [sys.executable, str(HERE / "fake_batsim.py")]


def read_pid(pidfile: Path, deadline: float = 10.0) -> int:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if pidfile.is_file() and pidfile.read_text().strip():
            return int(pidfile.read_text())
        time.sleep(0.02)
    raise AssertionError(f"the Batsim stand-in never wrote {pidfile}")


@pytest.fixture
def fake_mode(monkeypatch, tmp_path):
    """Select the fake Batsim's behaviour; returns the file where it writes its pid."""
    pidfile = tmp_path / "batsim.pid"

    def select(mode: str) -> Path:
        monkeypatch.setenv("FAKE_BATSIM_MODE", mode)
        monkeypatch.setenv("FAKE_BATSIM_PIDFILE", str(pidfile))
        return pidfile
    return select
