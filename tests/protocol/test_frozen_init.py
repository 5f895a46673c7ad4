"""protocol.frozen.fast_init: the same constructor as the dataclass's, storing through the slots."""
from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from batsched_py import protocol as p
from batsched_py.protocol.frozen import fast_init


def _pair():
    """Two identical frozen slotted dataclasses (one left as dataclasses made it), with a base."""
    def make():
        @dataclasses.dataclass(frozen=True, slots=True)
        class Base:
            t: float

        @dataclasses.dataclass(frozen=True, slots=True)
        class Thing(Base):
            name: str = ""
            items: list = dataclasses.field(default_factory=list)
            n: int = 3
        return Thing
    return make(), fast_init(make())


def test_same_signature_and_same_objects():
    plain, fast = _pair()
    ours, theirs = inspect.signature(fast).parameters, inspect.signature(plain).parameters
    assert [(n, repr(q.default), q.kind) for n, q in ours.items()] == \
        [(n, repr(q.default), q.kind) for n, q in theirs.items()]     # (annotations aside)
    for args, kwargs in (((1.0,), {}), ((1.0, "a", [1], 4), {}), ((2.0,), {"n": 7, "items": [2]})):
        a, b = plain(*args, **kwargs), fast(*args, **kwargs)
        assert dataclasses.astuple(a) == dataclasses.astuple(b) and repr(a).split("(", 1)[1] == repr(b).split("(", 1)[1]


def test_factory_gives_a_fresh_value_each_time_and_none_is_a_value():
    _, fast = _pair()
    assert fast(1.0).items is not fast(1.0).items
    assert fast(1.0, items=None).items is None


def test_still_frozen_and_argument_errors_as_before():
    plain, fast = _pair()
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast(1.0).name = "x"
    for cls in (plain, fast):
        with pytest.raises(TypeError):
            cls()
        with pytest.raises(TypeError):
            cls(1.0, nope=1)


def test_refuses_what_it_cannot_reproduce():
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(slots=True)
    class NotFrozen:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self):
            pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class KwOnly:
        a: int = dataclasses.field(kw_only=True)

    for cls in (NoSlots, NotFrozen, Checked, KwOnly):
        with pytest.raises(TypeError, match="not a plain frozen slotted dataclass"):
            fast_init(cls)


@pytest.mark.parametrize("cls", [p.Message, p.JobDescription, p.JobProgress, *p.EVENT_TYPES.values()],
                         ids=lambda c: c.__name__)
def test_protocol_classes_use_it_and_still_copy_pickle_and_replace(cls):
    assert any(name.startswith("_set_") for name in cls.__init__.__code__.co_names)   # (fast_init's)
    assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
    required = [f for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    obj = cls(*[1.0 if f.name in ("timestamp", "now") else "x" for f in required])
    assert copy.copy(obj) == obj == pickle.loads(pickle.dumps(obj)) == dataclasses.replace(obj)
