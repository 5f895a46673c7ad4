"""SIGINT and SIGTERM as an exception, so that a run stopped by Ctrl-C or by a batch system's
timeout closes its outputs and marks them incomplete, saying which signal stopped it."""
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, NoReturn

SIGNALS = (signal.SIGINT, signal.SIGTERM)

#: Longest sleep in one blocking call of a wait that may be long (seconds).  A signal that comes
#: just before the thread enters the call (its handler pending, no call yet to interrupt) is only
#: served when the call returns: Ctrl-C or SIGTERM would otherwise wait for the whole wait.
WAIT_SLICE = 0.5


class _Deferring:
    """signals_deferred's state: blocks open, and the signal received meanwhile (raised when they close)."""
    depth = 0
    pending = ""


class _Interrupting:
    """signals_interrupt's state: blocks open, and the signal already raised.  Once one is raised the
    work is stopping, and a repeat (a batch system repeats its SIGTERM) is ignored until the outermost
    block closes: it would only cut the cleanup short, or the report of the stop."""
    depth = 0
    stopping = ""


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread by SIGINT or SIGTERM; ``signal`` is the signal's name."""

    def __init__(self, signal_name: str = "SIGINT"):
        super().__init__(signal_name)
        self.signal = signal_name


def interruption(exc: BaseException) -> str:
    """What stopped a run, for its _INCOMPLETE marker: 'interrupted by SIGTERM', ..."""
    return f"interrupted by {getattr(exc, 'signal', 'SIGINT')}"


def exit_after_stop(status: int) -> NoReturn:
    """End the process with ``status``; a command stopped by a signal (status > 128) ignores any
    more of them while it exits: a batch system repeats its SIGTERM, which would otherwise cut
    short the exit's own cleanup (multiprocessing stopping a training's actor processes) and
    replace the status.  Only a process's entry point calls this: a caller in the same process
    (a test, a notebook) keeps its handlers."""
    if status > 128:
        for s in SIGNALS:
            signal.signal(s, signal.SIG_IGN)
    sys.exit(status)


def run_command(name: str, main: Callable[[], int]) -> NoReturn:
    """A command's process (``batsched-py``, a script): ``main()`` with SIGINT and SIGTERM raised
    as Interrupted throughout, so that a signal between its own interruptible blocks, or repeated
    while it reports its stop, still ends it with the signal's status (said as ``NAME:
    interrupted by ...``); then its exit (see :func:`exit_after_stop`)."""
    try:
        with signals_interrupt():
            status = main()
    except KeyboardInterrupt as exc:
        print(f"{name}: {interruption(exc)}", file=sys.stderr)
        status = exit_status(exc)
    exit_after_stop(status)


def exit_status(exc: BaseException) -> int:
    """The shell's status for a command ended by the signal: 128 + its number (130: SIGINT)."""
    return 128 + signal.Signals[getattr(exc, "signal", "SIGINT")].value


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`Interrupted` (main thread only:
    elsewhere Python cannot install handlers, and the block runs unchanged).  A library that
    re-raises it as a bare KeyboardInterrupt (ray.wait does) still ends the block with the name
    of the signal received."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[str] = []

    def handler(signum, frame):
        received.append(signal.Signals(signum).name)
        if _Interrupting.stopping:
            return
        if _Deferring.depth:
            _Deferring.pending = _Deferring.pending or received[-1]
            return
        _Interrupting.stopping = received[-1]
        raise Interrupted(received[-1])
    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    _Interrupting.depth += 1
    try:
        yield
    except KeyboardInterrupt as exc:
        if received and not isinstance(exc, Interrupted):
            raise Interrupted(received[-1]) from exc
        raise
    finally:
        _Interrupting.depth -= 1
        if not _Interrupting.depth:
            _Interrupting.stopping = ""
        for s, h in previous.items():
            signal.signal(s, h)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Within the block, a SIGINT or SIGTERM that :func:`signals_interrupt` turns into
    :class:`Interrupted` waits until the block ends: a file being written (a checkpoint, whose
    writer turns an exception raised inside it into its own RuntimeError) is finished first."""
    _Deferring.depth += 1
    try:
        yield
    finally:
        _Deferring.depth -= 1
        if not _Deferring.depth and _Deferring.pending:
            name, _Deferring.pending = _Deferring.pending, ""
            _Interrupting.stopping = name
            raise Interrupted(name)
