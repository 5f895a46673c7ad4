"""The REP endpoints ``serve`` binds: ZMTP on a plain socket, or libzmq's own REP socket.

Both do three things: wait for the next request (polling for a bounded time first, then
sleeping in slices so Ctrl-C and a watchdog are served), send a reply, close.

* :class:`SocketRep` speaks ZMTP (:mod:`.zmtp`) itself on a TCP or IPC socket that the serving
  thread reads directly.  It serves the one peer a simulation has and is the default for
  ``tcp://HOST:PORT`` and ``ipc://PATH``: without libzmq's I/O thread in between, a round trip
  costs two thread wake-ups fewer.
* :class:`LibzmqRep` is pyzmq's REP socket, for every other endpoint libzmq knows (wildcard
  ports, interface names, ...) and on request (``transport="libzmq"``).
"""
from __future__ import annotations

import errno
import os
import select
import socket
import stat
import time
from typing import Optional

import zmq

from .polling import recv_polling
from .zmtp import RepConnection, ZmtpError
from ..errors import BatschedError

TRANSPORTS = ("auto", "zmtp", "libzmq")
# What SocketRep needs of the OS (Windows has neither): elsewhere, "auto" means libzmq.
_PLAIN_SOCKETS = hasattr(select, "poll") and hasattr(socket, "MSG_DONTWAIT")
_READ_SIZE = 1 << 16


class PeerClosed(BatschedError, ConnectionError):
    """The peer (Batsim, or the scheduler for the REQ side) closed its connection before the simulation ended."""


class RepEndpoint:
    """What ``serve`` needs of a bound REP socket."""

    endpoint: str       # as bound: a port the system chose (0, or libzmq's '*') is the one it chose

    def poll(self, seconds: float) -> Optional[bytes]:
        """The next request if it arrives within ``seconds`` of polling (never sleeping), else None."""
        raise NotImplementedError

    def wait(self, seconds: float) -> Optional[bytes]:
        """The next request if it arrives within ``seconds`` (sleeping), else None."""
        raise NotImplementedError

    def send(self, data: bytes) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


def bind_rep(endpoint: str, transport: str = "auto", context: Optional[zmq.Context] = None) -> RepEndpoint:
    """A REP endpoint bound to ``endpoint``; OSError saying why when it cannot be bound.

    ``transport``: "zmtp" (plain socket, tcp:// and ipc:// only), "libzmq", or "auto" (zmtp
    when the endpoint allows it).  A ``context`` means libzmq.
    """
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
    bad_port = tcp_port_fault(endpoint)
    if bad_port:
        raise OSError(f"cannot bind {endpoint}: {bad_port}")
    address = None if context is not None or transport == "libzmq" else socket_address(endpoint)
    if address is None or not _PLAIN_SOCKETS:
        if transport == "zmtp":
            raise OSError(f"cannot bind {endpoint}: the zmtp transport serves tcp://HOST:PORT and ipc://PATH "
                          f"endpoints on POSIX systems only (--transport libzmq for others)")
        return LibzmqRep(endpoint, context)
    return SocketRep(endpoint, *address)


def tcp_port_fault(endpoint: str) -> Optional[str]:
    """Why the port of a tcp:// endpoint is no port, else None: getaddrinfo and libzmq quietly wrap
    a number out of 0-65535 round (99999 -> 34463, -5 -> 65531), where Batsim would never look."""
    scheme, _, rest = endpoint.partition("://")
    port = rest.rpartition(":")[2]
    if scheme == "tcp" and port.lstrip("-").isdigit() and not 0 <= int(port) <= 65535:
        return f"port {port} is not in 0-65535"
    return None


def socket_address(endpoint: str) -> Optional[tuple[int, object]]:
    """(family, address) to bind a plain socket to, or None if libzmq alone knows the endpoint."""
    scheme, sep, rest = endpoint.partition("://")
    if not sep:
        return None
    if scheme == "ipc" and rest:
        # libzmq's "@name" is Linux's abstract namespace.
        return socket.AF_UNIX, "\0" + rest[1:] if rest.startswith("@") else rest
    if scheme != "tcp":
        return None
    host, _, port = rest.rpartition(":")
    if not port.isdigit() or not host or ";" in host:   # "*"/"!" ports, "src;dst" pairs: libzmq's
        return None
    if host == "*":
        return socket.AF_INET, ("0.0.0.0", int(port))
    # Like libzmq (ZMQ_IPV6 off), a name means its IPv4 address: "localhost" must not become ::1,
    # where Batsim's IPv4 connection would never arrive.  Brackets ask for IPv6.
    family = socket.AF_INET6 if host.startswith("[") and host.endswith("]") else socket.AF_INET
    try:
        infos = socket.getaddrinfo(host.strip("[]"), int(port), family, socket.SOCK_STREAM, 0, socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError):
        return None     # maybe an interface name, which libzmq resolves
    return family, infos[0][4]


