"""Loopback ports for ZeroMQ tests."""
from __future__ import annotations

import socket


def free_tcp_endpoint() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"tcp://127.0.0.1:{port}"


def port_is_free(endpoint: str) -> bool:
    """True when the endpoint's port can be bound again (the server really let it go).

    SO_REUSEADDR like ZeroMQ's own bind: TIME_WAIT leftovers do not count, a listener does.
    """
    port = int(endpoint.rsplit(":", 1)[1])
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        s.listen(1)
    return True
