"""Numbers of workload and events files read as Batsim reads them (RapidJSON's default parser)."""
import json
import math

import pytest
from hypothesis import given, strategies as st

from batsched_py import protocol as p
from batsched_py.emulator import Emulation
from batsched_py.models.errors import EmulatorError

from batsched_py.models.events_file import load_events
from batsched_py.models.json_numbers import as_batsim_reads, rapidjson_double
from batsched_py.models.workload import load_workload

from golden_replay import GOLDEN

# What RapidJSON 1.1.0's Document::Parse gives for these texts (printed with %a by
# scripts/simgrid_study/rapidjson_numbers.cpp); the first ones are what Python's float() gives too.
RAPIDJSON = [
    ("57.245384205516594", "0x1.c9f68bfe8d309p+5"),
    ("5694.41582612414", "0x1.63e6a7394b401p+12"),
    ("113.8", "0x1.c733333333333p+6"),
    ("2.5e-5", "0x1.a36e2eb1c432dp-16"),
    ("1.7976931348623157e308", "0x1.fffffffffffffp+1023"),
    ("123456789012345678e-330", "0x0.00005d165967ap-1022"),
    # 1 ulp off the correctly rounded double:
    ("108.79494227531521", "0x1.b32e05590abf1p+6"),          # a submission time of the golden cases
    ("1009.6681369278247", "0x1.f8d58582c720fp+9"),
    ("0.000000000000000000000012345678901234567", "0x1.dd99ae89eb84cp-77"),
    ("-9294043170709543979.43360", "-0x1.01f6260b2a933p+63"),  # an int64 overflow, not uint64
]


def test_rapidjson_values():
    for text, value in RAPIDJSON:
        assert rapidjson_double(text) == float.fromhex(value), text
    assert sum(rapidjson_double(t) != float(t) for t, _ in RAPIDJSON) == 4


@given(st.integers(0, 10 ** 15 - 1), st.integers(0, 15))
def test_up_to_15_digits_are_rounded_correctly(digits, point):
    text = str(digits).rjust(point + 1, "0")
    text = text[:len(text) - point] + "." + text[len(text) - point:] if point else text + ".0"
    assert rapidjson_double(text) == float(text)


def test_large_exponents_are_up_to_3_ulps_off_like_rapidjson():
    # (real RapidJSON 1.1.0, default flags, parses this as 0x1.64ae577106c2p+996: 2 ulps above)
    assert rapidjson_double("9.330732051434923e+299") == float.fromhex("0x1.64ae577106c2p+996")
    assert float("9.330732051434923e+299") == float.fromhex("0x1.64ae577106c1ep+996")


@given(st.floats(1e-300, 1e300))
def test_at_most_3_ulps_off(x):
    # RapidJSON's documented bound for its default parsing (without kParseFullPrecisionFlag)
    text = repr(x)
    assert abs(rapidjson_double(text) - x) <= 3 * math.ulp(x)
    assert rapidjson_double("-" + text) == -rapidjson_double(text)


def test_too_big_is_infinite_and_refused_by_the_readers(tmp_path):
    assert rapidjson_double("1e400") == math.inf and rapidjson_double("-1.5e309") == -math.inf
    assert rapidjson_double("1e-400") == 0.0
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 1, "profiles": {"d": {"type": "delay", "delay": 1}},'
                    ' "jobs": [{"id": 1, "subtime": 1.5e400, "res": 1, "profile": "d"}]}')
    with pytest.raises(EmulatorError, match="'subtime' must be a finite non-negative number, got inf"):
        load_workload(path, "w0", nb_hosts=1)


def test_workload_and_events_numbers_are_batsims(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 1009.6681369278247}},'
                    ' "jobs": [{"id": 1, "subtime": 108.79494227531521, "res": 1, "profile": "d",'
                    ' "walltime": 5694.41582612414}]}')
    wl = load_workload(path, "w0", nb_hosts=4)
    job = wl.jobs[0]
    assert job.subtime == float.fromhex("0x1.b32e05590abf1p+6") != 108.79494227531521
    assert job.walltime == 5694.41582612414
    assert wl.profiles["d"].data["delay"] == float.fromhex("0x1.f8d58582c720fp+9")
    events = tmp_path / "events.txt"
    events.write_text(json.dumps({"type": "x"})[:-1] + ', "timestamp": 108.79494227531521}\n')
    assert load_events(events, nb_hosts=4)[0].timestamp == float.fromhex("0x1.b32e05590abf1p+6")


def test_replies_are_read_as_batsim_reads_their_json():
    # A CALL_ME_LATER asked by a scheduler for its now + 1 s: the date Batsim 4.2.1's waiter
    # printed (a patched Batsim, %.17g) is 1 ulp below Python's float of the same text.
    reply = p.Message(1294.001394, (p.CallMeLater(1294.001394, 1295.0013950000277),))
    read = as_batsim_reads(reply)
    assert read.events[0].at == 1295.0013950000275 and read.now == 1294.001394
    assert read.events[0].timestamp == 1294.001394
    # times that read back unchanged (short ones: the 6-decimal times Batsim sends) keep the reply
    short = p.Message(12.5, (p.CallMeLater(12.5, 13.000001),))
    assert as_batsim_reads(short) is short


def _woken_at(tmp_path, at: float) -> float:
    """The clock at which the emulator sends the REQUESTED_CALL of a CALL_ME_LATER at ``at``."""
    platform = GOLDEN / "killer-e128-semantics" / "inputs" / "energy_platform_homogeneous_no_net_128.xml"
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 1, "jobs": [{"id": "1", "subtime": 1294.001394, "res": 1,
                                                            "profile": "d"}],
                                    "profiles": {"d": {"type": "delay", "delay": 5}}}))
    with Emulation(platform, [workload]) as emulation:
        request = emulation.start()
        while request is not None:
            if any(isinstance(e, p.RequestedCall) for e in request.events):
                return emulation.now
            events: tuple = ()
            if any(isinstance(e, p.JobSubmitted) for e in request.events):
                events = (p.RejectJob(request.now, "w0!1"), p.CallMeLater(request.now, at))
            request = emulation.send(p.Message(request.now, events))
    raise AssertionError("no REQUESTED_CALL")


def test_call_me_later_wakes_at_the_date_batsim_reads(tmp_path):
    assert _woken_at(tmp_path, 1295.0013950000277) == _woken_at(tmp_path, 1295.0013950000275)
    assert _woken_at(tmp_path, 1295.0013950000277) != _woken_at(tmp_path, 1295.001395000028)
