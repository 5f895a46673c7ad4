import gzip
import json
import sys
from pathlib import Path

import pytest

from batsched_py.workloads import ConvertOptions, SwfError, convert_swf, read_swf
from batsched_py.workloads.characterise import sequential_shares
from batsched_py.cli.workloads import main, workload_main
from batsched_py.workloads.upgrade import WorkloadError, upgrade_workload
from helpers import SHARED as _SHARED

TINY = Path(__file__).parents[1] / "data" / "swf" / "tiny.swf"
SHARED = _SHARED
SWF_DIR = SHARED / "data" / "swf"
KTH = SWF_DIR / "KTH-SP2-1996-2.1-cln.swf.gz"
GOLDEN_KTH = SHARED / "golden" / "large-kth_sp2" / "inputs" / "kth_sp2.json"


def test_header_and_fields():
    trace = read_swf(TINY)
    assert trace.machine_size == 8
    assert trace.header["Acknowledge"] == "Nobody"
    assert len(trace.jobs) == 9
    assert trace.jobs[1].procs == 4  # requested procs when allocated unknown


def test_cleaning_rules_counted():
    workload, report = convert_swf(TINY, ConvertOptions(), command="test")
    assert report.dropped == {"missing_walltime": 1, "no_runtime": 2, "cancelled": 1,
                              "too_large": 1, "invalid_walltime": 1}
    assert report.adjusted == {"walltime_raised_to_runtime": 1}
    assert [j["id"] for j in workload["jobs"]] == [1, 7, 8]
    assert workload["jobs"][0]["subtime"] == 0
    assert workload["jobs"][1]["walltime"] == 120  # raised to runtime
    assert workload["profiles"]["delay_50"] == {"type": "delay", "delay": 50}
    assert workload["jobs"][2]["profile"] == "delay_50"  # shared profile
    assert "Feitelson" in workload["description"]
    assert workload["conversion"]["jobs"] == 3


def test_job_fields_carry_user_group_and_queue(tmp_path):
    """--job-fields writes SWF fields 12, 13 and 15 (user, group, queue) into each job."""
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxProcs: 4\n"
                   "1 0 0 10 1 -1 -1 1 60 -1 1 7 3 -1 2 -1 -1 -1\n"
                   "2 5 0 20 1 -1 -1 1 60 -1 1 8 -1 -1 5 -1 -1 -1\n")
    plain, _ = convert_swf(swf, ConvertOptions(), command="t")
    assert "group" not in plain["jobs"][0]
    out = tmp_path / "w.json"
    assert main([str(swf), str(out), "--job-fields", "-q"]) == 0
    jobs = json.loads(out.read_text())["jobs"]
    assert [(j["user"], j["group"], j["queue"]) for j in jobs] == [(7, 3, 2), (8, -1, 5)]


def test_missing_walltime_options_and_minutes():
    w, r = convert_swf(TINY, ConvertOptions(missing_walltime="runtime", time_unit="minutes",
                                            profile_type="compute", speed=2.0), command="t")
    job2 = next(j for j in w["jobs"] if j["id"] == 2)
    assert job2["walltime"] == pytest.approx(50 / 60)
    assert r.adjusted["missing_walltime_runtime"] == 1
    prof = w["profiles"][job2["profile"]]
    assert prof["type"] == "parallel_homogeneous" and prof["cpu"] == pytest.approx(50 / 60 * 2)
    w, _ = convert_swf(TINY, ConvertOptions(missing_walltime="value:500"), command="t")
    assert next(j for j in w["jobs"] if j["id"] == 2)["walltime"] == 500
    with pytest.raises(ValueError, match="missing-walltime"):
        ConvertOptions(missing_walltime="bogus")


def test_slicing():
    w, r = convert_swf(TINY, ConvertOptions(max_jobs=1, skip_jobs=1, short_walltime="drop"),
                       command="t")
    assert [j["id"] for j in w["jobs"]] == [8]
    assert r.dropped["short_walltime"] == 1
    assert r.dropped["skipped_first_jobs"] == 1 and "beyond_max_jobs" not in r.dropped
    w, r = convert_swf(TINY, ConvertOptions(start=1000), command="t")
    assert [j["id"] for j in w["jobs"]] == [8]
    assert r.dropped["outside_time_window"] == 2


