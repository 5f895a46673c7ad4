"""JSON numbers read as Batsim 4.2.1 reads them: RapidJSON's default (not full precision) parser.

Batsim parses its workload and events files with ``Document::Parse`` and no flags, so a number of
16 or more significant digits is not rounded correctly: RapidJSON takes the first digits as an
integer (while it stays below 2^53), converts it to a double, and divides by the power of ten
(``StrtodNormalPrecision``): two roundings, and the result may be 1 ulp off Python's ``float``.
A workload of submission times written with 17 digits gets about one job in ten submitted 1 ulp
earlier or later in Batsim, which moves the simulated clock, and so the energy sums' last printed
digit (the pybatsim_easy-e128-hpc250-E recording).  Use as ``json.load(f, parse_float=...)``.

Batsim parses the scheduler's replies the same way: ``as_batsim_reads`` gives a reply's times as
Batsim reads them.  A CALL_ME_LATER at 1295.0013950000277 (the scheduler's now + 1 s) wakes Batsim
at 1295.0013950000275, which moves the clock and so the epower of the row written then.
"""
from __future__ import annotations

from dataclasses import replace

from .. import protocol as p

__all__ = ["rapidjson_double", "as_batsim_reads"]

_FAST_LIMIT = (1 << 53) - 1        # RapidJSON stops taking fraction digits into its integer above


def _fast_path(d: float, p: int) -> float:
    """RapidJSON's internal::FastPath: ``d * 10^p`` with one rounding (10^p a correctly
    rounded double, as in its table), 0 below 1e-308."""
    if p < -308:
        return 0.0
    if p > 308:          # RapidJSON refuses the number ("too big"): let the caller's check say it
        return float("inf")
    return d * float(10 ** p) if p >= 0 else d / float(10 ** -p)


def rapidjson_double(text: str) -> float:
    """The double RapidJSON's default parser gives for the JSON number ``text`` (one with a
    fraction or an exponent: what ``json`` hands to ``parse_float``)."""
    # At most 15 digits and no exponent: an exact integer divided by an exact power of ten,
    # correctly rounded, as float() is.
    if len(text) <= 16 and "e" not in text and "E" not in text:
        return float(text)
    mantissa, _, exponent = text.replace("E", "e").partition("e")
    minus = mantissa.startswith("-")
    whole, _, fraction = mantissa.lstrip("-").partition(".")
    # ParseNumber: the integer part into a uint64 while it fits, then into a double digit by
    # digit (only the digits taken into the uint64 after the first count as significant).
    i64, digits, d, use_double = 0, 0, 0.0, False
    top, last = (0x0CCCCCCCCCCCCCCC, "8") if minus else (0x1999999999999999, "5")    # int64 / uint64
    for k, ch in enumerate(whole):
        if not use_double and i64 >= top and (i64 != top or ch > last):
            d, use_double = float(i64), True
        if use_double:
            d = d * 10 + int(ch)
        else:
            i64 = i64 * 10 + int(ch)
            digits += k > 0
    exp_frac = 0
    if fraction:
        rest = fraction
        if not use_double:
            k = 0
            while k < len(fraction) and i64 <= _FAST_LIMIT:
                i64 = i64 * 10 + int(fraction[k])
                exp_frac -= 1
                digits += i64 != 0
                k += 1
            d, use_double, rest = float(i64), True, fraction[k:]
        for ch in rest:
            if digits >= 17:
                break
            d = d * 10.0 + int(ch)
            exp_frac -= 1
            digits += d > 0.0
    if not use_double:
        d = float(i64)
    p = (int(exponent) if exponent else 0) + exp_frac
    # StrtodNormalPrecision
    d = _fast_path(_fast_path(d, -308), p + 308) if p < -308 else _fast_path(d, p)
    return -d if minus else d


# The last time read and what Batsim reads for it: a reply's times are mostly one value, its now.
_last = [0.0, 0.0]


def _read(x: float) -> float:
    """``x`` sent as JSON (its shortest repr, as json and orjson write it) and read by Batsim."""
    last = _last
    if x == last[0]:
        return last[1]
    text = repr(x)
    read = x if len(text) <= 16 and "e" not in text else rapidjson_double(text)
    last[0], last[1] = x, read
    return read


def as_batsim_reads(reply: p.Message) -> p.Message:
    """``reply`` with the times that Batsim acts on (its now, each decision's timestamp, a
    CALL_ME_LATER's date) as Batsim reads them from the JSON the scheduler sends: the same
    message (no copy) when they all read back unchanged, as most do."""
    now = _read(reply.now)
    events = reply.events
    read: list | None = None
    for i, e in enumerate(events):
        t = _read(e.timestamp)
        if e.__class__ is p.CallMeLater:
            at = _read(e.at)
            if t != e.timestamp or at != e.at:
                read = read or list(events)
                read[i] = replace(e, timestamp=t, at=at)
        elif t != e.timestamp:
            read = read or list(events)
            read[i] = replace(e, timestamp=t)
    if read is None:
        return reply if now == reply.now else p.Message(now, events)
    return p.Message(now, tuple(read))
