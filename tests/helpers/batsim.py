"""A real Batsim for the tests that check against one (built by hand: ../shared/real-batsim/README.md)."""
from __future__ import annotations

import os


def real_batsim() -> str | None:
    """``$BATSCHED_PY_BATSIM`` if it is a real Batsim binary (not ``batsched-py emulate`` standing in
    for it); None otherwise, as in CI, and the tests that need one skip."""
    cmd = os.environ.get("BATSCHED_PY_BATSIM", "").strip()
    return cmd if cmd and os.access(cmd, os.X_OK) and "emulate" not in cmd else None
