"""Progress reporting for long conversions.

On a terminal, a tqdm bar when tqdm is installed.  Elsewhere (a log file, a batch system's
output), or without tqdm: a plain line on stderr every ``every`` items and the final count,
never a ``\\r``, so long conversions of archive traces never look frozen and logs stay readable.
"""
from __future__ import annotations

import sys
from collections.abc import Generator, Iterable
from typing import TypeVar

T = TypeVar("T")


def progress(items: Iterable[T], desc: str, enabled: bool = True,
             every: int = 50_000, unit: str = "lines") -> Generator[T, None, None]:
    """Yield ``items`` while reporting progress on stderr, counted in ``unit``."""
    if not enabled:
        yield from items
        return
    try:
        from tqdm import tqdm  # optional dependency
    except ImportError:
        tqdm = None
    if tqdm is not None and sys.stderr.isatty():
        yield from tqdm(items, desc=desc, unit=f" {unit}", file=sys.stderr, leave=False)
        return
    count = 0
    for count, item in enumerate(items, 1):
        if count % every == 0:
            print(f"{desc}: {count} {unit}", file=sys.stderr, flush=True)
        yield item
    print(f"{desc}: {count} {unit}, done", file=sys.stderr, flush=True)