class SocketRep(RepEndpoint):
    """A REP endpoint speaking ZMTP on a plain listening socket.

    It serves the first peer to send a request.  Until then every connection is a candidate, so
    a port probe, an idle stray connection or one sending garbage (an HTTP request) cannot keep
    Batsim waiting: the garbage's sender is dropped, as libzmq drops it; then the others are
    closed and no more are accepted.
    """

    def __init__(self, endpoint: str, family: int, address) -> None:
        self.endpoint = endpoint
        self._family = family
        self._path = address if family == socket.AF_UNIX and not address.startswith("\0") else None
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            if self._path is not None:
                _remove_stale_socket(self._path)
            else:
                self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._listener.bind(address)
            if family != socket.AF_UNIX and address[1] == 0:    # the system chose the port: say which
                self.endpoint = f"{endpoint.rpartition(':')[0]}:{self._listener.getsockname()[1]}"
            self._listener.listen(8)
            self._listener.setblocking(False)
        except OSError as exc:
            self._listener.close()
            raise OSError(f"cannot bind {endpoint}: {_bind_failure(endpoint, exc)}") from None
        self._sock: Optional[socket.socket] = None        # the peer's, once it sent a request
        self._conn: Optional[RepConnection] = None
        self._candidates: dict[socket.socket, RepConnection] = {}
        self._poller = select.poll()
        self._poller.register(self._listener, select.POLLIN)

    def poll(self, seconds: float) -> Optional[bytes]:
        if seconds <= 0:
            return None
        request = self._read()      # (what may already be there)
        if request is not None:
            return request
        readable = self._poller.poll
        give_up = time.perf_counter() + seconds
        while time.perf_counter() < give_up:
            os.sched_yield()        # leave the core to Batsim when it shares ours
            if readable(0):         # (cheaper than a recv that fails)
                request = self._read()
                if request is not None:
                    return request
        return None

    def wait(self, seconds: float) -> Optional[bytes]:
        deadline = time.monotonic() + seconds
        while True:
            request = self._read()
            if request is not None:
                return request
            left = deadline - time.monotonic()
            if left <= 0 or not self._poller.poll(max(1, int(left * 1000) + 1)):
                return None

    def send(self, data: bytes) -> None:
        if self._conn is None or self._sock is None:
            raise ZmtpError("no request to answer")
        try:
            self._sock.sendall(self._conn.reply(data))
        except ConnectionError as exc:
            raise PeerClosed(f"the peer on {self.endpoint} was lost while answering request "
                             f"{self._conn.messages}: {exc.strerror or exc}") from None

    def close(self) -> None:
        for sock in (self._sock, self._listener, *self._candidates):
            if sock is not None:
                sock.close()
        self._sock = None
        self._candidates.clear()
        if self._path is not None:
            try:
                os.unlink(self._path)
            except OSError:
                pass
            self._path = None

    def _read(self) -> Optional[bytes]:
        """A request if one is whole after reading what the sockets hold now (never sleeps)."""
        conn, sock = self._conn, self._sock
        if conn is None or sock is None:
            return self._read_candidates()
        request = conn.next_request()
        if request is not None:
            return request
        try:
            data = _exchange(sock, conn)
        except BlockingIOError:
            return None
        except ConnectionError as exc:
            raise PeerClosed(f"the peer on {self.endpoint} was lost after {conn.messages} requests: "
                             f"{exc.strerror or exc}") from None
        if not data:
            raise PeerClosed(f"the peer on {self.endpoint} was lost after {conn.messages} requests: "
                             f"it closed the connection")
        return conn.next_request()

    def _read_candidates(self) -> Optional[bytes]:
        while True:
            try:
                sock, _ = self._listener.accept()
            except BlockingIOError:
                break
            self._candidate(sock)
        for sock, conn in list(self._candidates.items()):
            try:
                data = _exchange(sock, conn)
            except BlockingIOError:
                continue
            except ConnectionError:
                data = b""
            except ZmtpError:       # not a ZeroMQ peer (an HTTP probe, say): Batsim may still come
                data = b""
            if not data:            # gone before its first request: a probe, say
                self._drop(sock)
                continue
            try:
                request = conn.next_request()
            except ZmtpError:       # a ZeroMQ peer that is no REQ socket: not Batsim either
                self._drop(sock)
                continue
            if request is not None:
                self._serve(sock, conn)
                return request
        return None

    def _candidate(self, sock: socket.socket) -> None:
        sock.setblocking(True)
        if self._family != socket.AF_UNIX:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = RepConnection()
        self._candidates[sock] = conn
        self._poller.register(sock, select.POLLIN)
        try:
            sock.sendall(conn.data_to_send())
        except ConnectionError:
            self._drop(sock)

    def _drop(self, sock: socket.socket) -> None:
        del self._candidates[sock]
        self._poller.unregister(sock)
        sock.close()

    def _serve(self, sock: socket.socket, conn: RepConnection) -> None:
        """``sock`` sent the first request: it is the peer from now on."""
        for other in [s for s in self._candidates if s is not sock]:
            self._drop(other)
        self._candidates.clear()
        self._poller.unregister(self._listener)
        self._listener.close()
        self._sock, self._conn = sock, conn


