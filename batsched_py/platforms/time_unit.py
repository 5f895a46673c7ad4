"""The time unit a platform counts in, guessed from how long its hosts take to switch.

SimGrid has no unit: a platform whose speeds and workloads whose profiles are written in
minutes (the Grid'5000 Taurus platforms of GridGym and their weeks) runs in minutes, and then
its energies are in W·min, not J.  A physical node takes minutes to boot: when switching a
host on or off takes a few time units only, those units are minutes."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..models.platform import PlatformError, load_platform
from ..units import check_time_unit

# switching on and off within this many time units: the unit is the minute
MINUTES_IF_SWITCHING_WITHIN = 10.0


def detect_time_unit(platform: str | Path) -> Optional[tuple[str, str]]:
    """("min", why) for a platform counting in minutes, ("s", why) for one counting in seconds,
    None when its hosts cannot sleep (nothing to tell from) or it cannot be read."""
    try:
        hosts = load_platform(platform, energy=True).hosts
    except (PlatformError, OSError, ValueError):
        return None
    for host in hosts:
        if host.sleep_pstates:
            sleep = host.sleep_pstates[0]
            on, off = host.switch_on_time(sleep), host.switch_off_time(sleep)
            if max(on, off) <= MINUTES_IF_SWITCHING_WITHIN:
                return "min", (f"its hosts switch on in {on:g} and off in {off:g} time units, minutes "
                               "for a real node")
            return "s", f"its hosts switch on in {on:g} and off in {off:g} time units, seconds"
    return None


def resolve_time_unit(given: Optional[str], platform: Optional[str | Path]) -> tuple[str, Optional[str]]:
    """The time unit to label with: ``given`` (--time-unit) when set, else the platform's
    detected one (if a platform is given), else seconds; and a note to print when it was detected
    as other than s."""
    if given:
        return check_time_unit(given), None
    detected = detect_time_unit(platform) if platform else None
    if detected is None or detected[0] == "s":
        return "s", None
    unit, why = detected
    return unit, (f"time unit: {unit}, detected from {platform} ({why}); energies are in W·{unit}; "
                  f"--time-unit s to say otherwise")
