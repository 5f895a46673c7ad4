"""ZMTP 3, the ZeroMQ wire protocol, for the one connection a REP endpoint serves (sans-IO).

Batsim's libzmq REQ socket speaks ZMTP 3.x (RFC 23/ZMTP, 37/ZMTP) over TCP or IPC.  A REP
endpoint with a single peer needs little of libzmq: the greeting, the NULL handshake, framing,
and REP's envelope rule.  Speaking it here, on a plain socket the serving thread reads itself,
saves the two wake-ups of libzmq's I/O thread per round trip (see scripts/bench_serve.py).

:class:`RepConnection` holds no socket: feed it the bytes read with :meth:`receive_data`, send
what :meth:`data_to_send` returns, take requests with :meth:`next_request`, answer with
:meth:`reply`.  Any breach of the protocol raises :class:`ZmtpError` naming it.
"""
from __future__ import annotations

from collections import deque
from typing import Optional
from ..errors import BatschedError

GREETING_SIZE = 64
_SIGNATURE_END = 9          # 0xFF, 8 bytes of padding, 0x7F
_VERSION_END = 11           # then the major version
_MORE, _LONG, _COMMAND = 0x01, 0x02, 0x04
#: Socket types a REP socket talks to (RFC 28/REQREP).
PEER_TYPES = frozenset({b"REQ", b"DEALER"})


class ZmtpError(BatschedError, OSError):
    """The peer broke the ZeroMQ wire protocol, or is not a peer a REP socket can serve."""


def greeting() -> bytes:
    """Our greeting: ZMTP 3.0 (libzmq answers 3.1 peers in 3.0), NULL security mechanism, whose
    as-server flag must be 0."""
    return b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + bytes(32)


def command(name: bytes, body: bytes = b"") -> bytes:
    """One command frame (RFC 23: name length, name, then the command's data)."""
    data = bytes([len(name)]) + name + body
    return _frame_header(len(data), _COMMAND) + data


def ready(socket_type: bytes) -> bytes:
    """The NULL mechanism's READY command, with the Socket-Type property."""
    return command(b"READY", _property(b"Socket-Type", socket_type))


def frame(body: bytes, more: bool = False) -> bytes:
    """One message frame."""
    return _frame_header(len(body), _MORE if more else 0) + body


def _property(name: bytes, value: bytes) -> bytes:
    return bytes([len(name)]) + name + len(value).to_bytes(4, "big") + value


def _frame_header(size: int, flags: int) -> bytes:
    if size < 256:
        return bytes((flags, size))
    return bytes([flags | _LONG]) + size.to_bytes(8, "big")


def parse_properties(data: bytes, where: str) -> dict[bytes, bytes]:
    """The metadata of a READY command: name (1-byte length) and value (4-byte length) pairs."""
    props, pos = {}, 0
    while pos < len(data):
        end = pos + 1 + data[pos]
        if end + 4 > len(data):
            raise ZmtpError(f"{where}: truncated property name at byte {pos}")
        size = int.from_bytes(data[end:end + 4], "big")
        if end + 4 + size > len(data):
            raise ZmtpError(f"{where}: property {data[pos + 1:end]!r} claims {size} bytes, "
                            f"{len(data) - end - 4} left")
        props[data[pos + 1:end].lower()] = data[end + 4:end + 4 + size]
        pos = end + 4 + size
    return props


