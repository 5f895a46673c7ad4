"""Shared fixtures: golden cases recorded with real Batsim 4.2.1, transcripts, free TCP endpoints.

``tests/`` is on ``sys.path`` (pytest's rootdir conftest), so test modules import the
helpers as ``from helpers import ...``.
"""
from __future__ import annotations

import pytest

from helpers import (GOLDEN, free_tcp_endpoint as _free_endpoint, golden_cases, read_transcript,  # noqa: F401
                     transcript_path)


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
