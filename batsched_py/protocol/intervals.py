"""Batsim interval sets ("0-3 7 9-10") as :class:`procset.ProcSet`."""
from procset import ProcSet

from .errors import ProtocolError


def parse_intervals(text: object, where: str) -> ProcSet:
    """Parse Batsim's string form of an interval set, refusing anything else."""
    if not isinstance(text, str):
        raise ProtocolError(f"expected an interval set string, got {type(text).__name__}", where)
    try:
        procs = ProcSet.from_str(text)
    except (ValueError, TypeError) as exc:
        raise ProtocolError(f"invalid interval set {text!r} ({exc})", where) from None
    if procs and procs.min < 0:
        raise ProtocolError(f"negative resource id in {text!r}", where)
    return procs


def format_intervals(procs: ProcSet) -> str:
    """Batsim's canonical form: ascending, merged intervals, ``a-b`` or ``a``."""
    return str(procs)
