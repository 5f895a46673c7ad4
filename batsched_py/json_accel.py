"""orjson, the optional JSON accelerator (``pip install 'batsched_py[fast]'``), where it is safe.

orjson before 3.9.15 recurses on the C stack without a limit: text nested some 100,000 deep (a
malformed message, a hostile workload file) crashes the process instead of raising an error.  Such
a version is ignored, as if orjson were absent: the readers then take Python's json, which names
the fault in one line.  ``loads``/``dumps`` are None when no usable orjson is installed.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

__all__ = ["loads", "dumps", "DecodeError", "MIN_VERSION", "usable"]

MIN_VERSION = (3, 9, 15)     # the first orjson that refuses text nested deeper than 1,024 levels

loads: Optional[Callable[[bytes], Any]] = None
dumps: Optional[Callable[[Any], bytes]] = None
DecodeError: type[Exception] = ValueError


def usable(version: str) -> bool:
    """Whether orjson ``version`` ("3.9.15", "3.10.0rc1") limits its nesting depth."""
    parts = []
    for part in version.split(".")[:3]:
        digits = "".join(c for c in part[:4] if c.isdigit()) if part[:1].isdigit() else ""
        parts.append(int(digits) if digits else 0)
    return tuple(parts) >= MIN_VERSION


try:
    import orjson as _orjson
except ImportError:     # pragma: no cover - the tests hide it by patching the readers' names
    pass
else:
    if usable(getattr(_orjson, "__version__", "0")):
        loads, dumps, DecodeError = _orjson.loads, _orjson.dumps, _orjson.JSONDecodeError
