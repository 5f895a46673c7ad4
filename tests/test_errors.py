"""One error root: every exception class the package defines (but private ones) derives from
BatschedError and keeps its builtin parent, so that callers catch the package's errors in one
clause and tell a policy's own bug (KeyError, TypeError...) apart by type."""
import importlib
import inspect
import pkgutil

import pytest

import batsched_py
from batsched_py.errors import BatschedError


def _package_exceptions() -> list[type[BaseException]]:
    found = []
    for info in pkgutil.walk_packages(batsched_py.__path__, "batsched_py."):
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as exc:    # an optional extra that is not installed (torch, ray, ...)
            if (exc.name or "").partition(".")[0] == "batsched_py":
                raise
            continue
        found += [cls for name, cls in vars(module).items()
                  if inspect.isclass(cls) and issubclass(cls, Exception) and not issubclass(cls, Warning)
                  and cls.__module__ == module.__name__ and not name.startswith("_")]
    return found


def test_every_error_of_the_package_derives_from_the_root():
    errors = _package_exceptions()
    assert len(errors) > 20
    assert [cls.__qualname__ for cls in errors if not issubclass(cls, BatschedError)] == []


@pytest.mark.parametrize("name, parent", [("batsched_py.protocol.ProtocolError", ValueError),
                                          ("batsched_py.models.errors.EmulatorError", RuntimeError),
                                          ("batsched_py.scheduler.registry.UnknownSchedulerError", KeyError),
                                          ("batsched_py.transport.zmq_server.PeerTimeout", TimeoutError),
                                          ("batsched_py.policies.profile.TimeResolutionError", ValueError)])
def test_an_error_keeps_its_builtin_parent(name, parent):
    module, _, cls_name = name.rpartition(".")
    cls = getattr(importlib.import_module(module), cls_name)
    assert issubclass(cls, BatschedError) and issubclass(cls, parent)
    with pytest.raises(parent):
        raise cls("x")
