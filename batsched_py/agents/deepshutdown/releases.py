"""When the jobs holding hosts release them: what the walltime rule and the oracle test a waiting
job against, what the observation shows of each node (walltimes) and the critic (real runtimes).

``runtimes`` maps jobs to their real runtimes (``policies.power.day_runtimes``); ``{}`` reads
every job's walltime."""
from __future__ import annotations

import math
from typing import Any

from ...policies.power import real_runtime


def release_time(s: Any, runtimes: dict[str, float], job_id: str) -> float:
    """When the job ``job_id``, holding hosts, releases them by its real runtime (its walltime when
    unknown, never when it has none); a job waiting for its hosts counts from now."""
    job = s.jobs[job_id]
    real = real_runtime(runtimes, job_id)
    if real is None:
        real = job.walltime
    start = job.start_time if job.start_time is not None else s.now
    return start + (real if real is not None else math.inf)


def held(s: Any, runtimes: dict[str, float]) -> list[tuple[float, int]]:
    """(release time, host mask) of each job holding hosts."""
    return [(release_time(s, runtimes, job_id), hosts) for job_id, hosts in s.alloc_masks.items()]


def host_waits(ends: list[tuple[float, int]], now: float) -> list[float]:
    """Time from ``now`` until each held host is released (``ends``: :func:`held`'s), ascending."""
    return sorted(end - now for end, hosts in ends for _ in range(hosts.bit_count()))


def node_waits(ends: list[tuple[float, int]], masks: list[int], now: float) -> list[float]:
    """Time from ``now`` until the last of each node's hosts (``masks``) is released (0: none held)."""
    left = [0.0] * len(masks)
    for end, hosts in ends:
        for i, m in enumerate(masks):
            if m & hosts:
                left[i] = max(left[i], end - now)
    return left


def wait_for_hosts(res: int, waits: list[float]) -> float:
    """Time from now until the releases (``waits``: :func:`host_waits`', not empty) free ``res``
    hosts, or all there are."""
    return waits[min(res, len(waits)) - 1]
