"""Readable units on the plots' axes: hours or days instead of 2.6e+05 s, kWh instead of
2.08e+08 W·min, kW instead of 16000 W.  Values are plotted multiplied by the factor given."""
from __future__ import annotations

from ..metrics.energy import energy_unit, to_kwh
from ..units import SECONDS_PER


def time_scale(largest: float, time_unit: str) -> tuple[float, str]:
    """(factor, unit) for times up to ``largest`` ``time_unit``: days from 3 days on, hours
    from 3 hours on, else unchanged (and unchanged for a unit we cannot convert)."""
    seconds = SECONDS_PER.get(time_unit)
    if seconds is None:
        return 1.0, time_unit
    for unit, size in (("days", 86400.0), ("hours", 3600.0)):
        if largest * seconds >= 3 * size:
            return seconds / size, unit
    return 1.0, time_unit


def energy_scale(largest: float, time_unit: str) -> tuple[float, str]:
    """(factor, unit) for energies up to ``largest`` (watts x ``time_unit``): kWh from 1 kWh on."""
    kwh = to_kwh(1.0, time_unit)
    if kwh is not None and largest * kwh >= 1:
        return kwh, "kWh"
    return 1.0, energy_unit(time_unit)


def power_scale(largest: float) -> tuple[float, str]:
    """(factor, unit) for powers up to ``largest`` W: kW from 10 kW on."""
    return (1e-3, "kW") if largest >= 1e4 else (1.0, "W")
