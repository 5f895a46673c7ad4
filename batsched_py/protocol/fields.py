"""Typed reads of JSON fields, each failure naming the field's place in the message."""
import math
import sys
from typing import Any, Mapping

from .errors import ProtocolError

_MISSING = object()


def require_object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ProtocolError(f"expected a JSON object, got {_kind(value)}", where)
    return value


def get(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str,
        default: Any = _MISSING) -> Any:
    """``data[key]`` checked against ``kind``; ``default`` makes the field optional."""
    value = data.get(key, _MISSING)
    cls = value.__class__  # json gives exact types: the common case is decided without isinstance
    if cls is kind or (kind.__class__ is tuple and cls in kind):
        return value
    if value is _MISSING:
        if default is _MISSING:
            raise ProtocolError(f"missing field {key!r}", where)
        return default
    if not _is(value, kind):
        raise ProtocolError(f"field {key!r} must be {_names(kind)}, got {_kind(value)}", f"{where}.{key}")
    return value


def number(data: Mapping[str, Any], key: str, where: str, default: Any = _MISSING) -> Any:
    """A finite JSON number: NaN, +-Infinity and integers beyond a double's range are refused."""
    value = get(data, key, (int, float), where, default)
    if value.__class__ is float:
        if not math.isfinite(value):
            raise ProtocolError(f"field {key!r} must be a finite number, got {value}", f"{where}.{key}")
    elif value.__class__ is int and not -MAX_DOUBLE_INT <= value <= MAX_DOUBLE_INT:
        raise ProtocolError(f"field {key!r} is too large for a double ({_digits(value)} digits)", f"{where}.{key}")
    return value


MAX_DOUBLE_INT = int(sys.float_info.max)


def _digits(value: int) -> int:
    return max(1, math.ceil(value.bit_length() * math.log10(2)))


def string_list(data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    items = get(data, key, list, where)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ProtocolError(f"must be a string, got {_kind(item)}", f"{where}.{key}[{i}]")
    return tuple(items)


def string_map(data: Mapping[str, Any], key: str, where: str, default: Any = _MISSING) -> Any:
    """An object whose values are strings (SimGrid properties); ``default`` makes it optional."""
    items = get(data, key, dict, where, default)
    if items is not default:
        for name, value in items.items():
            if value.__class__ is not str:
                raise ProtocolError(f"must be a string, got {_kind(value)}", f"{where}.{key}.{name}")
    return items


def _is(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # JSON booleans are not numbers, although Python's bool subclasses int.
    if isinstance(value, bool) and bool not in kinds:
        return False
    return isinstance(value, kinds)


def _names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(_JSON_NAMES.get(k, k.__name__) for k in kinds)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return _JSON_NAMES.get(type(value), type(value).__name__)


_JSON_NAMES = {dict: "an object", list: "an array", str: "a string", int: "an integer",
               float: "a number", bool: "a boolean"}
