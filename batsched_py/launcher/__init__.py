"""Run a whole simulation against a real Batsim: a local binary (``batsim``) or the ``oarteam/batsim`` image.

Batsim runs as a supervised subprocess or container and connects to a REP endpoint on a free
loopback port; :func:`open_backend` gives it as a caller-driven Backend (transport/backend.py),
which :func:`launch` drives with the scheduler's Session and the environments step themselves.
Both sides are watched: if Batsim dies, goes silent or the scheduler fails, the other side is
stopped and a :class:`LaunchError` (or the scheduler's own error) says which side failed and why.
Outputs land at ``{export}_jobs.csv`` etc., exactly where the emulator backend puts them.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Optional, Sequence

from ..scheduler import Session
from ..transport.backend import drive
from .common import DEFAULT_IMAGE, BatsimArgs, LaunchError, SupervisedBatsim
from .container import container_backend
from .process import process_backend

__all__ = ["launch", "open_backend", "LaunchError", "DEFAULT_IMAGE", "BACKENDS"]

BACKENDS = ("batsim", "docker")


def open_backend(backend: str, args: BatsimArgs, *, timeout: Optional[float],
                 batsim_command: Optional[Sequence[str]] = None, image: str = DEFAULT_IMAGE,
                 docker_client: Any = None, scratch: Optional[tempfile.TemporaryDirectory] = None
                 ) -> SupervisedBatsim:
    """Batsim started on ``args``, ready to be driven (``start``, ``send``, ``close``); see :func:`launch`."""
    if backend == "batsim":
        return process_backend(args, timeout=timeout, command=batsim_command, scratch=scratch)
    if backend == "docker":
        return container_backend(args, timeout=timeout, image=image, client=docker_client, scratch=scratch)
    raise LaunchError(f"unknown backend {backend!r}: choose one of {', '.join(BACKENDS)}")


def launch(backend: str, scheduler: Any, platform: Path, workloads: Sequence[Path], *, export: str,
           energy: bool = False, events: Sequence[Path] = (), mmax: int = 0, extra_args: Sequence[str] = (),
           timeout: Optional[float] = 600, batsim_command: Optional[Sequence[str]] = None,
           image: str = DEFAULT_IMAGE, docker_client: Any = None) -> Path:
    """Simulate ``platform`` + ``workloads`` with ``scheduler`` on a real Batsim; return the output prefix.

    ``backend``: ``"batsim"`` (a local binary: ``batsim_command``, else ``$BATSCHED_PY_BATSIM``, else
    ``batsim``) or ``"docker"`` (``image``, else ``$BATSCHED_PY_BATSIM_IMAGE``, else
    :data:`DEFAULT_IMAGE`, through the Docker SDK; ``docker_client`` replaces ``docker.from_env()``). ``timeout``: seconds of silence from Batsim before giving up (None/0: never).
    """
    if not workloads:
        raise LaunchError("no workload given: Batsim needs at least one -w WORKLOAD")
    args = BatsimArgs(platform=Path(platform), workloads=[Path(w) for w in workloads], export=str(export),
                      energy=energy, events=[Path(e) for e in events], mmax=int(mmax or 0),
                      extra=[str(a) for a in extra_args])
    Path(args.export).parent.mkdir(parents=True, exist_ok=True)
    batsim = open_backend(backend, args, timeout=float(timeout) if timeout else None,
                          batsim_command=batsim_command, image=image, docker_client=docker_client)
    try:
        drive(Session(scheduler).handle, batsim)
    finally:
        batsim.close()
    return Path(args.export)
