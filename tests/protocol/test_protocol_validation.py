"""Strict validation: each refusal is a ProtocolError whose ``where`` names the place in the message."""
from __future__ import annotations

import json
import math
import re

import pytest
from procset import ProcSet

from batsched_py import protocol as p


def ev(kind, data, t=1.0):
    return {"timestamp": t, "type": kind, "data": data}


def msg(*events, now=10.0):
    return {"now": now, "events": list(events)}


def refused(raw, sender=None) -> p.ProtocolError:
    with pytest.raises(p.ProtocolError) as info:
        p.decode_message(raw, sender=sender)
    exc = info.value
    assert str(exc) == f"{exc.where}: {exc.reason}"
    assert "\n" not in str(exc)
    return exc


EXEC = ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-3"})
COMPLETED = ev("JOB_COMPLETED", {"job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0,
                                 "alloc": "0-3"})


@pytest.mark.parametrize("raw, where, words", [
    (msg(ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": 3})), "message.events[0].data.alloc", "must be a string"),
    (msg(ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "3-1"})), "message.events[0].data.alloc", "ends before"),
    (msg(ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "a"})), "message.events[0].data.alloc", "'a'"),
    (msg(ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "-1"})), "message.events[0].data.alloc", "negative"),
    (msg(ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": ""})), "message.events[0].data.alloc", "empty"),
    (msg(ev("EXECUTE_JOB", {"alloc": "0"})), "message.events[0].data", "missing field 'job_id'"),
    (msg(EXEC, ev("EXECUTE_JOB", {"job_id": 7, "alloc": "0"})), "message.events[1].data.job_id", "must be a string"),
    (msg(ev("NOPE", {})), "message.events[0].type", "unknown event type 'NOPE'"),
    (msg(ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}, t=-1)), "message.events[0].timestamp", "non-negative"),
    (msg(ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}, t=11)), "message.events[0].timestamp", "after the message's now"),
    (msg(ev("REJECT_JOB", {"job_id": "a"}, t=5), ev("REJECT_JOB", {"job_id": "b"}, t=4)),
     "message.events[1].timestamp", "ascending"),
    (msg(ev("REJECT_JOB", {"job_id": "a"}, t="1")), "message.events[0].timestamp", "must be an integer or a number"),
    (msg(ev("REJECT_JOB", {"job_id": "a"}, t=True)), "message.events[0].timestamp", "got a boolean"),
    ({"now": -1, "events": []}, "message.now", "non-negative"),
    ({"now": float("nan"), "events": []}, "message.now", "finite"),
    ({"now": float("inf"), "events": []}, "message.now", "finite"),
    ({"now": 10 ** 400, "events": []}, "message.now", "too large"),
    ({"now": 1}, "message", "missing field 'events'"),
    ({"now": 1, "events": {}}, "message.events", "must be an array"),
    ([], "message", "expected a JSON object, got an array"),
    (msg(ev("JOB_COMPLETED", {"job_id": "a", "job_state": "DONE", "return_code": 0, "alloc": "0"})),
     "message.events[0].data.job_state", "unknown job state 'DONE'"),
    (msg(ev("JOB_SUBMITTED", {"job_id": "w!1", "job": {"id": "w!1", "res": -2, "profile": "p"}})),
     "message.events[0].data.job.res", "non-negative"),
    (msg(ev("JOB_SUBMITTED", {"job_id": "w!1", "job": {"id": "w!1", "res": 1, "profile": "p",
                                                        "walltime": float("inf")}})),
     "message.events[0].data.job.walltime", "finite"),
    (msg(ev("JOB_KILLED", {"job_ids": ["w!1"], "job_progress": {"w!1": {"profile_name": "p", "current_task": {}}}})),
     "message.events[0].data.job_progress.w!1.current_task", "missing field 'profile_name'"),
    (msg(ev("JOB_KILLED", {"job_ids": ["w!1", 2]})), "message.events[0].data.job_ids[1]", "must be a string"),
    (msg(ev("RESOURCE_STATE_CHANGED", {"resources": "0-3", "state": "\u00b2"})),
     "message.events[0].data.state", "pstate number"),
    (msg(ev("SET_RESOURCE_STATE", {"resources": "0-3", "state": "sleep"})),
     "message.events[0].data.state", "pstate number"),
    (msg(ev("NOTIFY", {"type": "event_machine_unavailable", "resources": "0 1_0"})),
     "message.events[0].data.resources", "'1_0'"),
    (msg(ev("SIMULATION_BEGINS", {"nb_resources": 1, "nb_compute_resources": 1,
                                  "compute_resources": [{"id": 0, "name": "h", "state": 3}]})),
     "message.events[0].data.compute_resources[0].state", "must be a string"),
    (msg(ev("SIMULATION_BEGINS", {"nb_resources": 1, "nb_compute_resources": 1,
                                  "compute_resources": [{"id": 0, "name": "h", "state": "idle",
                                                         "properties": {"wattage_per_state": 95.0}}]})),
     "message.events[0].data.compute_resources[0].properties.wattage_per_state", "must be a string, got a number"),
    (msg(ev("SIMULATION_BEGINS", {"nb_resources": 1, "nb_compute_resources": 1,
                                  "compute_resources": [{"id": 0, "name": "h", "state": "idle",
                                                         "zone_properties": {"role": None}}]})),
     "message.events[0].data.compute_resources[0].zone_properties.role", "must be a string, got null"),
    (msg(ev("SIMULATION_BEGINS", {"nb_resources": 2, "nb_compute_resources": 2,
                                  "compute_resources": [{"id": 0, "name": "a", "state": "idle"},
                                                        {"id": 5, "name": "b", "state": "idle"}]})),
     "message.events[0].data.compute_resources[1].id", "compute resource 'b' has id 5, expected 1"),
    (msg(ev("SIMULATION_BEGINS", {"nb_resources": 1, "nb_compute_resources": 2,
                                  "compute_resources": [{"id": 0, "name": "a", "state": "idle"}]})),
     "message.events[0].data.nb_compute_resources", "nb_compute_resources is 2 but compute_resources lists 1"),
    (msg(ev("QUERY", {"requests": {}})), "message.events[0].data.requests", "at least one"),
    (msg(ev("ANSWER", {"consumed_energy": "12"})), "message.events[0].data.consumed_energy", "must be"),
    (msg(ev("KILL_JOB", {"job_ids": []})), "message.events[0].data.job_ids", "at least one"),
    (msg(ev("CALL_ME_LATER", {"timestamp": float("nan")})), "message.events[0].data.timestamp", "finite"),
    (msg(ev("REGISTER_JOB", {"job_id": "nobang"})), "message.events[0].data.job_id", "WORKLOAD!NAME"),
    (msg(ev("REGISTER_PROFILE", {"workload_name": "w", "profile_name": "p", "profile": {}})),
     "message.events[0].data.profile", "missing field 'type'"),
    (msg(ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}, t=1), ev("NOTIFY", [])),
     "message.events[1].data", "expected a JSON object"),
])
def test_refusals_name_the_place(raw, where, words):
    exc = refused(raw)
    assert exc.where == where, str(exc)
    assert words in exc.reason, str(exc)
    # and the same through the wire form, when JSON can carry it (NaN/Infinity are refused as "not JSON")
    try:
        wire = json.dumps(raw, allow_nan=False)
    except ValueError:
        assert "not valid JSON" in refused(json.dumps(raw)).reason
    else:
        assert refused(wire).where == where


