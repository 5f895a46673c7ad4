"""The opt-in compiled build: ``BATSCHED_PY_COMPILE=1 pip install --no-build-isolation .`` compiles
:data:`MYPYC_MODULES` with mypyc (see setup.py).  The pure-Python package is the default and
behaves the same; :func:`compiled_modules` tells which build is imported.
"""
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import TYPE_CHECKING

#: What the compiled build compiles: the per-message work of the emulator and of the scheduler
#: side (with the request/reply loop every driver shares, transport/backend.py's drive), except
#: batsched_py.protocol (mypy 2.4's mypyc cannot build its frozen slotted event dataclasses, and
#: compiling its other modules saved under 5% of decoding) and the classes users subclass
#: (Scheduler, the policies): as native classes, compiled code would ignore a subclass's class
#: attributes; marked non-native, mypy 2.4's mypyc still checks the ``self`` of a compiled method against
#: the subclasses compiled with it when they are few (EASY's: EASY, SAF, SJF).
MYPYC_MODULES = (
    "batsched_py/emulator/decisions.py",
    "batsched_py/emulator/engine.py",
    "batsched_py/emulator/jobs.py",
    "batsched_py/emulator/machines.py",
    "batsched_py/emulator/options.py",
    "batsched_py/emulator/outputs.py",
    "batsched_py/emulator/state.py",
    "batsched_py/emulator/submitters.py",
    "batsched_py/emulator/switches.py",
    "batsched_py/emulator/timeline.py",
    "batsched_py/models/profiles.py",
    "batsched_py/models/workload.py",
    "batsched_py/policies/profile.py",
    "batsched_py/scheduler/session.py",
    "batsched_py/scheduler/view.py",
    "batsched_py/transport/backend.py",
)

# The compiled classes a scheduler holds (its view, reservation profile, session), and Machines,
# are marked mypyc_attr(allow_interpreted_subclasses=True): they can then be subclassed, and
# copied and pickled as in pure Python (copy and pickle create an instance without arguments,
# which mypyc otherwise refuses by calling __init__; mypy 2.4's serializable=True never calls
# __init__).  Compiled code calls a compiled class's own methods directly: a method patched on
# the class is seen by interpreted callers only.
if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr
else:
    def mypyc_attr(*attrs, **kwattrs):
        """``mypy_extensions.mypyc_attr``, which only mypyc reads: a no-op at run time, so that the
        package runs without mypy_extensions."""
        return lambda cls: cls


def compiled_modules() -> list[str]:
    """The package's modules that import from a compiled extension (.so, .pyd) rather than from
    their .py file, sorted: empty for the pure-Python build."""
    root = Path(__file__).resolve().parent
    found = []
    for path in root.rglob("*"):
        suffix = next((s for s in EXTENSION_SUFFIXES if path.name.endswith(s)), None)
        stem = path.name[:-len(suffix)] if suffix else ""
        if stem.isidentifier():     # (not e.g. an extension built for another Python version)
            found.append(".".join((root.name, *path.parent.relative_to(root).parts, stem)))
    return sorted(found)