def _exchange(sock: socket.socket, conn: RepConnection) -> bytes:
    """Feed ``conn`` what ``sock`` holds now and send what ``conn`` owes back (greeting, handshake,
    pongs); returns the bytes read (b"": the peer closed).  BlockingIOError: nothing to read."""
    data = sock.recv(_READ_SIZE, socket.MSG_DONTWAIT)
    if data:
        conn.receive_data(data)
        out = conn.data_to_send()
        if out:
            sock.sendall(out)
    return data


def _bind_failure(endpoint: str, exc: "OSError | zmq.ZMQError") -> str:
    """Why ``endpoint`` cannot be bound, in words: libzmq says "No such device" for a host that is
    no address, name or interface it knows (tcp://999.1.1.1:28000)."""
    host = endpoint.partition("://")[2].rpartition(":")[0]
    if exc.errno == errno.ENODEV:
        return (f"{host!r} is neither an IP address, a host name nor a network interface of this machine "
                "(e.g. tcp://127.0.0.1:28000, or tcp://*:28000 for every interface)")
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{host!r} is not an address of this machine ({exc.strerror})"
    return str(exc.strerror or exc)


def _remove_stale_socket(path: str) -> None:
    """libzmq replaces a socket file left behind at an ipc:// path; anything else is kept."""
    try:
        if stat.S_ISSOCK(os.stat(path).st_mode):
            os.unlink(path)
    except FileNotFoundError:
        pass


#: How long a closed libzmq endpoint may still deliver what it sent (milliseconds).
CLOSE_LINGER_MS = 2000


class LibzmqRep(RepEndpoint):
    """pyzmq's REP socket."""

    def __init__(self, endpoint: str, context: Optional[zmq.Context] = None) -> None:
        self.endpoint = endpoint
        self._sock = (context or zmq.Context.instance()).socket(zmq.REP)
        self._sock.setsockopt(zmq.LINGER, 0)
        try:
            self._sock.bind(endpoint)
        except zmq.ZMQError as exc:
            self._sock.close()
            raise OSError(f"cannot bind {endpoint}: {_bind_failure(endpoint, exc)}") from None
        if endpoint.rpartition(":")[2] in ("0", "*"):       # the system chose the port: say which
            self.endpoint = self._sock.getsockopt_string(zmq.LAST_ENDPOINT)

    def poll(self, seconds: float) -> Optional[bytes]:
        return recv_polling(self._sock, seconds)

    def wait(self, seconds: float) -> Optional[bytes]:
        # One recv with a receive timeout instead of poll + recv keeps the round trip short.
        self._sock.setsockopt(zmq.RCVTIMEO, max(1, int(seconds * 1000)))
        try:
            return self._sock.recv()
        except zmq.Again:
            return None

    def send(self, data: bytes) -> None:
        self._sock.send(data)

    def close(self) -> None:
        # The last reply (the answer to SIMULATION_ENDS) may still be queued in libzmq's I/O thread:
        # linger 0 dropped it on a busy machine, leaving the peer waiting; a bounded linger sends it.
        self._sock.close(linger=CLOSE_LINGER_MS)
