"""Policies by name, from the ``batsched_py.schedulers`` entry-point group (name = "module:Class"):
batsched_py's own (setup.cfg) and other packages' alike; :func:`register` adds one in a program.

The registry imports no policy by name: it sits below them (scheduler -> protocol), so the
policies, the agents' schedulers and the plugins all depend on it and never the other way."""
import warnings
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable, Mapping, Optional

from .base import Scheduler
from .failure import describe
from ..errors import BatschedError

ENTRY_POINT_GROUP = "batsched_py.schedulers"
PACKAGE = "batsched_py"
_REGISTRY: dict[str, type[Scheduler]] = {}
_BROKEN: dict[str, str] = {}    # plugin name -> why it cannot be used


class UnknownSchedulerError(BatschedError, KeyError):
    def __str__(self) -> str:
        return self.args[0]


class SchedulerOptionsError(BatschedError, TypeError):
    """Options given as something else than a mapping (a list, a string...)."""


def register(name: str) -> Callable[[type[Scheduler]], type[Scheduler]]:
    def add(cls: type[Scheduler]) -> type[Scheduler]:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"scheduler name {name!r} is already taken by {_REGISTRY[name].__qualname__}")
        _REGISTRY[name] = cls
        return cls
    return add


def _builtin_first(ep: EntryPoint) -> bool:
    """Sort key: batsched_py's own entry points first, so a plugin cannot shadow a built-in name."""
    return not ep.value.startswith(PACKAGE + ".")


def _load_all() -> None:
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=_builtin_first):
        if ep.name in _REGISTRY or ep.name in _BROKEN:
            continue
        # (one broken installed plugin must not break every command: it is skipped, said once)
        try:
            loaded = ep.load()
        except Exception as exc:
            _BROKEN[ep.name] = f"cannot load {ep.value}: {describe(exc)}"
        else:
            if isinstance(loaded, type) and issubclass(loaded, Scheduler):
                _REGISTRY[ep.name] = loaded
                continue
            _BROKEN[ep.name] = f"{ep.value} is not a Scheduler subclass"
        warnings.warn(f"scheduler plugin {ep.name!r} skipped: {_BROKEN[ep.name]}")


def available() -> dict[str, type[Scheduler]]:
    _load_all()
    return dict(sorted(_REGISTRY.items()))


def create(name: str, options: Optional[Mapping[str, Any]] = None) -> Scheduler:
    schedulers = available()
    if name in _BROKEN:
        raise UnknownSchedulerError(f"scheduler {name!r}: {_BROKEN[name]}")
    if not schedulers:
        raise UnknownSchedulerError(f"unknown scheduler {name!r}: no scheduler is registered (the entry points "
                                    f"of group {ENTRY_POINT_GROUP} come from installing batsched_py: pip install -e .)")
    if name not in schedulers:
        raise UnknownSchedulerError(f"unknown scheduler {name!r}; available: {', '.join(schedulers)}")
    if options is not None and not isinstance(options, Mapping):
        raise SchedulerOptionsError(f"scheduler {name!r}: options {options!r} are not a mapping of option names "
                                    "to values (a JSON object)")
    return schedulers[name](options)
