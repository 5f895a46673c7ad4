"""Whole protocol messages: ``{"now": t, "events": [...]}``, decoded, checked and encoded."""
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from .. import json_accel
from ..textfiles import not_utf8
from . import fields as f
from .errors import ProtocolError
from .events import BATSIM, EVENT_TYPES, SCHEDULER, Event
from .frozen import fast_init


@fast_init
@dataclass(frozen=True, slots=True)
class Message:
    now: float
    events: tuple[Event, ...] = ()

    def to_data(self) -> dict[str, Any]:
        return {"now": self.now,
                "events": [{"timestamp": e.timestamp, "type": e.TYPE, "data": e.to_data()} for e in self.events]}


def check_order(now: float, timestamps: Iterable[float], where: str = "message") -> None:
    """The protocol's two timing rules: events ascend, and none is after ``now``."""
    previous = -math.inf
    for i, t in enumerate(timestamps):
        if t < previous:
            raise ProtocolError(f"event timestamp {t} is before the previous event's {previous} "
                                "(events must be in ascending time order)", f"{where}.events[{i}].timestamp")
        if t > now:
            raise ProtocolError(f"event timestamp {t} is after the message's now={now}",
                                f"{where}.events[{i}].timestamp")
        previous = t


def decode_event(raw: Any, where: str, sender: Optional[str] = None) -> Event:
    raw = f.require_object(raw, where)
    kind = f.get(raw, "type", str, where)
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        raise ProtocolError(f"unknown event type {kind!r}", f"{where}.type")
    if sender is not None and sender not in cls.SENT_BY:
        raise ProtocolError(f"{kind} is never sent by the {sender}", f"{where}.type")
    timestamp = f.number(raw, "timestamp", where)    # (finite: f.number refuses the rest)
    if timestamp < 0:
        raise ProtocolError(f"timestamp must be a finite non-negative number, got {timestamp}",
                            f"{where}.timestamp")
    data = raw.get("data", {})
    if data.__class__ is not dict:
        if data is None and kind in ("SIMULATION_ENDS", "REQUESTED_CALL"):
            data = {}
        data = f.require_object(data, f"{where}.data")
    return cls.from_data(float(timestamp), data, f"{where}.data")



_WHERE = [f"message.events[{i}]" for i in range(64)]     # (the common indexes, formatted once)
_WHERE_DATA = [f"{where}.data" for where in _WHERE]


def _refuse_constant(name: str):
    # Python's json reads NaN, Infinity and -Infinity; JSON (and Batsim) has no such values.
    raise ValueError(f"{name} is not a JSON value")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)  # built once: json.loads(**kw) builds one per call

# The optional accelerator (json_accel): parses 3x, serialises 9x faster.
_fast_loads: Optional[Callable[[bytes], Any]] = json_accel.loads
_fast_dumps: Optional[Callable[[Any], bytes]] = json_accel.dumps
_FastError = json_accel.DecodeError

# orjson reads an integer beyond 64 bits as a float, where json keeps it exact: text holding a run
# of 19 digits (which such an integer has) takes json.  What orjson refuses (NaN, 1e400, lone
# surrogates, invalid text) also goes to json, which accepts it or names the fault: both readers
# give the same result on every input.  The run is found by mapping every digit to "0" and
# everything else to " " (a regular expression took longer than orjson's whole parse).
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_RUN = b"0" * 19


def _parse(raw: object) -> Any:
    """The JSON value of ``raw`` (bytes or str; anything else is taken as already parsed)."""
    if raw.__class__ is bytes and _fast_loads is not None and _LONG_RUN not in raw.translate(_DIGITS_AS_ZEROS):
        try:
            return _fast_loads(raw)
        except _FastError:
            pass
    if isinstance(raw, (bytes, bytearray, memoryview)):
        try:
            raw = (raw if isinstance(raw, bytes) else bytes(raw)).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(not_utf8(exc)) from None
    if isinstance(raw, str):
        try:
            return _DECODER.decode(raw)
        except (ValueError, RecursionError) as exc:  # ValueError: JSONDecodeError, int over 4300 digits
            raise ProtocolError(f"not valid JSON ({exc})") from None
    return raw


