"""The jobs an allocator places: submission time (s), cores (1..cores of one processor), runtime (s)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from ...errors import BatschedError
from ...models.document import WorkloadError, read_workload_file
from ...workloads.swf import SwfError, read_swf


class JobsError(BatschedError, ValueError):
    """A trace that cannot be allocated (names the file and the job)."""


@dataclass(frozen=True)
class Jobs:
    submit: np.ndarray     # s from the first submission, non-decreasing
    cores: np.ndarray      # cores asked, 1..cores per processor
    runtime: np.ndarray    # s
    source: str = ""

    def __len__(self) -> int:
        return len(self.submit)

    def window(self, start: float, seconds: float) -> "Jobs":
        """The jobs submitted in [start, start + seconds), times from ``start``."""
        keep = (self.submit >= start) & (self.submit < start + seconds)
        return Jobs(self.submit[keep] - start, self.cores[keep], self.runtime[keep], self.source)


def load_jobs(path: "str | Path", cores: int, days: Optional[float] = None) -> Jobs:
    """The jobs of an SWF trace (``.swf``, ``.swf.gz``: runtime, processors used) or a Batsim workload
    (``.json``: ``res``, ``subtime`` and the profile's ``delay``), the first ``days`` only; jobs that
    did not run (runtime <= 0) are dropped.  A job asking more than ``cores`` is an error: it cannot
    run on one processor."""
    path = Path(path)
    if not path.is_file():
        raise JobsError(f"jobs: {path} is not a file")
    if path.suffix == ".json":
        try:
            _, profiles, raw = read_workload_file(path)
        except WorkloadError as exc:
            raise JobsError(f"jobs: {path}: {exc}") from None
        rows = []
        why = "a job that ran has res > 0 and a delay profile of delay > 0"
        for job in raw:
            profile = profiles.get(job.get("profile"), {})
            rows.append((str(job.get("id")), float(job.get("subtime", 0)), int(job.get("res", 0)),
                         float(profile.get("delay", 0))))
    else:
        try:
            trace = read_swf(path, skip_malformed=True)
        except (SwfError, OSError) as exc:
            raise JobsError(f"jobs: {exc}") from None
        rows = [(str(j.job_id), j.submit, j.procs, j.runtime) for j in trace.jobs]
        why = (f"{len(trace.malformed)} line(s) are not SWF, e.g. line {trace.malformed[0][0]}: is it an SWF trace?"
               if trace.malformed else "no job has a positive runtime and processor count")
    rows = [r for r in rows if r[3] > 0 and r[2] > 0]
    if not rows:
        raise JobsError(f"jobs: {path} holds no job that ran ({why})")
    rows.sort(key=lambda r: r[1])
    first = rows[0][1]
    if days is not None:
        rows = [r for r in rows if r[1] - first < days * 86400]
    for job_id, _, res, _ in rows:
        if res > cores:
            raise JobsError(f"jobs: {path}: job {job_id} asks for {res} cores; a processor has {cores} "
                            "(a job runs on one processor)")
    return Jobs(np.array([r[1] - first for r in rows]), np.array([r[2] for r in rows], dtype=np.int64),
                np.array([r[3] for r in rows]), str(path))
