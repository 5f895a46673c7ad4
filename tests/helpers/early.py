"""Slow checks that only run commands (mypy over the package, the compiled wheel's build, the
documentation's commands) run in the background from the session's start, one command at a time
and at the lowest CPU priority: the suite runs one test at a time, mostly on one core, so they take
the other core's idle time.  The test that needs one waits for its commands and asserts on their
exit status and output as on subprocesses it had run itself (run alone, it waits about as long as
it would have taken).

A test module declares a job, ``JOB = Early("what", lists, when)``, and marks its test(s)
``@JOB.needed``; tests/conftest.py starts the jobs of the tests collected to run (``start_needed``:
one background helpers/in_order.py, the jobs in the order the tests will need them) and ends it,
and removes the jobs' folders, with the session (``end_all``).  ``when()`` false (a tool missing:
the test will skip), the job is left out.  ``lists(folder, items)`` prepares the job's input in an
empty folder of its own (``JOB.folder``) for the test items that need it (all: an empty list) and
returns its lists of steps, ``{NAME: [STEP, ...]}`` (see in_order.py).  ``JOB.ran(NAME)`` is what
the commands of a list that ran gave, as CompletedProcesses.

The idle core is what they save: on a machine that other work keeps busy they run when the test
waits for them, as they did.  ``BATSCHED_PY_TESTS_BACKGROUND=0``: nothing starts early, each test
runs its job's commands itself (at the usual priority) when it needs them.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from .build import HANG_GUARD_S

IN_ORDER = Path(__file__).resolve().parent / "in_order.py"
Lists = Callable[[Path, Sequence[Any]], dict[str, list[dict]]]


def _lowest_priority() -> None:
    os.nice(19)         # (inherited by the commands: pip's compiler, a page's trainings)


class _Runner:
    """One helpers/in_order.py over lists of some jobs (``only``: that list of the job's alone)."""

    def __init__(self, entries: list[tuple["Early", Sequence[Any], Optional[str]]], background: bool = True):
        self.folder = Path(tempfile.mkdtemp(prefix="batsched-py-early-"))
        self.labels: dict[tuple[Early, str], str] = {}
        plan = []
        try:
            for i, (job, items, only) in enumerate(entries):
                job.folder = self.folder / f"job{i}"
                job.folder.mkdir()
                for name, steps in job.lists(job.folder, items).items():
                    if only is not None and name != only:
                        continue
                    self.labels[job, name] = label = f"job{i}-{name}"
                    # (a hang guard, so that the jobs after a hung command still run)
                    plan.append({"name": label, "steps": [{"timeout": HANG_GUARD_S, **step} for step in steps]})
            (self.folder / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        with open(self.folder / "stderr", "w") as err:
            # its own process group (to end it whole) in the session's: Linux's autogroups share the
            # CPU fairly between sessions, whatever the nice values of their processes
            self.proc = subprocess.Popen([sys.executable, str(IN_ORDER), str(self.folder / "plan.json")],
                                         stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
                                         process_group=0, preexec_fn=_lowest_priority if background else None)
        Early.runners.append(self)
        for job, name in self.labels:
            job.runners[name] = self

    def end(self) -> None:
        """Stopped, with its commands, if still running; its folder removed."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


class Early:
    jobs: list["Early"] = []
    runners: list[_Runner] = []

    def __init__(self, what: str, lists: Lists, when: Callable[[], bool] = lambda: True):
        self.what = what
        self.lists = lists
        self.when = when
        self.folder: Optional[Path] = None
        self.runners: dict[str, _Runner] = {}       # (its lists' names: the run that has them)
        Early.jobs.append(self)

    def needed(self, test):
        """Mark ``test`` as one that waits for this job."""
        test.early_jobs = [*getattr(test, "early_jobs", []), self]
        return test

    def ran(self, name: str, timeout: float = HANG_GUARD_S) -> list[subprocess.CompletedProcess]:
        """The commands of list ``name`` that ran (up to the first that failed), once they have
        (the list runs now if it was not started); it fails if they have not ``timeout`` s after the call."""
        if name not in self.runners:        # (not in the background: now, alone, as the test waits)
            _Runner([(self, (), name)], background=False)
        assert name in self.runners, f"{self.what}: no list {name!r}"
        runner = self.runners[name]
        label = runner.labels[self, name]
        path = runner.folder / f"{label}.json"
        deadline = time.monotonic() + timeout
        while not path.exists():
            if runner.proc.poll() is not None and not path.exists():
                raise AssertionError(f"{self.what}: the run ended (exit status {runner.proc.returncode}) before "
                                     f"{name}: {(runner.folder / 'stderr').read_text()[-3000:]}")
            if time.monotonic() > deadline:
                doing = runner.folder / f"{label}.running"
                raise AssertionError(f"{self.what}: {name} still running {timeout} s later: "
                                     f"{doing.read_text() if doing.exists() else 'not started'}")
            time.sleep(0.1)
        return [subprocess.CompletedProcess(r["argv"], r["returncode"], r["stdout"], r["stderr"])
                for r in json.loads(path.read_text(encoding="utf-8"))]


def start_needed(items) -> None:
    """Start, in one background run, the jobs that the tests about to run need, in the order they
    will need them, each for the items that need it."""
    if os.environ.get("BATSCHED_PY_TESTS_BACKGROUND") == "0":
        return
    needing: dict[Early, list] = {}
    for item in items:
        for job in getattr(getattr(item, "function", None), "early_jobs", []):
            if not job.runners and (job in needing or job.when()):
                needing.setdefault(job, []).append(item)
    if needing:
        try:
            _Runner([(job, its_items, None) for job, its_items in needing.items()])
        except Exception:           # (each test runs its list itself, and fails saying why)
            for job in needing:
                job.folder = None


def end_all() -> None:
    for runner in Early.runners:
        runner.end()
    Early.runners.clear()
    for job in Early.jobs:
        job.runners.clear()
