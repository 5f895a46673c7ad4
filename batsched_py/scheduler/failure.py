"""An exception raised by the scheduler side while it answered a message, as one line naming when and where."""

from ..errors import BatschedError


class SchedulerFailure(BatschedError, RuntimeError):
    """The policy raised while handling a message; ``__cause__`` holds the original exception."""


def describe(exc: BaseException) -> str:
    """``Type: message (at file:line)``, the line being the innermost frame of the traceback."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" (at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno})" if tb is not None else ""
    return f"{type(exc).__name__}: {exc}{where}"


def policy_failure(exc: Exception, now: float) -> Exception:
    """What to raise for ``exc``, raised by the scheduler side answering the message of time ``now``:
    ``exc`` itself when it is one of the package's errors (they name what and where: a refused decision,
    a bad option), else a SchedulerFailure naming the time and the line that raised it (a bug in the
    policy's own code: a KeyError, a TypeError, ...), with ``exc`` as its cause."""
    if isinstance(exc, BatschedError):
        return exc
    failure = SchedulerFailure(f"the scheduler failed at t={now:g} (answering that message): {describe(exc)}")
    failure.__cause__ = exc     # (what ``raise failure from exc`` sets)
    return failure
