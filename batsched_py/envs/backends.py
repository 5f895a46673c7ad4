"""Where an environment's simulation runs: the in-process emulator or a real Batsim.

A backend is driven request by request, sans-IO on our side: ``start()`` gives Batsim's first
request, ``send(reply)`` the next one (None once the simulation ended), ``close()`` stops what is
left.  ``emulator`` advances the step-driven emulator in this process; ``batsim`` and ``docker``
start a real Batsim (binary from ``$BATSCHED_PY_BATSIM`` or PATH, or the ``oarteam/batsim``
image) through the launcher and answer its REQ socket from a REP socket on the loopback.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Optional, Protocol, Sequence

from .. import protocol as p

BACKENDS = ("emulator", "batsim", "docker")


class Backend(Protocol):
    def start(self) -> p.Message: ...
    def send(self, reply: p.Message) -> Optional[p.Message]: ...
    def close(self) -> None: ...


class EmulatorBackend:
    """The emulator in this process, one request at a time."""

    def __init__(self, platform: Path, workload: Path, *, energy: bool = True,
                 output_prefix: Optional[str] = None, events: Sequence[Path] = (), flags: Sequence[str] = ()):
        from ..emulator import Emulation
        from ..emulator.options import FLAG_OPTIONS, EngineOptions
        options = EngineOptions()
        for flag in flags:
            setattr(options, FLAG_OPTIONS[flag], True)
        self.emulation = Emulation(platform, [workload], energy=energy, output_prefix=output_prefix,
                                   events=events, options=options)

    def start(self) -> p.Message:
        return self.emulation.start()

    def send(self, reply: p.Message) -> Optional[p.Message]:
        return self.emulation.send(reply)

    def close(self) -> None:
        if not self.emulation.complete and self.emulation.error is None:    # (else 'unknown error')
            self.emulation.error = "the environment ended the episode first (truncated, reset or closed)"
        self.emulation.close()


class BatsimBackend:
    """A real Batsim (or anything that speaks like it: ``batsched-py emulate``) as a subprocess
    or container, connected to a REP socket on a free loopback port."""

    def __init__(self, platform: Path, workload: Path, *, energy: bool = True,
                 output_prefix: Optional[str] = None, backend: str = "batsim", timeout: float = 60.0,
                 events: Sequence[Path] = (), flags: Sequence[str] = ()):
        import zmq

        from ..launcher.common import BatsimArgs
        self.timeout = timeout
        self._tmp = None
        if output_prefix is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="batsched-py-env-")
            output_prefix = os.path.join(self._tmp.name, "out")
        self.args = BatsimArgs(platform=Path(platform), workloads=[Path(workload)], export=output_prefix,
                               energy=energy, events=[Path(e) for e in events], extra=list(flags))
        self.socket: Any = zmq.Context.instance().socket(zmq.REP)
        self.socket.setsockopt(zmq.LINGER, 0)
        port: int = self.socket.bind_to_random_port("tcp://127.0.0.1")
        endpoint = f"tcp://127.0.0.1:{port}"
        try:
            self.peer = self._start_peer(backend, endpoint, port)
        except BaseException:
            self.socket.close(0)
            raise
        self._ending = False

    def _start_peer(self, backend: str, endpoint: str, port: int):
        if backend == "batsim":
            from ..launcher.process import ProcessPeer, batsim_command
            return ProcessPeer(batsim_command() + self.args.argv(endpoint))
        from ..launcher import container
        volumes, paths, export = container.mounts(self.args)
        client = container.docker_client()
        image = os.environ.get(container.ENV_IMAGE, "").strip() or container.common.DEFAULT_IMAGE
        return container.ContainerPeer(client, image, self.args.argv(endpoint, path=lambda q: paths[q], export=export),
                                       volumes, name=f"batsched-py-env-{os.getpid()}-{port}")

    def _receive(self) -> p.Message:
        from ..launcher.common import LaunchError, exit_error, format_tail
        waited = 0.0
        while not self.socket.poll(100):
            waited += 0.1
            code = self.peer.poll()
            if code is not None:
                raise exit_error(self.peer.name, code, self.peer.tail(), "before the simulation ended")
            if waited >= self.timeout:
                raise LaunchError(f"{self.peer.name} sent nothing for {self.timeout:g} s"
                                  f"{format_tail(self.peer.tail())}")
        request = p.decode_message(self.socket.recv(), sender="batsim")
        self._ending = any(isinstance(e, p.SimulationEnds) for e in request.events)
        return request

    def start(self) -> p.Message:
        return self._receive()

    def send(self, reply: p.Message) -> Optional[p.Message]:
        self.socket.send(p.encode_message(reply))
        if self._ending:
            self.peer.wait(self.timeout)
            return None
        return self._receive()

    def close(self) -> None:
        try:
            self.peer.stop()
        finally:
            self.socket.close(0)
            if self._tmp is not None:
                self._tmp.cleanup()


def make_backend(name: str, platform: Path, workload: Path, *, energy: bool = True,
                 output_prefix: Optional[str] = None, events: Sequence[Path] = (),
                 flags: Sequence[str] = ()) -> Backend:
    """``events``: Batsim ``--events`` files; ``flags``: Batsim flags among emulator.options.FLAG_OPTIONS."""
    if name == "emulator":
        return EmulatorBackend(platform, workload, energy=energy, output_prefix=output_prefix, events=events,
                               flags=flags)
    if name in ("batsim", "docker"):
        return BatsimBackend(platform, workload, energy=energy, output_prefix=output_prefix, backend=name,
                             events=events, flags=flags)
    raise ValueError(f"backend {name!r}: choose one of {', '.join(BACKENDS)}")