@pytest.mark.parametrize("sender, event, where", [
    ("batsim", EXEC, "message.events[0].type"),
    ("scheduler", COMPLETED, "message.events[0].type"),
    ("scheduler", ev("SIMULATION_BEGINS", {"nb_resources": 0, "nb_compute_resources": 0, "compute_resources": []}),
     "message.events[0].type"),
    ("batsim", ev("CALL_ME_LATER", {"timestamp": 5}), "message.events[0].type"),
])
def test_wrong_direction(sender, event, where):
    exc = refused(msg(event), sender=sender)
    assert exc.where == where and f"never sent by the {sender}" in exc.reason
    p.decode_message(msg(event))  # no direction check without a sender


def test_not_json_and_not_utf8():
    assert "not valid JSON" in refused(b"{nope").reason
    assert "not UTF-8" in refused(b"\xff\xfe{}").reason
    assert "not valid JSON" in refused("[" * 100_000).reason
    assert "not valid JSON" in refused('{"now": 1' + "0" * 5000 + ', "events": []}').reason


def test_bad_sender_argument_is_a_programming_error():
    with pytest.raises(ValueError):
        p.decode_message(msg(), sender="nobody")


def test_long_interval_text_is_shortened_in_error():
    exc = refused(msg(ev("EXECUTE_JOB", {"job_id": "a", "alloc": "x" * 10_000})))
    assert len(str(exc)) < 300


