"""Where an environment's simulation runs: the in-process emulator or a real Batsim.

A backend is the caller-driven interface of transport/backend.py, sans-IO on our side: ``start()``
gives Batsim's first request, ``send(reply)`` the next one (None once the simulation ended),
``close()`` stops what is left.  ``emulator`` advances the step-driven emulator in this process
(:class:`~batsched_py.emulator.Emulation`);
``batsim`` and ``docker`` start a real Batsim (binary from ``$BATSCHED_PY_BATSIM`` or PATH, or
the ``oarteam/batsim`` image) through the launcher, served on a loopback REP endpoint by the same
code as ``serve`` (ZMTP fast path, timeouts, Batsim's death and its CRITICAL line).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Optional, Sequence

from ..emulator import Emulation
from ..emulator.options import FLAG_OPTIONS, EngineOptions
from ..launcher import open_backend
from ..launcher.common import BatsimArgs
from ..transport.backend import Backend

BACKENDS = ("emulator", "batsim", "docker")
TIMEOUT = 60.0      # seconds a real Batsim may stay silent


def make_backend(name: str, platform: Path, workload: Path, *, energy: bool = True,
                 output_prefix: Optional[str] = None, events: Sequence[Path] = (),
                 flags: Sequence[str] = ()) -> Backend:
    """``events``: Batsim ``--events`` files; ``flags``: Batsim flags among emulator.options.FLAG_OPTIONS.
    Without ``output_prefix``, a real Batsim writes its outputs to a folder removed on close."""
    if name == "emulator":
        options = EngineOptions()
        for flag in flags:
            setattr(options, FLAG_OPTIONS[flag], True)
        return Emulation(platform, [workload], energy=energy, output_prefix=output_prefix, events=events,
                         options=options,
                         unfinished="the environment ended the episode first (truncated, reset or closed)")
    if name not in ("batsim", "docker"):
        raise ValueError(f"backend {name!r}: choose one of {', '.join(BACKENDS)}")
    scratch = None
    if output_prefix is None:
        scratch = tempfile.TemporaryDirectory(prefix="batsched-py-env-")
        output_prefix = os.path.join(scratch.name, "out")
    args = BatsimArgs(platform=Path(platform), workloads=[Path(workload)], export=output_prefix, energy=energy,
                      events=[Path(e) for e in events], extra=list(flags))
    try:
        return open_backend(name, args, timeout=TIMEOUT, scratch=scratch)
    except BaseException:
        if scratch is not None:
            scratch.cleanup()
        raise
