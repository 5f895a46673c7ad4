"""Policies by name: built-ins, the ``batsched_py.schedulers`` entry-point group, clear unknown-name errors."""
from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from batsched_py.scheduler import Scheduler, available, create, register, registry
from helpers.plugin import POLICIES, make_plugin


def test_builtins_are_available():
    names = available()
    assert "fcfs" in names and issubclass(names["fcfs"], Scheduler)
    assert list(names) == sorted(names)
    assert all(cls.description for cls in names.values())


def test_every_scheduler_comes_from_the_entry_point_group():
    """batsched_py's own schedulers, the agents' deployable ones too, are entry points of the group
    (setup.cfg), and listing them imports no learning library (torch, stable-baselines3)."""
    eps = {ep.name: ep.value for ep in registry.entry_points(group=registry.ENTRY_POINT_GROUP)}
    want = {"fcfs", "easy", "timeout", "oracle", "deepshutdown", "shutdown-agent", "deepscheduling",
            "scheduling-agent", "elastic-agent", "thermal-allocation", "dqn-allocation", "volunteer-agent"}
    assert want <= set(eps), f"missing from the entry points (reinstall: pip install -e .): {want - set(eps)}"
    assert eps["deepshutdown"] == "batsched_py.agents.deepshutdown.scheduler:DeepShutdown"
    code = ("import sys; from batsched_py.scheduler import available; names = available(); "
            "print(len(names), sorted(m for m in ('torch', 'stable_baselines3', 'gymnasium') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(None, 1)
    assert int(out[0]) >= len(want) and out[1].strip() == "[]"


def test_no_scheduler_registered_is_said(monkeypatch):
    """Run from a source tree that was never installed, the group is empty: said, not 'available: '."""
    monkeypatch.setattr(registry, "entry_points", lambda group: [])
    monkeypatch.setattr(registry, "_REGISTRY", {})
    with pytest.raises(registry.UnknownSchedulerError, match="no scheduler is registered .* pip install -e ."):
        create("fcfs")


def test_create_passes_options(clean_registry):
    @register("test-options")
    class Mine(Scheduler):
        description = "mine"

    s = create("test-options", {"a": 1})
    assert s.options == {"a": 1} and isinstance(s, Mine)


def test_unknown_name_lists_available():
    with pytest.raises(registry.UnknownSchedulerError) as info:
        create("no-such-policy")
    text = str(info.value)
    assert "unknown scheduler 'no-such-policy'" in text and "available:" in text and "fcfs" in text


def test_register_decorator(clean_registry):
    @register("test-registered")
    class Mine(Scheduler):
        description = "mine"

    assert available()["test-registered"] is Mine
    register("test-registered")(Mine)  # same class again: fine
    with pytest.raises(ValueError, match="already taken"):
        @register("test-registered")
        class Other(Scheduler):
            pass


def test_entry_point_group(tmp_path, monkeypatch, clean_registry):
    make_plugin(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    names = available()
    for name, cls in POLICIES.items():
        assert names[name].__name__ == cls
    assert create("test-plugin-ok").description.startswith("test plugin")
    with pytest.raises(ValueError, match="quantum"):
        create("test-plugin-config")
    assert create("test-plugin-config", {"quantum": 2}).options == {"quantum": 2}


def test_entry_point_group_monkeypatched(monkeypatch, clean_registry):
    from importlib.metadata import EntryPoint

    class Fake(Scheduler):
        description = "fake"

    eps = [EntryPoint("test-fake", "x:y", registry.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(EntryPoint, "load", lambda self: Fake)
    monkeypatch.setattr(registry, "entry_points", lambda group: eps if group == registry.ENTRY_POINT_GROUP else [])
    assert available()["test-fake"] is Fake


def test_builtin_name_wins_over_entry_point(monkeypatch, clean_registry):
    from importlib.metadata import EntryPoint
    installed = registry.entry_points(group=registry.ENTRY_POINT_GROUP)
    # (a plugin's "fcfs" listed before batsched_py's own: the built-in still wins, the plugin is not loaded)
    eps = [EntryPoint("fcfs", "x:y", registry.ENTRY_POINT_GROUP), *installed]
    load = EntryPoint.load
    monkeypatch.setattr(EntryPoint, "load", lambda self: pytest.fail("must not load a shadowed entry point")
                        if self.value == "x:y" else load(self))
    monkeypatch.setattr(registry, "entry_points", lambda group: eps)
    assert available()["fcfs"].__module__ == "batsched_py.policies.fcfs"


def test_a_broken_plugin_is_skipped_with_one_warning(monkeypatch, clean_registry):
    """One installed plugin that cannot be loaded (or is no Scheduler) broke every command: list-schedulers
    with a traceback, `run --scheduler fcfs` with "scheduler 'fcfs' failed to start"."""
    from importlib.metadata import EntryPoint
    group = registry.ENTRY_POINT_GROUP
    eps = [EntryPoint("test-broken", "audit_no_such_module:Policy", group),
           EntryPoint("test-not-a-class", "os:getcwd", group), *registry.entry_points(group=group)]
    monkeypatch.setattr(registry, "entry_points", lambda group: eps)
    monkeypatch.setattr(registry, "_BROKEN", {}, raising=False)
    with pytest.warns(UserWarning) as warned:
        names = available()
    assert "fcfs" in names and "test-broken" not in names and "test-not-a-class" not in names
    assert sorted(str(w.message).split(":")[0] for w in warned) == [
        "scheduler plugin 'test-broken' skipped", "scheduler plugin 'test-not-a-class' skipped"]
    assert "ModuleNotFoundError" in " ".join(str(w.message) for w in warned)
    assert create("fcfs").description
    with pytest.raises(registry.UnknownSchedulerError, match="scheduler 'test-not-a-class': os:getcwd is not a "
                                                              "Scheduler subclass"):
        create("test-not-a-class")
