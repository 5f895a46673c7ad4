"""Faster construction of the protocol's frozen slotted dataclasses.

A frozen dataclass's ``__init__`` stores each field through ``object.__setattr__`` (its own
``__setattr__`` refuses); storing through the field's slot descriptor does the same, faster:
events are built once per message and per decision, millions of times in a long simulation.
"""
import dataclasses
from typing import TypeVar

T = TypeVar("T", bound=type)


class _Factory:
    """Default of a field with a default factory (shown as dataclasses shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def fast_init(cls: T) -> T:
    """Give the frozen slotted dataclass ``cls`` an ``__init__`` with the same parameters,
    defaults and result that sets its slots directly."""
    params = dataclasses.fields(cls)
    if not (getattr(cls, "__dataclass_params__").frozen and "__slots__" in cls.__dict__) \
            or any(not f.init or f.kw_only for f in params) or hasattr(cls, "__post_init__"):
        raise TypeError(f"fast_init: {cls.__name__} is not a plain frozen slotted dataclass")
    names: dict = {"_FACTORY": _FACTORY}
    signature, body = [], []
    for f in params:
        names[f"_set_{f.name}"] = getattr(cls, f.name).__set__   # (the slot, maybe a base class's)
        value = f.name
        if f.default is not dataclasses.MISSING:
            names[f"_default_{f.name}"] = f.default
            signature.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            names[f"_factory_{f.name}"] = f.default_factory
            signature.append(f"{f.name}=_FACTORY")
            value = f"_factory_{f.name}() if {f.name} is _FACTORY else {f.name}"
        else:
            signature.append(f.name)
        body.append(f"    _set_{f.name}(self, {value})\n")
    source = f"def __init__(self, {', '.join(signature)}):\n{''.join(body) or '    pass'}\n"
    exec(source, names)     # (as dataclasses itself builds __init__)
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    setattr(cls, "__init__", init)
    return cls
