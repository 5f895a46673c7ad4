"""A Batsim workload file's top level, read the same way by everything that reads workloads
(the emulator, the oracle policy, the Batsim 3 upgrade): an unreadable file, text that is not
UTF-8 or JSON, or a wrong shape is named in one line, never a traceback."""
import json
import math
import re
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from .. import json_accel
from ..textfiles import json_fault, not_utf8
from ..errors import BatschedError

# The optional accelerator (json_accel): parses a workload 2-3x faster.
_fast_loads: Optional[Callable[[bytes], Any]] = json_accel.loads
_FastError = json_accel.DecodeError


class WorkloadError(BatschedError, ValueError):
    """Invalid workload; the message names the file and the element."""


def read_workload_file(path: str | Path, parse_float: Callable[[str], float] | None = None
                       ) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
    """The document, its ``profiles`` and its ``jobs``; a WorkloadError saying what is wrong
    (without the path, which callers name as they see it).  parse_float: as json.load's (the
    emulator reads numbers as Batsim does); it must give what ``float`` gives for a number of at
    most 16 characters without an exponent (the fast reader trusts orjson's value for those)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise WorkloadError(f"cannot read it ({exc.strerror or exc})") from None
    data = _fast_parse(raw, parse_float or float)
    if data is None:
        data = _parse(raw, parse_float)
    if not isinstance(data, dict):
        raise WorkloadError("the top level must be a JSON object")
    # (a missing 'jobs' and ids Batsim splits badly are refused by the emulator's reader, as Batsim does)
    profiles, jobs = data.get("profiles", {}), data.get("jobs", [])
    if not isinstance(profiles, dict) or not isinstance(jobs, list):
        raise WorkloadError("'profiles' must be an object and 'jobs' a list")
    return data, profiles, jobs


def _parse(raw: bytes, parse_float: Callable[[str], float] | None) -> Any:
    """``raw`` read by Python's json as a text file (universal newlines) would be: the reference
    reader, and the one whose errors are reported."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WorkloadError(not_utf8(exc)) from None
    if "\r" in text:        # (what open(path, encoding="utf-8") does: error positions stay the same)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        return json.loads(text, parse_float=parse_float)
    except (ValueError, RecursionError) as exc:
        raise WorkloadError(json_fault(exc)) from None


def _all_finite(value: Any) -> bool:
    cls = value.__class__
    if cls is float:
        return value - value == 0.0         # (nan - nan and inf - inf are nan)
    if cls is dict:
        value = value.values()
    elif cls is not list:
        return True
    for item in value:
        cls = item.__class__
        if cls is float:
            if item - item != 0.0:
                return False
        elif (cls is dict or cls is list) and not _all_finite(item):
            return False
    return True


#: What follows a value non_finite finds, in every error that names one.
NO_NAN = "JSON has no NaN nor Infinity (Batsim 4.2.1 aborts)"


def non_finite(value: Any, where: str = "") -> Optional[str]:
    """Where the first NaN or infinity of a JSON value is, and what it is ("jobs[3].subtime is inf"):
    Python's json reads NaN, Infinity and numbers too big for a double (as inf), which Batsim's
    parser refuses and JSON cannot carry to a scheduler."""
    if _all_finite(value):          # (the common case, checked 3-4x faster than the search below)
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{where} is {value}"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = non_finite(item, f"{where}[{key}]" if isinstance(key, int) else
                            f"{where}.{key}" if where and key.isidentifier() else
                            f"{where}[{key!r}]" if where else key)
        if found:
            return found
    return None


# orjson reads every number as float() does, and json hands parse_float the text of those with a
# fraction or an exponent; the two agree unless some number token has an exponent or 17 or more
# characters (where parse_float may round otherwise: RapidJSON's) or is an integer beyond 64 bits
# (a float in orjson).  Such tokens are found in the bytes mapped to "0" for a number character
# ("e" for an exponent's) and " " for any other: a "0e" or a run of 17 "0"s starts the run of
# one, checked alone (a run inside a string matches too and is harmless: its verdict is only ever
# "take json").  A regular expression for the tokens over the whole text took as long as orjson's
# parse; one for "0e" finds it 2.5x faster than bytes.find (which finds the 17 "0"s faster).
_NUMBER_MARKS = bytes(0x30 if chr(byte) in "0123456789+-." else 0x65 if chr(byte) in "eE" else 0x20
                      for byte in range(256))
_EXPONENT = re.compile(b"0e")
_LONG = b"0" * 17
# Text with more such tokens (numbers written with 17 digits) takes json: checking each one costs
# more than json's parse_float calls for them.
_MOST_CHECKED = 100
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


# json refuses text nested deeper than Python's recursion limit (about 1,000 levels), orjson
# (json_accel) deeper than 1,024: orjson reads only text nested at most 2 * _PASSES deep, so that
# both agree.  Its structure is what is left of the text without the
# escapes of backslashes and quotes, then without anything but brackets and quotes, then without
# the empty strings (""): each pass that removes the innermost pairs of brackets ([] then {})
# removes one or two levels, and a string that holds a bracket keeps its quotes, which stay: json
# reads such text.
_PASSES = 32
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'[]{}"')


def _shallow(raw: bytes) -> bool:
    """Whether ``raw`` nests at most 2 * _PASSES deep, with no bracket in a string (False when
    it is not sure)."""
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = raw.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    for _ in range(_PASSES):
        if not structure:
            return True
        structure = structure.replace(b"[]", b"").replace(b"{}", b"")
    return not structure


def _fast_parse(raw: bytes, parse_float: Callable[[str], float]) -> Any:
    """orjson's value of ``raw`` when it is exactly json's with ``parse_float``; None when it may
    not be, or orjson refuses the text (json then reads it and names any fault)."""
    if _fast_loads is None or not _shallow(raw):
        return None
    for count, (start, end) in enumerate(_risky_runs(raw)):
        if count == _MOST_CHECKED or not _same_number(raw[start:end].decode("ascii"), parse_float):
            return None
    try:
        return _fast_loads(raw)
    except _FastError:
        return None


def _risky_runs(raw: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of each run of number characters in ``raw`` that has an exponent or 17 of them."""
    marks = raw.translate(_NUMBER_MARKS)
    for exponent in (True, False):
        at = 0
        while True:
            if exponent:
                found = _EXPONENT.search(marks, at)
                at = -1 if found is None else found.start()
            else:
                at = marks.find(_LONG, at)
            if at < 0:
                break
            start, at = marks.rfind(b" ", 0, at) + 1, marks.find(b" ", at)
            at = len(marks) if at < 0 else at
            yield start, at


def _same_number(token: str, parse_float: Callable[[str], float]) -> bool:
    """False when ``token`` may be a number orjson reads otherwise than json with parse_float
    (a token that is no JSON number is inside a string)."""
    number = _JSON_NUMBER.fullmatch(token)
    if number is None:
        return True
    if not (number.group(1) or number.group(2)):
        return False        # a long integer: perhaps beyond 64 bits
    return float(token).hex() == parse_float(token).hex()
