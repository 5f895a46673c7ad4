"""What both real-Batsim backends share: Batsim's arguments, the error type, and the supervised Batsim."""
from __future__ import annotations

import signal
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Protocol

from .. import protocol as p
from ..errors import BatschedError
from ..transport.endpoints import PeerClosed
from ..transport.zmq_server import PeerTimeout, RepBackend

# Batsim 4.x speaks the JSON protocol this package implements; `latest` is Batsim 5 (another protocol).
# 4.2.0 is the newest 4.x tag known to be published; 4.2.1 is a bug-fix release of it with the same
# command line and protocol (Batsim follows semantic versioning and counts both as public API).
DEFAULT_IMAGE = "oarteam/batsim:4.2.0"

TAIL_LINES = 5          # lines of Batsim's output quoted in an error
EXIT_GRACE = 30.0       # seconds Batsim may take to write its outputs after SIMULATION_ENDS, at least
TERMINATE_GRACE = 3.0   # seconds between SIGTERM and SIGKILL when stopping Batsim
EXIT_WAIT = 10.0        # seconds Batsim may take to exit once it closed its socket (an abort writes a core)


class LaunchError(BatschedError, RuntimeError):
    """A real-Batsim run failed: the message names the side that failed, its exit code and last output."""


@dataclass
class BatsimArgs:
    """Batsim's command line, with host paths; ``argv`` maps them for a container."""
    platform: Path
    workloads: list[Path]
    export: str
    energy: bool = False
    events: list[Path] = field(default_factory=list)
    mmax: int = 0
    extra: list[str] = field(default_factory=list)

    def inputs(self) -> list[Path]:
        return [self.platform, *self.workloads, *self.events]

    def argv(self, endpoint: str, path: Callable[[Path], str] = str, export: Optional[str] = None) -> list[str]:
        out = ["-p", path(self.platform)]
        for w in self.workloads:
            out += ["-w", path(w)]
        out += ["-e", self.export if export is None else export]
        if self.energy:
            out.append("-E")
        for e in self.events:
            out += ["--events", path(e)]
        if self.mmax:
            out += ["--mmax", str(self.mmax)]
        return out + ["-s", endpoint, *self.extra]


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    if code in (137, 143):  # a container's main process killed by SIGKILL / SIGTERM
        return f"exited with code {code} ({'SIGKILL: out of memory?' if code == 137 else 'SIGTERM'})"
    return f"exited with code {code}"


def format_tail(lines: list[str]) -> str:
    lines = [ln.strip()[:300] for ln in lines if ln.strip()][-TAIL_LINES:]
    return "; last output: " + " | ".join(lines) if lines else "; it printed nothing"


def batsim_reason(lines: list[str]) -> Optional[str]:
    """Batsim's own error in its output: its last ``[category/CRITICAL] ...`` line (what an
    xbt_assert or xbt_die prints before aborting), from that tag on; None if it printed none."""
    for line in reversed(lines):
        at = line.find("/CRITICAL] ")
        if at >= 0:
            return line[line.rfind("[", 0, at):].strip()[:1000]
    return None


def exit_error(name: str, code: int, lines: list[str], when: str) -> LaunchError:
    """The one-line error of a Batsim that exited with ``code`` ``when`` ("before the simulation
    ended"...): its own reason when it printed one, else its last output."""
    reason = batsim_reason(lines)
    if reason is not None:
        return LaunchError(f"{name} {describe_exit(code)} {when}: {reason}")
    return LaunchError(f"{name} {describe_exit(code)} {when}{format_tail(lines)}")


class Peer(Protocol):
    """The supervised Batsim: a process or a container."""
    name: str

    def poll(self) -> Optional[int]: ...           # exit code, or None while running
    def wait(self, timeout: Optional[float]) -> Optional[int]: ...  # None: still running at the deadline
    def tail(self) -> list[str]: ...
    def stop(self) -> None: ...                      # idempotent: nothing of it left running afterwards


class SupervisedBatsim:
    """A real Batsim (a process or a container, made by ``start_peer(endpoint)``) connected to a REP
    endpoint on a loopback port the system chose: a caller-driven Backend (transport/backend.py).

    Both sides are watched: a Batsim that dies, goes silent for ``timeout`` seconds (None: never)
    or exits badly after the end raises a one-line LaunchError naming it, with its own CRITICAL
    line or its last output; ``close()`` stops it on every way out (and removes ``scratch``, a
    folder of outputs nobody reads).
    """

    def __init__(self, start_peer: Callable[[str], Peer], export: str, timeout: Optional[float],
                 scratch: Optional[tempfile.TemporaryDirectory] = None):
        self.export, self.timeout, self._scratch = export, timeout, scratch
        self.link = RepBackend("tcp://127.0.0.1:0", timeout=timeout, watchdog=self._watchdog)
        try:
            self.peer = start_peer(self.link.endpoint)
        except BaseException:
            self._release()
            raise

    def start(self) -> p.Message:
        try:
            return self.link.start()
        except (PeerTimeout, PeerClosed) as exc:
            raise self._lost(exc) from None

    def send(self, reply: p.Message) -> Optional[p.Message]:
        try:
            request = self.link.send(reply)
        except (PeerTimeout, PeerClosed) as exc:
            raise self._lost(exc) from None
        if request is None:
            self._check_exit()
        return request

    def close(self) -> None:
        try:
            self.peer.stop()
        finally:
            self._release()

    def _release(self) -> None:
        self.link.close()
        if self._scratch is not None:
            self._scratch.cleanup()

    def _watchdog(self) -> None:
        code = self.peer.poll()
        if code is not None:
            raise exit_error(self.peer.name, code, self.peer.tail(), "before the simulation ended")

    def _lost(self, exc: Exception) -> Exception:
        peer = self.peer
        if isinstance(exc, PeerTimeout):
            return LaunchError(f"{peer.name} went silent: {exc}; it was stopped{format_tail(peer.tail())}")
        # Batsim closes its socket as it aborts: its exit and its reason are the error.
        code = peer.wait(EXIT_WAIT)
        if code is not None and code != 0:
            return exit_error(peer.name, code, peer.tail(), "before the simulation ended")
        return exc

    def _check_exit(self) -> None:
        """Batsim answered SIMULATION_ENDS: it must exit normally, its outputs written."""
        peer = self.peer
        grace = max(EXIT_GRACE, self.timeout or 0.0)
        code = peer.wait(grace)
        if code is None:
            raise LaunchError(f"{peer.name} did not exit within {grace:g} s after the simulation ended; "
                              f"it was stopped{format_tail(peer.tail())}")
        if code != 0:
            raise exit_error(peer.name, code, peer.tail(), "after the simulation ended")
        if not Path(f"{self.export}_jobs.csv").is_file():
            raise LaunchError(f"{peer.name} exited normally but wrote no {self.export}_jobs.csv"
                              f"{format_tail(peer.tail())}")
