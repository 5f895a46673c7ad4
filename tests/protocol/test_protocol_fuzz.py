"""Property-based fuzzing of the decoder: whatever arrives, the result is a Message or a ProtocolError.

Nothing else may escape (no KeyError, TypeError, OverflowError, RecursionError...), since the
transport turns ProtocolError into a one-line diagnosis and anything else into a traceback.
Example counts are kept moderate so that the whole file runs in a few seconds.
"""
from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from batsched_py import protocol as p
from helpers.strategies import json_scalars, json_values
from helpers import golden_cases, read_transcript

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def decode_or_protocol_error(raw, sender=None):
    """Decode; return the Message or the ProtocolError.  Any other exception fails the test."""
    try:
        message = p.decode_message(raw, sender=sender)
    except p.ProtocolError as exc:
        assert exc.where.startswith("message"), exc.where
        assert exc.reason and str(exc).startswith(exc.where)
        return exc
    assert isinstance(message, p.Message)
    if isinstance(raw, (str, bytes)):
        # What decodes from the wire encodes again.  (A dict given directly may hold NaN in opaque
        # fields such as config or properties; JSON text cannot.)
        p.encode_message(message)
    return message


# --- arbitrary input ---------------------------------------------------------------------------

@FAST
@given(st.binary(max_size=300))
@example(b"\xff\xfe")
@example(b"")
@example(b"[" * 100_000)   # deep nesting: RecursionError inside json
def test_any_bytes(raw):
    decode_or_protocol_error(raw)


@FAST
@given(st.text(max_size=300))
@example("NaN")
@example('{"now": NaN, "events": []}')
@example('{"now": Infinity, "events": []}')
@example('{"now": 1e400, "events": []}')
@example('{"now": ' + "9" * 400 + ', "events": []}')
def test_any_text(raw):
    decode_or_protocol_error(raw)




@FAST
@given(json_values)
def test_any_json_value(value):
    decode_or_protocol_error(value)
    decode_or_protocol_error(json.dumps(value), sender="batsim")


EVENT_TYPES = sorted(p.EVENT_TYPES) + ["NOPE", "", "job_submitted"]
FIELD_NAMES = ["job_id", "job", "alloc", "job_state", "return_code", "resources", "state", "type", "timestamp",
               "job_ids", "job_progress", "requests", "compute_resources", "nb_resources",
               "nb_compute_resources", "profile", "id", "res", "subtime", "walltime", "profile_name",
               "workload_name", "metadata", "consumed_energy", "mapping", "kill_reason"]


@st.composite
def event_shaped(draw):
    """Objects that look like events: a real type, a data object with plausible field names."""
    data = draw(st.dictionaries(st.sampled_from(FIELD_NAMES), json_values, max_size=5))
    return {"timestamp": draw(st.one_of(st.floats(-1, 100), st.integers(-5, 100), json_scalars)),
            "type": draw(st.sampled_from(EVENT_TYPES)), "data": data}


@FAST
@given(st.floats(allow_nan=True) | st.integers(-3, 2 ** 64), st.lists(event_shaped(), max_size=3),
       st.sampled_from([None, "batsim", "scheduler"]))
def test_event_shaped_objects(now, events, sender):
    decode_or_protocol_error({"now": now, "events": events}, sender=sender)


# --- structured mutations of recorded messages -----------------------------------------------

def _sample_messages():
    """A few messages of every event type from the golden transcripts."""
    seen: dict[tuple[str, str], list] = {}
    for case in golden_cases():
        for entry in read_transcript(case):
            for ev in entry["msg"]["events"]:
                key = (entry["from"], ev["type"] + str(ev["data"].get("type", "")))
                bucket = seen.setdefault(key, [])
                if len(bucket) < 2:
                    bucket.append((entry["from"], entry["msg"]))
    return [m for bucket in seen.values() for m in bucket]


SAMPLES = _sample_messages()
BAD_INTERVALS = ["3-1", "a", "-1", "1-", "-", "1--2", " 1", "1  2", "0-1,3", "1e3", "0x3", "+1", "1_000",
                 "\u0663", "\u00b2", "0-99999999999999999999999", "4294967296", "1 -2", "", " "]
BAD_NUMBERS = [float("nan"), float("inf"), float("-inf"), -1, -1e-9, 10 ** 400, "1", None, True, [], {}]


def _paths(value, path=()):
    """Every (container path, key) inside a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield path + (k,)
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield path + (i,)
            yield from _paths(v, path + (i,))


def _parent(root, path):
    for k in path[:-1]:
        root = root[k]
    return root


@st.composite
def mutated(draw):
    sender, msg = draw(st.sampled_from(SAMPLES))
    msg = copy.deepcopy(msg)
    paths = list(_paths(msg))
    path = draw(st.sampled_from(paths))
    parent, key = _parent(msg, path), path[-1]
    action = draw(st.sampled_from(["drop", "retype", "interval", "number", "unknown_type", "swap_time",
                                   "direction", "add_field", "duplicate_event"]))
    if action == "drop":
        del parent[key]
    elif action == "retype":
        parent[key] = draw(json_scalars | st.just([]) | st.just({}) | st.just([1, "x"]))
    elif action == "interval":
        parent[key] = draw(st.sampled_from(BAD_INTERVALS) | st.text(alphabet="0123456789- ", max_size=8))
    elif action == "number":
        parent[key] = draw(st.sampled_from(BAD_NUMBERS))
    elif action == "unknown_type" and msg["events"]:
        msg["events"][0]["type"] = draw(st.sampled_from(["NOPE", "execute_job", "", "JOB_SUBMITTED "]))
    elif action == "swap_time" and msg["events"]:
        msg["events"][-1]["timestamp"] = draw(st.sampled_from([-1.0, msg["now"] + 1.0, -0.0, 1e308]))
        if len(msg["events"]) > 1:
            msg["events"][0]["timestamp"] = msg["now"]
    elif action == "direction":
        sender = "scheduler" if sender == "batsim" else "batsim"
    elif action == "add_field" and isinstance(parent[key], dict):
        parent[key][draw(st.text(max_size=6))] = draw(json_scalars)
    elif action == "duplicate_event" and msg["events"]:
        msg["events"].append(copy.deepcopy(msg["events"][0]))
    return sender, msg


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_golden_messages(case):
    sender, msg = case
    decode_or_protocol_error(msg, sender=sender)
    decode_or_protocol_error(json.dumps(msg), sender=sender)


def test_samples_cover_every_event_type():
    types = {ev["type"] for _, m in SAMPLES for ev in m["events"]}
    # CHANGE_JOB_STATE, SET_JOB_METADATA and RESOURCE_STATE_CHANGED without -E are not in the recordings
    assert types >= {"SIMULATION_BEGINS", "SIMULATION_ENDS", "JOB_SUBMITTED", "JOB_COMPLETED", "JOB_KILLED",
                     "NOTIFY", "EXECUTE_JOB", "REJECT_JOB", "KILL_JOB", "CALL_ME_LATER", "REQUESTED_CALL",
                     "SET_RESOURCE_STATE", "RESOURCE_STATE_CHANGED", "QUERY", "ANSWER", "REGISTER_JOB",
                     "REGISTER_PROFILE"}, types