def test_malformed_line_reported(tmp_path):
    bad = tmp_path / "bad.swf.gz"
    text = TINY.read_text().replace("    7   500", "    7   5x0")
    with gzip.open(bad, "wt") as f:
        f.write(text)
    with pytest.raises(SwfError, match=r"bad\.swf\.gz:16: non-numeric"):
        read_swf(bad)
    trace = read_swf(bad, skip_malformed=True)
    assert len(trace.jobs) == 8 and trace.malformed[0][0] == 16
    short = tmp_path / "short.swf"
    short.write_text("1 2 3\n")
    with pytest.raises(SwfError, match="short.swf:1: expected 18 fields, got 3"):
        read_swf(short)
    assert main([str(short), str(tmp_path / "o.json"), "-q"]) == 2


def test_cli_split_days(tmp_path, capsys):
    assert main([str(TINY), str(tmp_path / "ep"), "--split", "day", "--renumber"]) == 0
    files = sorted(p.name for p in tmp_path.glob("ep_*.json"))
    assert files == ["ep_1970-01-01.json", "ep_1970-01-02.json"]
    day2 = json.loads((tmp_path / "ep_1970-01-02.json").read_text())
    assert day2["jobs"][0]["subtime"] == 0 and day2["episode"]["period"] == "day"
    assert "dropped  cancelled" in capsys.readouterr().out


def test_sequential_shares():
    rows = sequential_shares(read_swf(TINY), gap=300)
    assert [(r.day, r.n_jobs, r.n_sequential) for r in rows] == [("1970-01-01", 7, 6),
                                                                  ("1970-01-02", 2, 1)]
    assert [r.quartile_bin for r in rows] == [4, 1]
    assert workload_main(["characterise", str(TINY)]) == 0


def test_upgrade_workload():
    data = {"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
            "profiles": {"p": {"type": "msg_par_hg", "cpu": 1, "com": 0},
                         "s": {"type": "sequence", "seq": ["p"]}}}
    out, changes = upgrade_workload(data, "w.json")
    assert out["profiles"]["p"]["type"] == "parallel_homogeneous"
    assert out["profiles"]["s"]["type"] == "composed" and len(changes) == 2
    del data["jobs"][0]["profile"]
    with pytest.raises(WorkloadError, match=r"w\.json: jobs\[0\]"):
        upgrade_workload(data, "w.json")


@pytest.mark.parametrize("data, words", [
    ([], "top level must be an object with a 'profiles' object"),
    ({"profiles": []}, "top level must be an object with a 'profiles' object"),
    ({"profiles": {}, "jobs": {}}, "'jobs' must be a list"),
    ({"profiles": {"p": {"cpu": 1}}}, "profiles['p'] has no 'type'"),
    ({"profiles": {"p": 3}}, "profiles['p'] has no 'type'"),
    ({"profiles": {"p": {"type": "delay", "delay": float("nan")}}},
     "profiles.p.delay is nan: JSON has no NaN nor Infinity (Batsim 4.2.1 aborts)"),
])
def test_upgrade_refuses_what_is_not_a_workload(data, words):
    with pytest.raises(WorkloadError) as info:
        upgrade_workload(data, "w.json")
    assert str(info.value) == f"w.json: {words}"


def test_upgrade_warns_of_unknown_profile_types():
    out, changes = upgrade_workload({"profiles": {"p": {"type": "quantum"}}, "jobs": []}, "w.json")
    assert out["profiles"]["p"]["type"] == "quantum"
    assert changes == ["warning: profiles['p'].type 'quantum' is not a Batsim 4 type"]


