"""The built-in ZMTP REP endpoint: the sans-IO connection byte for byte, then real libzmq peers (pyzmq).

Real peers are the point: Batsim's REQ socket is libzmq, and pyzmq bundles the same library, so
every exchange below crosses libzmq's own greeting, handshake and framing.
"""
from __future__ import annotations

import os
import socket
import threading
import time

import pytest
import zmq
from hypothesis import given, settings
from hypothesis import strategies as st

from batsched_py.transport import zmtp
from batsched_py.transport.endpoints import LibzmqRep, PeerClosed, SocketRep, bind_rep, socket_address
from batsched_py.transport.zmtp import RepConnection, ZmtpError

REQ_READY = zmtp.ready(b"REQ")


def _peer_greeting(major: int = 3, minor: int = 1, mechanism: bytes = b"NULL") -> bytes:
    # libzmq's padding carries a ZMTP 1.0 length; a REP side must ignore it.
    return (b"\xff" + (1).to_bytes(8, "big") + b"\x7f" + bytes([major, minor]) + mechanism.ljust(20, b"\x00")
            + b"\x00" + bytes(31))


def _request(body: bytes) -> bytes:
    return zmtp.frame(b"", more=True) + zmtp.frame(body)


def _ready_connection() -> RepConnection:
    conn = RepConnection()
    conn.receive_data(_peer_greeting() + REQ_READY)
    assert conn.ready and conn.peer_type == b"REQ"
    return conn


# --- sans-IO ---------------------------------------------------------------------------------------

def test_greets_as_zmtp3_null_rep():
    out = RepConnection().data_to_send()
    assert out[0] == 0xFF and out[9] == 0x7F and out[10] == 3
    assert out[12:32] == b"NULL".ljust(20, b"\x00") and out[32] == 0     # (as-server: 0 with NULL)
    assert len(out) == zmtp.GREETING_SIZE + len(zmtp.ready(b"REP"))
    assert zmtp.parse_properties(out[64 + 2 + 6:], "ours") == {b"socket-type": b"REP"}


def test_request_and_reply_round_trip():
    conn = _ready_connection()
    assert conn.next_request() is None
    conn.receive_data(_request(b'{"now":0}'))
    assert conn.next_request() == b'{"now":0}'
    assert conn.reply(b"ok") == zmtp.frame(b"", more=True) + zmtp.frame(b"ok")


@pytest.mark.parametrize("size", [0, 1, 255, 256, 70_000])
def test_byte_by_byte_equals_one_chunk(size):
    body = bytes(i % 251 for i in range(size))
    stream = _peer_greeting() + REQ_READY + _request(body) + _request(b"second")
    conn = RepConnection()
    got = []
    for i in range(len(stream)):
        conn.receive_data(stream[i:i + 1])
        request = conn.next_request()
        if request is not None:
            got.append(request)
            conn.reply(b"")
    assert got == [body, b"second"]


def _outcome(chunks: list[bytes]):
    """What a ready connection makes of ``chunks``: the requests it yields, or the error it raises."""
    conn = _ready_connection()
    got = []
    try:
        for chunk in chunks:
            conn.receive_data(chunk)
            while (request := conn.next_request()) is not None:
                got.append(request)
                conn.reply(b"")
    except ZmtpError as exc:
        return got, str(exc)
    return got, None


@pytest.mark.parametrize("stream", [
    pytest.param(_request(b""), id="empty body"),
    pytest.param(_request(b"x" * 255), id="short frame"),
    pytest.param(_request(b"x" * 256), id="long frame"),
    pytest.param(_request(b"x" * 70_000), id="70 kB"),
    pytest.param(_request(b"a") + _request(b"b"), id="two requests"),
    pytest.param(_request(b"abc")[:-1], id="cut short"),
    pytest.param(_request(b"x" * 300)[:-5], id="long frame cut short"),
    pytest.param(_request(b"abc") + b"\x01", id="and the start of the next"),
    pytest.param(zmtp.frame(b"", more=True) + zmtp.frame(b"a", more=True) + zmtp.frame(b"b"), id="two body frames"),
    pytest.param(zmtp.frame(b"", more=True) + b"\x08\x01a", id="reserved flag bit"),
    pytest.param(zmtp.frame(b"peer-7", more=True) + _request(b"body"), id="routed"),
])
def test_a_read_holding_one_request_reads_as_when_split(stream):
    """A read holding exactly one request takes a shortcut: it must give what frame-by-frame
    parsing gives (one byte per read forces that), errors included."""
    assert _outcome([stream]) == _outcome([stream[i:i + 1] for i in range(len(stream))])


