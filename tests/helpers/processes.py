"""Process checks shared by the launcher and campaign tests."""
from __future__ import annotations

import os
import time
from typing import Callable


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_until(condition: Callable[[], bool], seconds: float = 120.0, step: float = 0.2) -> bool:
    """Whether ``condition()`` became true within ``seconds``: a generous limit, so that a busy
    machine (other processes on every core) only makes a test slower, never fail."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True
