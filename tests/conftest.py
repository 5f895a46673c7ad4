"""Shared fixtures: golden cases recorded with real Batsim 4.2.1, transcripts, free TCP endpoints.

``tests/`` is on ``sys.path`` (pytest's rootdir conftest), so test modules import the
helpers as ``from helpers import ...``.
"""
from __future__ import annotations

import pytest

from helpers import (GOLDEN, free_tcp_endpoint as _free_endpoint, golden_cases, read_transcript,  # noqa: F401
                     transcript_path)
from helpers.batsim import real_batsim as real_batsim_command
from helpers.early import end_all as end_early_jobs, start_needed as start_early_jobs
from helpers.rl import emulate_command


def pytest_collection_finish(session):
    """The slow one-subprocess checks of the tests about to run start now, in the background
    (helpers/early.py)."""
    if not session.config.option.collectonly:
        start_early_jobs(session.items)


def pytest_sessionfinish(session):
    end_early_jobs()


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
    """``$BATSCHED_PY_BATSIM`` when it is a real Batsim binary; the test skips otherwise, as in CI."""
    command = real_batsim_command()
    if command is None:
        pytest.skip("no real Batsim: set BATSCHED_PY_BATSIM to a batsim executable")
    return command


@pytest.fixture(params=["emulate", "real"])
def batsim_process(request, monkeypatch) -> str:
    """``$BATSCHED_PY_BATSIM`` for a backend="batsim" test, run twice: ``batsched-py emulate`` (the
    backend's code path against our emulator), then a real Batsim 4.2.1 (skipped without one)."""
    command = emulate_command() if request.param == "emulate" else request.getfixturevalue("real_batsim")
    monkeypatch.setenv("BATSCHED_PY_BATSIM", command)
    return command
