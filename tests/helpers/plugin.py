"""A throw-away policy package registered through the ``batsched_py.schedulers`` entry-point group.

``make_plugin(dir)`` writes ``testplugin_policies.py`` and a ``batsched_testplugin-0.1.dist-info``
(METADATA + entry_points.txt) into ``dir``; putting ``dir`` on ``sys.path`` / PYTHONPATH makes
importlib.metadata find it, exactly as for an installed package.
"""
from __future__ import annotations

from pathlib import Path

MODULE = "testplugin_policies"
POLICIES = {
    "test-plugin-ok": "Quiet",
    "test-plugin-crash": "Crash",
    "test-plugin-bad-decision": "BadDecision",
    "test-plugin-config": "NeedsConfig",
    "test-plugin-unencodable": "Unencodable",
}

SOURCE = '''
from batsched_py.scheduler import Scheduler


class Quiet(Scheduler):
    description = "test plugin: takes no decision"


class Crash(Scheduler):
    description = "test plugin: raises on the first submitted job"

    def on_job_submitted(self, job):
        self.boom(job)

    def boom(self, job):
        return {}[job.id]  # KeyError, two frames below the callback


class BadDecision(Scheduler):
    description = "test plugin: runs every job on host 0, even when busy"

    def schedule(self):
        for job in list(self.jobs.queue.values()):
            self.execute(job, range(job.res))


class Unencodable(Scheduler):
    description = "test plugin: registers a profile holding a set, which JSON cannot hold"

    def on_job_submitted(self, job):
        self.register_profile("dyn", "p", {"type": "delay", "delay": {1, 2}})


class NeedsConfig(Scheduler):
    description = "test plugin: needs a positive 'quantum' option"

    def __init__(self, options=None):
        super().__init__(options)
        if not self.options.get("quantum", 0) > 0:
            raise ValueError("option 'quantum' must be a positive number")
'''


def make_plugin(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{MODULE}.py").write_text(SOURCE)
    info = directory / "batsched_testplugin-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: batsched-testplugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[batsched_py.schedulers]\n" + "".join(f"{name} = {MODULE}:{cls}\n" for name, cls in POLICIES.items()))
    return directory
