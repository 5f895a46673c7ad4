"""The optional orjson reader and writer ('batsched_py[fast]') give what the standard json ones give.

Decoding must not depend on whether the accelerator is installed: the same bytes give the same
message (same types, same float bits) or the same ProtocolError, word for word.  Encoding may
differ in spelling (orjson writes UTF-8 where json escapes, 1e16 for 1e+16), never in the value.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from batsched_py import protocol as p
from helpers.strategies import json_values
from batsched_py.protocol import message

pytest.importorskip("orjson")

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def parsed(raw: bytes, fast: bool) -> str:
    """What decoding ``raw`` gives with or without the accelerator, as text: the repr of the JSON
    value and of the message (repr tells -0.0 from 0.0 and 1 from 1.0), or the error."""
    saved = message._fast_loads
    message._fast_loads = saved if fast else None
    try:
        try:
            value = repr(message._parse(raw))
        except p.ProtocolError as exc:
            return f"error: {exc}"
        try:
            return value + " -> " + repr(p.decode_message(raw))
        except p.ProtocolError as exc:
            return value + f" -> error: {exc}"
    finally:
        message._fast_loads = saved


def same_either_way(raw: bytes) -> None:
    assert parsed(raw, fast=True) == parsed(raw, fast=False)


@SETTINGS
@given(st.binary(max_size=200))
@example(b"\xef\xbb\xbf{}")                 # UTF-8 byte order mark
@example(b'"\xed\xa0\x80"')                 # an encoded surrogate: not UTF-8
@example(b"[" * 5000)                       # deeper than orjson reads
def test_any_bytes(raw):
    same_either_way(raw)




@SETTINGS
@given(json_values, st.booleans())
def test_any_json_value(value, ascii_only):
    same_either_way(json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"))
    same_either_way(json.dumps({"now": 1.0, "events": [{"timestamp": 1.0, "type": "NOTIFY",
                                                        "data": {"type": "x", "v": value}}]}).encode())


@SETTINGS
@given(st.from_regex(r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,3})?", fullmatch=True))
@example("123456789012345678901234567890")   # beyond 64 bits: orjson would make it a float
@example("-9223372036854775809")
@example("18446744073709551616")
@example("1e400")                            # json: inf (then refused as a time); orjson refuses it
@example("2.2250738585072011e-308")
@example("9007199254740993.0")
def test_numbers(literal):
    same_either_way(literal.encode())
    same_either_way(b'{"now": %s, "events": []}' % literal.encode())


@pytest.mark.parametrize("raw", [
    b'{"now": NaN, "events": []}', b'{"now": Infinity, "events": []}', b'"\\ud800"',
    b'{"a": 1, "a": 2}', b' {"now": 0, "events": []} ', b'{"now": 1.5, "events": [],}',
    b'{"now": 1.5, "events": [{"timestamp": 1.5, "type": "JOB_COMPLETED", "data": {"job_id": "w!1234567890123456789", '
    b'"job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "0-3"}}]}',
])
def test_edge_cases(raw):
    same_either_way(raw)


def spy_on(monkeypatch, name: str) -> list:
    """The arguments of every call to ``message.<name>`` (orjson's function) from now on."""
    calls = []
    fast = getattr(message, name)

    def spy(arg):
        calls.append(arg)
        return fast(arg)

    monkeypatch.setattr(message, name, spy)
    return calls


def test_the_accelerator_reads_batsim_messages(monkeypatch):
    """Installed, it is what reads a plain message; a run of 19 digits goes to json instead."""
    calls = spy_on(monkeypatch, "_fast_loads")
    plain = b'{"now": 2.5, "events": [{"timestamp": 2.5, "type": "JOB_SUBMITTED", "data": {"job_id": "w0!1", ' \
            b'"job": {"id": "w0!1", "subtime": 2.5, "res": 4, "profile": "p", "walltime": 100}}}]}'
    assert p.decode_message(plain).events[0].job.res == 4
    assert calls == [plain]
    big = b'{"now": 2.5, "events": [], "x": 12345678901234567890123}'
    assert p.decode_message(big).now == 2.5
    assert calls == [plain]
    # The boundary: 18 digits in a row still take the accelerator, 19 do not.
    eighteen = b'{"now": 2.5, "events": [], "x": "a123456789012345678 1"}'
    nineteen = b'{"now": 2.5, "events": [], "x": "a1234567890123456789 1"}'
    assert p.decode_message(eighteen).now == 2.5
    assert calls == [plain, eighteen]
    assert p.decode_message(nineteen).now == 2.5
    assert calls == [plain, eighteen]


def written(msg: p.Message, fast: bool) -> str:
    """The JSON value encoding ``msg`` gives with or without the accelerator, as the repr of what
    json reads back (exact floats, ints apart from floats), or the error."""
    saved = message._fast_dumps
    message._fast_dumps = saved if fast else None
    try:
        try:
            text = p.encode_message(msg)
        except p.ProtocolError as exc:
            return f"error: {type(exc).__name__}: {exc}"
        return repr(json.loads(text))
    finally:
        message._fast_dumps = saved


def written_alike(msg: p.Message) -> None:
    assert written(msg, fast=True) == written(msg, fast=False)


hosts = st.lists(st.integers(0, 2 ** 31 - 1), min_size=1, max_size=6).map(lambda ids: ProcSet(*ids))
keys = st.text(max_size=8) | st.integers(-5, 5) | st.booleans() | st.none()


@SETTINGS
@given(st.floats(min_value=0, allow_infinity=False), st.text(max_size=10), hosts,
       st.dictionaries(keys, json_values, max_size=3), st.dictionaries(st.text(max_size=8), json_values, max_size=3))
@example(1e16, "w0!1", ProcSet(0), {}, {"x": float("nan")})
@example(2.5, "\ud800", ProcSet(0), {}, {})                # a lone surrogate: orjson refuses it
@example(2.5, "null", ProcSet(0), {}, {"big": 2 ** 70})
def test_any_reply(t, job_id, alloc, mapping, extra):
    written_alike(p.Message(t, (p.ExecuteJob(t, job_id, alloc, mapping or None, extra),
                                p.Notify(t, "registration_finished", None, extra))))


def test_the_accelerator_writes_replies(monkeypatch):
    """Installed, it is what writes a reply with decisions; a reply it would spell wrong goes to json."""
    calls = spy_on(monkeypatch, "_fast_dumps")
    reply = p.Message(2.5, (p.ExecuteJob(2.5, "w0!1", ProcSet((0, 3), 7)),))
    assert p.encode_message(reply) == b'{"now":2.5,"events":[{"timestamp":2.5,"type":"EXECUTE_JOB",' \
                                      b'"data":{"job_id":"w0!1","alloc":"0-3 7"}}]}'
    assert len(calls) == 1
    with pytest.raises(p.ProtocolError, match=r"message.events\[0\]: cannot encode NOTIFY: Out of range float values"):
        p.encode_message(p.Message(2.5, (p.Notify(2.5, "x", None, {"v": float("nan")}),)))
    assert len(calls) == 2        # (orjson wrote null: json refused it)