_frames = st.builds(lambda flags, body: zmtp._frame_header(len(body), flags) + body,
                    st.sampled_from([0, zmtp._MORE, zmtp._LONG, zmtp._MORE | zmtp._LONG, zmtp._COMMAND, 0x08]),
                    st.binary(max_size=300))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_frames, st.binary(max_size=12)), max_size=4).map(b"".join))
def test_any_read_parses_as_when_split(stream):
    whole, error = _outcome([stream])
    split, split_error = _outcome([stream[i:i + 1] for i in range(len(stream))])
    assert error == split_error
    # A fault after a whole request in the same read is raised before that request is taken.
    assert whole == split if error is None else whole == split[:len(whole)]


def test_long_frame_header_used_above_255_bytes():
    assert zmtp.frame(b"x" * 255)[:2] == b"\x00\xff"
    assert zmtp.frame(b"x" * 256)[:9] == b"\x02" + (256).to_bytes(8, "big")


def test_pipelined_requests_are_answered_in_order():
    conn = _ready_connection()
    conn.receive_data(_request(b"a") + _request(b"b"))
    assert conn.next_request() == b"a"
    with pytest.raises(ZmtpError, match="answers each request before taking the next"):
        conn.next_request()
    conn.reply(b"")
    assert conn.next_request() == b"b"


def test_reply_without_request():
    with pytest.raises(ZmtpError, match="no request to answer"):
        _ready_connection().reply(b"x")


def test_envelope_of_a_routed_request_is_sent_back():
    conn = _ready_connection()
    conn.receive_data(zmtp.frame(b"peer-7", more=True) + _request(b"body"))
    assert conn.next_request() == b"body"
    assert conn.reply(b"r") == zmtp.frame(b"peer-7", more=True) + zmtp.frame(b"", more=True) + zmtp.frame(b"r")


def test_ping_is_answered_with_pong_and_context():
    conn = _ready_connection()
    conn.data_to_send()
    conn.receive_data(zmtp.command(b"PING", b"\x00\x0a" + b"ctx"))
    assert conn.data_to_send() == zmtp.command(b"PONG", b"ctx")
    conn.receive_data(_request(b"after"))
    assert conn.next_request() == b"after"


@pytest.mark.parametrize("stream, words", [
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + bytes(64), "not a ZeroMQ socket"),
    (_peer_greeting(major=2), "ZMTP 2.x"),
    (_peer_greeting(mechanism=b"CURVE"), "'CURVE' security mechanism"),
    (_peer_greeting() + zmtp.ready(b"PUB"), "PUB socket"),
    (_peer_greeting() + zmtp.command(b"READY"), "untyped socket"),
    (_peer_greeting() + zmtp.command(b"HELLO"), "expects READY"),
    (_peer_greeting() + zmtp.command(b"ERROR", b"\x05nope!"), "refused the handshake: nope!"),
    (_peer_greeting() + _request(b"x"), "before the handshake"),
    (_peer_greeting() + zmtp.command(b"READY", b"\x0bSocket-Type\x00\x00\x00\x09REQ"), "claims 9 bytes"),
    (_peer_greeting() + REQ_READY + zmtp.frame(b"no delimiter"), "no empty delimiter"),
    (_peer_greeting() + REQ_READY + zmtp.frame(b"", True) + zmtp.frame(b"a", True) + zmtp.frame(b"b"),
     "2 body frames"),
    (_peer_greeting() + REQ_READY + b"\x40\x01x", "reserved flag bits"),
    (_peer_greeting() + REQ_READY + zmtp.command(b"ERROR", b"\x04gone"), "reported an error: gone"),
    (_peer_greeting() + REQ_READY + b"\x04\x03\x09ab", "malformed command"),
])
def test_protocol_breaches_are_named(stream, words):
    conn = RepConnection()
    with pytest.raises(ZmtpError) as info:
        conn.receive_data(stream)
        conn.next_request()
    assert words in str(info.value)