class RepConnection:
    """The REP side of one ZMTP connection: greeting, NULL handshake, then requests and replies.

    Requests come in order; each is answered by one :meth:`reply`, which sends back the request's
    envelope (the frames up to its empty delimiter) as REP must.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._need = _VERSION_END       # bytes the parser waits for before it can progress
        self._state = "greeting"        # then "handshake", then "ready"
        self._out = bytearray(greeting() + ready(b"REP"))
        self._parts: list[bytes] = []   # frames of the message being received
        self._requests: deque[tuple[bytes, bytes]] = deque()   # (envelope, body)
        self._envelope: Optional[bytes] = None   # of the request taken and not yet answered
        self.peer_type = b""
        self.messages = 0

    @property
    def ready(self) -> bool:
        """The handshake is over: requests can arrive."""
        return self._state == "ready"

    def data_to_send(self) -> bytes:
        """Bytes owed to the peer (greeting, handshake, pongs); empties the output."""
        if not self._out:
            return b""
        out = bytes(self._out)
        self._out.clear()
        return out

    def receive_data(self, data: bytes) -> None:
        """Feed bytes read from the connection; whole requests become available to next_request."""
        buffer = self._buffer
        if buffer:
            buffer += data
            if len(buffer) >= self._need:
                del buffer[:self._parse(buffer)]
        elif len(data) < self._need:
            buffer += data
        elif not (self._state == "ready" and not self._parts and data[:2] == _DELIMITER
                  and self._take_one_request(data)):
            # (whole frames in one read: parsed in place)
            pos = self._parse(data)
            if pos < len(data):
                buffer += data[pos:]

    def _take_one_request(self, data: bytes) -> bool:
        """Take ``data`` if it is exactly one request from a REQ socket (after the delimiter, one
        body frame), as each of Batsim's reads is: what _parse does, in half the time.
        False: ``data`` is something else, left to _parse."""
        flags = data[2] if len(data) > 3 else -1
        if flags == 0:
            start, size = 4, data[3]
        elif flags == _LONG and len(data) >= 11:
            start, size = 11, int.from_bytes(data[3:11], "big")
        else:
            return False
        if len(data) != start + size:
            return False
        self._request([b"", data[start:]])
        return True

    def _parse(self, buffer: bytes | bytearray) -> int:
        """Consume what is whole in ``buffer``; returns how many bytes were used."""
        pos, end = 0, len(buffer)
        while True:
            if self._state == "ready":
                if end - pos < 2:
                    break
                flags = buffer[pos]
                if flags & _LONG:
                    if end - pos < 9:
                        self._need = 9
                        break
                    size = int.from_bytes(buffer[pos + 1:pos + 9], "big")
                    start = pos + 9
                else:
                    size = buffer[pos + 1]
                    start = pos + 2
                if end - start < size:
                    self._need = start - pos + size
                    break
                body = bytes(buffer[start:start + size])
                pos = start + size
                if flags & ~(_MORE | _LONG | _COMMAND):
                    raise ZmtpError(f"frame after message {self.messages} has reserved flag bits set "
                                    f"(flags 0x{flags:02x})")
                if flags & _COMMAND:
                    self._command(body)
                elif flags & _MORE:
                    self._parts.append(body)
                else:
                    self._parts.append(body)
                    self._request(self._parts)
                    self._parts = []
            elif self._state == "greeting":
                if end - pos < GREETING_SIZE:
                    # Signature and version first: a ZMTP 1 or 2 peer never sends 64 bytes.
                    self._greeting(bytes(buffer[pos:end]))
                    self._need = GREETING_SIZE
                    break
                self._greeting(bytes(buffer[pos:pos + GREETING_SIZE]))
                pos += GREETING_SIZE
                self._state = "handshake"
            else:
                if end - pos < 2:
                    break
                flags = buffer[pos]
                head = 9 if flags & _LONG else 2
                if end - pos < head:
                    self._need = head
                    break
                size = int.from_bytes(buffer[pos + 1:pos + head], "big")
                if end - pos - head < size:
                    self._need = head + size
                    break
                if not flags & _COMMAND:
                    raise ZmtpError("peer sent a message before the handshake's READY command")
                self._handshake(bytes(buffer[pos + head:pos + head + size]))
                pos += head + size
                self._state = "ready"
            self._need = 2
        return pos

    def next_request(self) -> Optional[bytes]:
        """The body of the next request, or None if no whole request has arrived.

        A request must be answered (:meth:`reply`) before the next one is taken.
        """
        if not self._requests:
            return None
        if self._envelope is not None:
            raise ZmtpError("a REP socket answers each request before taking the next one")
        self._envelope, body = self._requests.popleft()
        return body

    def reply(self, body: bytes) -> bytes:
        """The bytes that answer the request last taken."""
        if self._envelope is None:
            raise ZmtpError("no request to answer: a REP socket replies once to each request")
        envelope, self._envelope = self._envelope, None
        return envelope + _frame_header(len(body), 0) + body

    # --- the protocol's steps ------------------------------------------------------------------

    def _greeting(self, data: bytes) -> None:
        if data[0] != 0xFF or not data[_SIGNATURE_END] & 0x01:
            raise ZmtpError(f"peer is not a ZeroMQ socket: its first bytes are {data[:10].hex(' ')}, not a "
                            f"ZMTP signature")
        if data[10] < 3:
            raise ZmtpError(f"peer speaks ZMTP {data[10]}.x (libzmq older than 4.0); ZMTP 3 is needed")
        mechanism = data[12:32].rstrip(b"\x00")
        if len(data) == GREETING_SIZE and mechanism != b"NULL":
            raise ZmtpError(f"peer asks for the {mechanism.decode(errors='replace')!r} security mechanism; "
                            f"only NULL (no security) is served")

    def _handshake(self, body: bytes) -> None:
        name, data = _split_command(body)
        if name == b"ERROR":
            raise ZmtpError(f"peer refused the handshake: {_error_reason(data)}")
        if name != b"READY":
            raise ZmtpError(f"peer sent command {name!r} where the NULL handshake expects READY")
        props = parse_properties(data, "READY command")
        self.peer_type = props.get(b"socket-type", b"")
        if self.peer_type not in PEER_TYPES:
            raise ZmtpError(f"peer is a {self.peer_type.decode(errors='replace') or 'untyped'} socket; a REP "
                            f"socket serves REQ or DEALER peers")

    def _command(self, body: bytes) -> None:
        name, data = _split_command(body)
        if name == b"PING":     # ZMTP 3.1 heartbeat: answer with the ping's context
            self._out += command(b"PONG", data[2:])
        elif name == b"ERROR":
            raise ZmtpError(f"peer reported an error: {_error_reason(data)}")
        # Other commands (PONG, SUBSCRIBE, ...) carry nothing a REP socket acts on.

    def _request(self, parts: list[bytes]) -> None:
        self.messages += 1
        if len(parts) == 2 and not parts[0]:    # (what a REQ socket sends)
            self._requests.append((_DELIMITER, parts[1]))
            return
        for i, part in enumerate(parts):
            if not part:
                envelope = b"".join(frame(p, more=True) for p in parts[:i + 1])
                body = parts[i + 1:]
                break
        else:
            raise ZmtpError(f"message {self.messages} has no empty delimiter frame: not a request from a "
                            f"REQ socket")
        if len(body) != 1:
            raise ZmtpError(f"request {self.messages} has {len(body)} body frames; Batsim sends exactly one")
        self._requests.append((envelope, body[0]))


_DELIMITER = frame(b"", more=True)


def _error_reason(data: bytes) -> str:
    """The reason an ERROR command gives (1-byte length, text)."""
    return (data[1:1 + data[0]] if data else b"").decode(errors="replace")


def _split_command(body: bytes) -> tuple[bytes, bytes]:
    if not body or len(body) < 1 + body[0]:
        raise ZmtpError(f"malformed command frame ({len(body)} bytes)")
    return bytes(body[1:1 + body[0]]), bytes(body[1 + body[0]:])
