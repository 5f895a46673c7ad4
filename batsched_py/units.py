"""The time units a platform may count in (SimGrid has none: a platform written in minutes runs in
minutes), checked wherever a command line or a caller names one."""

# each unit in seconds
SECONDS_PER = {"s": 1.0, "min": 60.0, "h": 3600.0}


def check_time_unit(unit: str, where: str = "--time-unit") -> str:
    """``unit`` when it is one of SECONDS_PER; else a ValueError naming ``where``."""
    if unit not in SECONDS_PER:
        raise ValueError(f"{where} {unit!r}: not a time unit; choose one of {', '.join(SECONDS_PER)}".lstrip())
    return unit