@pytest.mark.skipif(not KTH.exists(), reason="needs ../shared beside the repository")
def test_kth_legacy_matches_golden():
    workload, report = convert_swf(KTH, ConvertOptions(legacy=True, speed=100e6), command="t")
    golden = json.loads(GOLDEN_KTH.read_text())
    assert len(workload["jobs"]) == len(golden["jobs"]) == 27954
    keys = ("id", "subtime", "walltime", "res", "profile")
    assert [[j[k] for k in keys] for j in workload["jobs"]] == \
        [[j[k] for k in keys] for j in golden["jobs"]]
    assert workload["profiles"] == golden["profiles"]
    assert report.dropped == {"walltime_not_above_runtime": 513, "no_runtime": 8, "no_procs": 1}
    # Default mode keeps 513 more jobs: walltime <= runtime is adjusted, not dropped.
    native, rep = convert_swf(KTH, ConvertOptions(), command="t")
    assert len(native["jobs"]) == 27954 + 513
    assert rep.dropped == {"no_runtime": 8, "no_procs": 1}


@pytest.mark.skipif(not SWF_DIR.exists(), reason="needs ../shared beside the repository")
@pytest.mark.parametrize("name", sorted(p.name for p in SWF_DIR.glob("*.gz")) if SWF_DIR.exists() else [])
def test_every_trace_head_converts(name):
    workload, report = convert_swf(SWF_DIR / name, ConvertOptions(missing_walltime="runtime"),
                                   max_lines=3000, command="t", skip_malformed=False)
    assert workload["jobs"] and report.n_records > 0
    assert all(j["res"] <= workload["nb_res"] for j in workload["jobs"])


@pytest.mark.slow
@pytest.mark.skipif(not SWF_DIR.exists(), reason="needs ../shared beside the repository")
@pytest.mark.parametrize("name", sorted(p.name for p in SWF_DIR.glob("*.gz")) if SWF_DIR.exists() else [])
def test_every_trace_converts_whole(name):
    workload, report = convert_swf(SWF_DIR / name, ConvertOptions(missing_walltime="runtime"), command="t")
    assert len(workload["jobs"]) == report.n_records - sum(report.dropped.values())


def test_repeated_job_numbers_are_named(tmp_path, capsys):
    """Batsim refuses a workload whose job ids repeat: the conversion names both lines, and
    --renumber gives ids 0..n-1."""
    line = "{} 0 10 100 4 -1 -1 4 200 -1 1 1 1 1 1 -1 -1 -1\n"
    swf = tmp_path / "dup.swf"
    swf.write_text("; Version: 2.2\n" + line.format(1) + line.format(2) + line.format(1))
    with pytest.raises(ValueError, match=r"dup\.swf:4: job number 1 was already used at line 2; --renumber"):
        convert_swf(swf, ConvertOptions())
    workload, _ = convert_swf(swf, ConvertOptions(renumber=True))
    assert [j["id"] for j in workload["jobs"]] == [0, 1, 2]
    assert main([str(swf), str(tmp_path / "o.json")]) == 2
    assert "dup.swf:4: job number 1 was already used at line 2" in capsys.readouterr().err


def test_a_malformed_line_clears_the_progress_bar_first(tmp_path, capsys, monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)     # (the bar is drawn on a terminal only)
    bad = tmp_path / "bad.swf"
    bad.write_text(TINY.read_text() + "2 x 10\n")
    assert main([str(bad), str(tmp_path / "o.json")]) == 2     # (progress on: no -q)
    err = capsys.readouterr().err
    # the bar's line is cleared ("\r" + blanks + "\r") before the error, which starts its own line
    assert err.split("\r")[-1].startswith("swf2json: error: ") and "bad.swf:" in err.split("\r")[-1]


