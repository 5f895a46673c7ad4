"""Only the opt-in compiled build lives here; setup.cfg holds the metadata.

    BATSCHED_PY_COMPILE=1 pip install --no-build-isolation .

compiles ``batsched_py.compiled.MYPYC_MODULES`` with mypyc (mypy must be installed, and build
isolation would hide it).  Without the variable this is the plain setup.cfg build: pure Python.
"""
import os
import runpy
import sys
from importlib.util import find_spec
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
EDITABLE_COMMANDS = {"editable_wheel", "develop"}    # pip install -e: PEP 660, legacy


def mypyc_extensions(argv: list[str]) -> list:
    if EDITABLE_COMMANDS & set(argv):
        sys.exit("BATSCHED_PY_COMPILE=1 cannot be used with an editable install (pip install -e): the "
                 "compiled modules would shadow edits to their .py files; install without -e")
    # (setuptools before 70.1 builds wheels with the wheel package's bdist_wheel)
    missing = [name for name, module in (("mypy", "mypyc"), ("wheel", "wheel")) if find_spec(module) is None]
    if "wheel" in missing and find_spec("setuptools.command.bdist_wheel") is not None:
        missing.remove("wheel")
    if missing:
        sys.exit(f"BATSCHED_PY_COMPILE=1 needs {' and '.join(missing)}: pip install {' '.join(missing)}, "
                 "then pip install --no-build-isolation .")
    from mypyc.build import mypycify
    modules = runpy.run_path(str(HERE / "batsched_py" / "compiled.py"))["MYPYC_MODULES"]
    # Type errors fail the build in the compiled modules only (silent: in the modules they import);
    # procset ships no type information; one group library, named after the package.
    return mypycify(["--ignore-missing-imports", "--follow-imports=silent", *modules], group_name="batsched_py")


if __name__ == "__main__":     # (as setuptools runs it too; tests import the functions above)
    if os.environ.get("BATSCHED_PY_COMPILE", "") not in ("", "0"):
        setup(ext_modules=mypyc_extensions(sys.argv[1:]))
    else:
        setup()
