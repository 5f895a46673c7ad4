"""The emulator's progress report on stderr: jobs finished out of the workloads' jobs.

On a terminal: a bar (tqdm when installed, else one line rewritten with ``\\r``). Elsewhere (a
log file, a batch system's output): plain lines, one per tenth of the jobs, never a ``\\r``.
Dynamic jobs, unknown beforehand, raise the total as they are submitted."""
from __future__ import annotations

import sys
import time
from typing import Callable, Optional, TextIO

Update = Callable[[int, int], None]      # (jobs submitted so far, jobs finished)


def progress_bar(enabled: bool, total: int, stream: Optional[TextIO] = None) -> tuple[Optional[Update],
                                                                                       Callable[[], None]]:
    """``(update, close)`` for a run of ``total`` jobs; ``(None, no-op)`` when disabled."""
    if not enabled:
        return None, lambda: None
    stream = stream or sys.stderr      # looked up at call time, so redirections apply
    if not stream.isatty():
        return _lines(total, stream)
    try:
        from tqdm import tqdm
    except ImportError:
        return _rewritten_line(total, stream)
    bar = tqdm(total=total, unit="job", desc="finished", file=stream)

    def update(submitted: int, finished: int) -> None:
        bar.total = max(total, submitted)
        bar.n = finished
        bar.refresh()
    return update, bar.close


def _text(total: int, submitted: int, finished: int) -> str:
    total = max(total, submitted)
    return f"{finished}/{total} jobs finished ({100 * finished / total if total else 100:.0f}%)"


def _lines(total: int, stream: TextIO) -> tuple[Update, Callable[[], None]]:
    shown, text = -1, ""       # (the tenth last shown, the last count)

    def update(submitted: int, finished: int) -> None:
        nonlocal shown, text
        text = _text(total, submitted, finished)
        tenth = 10 * finished // max(total, submitted, 1)
        if tenth > shown:
            shown = tenth
            print(text, file=stream, flush=True)

    def close() -> None:       # the final count, unless it was the last line
        if shown < 10 and text:
            print(text, file=stream, flush=True)
    return update, close


def _rewritten_line(total: int, stream: TextIO) -> tuple[Update, Callable[[], None]]:
    shown, text = 0.0, ""       # (when the count was last shown, and the last count)

    def update(submitted: int, finished: int) -> None:
        nonlocal shown, text
        text = "\r" + _text(total, submitted, finished)
        now = time.monotonic()
        if now - shown > 0.5:
            shown = now
            print(text, end="", file=stream, flush=True)

    def close() -> None:   # the final count, not the last one shown
        if text:
            print(text, file=stream, flush=True)
    return update, close
