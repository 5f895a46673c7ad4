"""Progress reporting for long conversions.

tqdm is optional: when it is missing (or disabled) we fall back to a plain
counter on stderr, printed every ``every`` items, so long conversions of
archive traces never look frozen.
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
    if tqdm is not None:
        yield from tqdm(items, desc=desc, unit=f" {unit}", file=sys.stderr, leave=False)
        return
    count = 0
    for count, item in enumerate(items, 1):
        if count % every == 0:
            print(f"{desc}: {count} {unit}", file=sys.stderr, flush=True)
        yield item
    print(f"{desc}: {count} {unit}, done", file=sys.stderr, flush=True)
