"""Batsim interval sets ("0-3 7 9-10") as :class:`procset.ProcSet`."""
import re

from procset import ProcInt, ProcSet

from .errors import ProtocolError

# One interval: "N" or "A-B", ASCII digits only (str.isdigit and int() also accept "²", "٣", "1_0", "+1").
_INTERVAL = re.compile(r"([0-9]+)(?:-([0-9]+))?", re.ASCII)
MAX_RESOURCE_ID = 2 ** 31 - 1  # Batsim stores resource ids as C++ ints


def parse_intervals(text: object, where: str) -> ProcSet:
    """Parse Batsim's string form of an interval set (single spaces between intervals), refusing anything else."""
    if not isinstance(text, str):
        raise ProtocolError(f"expected an interval set string, got {type(text).__name__}", where)
    if not text:
        return ProcSet()
    intervals = []
    for part in text.split(" "):
        m = _INTERVAL.fullmatch(part)
        if m is None:
            if part.startswith("-") and part[1:].isascii() and part[1:].isdigit():
                raise ProtocolError(f"negative resource id in {_short(text)}", where)
            raise ProtocolError(f"invalid interval set {_short(text)}: {_short(part)} is not N or A-B "
                                "(non-negative integers, single spaces between intervals)", where)
        lo = int(m[1])
        hi = lo if m[2] is None else int(m[2])
        if hi < lo:
            raise ProtocolError(f"invalid interval set {_short(text)}: {_short(part)} ends before it starts", where)
        if hi > MAX_RESOURCE_ID:
            raise ProtocolError(f"invalid interval set {_short(text)}: resource id {hi} is beyond {MAX_RESOURCE_ID}", where)
        intervals.append((lo, hi))
    return procset_from_intervals(intervals)


def procset_from_intervals(intervals: list[tuple[int, int]]) -> ProcSet:
    """A ProcSet from (lo, hi) pairs, fast when they are already canonical.

    ``ProcSet(*intervals)`` merges one interval at a time (about 6 us each), the
    largest cost of decoding a message.  Batsim always writes canonical sets
    (ascending, disjoint, non-adjacent), so those are adopted as they are; anything
    else goes through procset's own merge.
    """
    previous = -2
    for lo, hi in intervals:
        if lo <= previous + 1:
            return ProcSet(*intervals)
        previous = hi
    procs = ProcSet()
    procs._itvs = [ProcInt(lo, hi) for lo, hi in intervals]  # procset's own representation
    return procs


def _short(text: str, limit: int = 60) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


def format_intervals(procs: ProcSet) -> str:
    """Batsim's canonical form: ascending, merged intervals, ``a-b`` or ``a``."""
    return str(procs)
