"""Batsim interval sets ("0-3 7 9-10") as :class:`procset.ProcSet`."""
from procset import ProcInt, ProcSet

from .errors import ProtocolError

MAX_RESOURCE_ID = 2 ** 31 - 1  # Batsim stores resource ids as C++ ints


def parse_intervals(text: object, where: str) -> ProcSet:
    """Parse Batsim's string form of an interval set (single spaces between intervals), refusing anything else."""
    if text.__class__ is not str:
        if not isinstance(text, str):
            raise ProtocolError(f"expected an interval set string, got {type(text).__name__}", where)
        text = str(text)
    if not text:
        return ProcSet()
    intervals = []
    for part in text.split(" "):
        first, dash, last = part.partition("-")
        # ASCII digits only: str.isdigit and int() alone also accept "²", "٣", "1_0", "+1".
        if not (first.isdigit() and part.isascii() and (last.isdigit() or not dash)):
            _refuse(text, part, where)
        lo = int(first)
        hi = int(last) if dash else lo
        if hi < lo:
            raise ProtocolError(f"invalid interval set {_short(text)}: {_short(part)} ends before it starts", where)
        if hi > MAX_RESOURCE_ID:
            raise ProtocolError(f"invalid interval set {_short(text)}: resource id {hi} is beyond {MAX_RESOURCE_ID}", where)
        intervals.append((lo, hi))
    return procset_from_intervals(intervals)


def _refuse(text: str, part: str, where: str) -> None:
    if part.startswith("-") and part[1:].isascii() and part[1:].isdigit():
        raise ProtocolError(f"negative resource id in {_short(text)}", where)
    raise ProtocolError(f"invalid interval set {_short(text)}: {_short(part)} is not N or A-B "
                        "(non-negative integers, single spaces between intervals)", where)


def procset_from_intervals(intervals: list[tuple[int, int]]) -> ProcSet:
    """A ProcSet from (lo, hi) pairs with 0 <= lo <= hi, fast when they are already canonical.

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
    return procset_from_canonical(intervals)


def procset_from_canonical(intervals: list[tuple[int, int]]) -> ProcSet:
    """The ProcSet of ascending, disjoint, non-adjacent (lo, hi) pairs with 0 <= lo <= hi,
    adopted as procset 1.0's own representation (a list of ProcInt, which are (inf, sup)
    tuples) without re-merging or re-checking them."""
    if not _ADOPT:
        return ProcSet(*intervals)
    procs = _new_object(ProcSet)
    procs._itvs = [_new_tuple(ProcInt, pair) for pair in intervals]
    return procs


def procset_of_run(lo: int, hi: int) -> ProcSet:
    """``procset_from_canonical([(lo, hi)])`` without the list of pairs: the set a job's
    allocation usually is (one run of consecutive ids), built once per started job."""
    if not _ADOPT:
        return ProcSet((lo, hi))
    procs = _new_object(ProcSet)
    procs._itvs = [_new_tuple(ProcInt, (lo, hi))]
    return procs


_new_object, _new_tuple = object.__new__, tuple.__new__


def _adoption_works() -> bool:
    try:
        return bool(procset_from_canonical([(0, 1), (3, 5)]) == ProcSet((0, 1), (3, 5))
                    and str(procset_from_canonical([(2, 2)])) == "2" and procset_from_canonical([]) == ProcSet()
                    and procset_of_run(2, 4) == ProcSet((2, 4)))
    except Exception:           # pragma: no cover - another procset implementation
        return False


# Checked once with the flag on.  (A flag, not a fallback definition: mypyc, which compiles the
# scheduler's view in the compiled build, refuses redefinitions.)
_ADOPT = True
_ADOPT = _adoption_works()


def _short(text: str, limit: int = 60) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


def format_intervals(procs: ProcSet) -> str:
    """Batsim's canonical form: ascending, merged intervals, ``a-b`` or ``a``.

    (What ``str(procs)`` gives, in a third of the time: once per decision sent.)"""
    return " ".join([str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in procs.intervals()])
