"""Backend ``docker``: Batsim from the ``oarteam/batsim`` image, run through the Docker SDK for Python.

The container shares the host's network (``network_mode="host"``) so Batsim reaches the scheduler
on the host's loopback; the scheduler therefore never listens on a public interface. (Host
networking is a Linux-engine feature; Docker Desktop needs its host-networking option turned on.)
Inputs are mounted read-only, the output directory read-write, and Batsim runs as the calling
user so its files belong to them. The container is removed on every way out.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from . import common
from .common import BatsimArgs, LaunchError, SupervisedBatsim

ENV_IMAGE = "BATSCHED_PY_BATSIM_IMAGE"  # replaces the default image (an explicit image= wins)
IN_ROOT = "/data/in"
OUT_DIR = "/data/out"
POLL_EVERY = 1.0  # seconds between two status queries to the engine while serving


def docker_client(client: Any = None) -> Any:
    if client is not None:
        return client
    try:
        import docker   # (optional: the docker extra)
    except ImportError:
        raise LaunchError("the docker backend needs the Docker SDK for Python: "
                          "pip install 'batsched_py[docker]'") from None
    try:
        return docker.from_env()
    except docker.errors.DockerException as exc:
        raise LaunchError(f"docker backend: cannot reach the Docker engine ({exc}); "
                          "is it running, and is DOCKER_HOST right?") from None


def mounts(args: BatsimArgs) -> tuple[list[str], dict[Path, str], str]:
    """Volumes for ``containers.run`` (``HOST:CONTAINER:MODE``; a list, so one directory may be mounted
    both read-only as inputs and read-write as outputs), the container path of each input, and the
    container export prefix."""
    volumes: list[str] = []
    dirs: dict[Path, str] = {}
    paths: dict[Path, str] = {}
    for path in args.inputs():
        host = path.resolve()
        if not host.is_file():
            raise LaunchError(f"docker backend: input file {path} not found")
        _check_mountable(host.parent)
        if host.parent not in dirs:
            dirs[host.parent] = f"{IN_ROOT}/{len(dirs)}"
            volumes.append(f"{host.parent}:{dirs[host.parent]}:ro")
        paths[path] = f"{dirs[host.parent]}/{host.name}"
    out = Path(args.export).resolve()
    _check_mountable(out.parent)
    volumes.append(f"{out.parent}:{OUT_DIR}:rw")
    return volumes, paths, f"{OUT_DIR}/{out.name}"


def _check_mountable(folder: Path) -> None:
    """Docker's HOST:CONTAINER:MODE volume syntax cannot hold a host folder with a ':'."""
    if ":" in str(folder):
        raise LaunchError(f"docker backend: cannot mount {folder} (a ':' in the path)")


class ContainerPeer:
    def __init__(self, client: Any, image: str, command: list[str], volumes: list[str],
                 name: str):
        self.client, self.name = client, f"batsim container {name} ({image})"
        self.container: Any = None
        self._cname = name
        self._last_poll = 0.0
        self._code: Optional[int] = None
        try:
            self.container = client.containers.run(
                image, command=command, detach=True, name=name, network_mode="host", init=True,
                user=f"{os.getuid()}:{os.getgid()}", volumes=volumes, working_dir="/data",
                labels={"org.batsched-py.role": "batsim"})
        except BaseException as exc:
            self._remove_by_name()
            if not isinstance(exc, Exception):
                raise
            raise LaunchError(f"docker backend: cannot start {image}: {_one_line(exc)}") from None

    def poll(self) -> Optional[int]:
        if self._code is not None or time.monotonic() - self._last_poll < POLL_EVERY:
            return self._code
        self._last_poll = time.monotonic()
        try:
            self.container.reload()
        except Exception as exc:  # the container vanished (removed from outside): that is a failure too
            raise LaunchError(f"{self.name} cannot be inspected any more: {_one_line(exc)}") from None
        if self.container.status in ("exited", "dead"):
            self._code = int(self.container.attrs.get("State", {}).get("ExitCode", -1))
        return self._code

    def wait(self, timeout: Optional[float]) -> Optional[int]:
        if self._code is not None:
            return self._code
        try:
            result = self.container.wait(timeout=timeout)
        except Exception:  # the SDK raises a requests timeout when the deadline passes
            self._last_poll = 0.0
            return self.poll()
        self._code = int(result.get("StatusCode", -1))
        return self._code

    def tail(self) -> list[str]:
        try:
            raw = self.container.logs(stdout=True, stderr=True, tail=common.TAIL_LINES * 4)
        except Exception:
            return []
        return raw.decode("utf-8", "replace").splitlines() if isinstance(raw, bytes) else str(raw).splitlines()

    def stop(self) -> None:
        if self.container is None:
            return
        container, self.container = self.container, None
        try:
            if self._code is None:
                try:
                    container.stop(timeout=max(1, round(common.TERMINATE_GRACE)))  # SIGTERM, then SIGKILL
                except Exception:
                    pass
        finally:
            try:
                container.remove(force=True)
            except Exception:
                pass

    def _remove_by_name(self) -> None:
        # run() may have created the container before failing or being interrupted (e.g. while pulling)
        try:
            self.client.containers.get(self._cname).remove(force=True)
        except BaseException:
            pass


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def container_backend(args: BatsimArgs, *, timeout: Optional[float], image: str = common.DEFAULT_IMAGE,
                      client: Any = None, scratch: Optional[tempfile.TemporaryDirectory] = None) -> SupervisedBatsim:
    """Batsim from ``image`` (the default: ``$BATSCHED_PY_BATSIM_IMAGE`` if set) run in a container,
    driven as a Backend."""
    if image == common.DEFAULT_IMAGE:
        image = os.environ.get(ENV_IMAGE, "").strip() or image
    volumes, paths, export = mounts(args)
    client = docker_client(client)

    def start(endpoint: str) -> ContainerPeer:
        command = args.argv(endpoint, path=lambda p: paths[p], export=export)
        port = endpoint.rpartition(":")[2]
        return ContainerPeer(client, image, command, volumes, name=f"batsched-py-batsim-{os.getpid()}-{port}")
    return SupervisedBatsim(start, args.export, timeout, scratch)
