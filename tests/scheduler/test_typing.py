"""A policy is type-checked against batsched_py as pip installs it (PEP 561: the wheel ships
``py.typed``): correct use of the API passes mypy, and mypy points at misuse."""
import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from helpers.build import build_wheel, run
from helpers.early import Early

ROOT = Path(__file__).resolve().parents[2]

GOOD = '''\
from batsched_py import protocol as p
from batsched_py.scheduler import Job, Scheduler, register


@register("typed-first-fit")
class FirstFit(Scheduler):
    description = "start every queued job that fits, lowest host ids first"

    def on_simulation_begins(self, event: p.SimulationBegins) -> None:
        self.ended: list[str] = []
        self.hosts = event.nb_compute_resources

    def on_job_completed(self, job: Job) -> None:
        self.ended.append(job.id)

    def schedule(self) -> None:
        for job in list(self.jobs.queue.values()):
            if job.res <= len(self.platform.free):
                self.execute(job, list(self.platform.free)[:job.res])
        if self.jobs.queue and not self.platform.free:
            self.call_me_later(self.now + 10.0)
'''

BAD = '''\
from batsched_py.scheduler import Job, Scheduler


class Broken(Scheduler):
    def on_job_completed(self, job: Job) -> None:
        job.res + "1"

    def schedule(self) -> None:
        self.call_me_later("soon")
        self.execute(3.5, [0])
'''


@pytest.mark.slow
def test_a_policy_is_type_checked_against_the_installed_package(tmp_path):
    if find_spec("mypy") is None:
        pytest.skip("mypy is not installed: pip install -e '.[dev]'")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    wheel = build_wheel(tmp_path, env)
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv])
    run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q", "--no-deps",
         "--no-index", wheel], env=env)
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    # mypy finds batsched_py in the venv's site-packages only, where a package without py.typed
    # would be "missing library stubs or py.typed marker".
    checked = [sys.executable, "-m", "mypy", "--python-executable", venv / "bin" / "python", "--no-incremental",
               "--follow-imports=silent", "--disallow-untyped-defs"]
    assert "Success: no issues found" in run([*checked, "good.py"], cwd=tmp_path, env=env).stdout
    misuse = subprocess.run([str(c) for c in [*checked, "bad.py"]], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=600)
    out = misuse.stdout
    assert misuse.returncode == 1, out + misuse.stderr
    assert 'bad.py:6: error: Unsupported operand types for + ("int" and "str")' in out, out
    assert 'bad.py:9: error: Argument 1 to "call_me_later" of "Scheduler" has incompatible type "str"' in out, out
    assert 'bad.py:10: error: Argument 1 to "execute" of "Scheduler" has incompatible type "float"' in out, out
    assert "Found 3 errors in 1 file" in out, out


def _mypy(folder: Path, items) -> dict:
    return {"mypy": [{"argv": [sys.executable, "-m", "mypy", "--cache-dir", str(folder / "cache"), "batsched_py"],
                      "cwd": str(ROOT)}]}


# about 25 s of one core (a fresh cache): run in the background from the session's start (helpers/early.py)
PACKAGE_MYPY = Early("mypy over batsched_py", _mypy, when=lambda: find_spec("mypy") is not None)


@pytest.mark.slow
@PACKAGE_MYPY.needed
def test_the_package_type_checks():
    """mypy (configured in setup.cfg) finds no error in batsched_py: what policies are checked
    against stays consistent with itself."""
    if find_spec("mypy") is None:
        pytest.skip("mypy is not installed: pip install -e '.[dev]'")
    done, = PACKAGE_MYPY.ran("mypy", timeout=600)
    assert done.returncode == 0 and "Success: no issues found" in done.stdout, done.stdout[-3000:]
