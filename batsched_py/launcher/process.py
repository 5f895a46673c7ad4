"""Backend ``batsim``: a local Batsim binary run as a supervised subprocess."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import tempfile
from typing import IO, Optional, Sequence

from . import common
from .common import BatsimArgs, LaunchError, SupervisedBatsim

ENV_COMMAND = "BATSCHED_PY_BATSIM"


def batsim_command(command: Optional[Sequence[str]] = None) -> list[str]:
    """The explicit command, else ``$BATSCHED_PY_BATSIM`` (split like a shell would), else ``batsim``."""
    if command:
        return [str(c) for c in command]
    env = os.environ.get(ENV_COMMAND, "").strip()
    if not env:
        return ["batsim"]
    try:
        return shlex.split(env)
    except ValueError as exc:       # (an unbalanced quote)
        raise LaunchError(f"${ENV_COMMAND} {env!r} cannot be split like a shell command: {exc}") from None


class ProcessPeer:
    """Batsim as a child process in its own process group (so a terminal's Ctrl-C reaches only us)."""

    def __init__(self, argv: list[str]):
        self._log: IO[bytes] = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as exc:
            self._log.close()
            raise LaunchError(f"cannot start batsim {argv[0]!r}: {exc.strerror or exc}; install Batsim 4.2.x, "
                              f"point ${ENV_COMMAND} at it, or use --backend docker") from None
        self.name = f"batsim (pid {self.proc.pid})"

    def poll(self) -> Optional[int]:
        return self.proc.poll()

    def wait(self, timeout: Optional[float]) -> Optional[int]:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def tail(self) -> list[str]:
        if self._log.closed:
            return []
        self._log.flush()
        size = self._log.seek(0, os.SEEK_END)
        self._log.seek(max(0, size - 8192))
        return self._log.read().decode("utf-8", "replace").splitlines()

    def stop(self) -> None:
        try:
            if self.proc.poll() is None:
                self._signal(signal.SIGTERM)
                try:
                    self.proc.wait(common.TERMINATE_GRACE)
                except subprocess.TimeoutExpired:
                    self._signal(signal.SIGKILL)
                    self.proc.wait()
        except BaseException:  # a second Ctrl-C while stopping: still leave nothing behind
            self._signal(signal.SIGKILL)
            self.proc.wait()
            raise
        finally:
            self._log.close()

    def _signal(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                pass


def process_backend(args: BatsimArgs, *, timeout: Optional[float], command: Optional[Sequence[str]] = None,
                    scratch: Optional[tempfile.TemporaryDirectory] = None) -> SupervisedBatsim:
    """Batsim (``command``, see :func:`batsim_command`) started as a subprocess, driven as a Backend."""
    argv = batsim_command(command)
    return SupervisedBatsim(lambda endpoint: ProcessPeer(argv + args.argv(endpoint)), args.export, timeout,
                            scratch)
