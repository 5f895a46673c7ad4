"""``batsched-py serve`` as a real subprocess (``python -m batsched_py.cli``), reaped on every way out."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

import zmq

ROOT = Path(__file__).resolve().parents[2]


class ServeProcess:
    """Context manager: start ``serve``, wait until it listens, kill it (by pid) when leaving."""

    def __init__(self, scheduler: str, endpoint: str, *extra: str, timeout: Optional[float] = 20.0,
                 env: Optional[dict] = None, config: Optional[str] = None,
                 args: Optional[Sequence[str]] = None):
        if args is None:
            args = ["serve", "--scheduler", scheduler, "--socket", endpoint]
            if timeout is not None:
                args += ["--timeout", str(timeout)]
            if config is not None:
                args += ["--config", config]
            args += list(extra)
        self.args = [sys.executable, "-m", "batsched_py.cli", *args]
        self.endpoint = endpoint
        full_env = dict(os.environ)
        full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), full_env.get("PYTHONPATH")]))
        full_env.update(env or {})
        self.env = full_env
        self.proc: Optional[subprocess.Popen] = None
        self.stdout = self.stderr = ""

    def __enter__(self) -> "ServeProcess":
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=self.env, cwd=str(ROOT))
        return self

    def wait_listening(self, limit: float = 10.0) -> None:
        """Block until the endpoint accepts a TCP connection (or the process died)."""
        import socket
        host, port = self.endpoint.rsplit("//", 1)[1].rsplit(":", 1)
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return
            try:
                with socket.create_connection((host, int(port)), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.02)
        raise TimeoutError(f"serve did not listen on {self.endpoint} within {limit} s")

    def wait(self, limit: float = 5.0) -> int:
        """Exit code within ``limit`` seconds (raises subprocess.TimeoutExpired otherwise); collects output."""
        out, err = self.proc.communicate(timeout=limit)
        self.stdout, self.stderr = out, err
        return self.proc.returncode

    def interrupt(self) -> None:
        self.proc.send_signal(signal.SIGINT)

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                out, err = self.proc.communicate(timeout=5)
                self.stdout, self.stderr = self.stdout or out, self.stderr or err
            except subprocess.TimeoutExpired:
                pass
        elif self.proc is not None and self.proc.stdout and not self.proc.stdout.closed:
            try:
                out, err = self.proc.communicate(timeout=5)
                self.stdout, self.stderr = self.stdout or out, self.stderr or err
            except (subprocess.TimeoutExpired, ValueError):
                pass


def zmq_req(endpoint: str, timeout: float = 5.0) -> zmq.Socket:
    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, int(timeout * 1000))
    sock.setsockopt(zmq.SNDTIMEO, int(timeout * 1000))
    sock.connect(endpoint)
    return sock
