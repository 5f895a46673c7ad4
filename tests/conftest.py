"""Shared fixtures: golden cases recorded with real Batsim 4.2.1, transcripts, free TCP endpoints.

``tests/`` is on ``sys.path`` (pytest's rootdir conftest), so test modules import the
helpers as ``from helpers import ...``.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from helpers import (GOLDEN, free_tcp_endpoint as _free_endpoint, golden_cases, read_transcript,  # noqa: F401
                     transcript_path)
from helpers.rl import emulate_command


@pytest.fixture
def free_tcp_endpoint() -> str:
    """``tcp://127.0.0.1:PORT`` with a port that was free a moment ago."""
    return _free_endpoint()


@pytest.fixture(scope="session")
def golden_dir():
    if not GOLDEN.is_dir():
        pytest.skip(f"golden recordings not found at {GOLDEN}")
    return GOLDEN


@pytest.fixture
def clean_registry(monkeypatch):
    """Registrations made by a test vanish after it."""
    from batsched_py.scheduler import registry
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    return registry


@pytest.fixture(scope="session")
def real_batsim() -> str:
    """``$BATSCHED_PY_BATSIM`` when it names a real Batsim 4 executable (built by hand:
    ../shared/real-batsim/README.md); the test skips otherwise, as it does in CI
    (``batsched-py emulate`` standing in for it is not one)."""
    command = os.environ.get("BATSCHED_PY_BATSIM", "")
    exe = shutil.which(command) if command else None
    if exe is None:
        pytest.skip("no real Batsim: set BATSCHED_PY_BATSIM to a batsim executable")
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    if not version.startswith("4."):
        pytest.skip(f"BATSCHED_PY_BATSIM={command!r} is not Batsim 4 (--version: {version!r})")
    return exe


@pytest.fixture(params=["emulate", "real"])
def batsim_process(request, monkeypatch) -> str:
    """``$BATSCHED_PY_BATSIM`` for a backend="batsim" test, run twice: ``batsched-py emulate`` (the
    backend's code path against our emulator), then a real Batsim 4.2.1 (skipped without one)."""
    command = emulate_command() if request.param == "emulate" else request.getfixturevalue("real_batsim")
    monkeypatch.setenv("BATSCHED_PY_BATSIM", command)
    return command
