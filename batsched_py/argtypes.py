"""Argument types shared by the command lines: numbers are checked where they are read, so a
negative timeout or a NaN switching time is refused with the option's name, not used."""
import argparse
import math

from .units import check_time_unit


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def non_negative(text: str) -> float:
    """A finite number >= 0."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def positive(text: str) -> float:
    """A finite number > 0."""
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not above 0")
    return value


def count(text: str) -> int:
    """An integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def positive_count(text: str) -> int:
    """An integer >= 1."""
    value = count(text)
    if value == 0:
        raise argparse.ArgumentTypeError("0 is not above 0")
    return value


def positive_list(text: str) -> list[float]:
    """Comma-separated finite numbers > 0."""
    return [positive(part.strip()) for part in text.split(",")]


def non_negative_list(text: str) -> list[float]:
    """Comma-separated finite numbers >= 0."""
    return [non_negative(part.strip()) for part in text.split(",")]


def time_unit(text: str) -> str:
    """One of the time units a platform may count in (s, min, h)."""
    try:
        return check_time_unit(text, "")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
