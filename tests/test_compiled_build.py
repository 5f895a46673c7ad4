"""The opt-in compiled build (setup.py, ``BATSCHED_PY_COMPILE=1``).

test_compiled_wheel_in_a_fresh_venv builds the wheel (in the background from the session's start:
helpers/early.py), installs it in a fresh venv and runs there the compiled-module check and a
selection of this suite against the compiled modules: golden replays (with and without energy, on
a platform whose master host has a loopback link), golden schedules of our policies, power
management, the scheduler API, and the subclass test below.
"""
import copy
import csv
import json
import os
import pickle
import runpy
import subprocess
import sys
import sysconfig
from importlib.util import find_spec
from pathlib import Path

import pytest

from batsched_py import compiled_modules
from batsched_py.compiled import MYPYC_MODULES
from batsched_py.emulator import simulate
from batsched_py.policies.backfilling import EASY
from batsched_py.scheduler import Session
from helpers import GOLDEN
from helpers.build import HANG_GUARD_S, built_wheel, run, succeeded, wheel_command
from helpers.early import Early
from tests.policies.test_emulated_schedules import differences

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = sorted(m[:-len(".py")].replace("/", ".") for m in MYPYC_MODULES)

# run in the venv (but their whole-trace ones): this suite's tests that exercise the compiled modules
IN_VENV = [
    "tests/test_compiled_build.py::test_interpreted_subclass_of_a_policy_overrides_its_hooks",
    "tests/test_compiled_build.py::test_a_scheduler_and_its_session_copy_and_pickle",
    "tests/emulator/test_golden_replay.py::test_messages_match[easy_bf-e128-hpc250]",
    "tests/emulator/test_golden_replay.py::test_outputs_match[easy_bf-e128-hpc250]",
    "tests/emulator/test_golden_replay.py::test_outputs_match[energy_bf-e128-hpc250-E]",
    "tests/emulator/test_golden_replay.py::test_outputs_match[idle_sleeper-taurus-2016w13-E]",
    "tests/policies/test_emulated_schedules.py::test_golden_cases",
    "tests/policies/test_power.py",
    "tests/scheduler/test_scheduler_api.py",
]


def _simulate_golden(case: str, scheduler):
    folder = GOLDEN / case
    args = json.loads((folder / "meta.json").read_text())["batsim_args"]
    return simulate(folder / args[args.index("-p") + 1], [folder / args[args.index("-w") + 1]], scheduler)


def test_interpreted_subclass_of_a_policy_overrides_its_hooks():
    """A subclass of EASY overriding its hooks, over the compiled reservation profile, view and
    session: its hooks are the ones called, super() reaches EASY's, the schedule is batsched's."""
    launched, planned = [], []

    class Traced(EASY):
        def launch(self, job, hosts, mapping=None):
            launched.append(job.id)
            super().launch(job, hosts, mapping)

        def planned_duration(self, job):
            planned.append(job.id)
            return super().planned_duration(job)

    result = _simulate_golden("easy_bf-e128-hpc250", Traced())
    with open(GOLDEN / "easy_bf-e128-hpc250" / "out_jobs.csv") as f:
        diffs = differences(result, csv.DictReader(f))
    assert not diffs, f"{len(diffs)} jobs differ, e.g. {diffs[:3]}"
    assert sorted(launched) == sorted(result.jobs) and planned


def test_a_scheduler_and_its_session_copy_and_pickle():
    """Snapshots of a scheduler (deepcopy, pickle) hold its view and reservation profile, which
    the compiled build compiles."""
    easy = EASY()
    _simulate_golden("easy_bf-e128-hpc250", easy)
    for clone in (copy.deepcopy(easy), pickle.loads(pickle.dumps(easy))):
        assert clone.platform.free_mask == easy.platform.free_mask == clone.platform.all_mask
        assert [r.state for r in clone.platform.resources] == [r.state for r in easy.platform.resources]
        assert clone.jobs.finished.keys() == easy.jobs.finished.keys() and len(clone.jobs) == 250
        assert [(s.begin, s.end, s.available) for s in clone.profile.slices] == \
            [(s.begin, s.end, s.available) for s in easy.profile.slices]
    session = pickle.loads(pickle.dumps(Session(easy)))
    assert session.scheduler.platform.all_mask == easy.platform.all_mask and session.ended is False


