"""The energy model a scheduler reads from host properties in SIMULATION_BEGINS.

Batsim 4 names: ``wattage_per_state`` ("idle:epsilon:allcores, ..." or
"idle:allcores, ...", one entry per pstate), ``wattage_off`` and
``sleep_pstates`` ("sleep:off:on").  Batsim 3 platforms use
``watt_per_state`` ("idle:max, ...") and ``watt_off``; both are accepted.
"""
import math
from dataclasses import dataclass, field
from typing import Mapping, Optional
from ..errors import BatschedError


class PowerModelError(BatschedError, ValueError):
    """A host property that cannot be read as an energy model; names the host and property."""


@dataclass(frozen=True, slots=True)
class PStatePower:
    idle: float
    epsilon: float
    all_cores: float


@dataclass(frozen=True, slots=True)
class SleepPStates:
    sleep: int      # the pstate a host rests in while asleep
    switch_off: int  # virtual pstate used while switching off
    switch_on: int   # virtual pstate used while switching on


@dataclass(frozen=True, slots=True)
class PowerModel:
    pstates: tuple[PStatePower, ...]
    wattage_off: Optional[float] = None
    sleep: tuple[SleepPStates, ...] = ()
    # derived from the above once (read for every host a pstate decision touches)
    sleep_pstates: frozenset[int] = field(init=False, repr=False, compare=False)
    virtual_pstates: frozenset[int] = field(init=False, repr=False, compare=False)
    compute_pstates: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        sleep_pstates = frozenset(s.sleep for s in self.sleep)
        virtual = frozenset(p for s in self.sleep for p in (s.switch_off, s.switch_on))
        object.__setattr__(self, "sleep_pstates", sleep_pstates)
        object.__setattr__(self, "virtual_pstates", virtual)
        # pstates a job can run in: neither sleeping nor a switching transition
        object.__setattr__(self, "compute_pstates", tuple(
            p for p in range(len(self.pstates)) if p not in sleep_pstates | virtual))

    def can_sleep(self) -> bool:
        return bool(self.sleep)


def read_power_model(properties: Mapping[str, str], host: str = "?") -> Optional[PowerModel]:
    """The host's model, or None when its properties declare no energy data."""
    text = properties.get("wattage_per_state", properties.get("watt_per_state"))
    if text is None:
        return None
    pstates = read_pstates(text, f"host {host}: property wattage_per_state/watt_per_state")
    off = properties.get("wattage_off", properties.get("watt_off"))
    sleep = read_sleep_pstates(properties.get("sleep_pstates", ""), len(pstates), f"host {host}")
    try:
        wattage_off = None if off is None else float(off)
    except ValueError:
        raise PowerModelError(f"host {host}: wattage_off {off!r} is not a number") from None
    return PowerModel(pstates, wattage_off, sleep)


def read_pstates(text: str, where: str) -> tuple[PStatePower, ...]:
    """The ``wattage_per_state`` (or ``watt_per_state``) text ``text``, one entry per pstate;
    errors begin with ``where``."""
    return tuple(_read_pstate(item, where) for item in text.split(","))


def read_sleep_pstates(text: str, nb_pstates: int, where: str) -> tuple[SleepPStates, ...]:
    """The ``sleep_pstates`` text ``text`` (empty: none) of a host with ``nb_pstates`` pstates;
    errors begin with ``where``."""
    if not text.strip():
        return ()
    return tuple(_read_sleep(item, nb_pstates, where) for item in text.split(","))


def _read_pstate(item: str, where: str) -> PStatePower:
    try:
        values = [float(v) for v in item.strip().split(":")]
    except ValueError:
        raise PowerModelError(f"{where}: {item.strip()!r} is not a list of numbers") from None
    if not all(0 <= v < math.inf for v in values):     # (a negative power would make energy negative)
        raise PowerModelError(f"{where}: {item.strip()!r}: watts must be finite and >= 0")
    if len(values) == 2:  # idle:allcores -- SimGrid takes epsilon equal to idle
        return PStatePower(values[0], values[0], values[1])
    if len(values) == 3:
        return PStatePower(*values)
    raise PowerModelError(f"{where}: {item.strip()!r} needs 2 or 3 values separated by ':'")


def _read_sleep(item: str, nb_pstates: int, where: str) -> SleepPStates:
    try:
        sleep, off, on = (int(v) for v in item.strip().split(":"))
    except ValueError:
        raise PowerModelError(f"{where}: sleep_pstates entry {item.strip()!r} must be sleep:off:on") from None
    for p in (sleep, off, on):
        if not 0 <= p < nb_pstates:
            raise PowerModelError(f"{where}: sleep_pstates names pstate {p}, host has {nb_pstates}")
    return SleepPStates(sleep, off, on)