def test_null_data_allowed_only_for_dataless_events():
    ok = p.decode_message(msg(ev("SIMULATION_ENDS", None), ev("REQUESTED_CALL", None, t=2)))
    assert [type(e) for e in ok.events] == [p.SimulationEnds, p.RequestedCall]
    assert refused(msg(ev("REJECT_JOB", None))).where == "message.events[0].data"


def test_missing_data_defaults_to_empty_object():
    assert isinstance(p.decode_message(msg(ev("SIMULATION_ENDS", {}) | {"data": {}})).events[0], p.SimulationEnds)
    raw = {"timestamp": 1, "type": "SIMULATION_ENDS"}
    assert isinstance(p.decode_message(msg(raw)).events[0], p.SimulationEnds)


def test_interval_parsing_accepts_batsim_forms():
    assert p.parse_intervals("0-3 7 9-10", "x") == ProcSet((0, 3), 7, (9, 10))
    assert p.parse_intervals("", "x") == ProcSet()
    assert p.format_intervals(ProcSet((0, 3), 7)) == "0-3 7"


_CYCLE: list = []
_CYCLE.append(_CYCLE)


@pytest.mark.parametrize("bad, words", [
    (p.Message(1.0, (p.CallMeLater(1.0, float("inf")),)),
     "message.events[0]: cannot encode CALL_ME_LATER: Out of range float values are not JSON compliant"),
    (p.Message(1.0, (p.RejectJob(1.0, "w!1"), p.RegisterProfile(1.0, "w", "p", {"x": {1, 2}}))),
     "message.events[1]: cannot encode REGISTER_PROFILE: Object of type set is not JSON serializable"),
    (p.Message(1.0, (p.Notify(1.0, "x", None, {"v": _CYCLE}),)),
     "message.events[0]: cannot encode NOTIFY: Circular reference detected"),
    (p.Message(float("nan"), ()), "message.now: cannot encode now=nan: JSON has no such number"),
    (p.Message(float("inf"), (p.RejectJob(1.0, "w!1"),)), "message.now: cannot encode now=inf"),
])
def test_encode_names_what_json_cannot_hold(bad, words):
    with pytest.raises(p.ProtocolError) as info:
        p.encode_message(bad)
    assert str(info.value).startswith(words)


def test_unknown_fields_survive_round_trip():
    raw = msg(ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-3", "storage_mapping": {"a": 1}}),
              ev("NOTIFY", {"type": "my_external_event", "foo": [1, 2]}, t=2))
    m = p.decode_message(raw, sender=None)
    assert m.events[0].extra == {"storage_mapping": {"a": 1}}
    assert m.events[1].extra == {"foo": [1, 2]}
    assert json.loads(p.encode_message(m)) == raw


from hypothesis import given, strategies as st  # noqa: E402

from batsched_py.protocol.intervals import procset_from_intervals  # noqa: E402


@given(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 20)), max_size=12))
def test_fast_procset_equals_procset_merge(pairs):
    intervals = [(lo, lo + width) for lo, width in pairs]
    fast = procset_from_intervals(intervals)
    slow = ProcSet(*intervals)
    assert fast == slow
    assert str(fast) == str(slow)
    assert list(fast.intervals()) == list(slow.intervals())
    fast |= ProcSet(1000)  # the result behaves as a normal, mutable ProcSet
    assert 1000 in fast


@pytest.mark.parametrize("text", ["3-", "-", "3--4", "3-4-5", "1 ", " 1", "1  2", "²", "1_0", "+1", "٣", "3-٤", "0x1",
                                  "1-+2", "\t1", "1\n"])
def test_interval_parsing_refuses_odd_forms(text):
    with pytest.raises(p.ProtocolError, match="invalid interval set|negative"):
        p.parse_intervals(text, "x")


_BATSIM_INTERVALS = re.compile(r"(?:[0-9]+(?:-[0-9]+)?)(?: [0-9]+(?:-[0-9]+)?)*", re.ASCII)


