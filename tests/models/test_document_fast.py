"""Workload files read with the optional orjson reader give what json (with the emulator's
RapidJSON numbers) gives: the same value (same types, same float bits, the last of duplicate
keys) or the same one-line error, and orjson is used on the usual files."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from batsched_py.models.json_numbers import rapidjson_double
from batsched_py.models import document
from batsched_py.models.document import WorkloadError, read_workload_file
from helpers import SHARED

pytest.importorskip("orjson")

GOLDEN_WORKLOADS = sorted(SHARED.glob("golden/*/inputs/*.json")) + sorted(
    (Path(__file__).parents[2] / "workloads").glob("*.json"))


def outcome(path: Path, fast: bool, parse_float=rapidjson_double) -> str:
    """The repr of what reading ``path`` gives (repr tells 1 from 1.0, -0.0 from 0.0, and every
    double from its neighbours), or the error."""
    saved = document._fast_loads
    document._fast_loads = saved if fast else None
    try:
        return repr(read_workload_file(path, parse_float))
    except WorkloadError as exc:
        return f"error: {exc}"
    finally:
        document._fast_loads = saved


def same_either_way(raw: bytes, parse_float=rapidjson_double) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.json"
        path.write_bytes(raw)
        assert outcome(path, True, parse_float) == outcome(path, False, parse_float)


@pytest.mark.skipif(not GOLDEN_WORKLOADS, reason="no golden recordings (../shared)")
def test_golden_workloads_read_alike():
    for path in GOLDEN_WORKLOADS:
        assert outcome(path, True) == outcome(path, False), path
        assert outcome(path, True, None) == outcome(path, False, None), path


@pytest.mark.skipif(not (SHARED / "golden").is_dir(), reason="no golden recordings (../shared)")
def test_orjson_reads_unless_a_number_needs_rapidjson():
    kth = SHARED / "golden/large-kth_sp2/inputs/kth_sp2.json"
    assert document._fast_parse(kth.read_bytes(), rapidjson_double) is not None
    # submission times of 17 digits, some of which RapidJSON rounds 1 ulp away: json's path
    seventeen = next((SHARED / "golden/pybatsim_easy-e128-hpc250-E/inputs").glob("*.json"))
    assert document._fast_parse(seventeen.read_bytes(), rapidjson_double) is None
    # long numbers RapidJSON reads as float() does are checked one by one, up to a point
    agree = [t for t in (repr(k / 7 + 1000) for k in range(1, 2000)) if len(t) >= 17
             and rapidjson_double(t) == float(t)]
    few = ("[" + ", ".join(agree[:document._MOST_CHECKED]) + "]").encode()
    assert document._fast_parse(few, rapidjson_double) == [float(t) for t in agree[:document._MOST_CHECKED]]
    assert document._fast_parse(few.replace(b"[", b"[" + agree[-1].encode() + b", "), rapidjson_double) is None


# Number texts of every kind the reader must tell apart: short ones (float() and RapidJSON
# agree), 17-digit ones (they may not), exponents, integers beyond 64 bits, and the same texts
# inside strings, where they are no numbers.
_digits = st.integers(0, 10 ** 25).map(str)
number_texts = (
    st.floats(allow_nan=False, allow_infinity=False).map(repr)
    | st.tuples(_digits, _digits).map(lambda p: f"{p[0]}.{p[1]}")
    | st.tuples(st.floats(0, 1e6).map(repr), st.sampled_from("eE"), st.sampled_from(["", "+", "-"]),
                st.integers(0, 400)).map(lambda p: f"{p[0].replace('e+', 'e')}{p[1]}{p[2]}{p[3]}")
    | st.integers(-(2 ** 70), 2 ** 70).map(str)
    | st.sampled_from(["-0", "-0.0", "0.0", "1E5", "108.79494227531521", "1.7976931348623157e308",
                       "NaN", "Infinity", "-Infinity", "1e400"]))
values = number_texts | number_texts.map(json.dumps) | st.sampled_from(
    ['"[x"', '"a\\\\"', '"\\"]"', '"\\ud800"', '"\\u00e9"', "true", "null", "[]", "{}"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "jobs", "profiles"]), values), max_size=8),
       st.sampled_from([" ", "\n", "\r\n", ""]))
@example([("a", "1"), ("a", "2.5")], " ")                         # duplicate keys: the last one
@example([("a", "[" * 100 + "]" * 100)], "")                      # deeper than orjson is given
@example([("a", "[" * 200_000 + "]" * 200_000)], "")              # that crashes orjson 3.8
@example([("a", "[" * 1010 + "]" * 1010)], "")                    # deeper than json reads
@example([("a", '["]' + "[" * 200 + "]" * 200)], "")              # a bracket in a string
def test_any_document(members, space):
    text = "{" + f",{space}".join(f'"{k}":{space}{v}' for k, v in members) + "}"
    same_either_way(text.encode())
    same_either_way(text.encode(), None)


@pytest.mark.parametrize("raw", [
    b"\xef\xbb\xbf{}",                   # UTF-8 byte order mark: json refuses it
    b'{"a": "\xff"}',                    # not UTF-8
    b'{"a": "\xed\xa0\x80"}',            # an encoded surrogate: not UTF-8
    b'{"a": 1,\r\n "b": x}',             # a fault after a CRLF: the same position
    b'{"a": 1} x', b"", b"[1, 2]", b'{"jobs": {}}',
])
def test_faults_are_named_alike(raw):
    same_either_way(raw)


def test_without_orjson(tmp_path, monkeypatch):
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 1, "profiles": {}, "jobs": [{"id": 1, "subtime": 108.79494227531521}]}')
    monkeypatch.setattr(document, "_fast_loads", None)
    _, _, jobs = read_workload_file(path, rapidjson_double)
    assert jobs[0]["subtime"] == rapidjson_double("108.79494227531521") != 108.79494227531521