@pytest.mark.parametrize("head, words", [(_peer_greeting(major=2)[:12], "ZMTP 2.x"),
                                         (b"GET / HTTP/1.0\r\n", "not a ZeroMQ socket")])
def test_old_or_foreign_peers_are_named_before_a_whole_greeting(head, words):
    # A ZMTP 2 peer sends 12 bytes and waits: waiting for 64 would hang.
    with pytest.raises(ZmtpError, match=words):
        RepConnection().receive_data(head)


def test_dealer_peers_are_served():
    conn = RepConnection()
    conn.receive_data(_peer_greeting() + zmtp.ready(b"DEALER"))
    assert conn.peer_type == b"DEALER"


# --- endpoints ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("endpoint, expected", [
    ("tcp://127.0.0.1:5555", (socket.AF_INET, ("127.0.0.1", 5555))),
    ("tcp://*:5555", (socket.AF_INET, ("0.0.0.0", 5555))),
    ("tcp://[::1]:5555", (socket.AF_INET6, ("::1", 5555, 0, 0))),
    ("tcp://localhost:5555", (socket.AF_INET, ("127.0.0.1", 5555))),   # IPv4, as libzmq binds it
    ("ipc:///tmp/x.sock", (socket.AF_UNIX, "/tmp/x.sock")),
    ("ipc://@batsim", (socket.AF_UNIX, "\0batsim")),
    ("tcp://127.0.0.1:*", None),          # libzmq picks the port
    ("tcp://lo;127.0.0.1:5555", None),    # source;destination
    ("inproc://x", None),
    ("nonsense", None),
])
def test_socket_address(endpoint, expected):
    assert socket_address(endpoint) == expected


def test_localhost_serves_an_ipv4_peer(free_tcp_endpoint):
    port = free_tcp_endpoint.rsplit(":", 1)[1]
    _echo_through(bind_rep(f"tcp://localhost:{port}"), f"tcp://127.0.0.1:{port}")


def test_auto_picks_the_transport(free_tcp_endpoint):
    for endpoint, kind in ((free_tcp_endpoint, SocketRep), ("inproc://auto-test", LibzmqRep)):
        rep = bind_rep(endpoint)
        try:
            assert type(rep) is kind
        finally:
            rep.close()
    rep = bind_rep(free_tcp_endpoint, "libzmq")
    rep.close()
    assert type(rep) is LibzmqRep


def test_without_poll_and_msg_dontwait_auto_means_libzmq(monkeypatch, free_tcp_endpoint):
    from batsched_py.transport import endpoints
    monkeypatch.setattr(endpoints, "_PLAIN_SOCKETS", False)     # (as on Windows)
    rep = bind_rep(free_tcp_endpoint)
    rep.close()
    assert type(rep) is LibzmqRep
    with pytest.raises(OSError, match="on POSIX systems only"):
        bind_rep(free_tcp_endpoint, "zmtp")


def test_zmtp_refuses_endpoints_it_cannot_bind():
    with pytest.raises(OSError, match="cannot bind inproc://x: the zmtp transport serves tcp"):
        bind_rep("inproc://x", "zmtp")
    with pytest.raises(ValueError, match="transport must be one of"):
        bind_rep("tcp://127.0.0.1:1", "udp")


def test_address_in_use(free_tcp_endpoint):
    first = bind_rep(free_tcp_endpoint)
    try:
        with pytest.raises(OSError, match=f"cannot bind {free_tcp_endpoint}: Address already in use"):
            bind_rep(free_tcp_endpoint)
    finally:
        first.close()
    bind_rep(free_tcp_endpoint).close()     # let go: can be bound again