def decode_message(raw: bytes | str | dict, sender: Optional[str] = None) -> Message:
    """Parse one message; ``sender`` ("batsim" or "scheduler") also checks event directions."""
    if sender not in (None, BATSIM, SCHEDULER):
        raise ValueError(f"sender must be {BATSIM!r} or {SCHEDULER!r}")
    data = _parse(raw)
    now = raw_events = None
    if data.__class__ is dict:      # (the common case checked inline; the reads below name any fault)
        now, raw_events = data.get("now"), data.get("events")
    if not (now.__class__ is float and 0.0 <= now < math.inf and raw_events.__class__ is list):
        data = f.require_object(data, "message")
        now = f.number(data, "now", "message")      # (finite: f.number refuses the rest)
        if now < 0:
            raise ProtocolError(f"now must be a finite non-negative number, got {now}", "message.now")
        raw_events = f.get(data, "events", list, "message")
    events: list[Event] = []
    previous = 0.0
    for i, raw_event in enumerate(raw_events):
        # The envelope checks of decode_event, inlined for the common well-formed event;
        # anything unusual takes decode_event, which names the fault.
        cls = t = body = None
        if raw_event.__class__ is dict:
            kind, t, body = raw_event.get("type"), raw_event.get("timestamp"), raw_event.get("data")
            if kind.__class__ is str:
                cls = EVENT_TYPES.get(kind)
        if (cls is not None and t.__class__ is float and 0.0 <= t < math.inf and body.__class__ is dict
                and (sender is None or sender in cls.SENT_BY) and i < len(_WHERE_DATA)):
            event = cls.from_data(t, body, _WHERE_DATA[i])
        else:
            event = decode_event(raw_event, _WHERE[i] if i < len(_WHERE) else f"message.events[{i}]", sender)
        t = event.timestamp
        if t < previous or t > now:
            check_order(now, [e.timestamp for e in events] + [t])   # raises, naming the event
        previous = t
        events.append(event)
    return Message(float(now), tuple(events))


# allow_nan=False: Batsim's JSON parser rejects NaN/Infinity, so fail here, on our side.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def encode_message(message: Message) -> bytes:
    now = message.now
    if not message.events and now.__class__ is float and math.isfinite(now):
        # Most replies say only "nothing to do": format them as the encoder would, without it.
        return b'{"now":%s,"events":[]}' % float.__repr__(now).encode()
    data = message.to_data()
    if _fast_dumps is not None:
        # orjson writes NaN and the infinities as null where json refuses them, and refuses what
        # json accepts (integers beyond 64 bits, keys that are not strings, lone surrogates): output
        # holding "null", and anything orjson refuses, takes json.  Both give the same JSON value.
        try:
            text = _fast_dumps(data)
        except TypeError:       # (orjson.JSONEncodeError is one)
            pass
        else:
            if b"null" not in text:
                return text
    try:
        return _ENCODER.encode(data).encode("utf-8")
    except (ValueError, TypeError):     # (TypeError: a value JSON has no form for, such as a set)
        raise _unencodable(message) from None


def _unencodable(message: Message) -> ProtocolError:
    """The error naming the first event of ``message`` that JSON cannot hold, else its ``now``."""
    for i, event in enumerate(message.events):
        try:
            _ENCODER.encode({"timestamp": event.timestamp, "data": event.to_data()})
        except (ValueError, TypeError) as exc:
            return ProtocolError(f"cannot encode {event.TYPE}: {exc}", f"message.events[{i}]")
    return ProtocolError(f"cannot encode now={message.now!r}: JSON has no such number", "message.now")