def test_damaged_gzip_and_fractional_integers_are_named(tmp_path):
    good = gzip.compress(TINY.read_bytes())
    cut = tmp_path / "cut.swf.gz"
    cut.write_bytes(good[:len(good) // 2])
    with pytest.raises(SwfError, match=r"cut\.swf\.gz: damaged gzip data \(Compressed file ended"):
        read_swf(cut)
    assert main([str(cut), str(tmp_path / "o.json"), "-q"]) == 2
    fractional = tmp_path / "f.swf"
    fractional.write_text("1.5 0 10 100 4 -1 -1 4 200 -1 1 1 1 1 1 -1 -1 -1\n")
    with pytest.raises(SwfError, match=r"f\.swf:1: field 1 \(job number\) must be an integer, got 1\.5"):
        read_swf(fractional)


def test_progress_without_tqdm_prints_a_plain_count(monkeypatch, capsys):
    from batsched_py.workloads.progress import progress
    monkeypatch.setitem(sys.modules, "tqdm", None)          # (import tqdm now fails)
    assert list(progress(range(5), "reading", every=2)) == [0, 1, 2, 3, 4]
    assert capsys.readouterr().err.splitlines() == ["reading: 2 lines", "reading: 4 lines", "reading: 5 lines, done"]
    assert list(progress(range(3), "reading", enabled=False)) == [0, 1, 2]
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("flags, words", [
    (["--legacy-walltime-factor", "2"], "--legacy-walltime-factor needs --legacy"),
    (["--speed", "2e9"], "--speed sets the cpu of compute profiles (--profile compute or --legacy)"),
    (["--legacy", "--missing-walltime", "runtime"], "--legacy applies the old script's rules: --missing-walltime"),
    (["--legacy", "--short-walltime", "keep", "--keep-cancelled"],
     "--legacy applies the old script's rules: --short-walltime, --keep-cancelled would be ignored"),
])
def test_cli_refuses_options_it_would_ignore(tmp_path, capsys, flags, words):
    out = tmp_path / "o.json"
    assert main([str(TINY), str(out), "-q", *flags]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1, err
    assert not out.exists()


def test_cli_speed_reaches_compute_profiles(tmp_path):
    out = tmp_path / "o.json"
    assert main([str(TINY), str(out), "-q", "--profile", "compute", "--speed", "2"]) == 0
    assert {p["cpu"] for p in json.loads(out.read_text())["profiles"].values()} == {100, 2 * 120, 2 * 50}


def test_lines_garbled_by_damaged_gzip_data_name_the_damage(tmp_path):
    """A flipped bit inside the deflate data garbles the lines after it before the CRC at the end
    is checked: the error names the damaged gzip data, not only a line of wrong field counts."""
    record = "{} 100 10 50 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
    data = bytearray(gzip.compress("".join(record.format(i) for i in range(1, 5001)).encode(), mtime=0))
    data[len(data) // 2] ^= 0x55
    damaged = tmp_path / "d.swf.gz"
    damaged.write_bytes(data)
    with pytest.raises(SwfError, match=r"d\.swf\.gz: damaged gzip data \(.*\); line \d+ is malformed, probably garbled by it"):
        read_swf(damaged)
    bad = tmp_path / "bad.swf"       # (a plain file's malformed line stays what it is)
    bad.write_text("1 2 3\n")
    with pytest.raises(SwfError, match=r"bad\.swf:1: expected 18 fields, got 3$"):
        read_swf(bad)


def test_workload_outputs_in_a_new_folder_are_written(tmp_path):
    source = tmp_path / "w3.json"
    source.write_text(json.dumps({"nb_res": 1, "jobs": [], "profiles": {"p": {"type": "msg_par_hg", "cpu": 1, "com": 0}}}))
    assert workload_main(["upgrade", str(source), str(tmp_path / "new" / "w4.json")]) == 0
    assert json.loads((tmp_path / "new" / "w4.json").read_text())["profiles"]["p"]["type"] == "parallel_homogeneous"
    assert workload_main(["characterise", str(TINY), "-o", str(tmp_path / "new2" / "shares.csv")]) == 0
    assert (tmp_path / "new2" / "shares.csv").read_text().startswith("day,n_jobs,")


@pytest.mark.parametrize("header", ["", "; UnixStartTime: 1000000000\n"])
def test_split_of_a_submit_time_beyond_the_calendar_is_named(tmp_path, capsys, header):
    swf = tmp_path / "far.swf"
    swf.write_text(header + "1 0 0 10 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
                            "2 1e20 0 10 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n")
    assert main([str(swf), str(tmp_path / "ep"), "--split", "day", "-q"]) == 2
    err = capsys.readouterr().err
    assert err == f"swf2json: error: {swf}: job 2: submit time 1e+20 s is beyond the calendar: --split cannot date it\n"