def _echo(rep, count):
    """Serve ``count`` requests in a thread, answering each with its reverse."""
    def run():
        try:
            for _ in range(count):
                request = rep.wait(30.0)
                assert request is not None
                rep.send(request[::-1])
        finally:
            rep.close()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _echo_through(rep, endpoint, bodies=(b"batsim",), connected=lambda: None):
    """Requests through ``rep`` from a libzmq REQ peer, each answered with its reverse;
    ``connected()`` runs once the peer is connected, before its first request."""
    thread = _echo(rep, len(bodies))
    sock = _req(endpoint)
    try:
        connected()
        for body in bodies:
            sock.send(body)
            assert sock.recv() == body[::-1]
    finally:
        sock.close()
    thread.join(10)
    assert not thread.is_alive()


def _req(endpoint, kind=zmq.REQ):
    sock = zmq.Context.instance().socket(kind)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 30_000)     # (generous: a loaded machine)
    sock.connect(endpoint)
    return sock


@pytest.mark.parametrize("transport", ["zmtp", "libzmq"])
def test_an_endpoint_closed_right_after_its_last_reply_still_delivers_it(transport, free_tcp_endpoint):
    """The answer to SIMULATION_ENDS is sent just before the endpoint closes: closing must not drop it
    (libzmq's linger 0 did for a reply still queued in its I/O thread: a busy machine lost the last
    of the echo test's replies below)."""
    rep = bind_rep(free_tcp_endpoint, transport)
    sock = _req(free_tcp_endpoint)
    try:
        sock.send(b"SIMULATION_ENDS")
        assert rep.wait(30.0) == b"SIMULATION_ENDS"
        body = bytes(64 << 20)          # (64 MiB: more than loopback takes before close() returns)
        rep.send(body)
        rep.close()
        assert sock.recv() == body
    finally:
        sock.close()


@pytest.mark.parametrize("transport", ["zmtp", "libzmq"])
def test_libzmq_req_peer_all_sizes(transport, free_tcp_endpoint):
    sizes = [0, 1, 200, 255, 256, 65_535, 65_536, 3_000_000]
    _echo_through(bind_rep(free_tcp_endpoint, transport), free_tcp_endpoint, [os.urandom(n) for n in sizes])


def test_ipc_endpoints(tmp_path):
    path = tmp_path / "sched.sock"
    for endpoint in (f"ipc://{path}", f"ipc://@batsched-py-test-{os.getpid()}"):
        _echo_through(bind_rep(endpoint), endpoint, [b"abc", b"x" * 100_000])
        assert not path.exists()    # removed on close, as libzmq does


def test_stale_ipc_socket_file_is_replaced(tmp_path):
    path = tmp_path / "stale.sock"
    leftover = socket.socket(socket.AF_UNIX)
    leftover.bind(str(path))
    leftover.close()
    bind_rep(f"ipc://{path}").close()
    regular = tmp_path / "data"
    regular.write_text("keep")
    with pytest.raises(OSError, match="cannot bind"):
        bind_rep(f"ipc://{regular}")
    assert regular.read_text() == "keep"


def test_peer_connecting_before_bind(free_tcp_endpoint):
    sock = _req(free_tcp_endpoint)      # libzmq retries until the endpoint exists
    try:
        sock.send(b"early")
        thread = _echo(bind_rep(free_tcp_endpoint), 1)
        assert sock.recv() == b"ylrae"
    finally:
        sock.close()
    thread.join(10)


def test_dealer_peer(free_tcp_endpoint):
    thread = _echo(bind_rep(free_tcp_endpoint), 1)
    sock = _req(free_tcp_endpoint, zmq.DEALER)
    try:
        sock.send_multipart([b"", b"hello"])
        assert sock.recv_multipart() == [b"", b"olleh"]
    finally:
        sock.close()
    thread.join(10)