def test_compiled_modules_match_the_build():
    """The pure-Python package has none; a compiled one has exactly what setup.py compiles."""
    assert compiled_modules() in ([], EXPECTED)


def _setup_functions() -> dict:
    return runpy.run_path(str(ROOT / "setup.py"), run_name="setup")


@pytest.mark.parametrize("command", ["editable_wheel", "develop"])
def test_compiled_editable_install_is_refused(command):
    """pip install -e runs editable_wheel (PEP 660) or develop (legacy): refused before mypyc runs."""
    with pytest.raises(SystemExit, match="cannot be used with an editable install"):
        _setup_functions()["mypyc_extensions"]([command, "--dist-dir", "x"])


def test_missing_mypy_is_a_one_line_message(monkeypatch):
    mypyc_extensions = _setup_functions()["mypyc_extensions"]
    monkeypatch.setitem(mypyc_extensions.__globals__, "find_spec", lambda name: None)
    with pytest.raises(SystemExit, match=r"^BATSCHED_PY_COMPILE=1 needs mypy and wheel: pip install mypy wheel, "
                                         r"then pip install --no-build-isolation \.$"):
        mypyc_extensions(["bdist_wheel"])


def _site_dirs() -> list[str]:
    """This interpreter's site-packages directories (a venv's own when it runs in one)."""
    return sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})


def _environment() -> dict:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}   # (would shadow the venv's install)


def _build(folder: Path, items) -> dict:
    # (the build also writes .mypy_cache/ by its sources)
    return {"wheel": [{"argv": [str(a) for a in wheel_command(folder)],
                       "env": dict(_environment(), BATSCHED_PY_COMPILE="1")}]}


# mypy and a C compiler at -O3 over one large file: about 45 s of one core, run in the background
# from the session's start (helpers/early.py)
COMPILED_WHEEL = Early("the compiled wheel's build", _build, when=lambda: find_spec("mypyc") is not None)


@pytest.mark.slow
@COMPILED_WHEEL.needed
def test_compiled_wheel_in_a_fresh_venv(tmp_path):
    if find_spec("mypyc") is None:
        pytest.skip("mypy (with mypyc) is not installed: pip install -e '.[dev]'")
    env = _environment()
    build, = COMPILED_WHEEL.ran("wheel")
    succeeded(build)
    wheel = built_wheel(COMPILED_WHEEL.folder)
    assert "-none-any" not in wheel.name
    src = COMPILED_WHEEL.folder / "src"

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel], env=env)
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], env=env).stdout.strip())
    # The dependencies (procset, pytest, ...) come from this interpreter's site-packages, whether
    # it is a venv or not (--system-site-packages would reach the *base* interpreter's, which a
    # venv's lacks). Paths in a .pth file go on sys.path after the venv's site-packages, and
    # their own .pth files are not read, so ``batsched_py`` is still the wheel's, not an editable
    # install's. The repository goes there too: the tests import ``tests.helpers``.
    (site / "batsched_py_tests.pth").write_text("".join(f"{d}\n" for d in [*_site_dirs(), ROOT]))

    probe = ("import json, batsched_py, batsched_py.emulator.engine as e; "
             "print(json.dumps([batsched_py.__file__, e.__file__, batsched_py.compiled_modules()]))")
    init, engine, compiled = json.loads(run([python, "-c", probe], cwd=tmp_path, env=env).stdout)
    assert Path(init).is_relative_to(site) and engine.endswith(sysconfig.get_config_var("EXT_SUFFIX"))
    assert compiled == EXPECTED
    version = run([venv / "bin" / "batsched-py", "--version"], cwd=tmp_path, env=env).stdout
    assert f"(compiled: {len(EXPECTED)} modules)" in version

    tests = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow",
                  *(ROOT / t for t in IN_VENV)], cwd=tmp_path, env=env)
    assert " passed" in tests.stdout, tests.stdout[-2000:]

    refused = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "-e", src],
                             capture_output=True, text=True, timeout=HANG_GUARD_S,
                             env=dict(env, BATSCHED_PY_COMPILE="1"))
    assert refused.returncode != 0 and "cannot be used with an editable install" in refused.stdout + refused.stderr
