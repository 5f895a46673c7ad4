"""Run a whole simulation against a real Batsim: a local binary (``batsim``) or the ``oarteam/batsim`` image.

The scheduler is served in this process (:func:`batsched_py.transport.zmq_server.serve`) on a free
loopback port; Batsim runs beside it as a supervised subprocess or container and connects to it.
Both sides are watched: if Batsim dies, goes silent or the scheduler fails, the other side is
stopped and a :class:`LaunchError` (or the scheduler's own error) says which side failed and why.
Outputs land at ``{export}_jobs.csv`` etc., exactly where the emulator backend puts them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from .common import DEFAULT_IMAGE, BatsimArgs, LaunchError

__all__ = ["launch", "LaunchError", "DEFAULT_IMAGE", "BACKENDS"]

BACKENDS = ("batsim", "docker")


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
    timeout = float(timeout) if timeout else None
    Path(args.export).parent.mkdir(parents=True, exist_ok=True)
    if backend == "batsim":
        from .process import run_process
        run_process(scheduler, args, timeout=timeout, command=batsim_command)
    elif backend == "docker":
        from .container import run_container
        run_container(scheduler, args, timeout=timeout, image=image, client=docker_client)
    else:
        raise LaunchError(f"unknown backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    return Path(args.export)