def test_probe_before_the_peer_is_tolerated(free_tcp_endpoint):
    rep = bind_rep(free_tcp_endpoint)
    host, port = free_tcp_endpoint[len("tcp://"):].rsplit(":", 1)
    socket.create_connection((host, int(port))).close()     # what a readiness check does
    assert rep.wait(0.05) is None
    _echo_through(rep, free_tcp_endpoint)


def test_idle_stray_connection_does_not_block_the_peer(free_tcp_endpoint):
    host, port = free_tcp_endpoint[len("tcp://"):].rsplit(":", 1)
    rep = bind_rep(free_tcp_endpoint)
    stray = socket.create_connection((host, int(port)))     # connects first and never speaks
    try:
        assert rep.wait(0.05) is None
        _echo_through(rep, free_tcp_endpoint)
        stray.settimeout(5)
        data = stray.recv(1024)
        while data:                 # our greeting, then the close once the peer was chosen
            data = stray.recv(1024)
    finally:
        stray.close()


def test_peer_lost_mid_simulation(free_tcp_endpoint):
    rep = bind_rep(free_tcp_endpoint)
    sock = _req(free_tcp_endpoint)
    try:
        sock.send(b"one")
        assert rep.wait(5.0) == b"one"
        rep.send(b"r")
        assert sock.recv() == b"r"
    finally:
        sock.close()
    try:
        with pytest.raises(PeerClosed, match=f"peer on {free_tcp_endpoint} was lost after 1 requests"):
            rep.wait(5.0)
    finally:
        rep.close()


def test_poll_and_wait_time_out_without_a_peer(free_tcp_endpoint):
    rep = bind_rep(free_tcp_endpoint)
    try:
        assert rep.poll(0.01) is None
        assert rep.wait(0.01) is None
    finally:
        rep.close()


@pytest.mark.parametrize("port, transport", [("99999", "auto"), ("99999", "libzmq"), ("-5", "auto"), ("-5", "libzmq")])
def test_a_port_beyond_65535_is_refused_not_wrapped(port, transport):
    # getaddrinfo and libzmq turn 99999 into 34463 and -5 into 65531 (mod 65536): Batsim would never
    # find the scheduler.
    from batsched_py.transport.endpoints import bind_rep
    with pytest.raises(OSError, match=fr"cannot bind tcp://127\.0\.0\.1:{port}: port {port} is not in 0-65535"):
        bind_rep(f"tcp://127.0.0.1:{port}", transport)


HTTP_PROBE = b"GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: probe\r\n\r\n"


def _stray(endpoint: str, data: bytes) -> socket.socket:
    host, port = endpoint[len("tcp://"):].rsplit(":", 1)
    stray = socket.create_connection((host, int(port)))
    stray.sendall(data)
    return stray


def _closed_by_the_server(stray: socket.socket) -> bool:
    stray.settimeout(5)
    try:
        while stray.recv(1024):     # (the server's greeting may come first)
            pass
    except ConnectionResetError:
        pass
    return True


@pytest.mark.parametrize("garbage", [HTTP_PROBE, b"\xff" + bytes(8) + b"\x7f\x03\x00NULL" + bytes(16) + b"junk"],
                         ids=["http-probe", "zmtp-greeting-then-junk"])
@pytest.mark.parametrize("transport", ["zmtp", "libzmq"])
def test_a_stray_sending_garbage_is_dropped_and_batsim_served(transport, garbage, free_tcp_endpoint):
    """A stray connection sending garbage before Batsim's request (here while the REQ peer is
    connected and not yet sending) is dropped, and the REQ peer is served, with either transport."""
    rep = bind_rep(free_tcp_endpoint, transport)
    strays = [_stray(free_tcp_endpoint, garbage)]
    def another_stray() -> None:
        strays.append(_stray(free_tcp_endpoint, garbage))
        time.sleep(0.1)

    try:
        assert rep.wait(0.2) is None
        _echo_through(rep, free_tcp_endpoint, (b"batsim", b"again"), connected=another_stray)
        assert all(_closed_by_the_server(stray) for stray in strays)
    finally:
        for stray in strays:
            stray.close()
