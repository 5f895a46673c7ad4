"""SIGINT and SIGTERM as an exception, so that a run stopped by Ctrl-C or by a batch system's
timeout closes its outputs and marks them incomplete, saying which signal stopped it."""
import signal
import threading
from contextlib import contextmanager
from typing import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread by SIGINT or SIGTERM; ``signal`` is the signal's name."""

    def __init__(self, signal_name: str = "SIGINT"):
        super().__init__(signal_name)
        self.signal = signal_name


def interruption(exc: BaseException) -> str:
    """What stopped a run, for its _INCOMPLETE marker: 'interrupted by SIGTERM', ..."""
    return f"interrupted by {getattr(exc, 'signal', 'SIGINT')}"


def exit_status(exc: BaseException) -> int:
    """The shell's status for a command ended by the signal: 128 + its number (130: SIGINT)."""
    return 128 + signal.Signals[getattr(exc, "signal", "SIGINT")].value


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`Interrupted` (main thread only:
    elsewhere Python cannot install handlers, and the block runs unchanged)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Interrupted(signal.Signals(signum).name)
    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