@given(st.text(alphabet="0123456789- ²٣_+", max_size=14))
def test_interval_parsing_agrees_with_the_grammar(text):
    """Batsim's form (ASCII digits, N or A-B, single spaces) parses to what procset reads; all else is refused."""
    pairs = [part.partition("-") for part in text.split(" ")]
    if text and _BATSIM_INTERVALS.fullmatch(text) and all(
            int(a) <= int(b or a) <= p.intervals.MAX_RESOURCE_ID for a, _, b in pairs):
        assert p.parse_intervals(text, "x") == ProcSet.from_str(text)
    elif text:
        with pytest.raises(p.ProtocolError):
            p.parse_intervals(text, "x")


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=0))
def test_empty_reply_is_encoded_as_the_json_encoder_would(now):
    general = json.dumps({"now": now, "events": []}, separators=(",", ":"), allow_nan=False).encode()
    assert p.encode_message(p.Message(now, ())) == general


def test_empty_reply_with_a_non_finite_now_is_refused():
    with pytest.raises(p.ProtocolError, match="cannot encode"):
        p.encode_message(p.Message(math.inf, ()))


# --- the inlined common-case paths agree with the general reads ---------------------------------------

_ODD = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
                 st.text(max_size=3), st.lists(st.integers(), max_size=1), st.dictionaries(st.text(max_size=1),
                                                                                            st.integers(), max_size=1))


def _maybe(valid):
    return st.one_of(valid, valid, valid, _ODD)      # mostly well-formed, so both paths are exercised


def _outcome(decode):
    try:
        return decode()
    except p.ProtocolError as exc:
        return ("refused", str(exc))


_JOB = st.fixed_dictionaries({"id": _maybe(st.text(max_size=4)), "res": _maybe(st.integers(-1, 64)),
                              "profile": _maybe(st.text(max_size=3)),
                              "subtime": _maybe(st.floats(-1, 1e9) | st.integers(0, 9)),
                              "walltime": _maybe(st.integers(-1, 10**400) | st.floats(-1, 1e9))})


@given(_JOB)
def test_job_description_common_case_agrees_with_general_reads(job):
    # An unknown key keeps the general path; the description then only differs by it.
    fast = _outcome(lambda: p.JobDescription.from_data(job, "job"))
    general = _outcome(lambda: p.JobDescription.from_data({**job, "extra_key": 1}, "job"))
    if isinstance(general, p.JobDescription):
        general = p.JobDescription(general.id, general.res, general.profile, general.subtime, general.walltime, {})
    assert fast == general


@given(st.fixed_dictionaries({"job_id": _maybe(st.text(max_size=3)),
                              "job_state": _maybe(st.sampled_from(p.events.JOB_STATES + ("DONE",))),
                              "return_code": _maybe(st.integers(-2, 2)), "alloc": _maybe(st.sampled_from(["0-3", "1 4", "3-", ""]))}),
       st.booleans())
def test_job_completed_common_case_agrees_with_general_reads(data, with_reason):
    if with_reason:
        data["kill_reason"] = "walltime"
    got = _outcome(lambda: p.JobCompleted.from_data(2.0, data, "d"))
    f = p.fields
    expected = _outcome(lambda: p.JobCompleted(
        2.0, f.get(data, "job_id", str, "d"), p.events._job_state(data, "d"), f.get(data, "return_code", int, "d"),
        p.parse_intervals(f.get(data, "alloc", str, "d"), "d.alloc"), f.get(data, "kill_reason", str, "d", None)))
    assert got == expected


@given(st.fixed_dictionaries({"timestamp": _maybe(st.floats(0, 50) | st.integers(0, 50)),
                              "type": _maybe(st.sampled_from(["JOB_SUBMITTED", "JOB_COMPLETED", "EXECUTE_JOB",
                                                              "SIMULATION_ENDS", "NOPE"])),
                              "data": _maybe(st.just({"job_id": "w!1", "job": {"id": "w!1", "res": 1, "profile": "p",
                                                                               "subtime": 1.0, "walltime": 9},
                                                      "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0,
                                                      "alloc": "0"}))}),
       st.sampled_from([None, p.BATSIM, p.SCHEDULER]))
def test_event_envelope_common_case_agrees_with_decode_event(raw_event, sender):
    message = {"now": 100.0, "events": [raw_event]}
    got = _outcome(lambda: p.decode_message(message, sender=sender).events[0])

    def one_event():    # (and, as in any message, not after its now)
        event = p.decode_event(raw_event, "message.events[0]", sender)
        p.check_order(100.0, [event.timestamp])
        return event
    assert got == _outcome(one_event)
