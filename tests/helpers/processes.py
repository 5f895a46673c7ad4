"""Process checks shared by the launcher and campaign tests."""
from __future__ import annotations

import os


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
