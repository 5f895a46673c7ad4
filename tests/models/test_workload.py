import json
from pathlib import Path

import pytest

from batsched_py import protocol as p

from batsched_py.models.errors import EmulatorError
from batsched_py.models import profiles as profiles_module
from batsched_py.models.profiles import expand_tasks
from batsched_py.models.workload import load_workload


def write(tmp_path, profiles, jobs=None):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "profiles": profiles,
                                "jobs": jobs or [{"id": 1, "subtime": 0, "res": 1, "profile": next(iter(profiles))}]}))
    return path


@pytest.mark.parametrize("kind", ["smpi", "usage_trace", "trace_replay", "parallel_homogeneous_pfs", "data_staging"])
def test_unsupported_profiles_are_refused(tmp_path, kind):
    with pytest.raises(EmulatorError, match="real Batsim") as info:
        load_workload(write(tmp_path, {"p": {"type": kind}}), "w0", nb_hosts=4)
    assert "'p'" in str(info.value) and "w0" in str(info.value) and "job w0!1" in str(info.value)


def test_unsupported_profile_error_names_the_jobs_using_it(tmp_path):
    profiles = {"ok": {"type": "delay", "delay": 1}, "m": {"type": "smpi", "trace": "t"},
                "c": {"type": "composed", "seq": ["ok", "m"]}, "unused": {"type": "usage_trace", "trace": "u"}}
    jobs = [{"id": i, "subtime": 0, "res": 1, "profile": "c" if i % 2 else "ok"} for i in range(14)]
    with pytest.raises(EmulatorError) as info:
        load_workload(write(tmp_path, profiles, jobs), "w0", nb_hosts=4)
    msg = str(info.value)
    # the composed profile's unsupported part, and the jobs running it (first 5, then a count)
    assert "profile 'm' (type 'smpi')" in msg and "SMPI" in msg and "real Batsim" in msg
    assert "jobs w0!1, w0!3, w0!5, w0!7, w0!9 and 2 more" in msg
    # a profile no job uses is no obstacle
    del profiles["c"]
    assert load_workload(write(tmp_path, profiles, jobs[::2]), "w0", nb_hosts=4)


def test_communication_needs_a_network(tmp_path):
    prof = {"p": {"type": "parallel", "cpu": [1, 1], "com": [0, 5, 5, 0]}}
    jobs = [{"id": 1, "subtime": 0, "res": 2, "profile": "p"}]
    with pytest.raises(EmulatorError, match="network model.*job w0!1"):
        load_workload(write(tmp_path, prof, jobs), "w0", nb_hosts=4)
    assert load_workload(write(tmp_path, prof, jobs), "w0", nb_hosts=4, free_network=True)


def test_ids_and_profiles(tmp_path):
    wl = load_workload(write(tmp_path, {"c": {"type": "composed", "seq": ["d"], "repeat": 2},
                                        "d": {"type": "delay", "delay": 3}, "unused": {"type": "delay", "delay": 1}},
                             [{"id": 7, "subtime": 1, "res": 2, "profile": "c", "user": "x"}]), "w0", nb_hosts=4)
    job = wl.jobs[0]
    assert job.id == "w0!7" and job.desc.to_data() == {"id": "w0!7", "subtime": 1, "res": 2, "profile": "c", "user": "x"}
    # the JOB_SUBMITTED description is the one the protocol decoder would build from the file's object
    assert job.desc == p.JobDescription.from_data(job.desc.to_data(), "job")
    assert set(wl.profiles_json()) == {"c", "d"}
    assert [t.amount for t, _ in expand_tasks(wl.profiles[job.profile], wl.profiles, "job")] == [3.0, 3.0]


@pytest.mark.parametrize("job,match", [({"id": 1, "subtime": 0, "res": 0, "profile": "d"}, "res"),
                                       ({"id": 1, "subtime": 0, "res": 1, "profile": "zz"}, "unknown profile"),
                                       ({"id": 1, "subtime": 0, "res": 9, "profile": "d"}, "9 hosts")])
def test_bad_jobs(tmp_path, job, match):
    with pytest.raises(EmulatorError, match=match):
        load_workload(write(tmp_path, {"d": {"type": "delay", "delay": 1}}, [job]), "w0", nb_hosts=4)


# What Batsim 4.2.1's workload reader aborts on (src/workload.cpp, jobs.cpp): each one is named.
@pytest.mark.parametrize("job_id,match", [
    ("w0!a!b", r"job id 'w0!a!b': Batsim 4.2.1 aborts: an id holding the workload's name 'w0' must be two"),
    ("a!b", r"job id 'a!b': Batsim 4.2.1 aborts: a job name must not contain a '!'"),
    ("w1!5", r"job id 'w1!5': Batsim 4.2.1 aborts: a job name must not contain a '!'"),
    ("xw0!5", r"job id 'xw0!5' names workload 'xw0', not 'w0'"),
    ("w07", r"job id 'w07': Batsim 4.2.1 aborts: an id holding the workload's name 'w0'"),
])
def test_job_ids_batsim_aborts_on(tmp_path, job_id, match):
    jobs = [{"id": job_id, "subtime": 0, "res": 1, "profile": "d"}]
    with pytest.raises(EmulatorError, match=r"w\.json\): jobs\[0\]: " + match):
        load_workload(write(tmp_path, {"d": {"type": "delay", "delay": 1}}, jobs), "w0", nb_hosts=4)


@pytest.mark.parametrize("job_id,full", [("w0!5", "w0!5"), ("w0!!5", "w0!5"), (5, "w0!5"), ("x", "w0!x")])
def test_job_ids_batsim_accepts(tmp_path, job_id, full):
    jobs = [{"id": job_id, "subtime": 0, "res": 1, "profile": "d"}]
    wl = load_workload(write(tmp_path, {"d": {"type": "delay", "delay": 1}}, jobs), "w0", nb_hosts=4)
    assert wl.jobs[0].id == full


@pytest.mark.parametrize("document,match", [
    ({"profiles": {}, "jobs": []}, "the 'nb_res' field is missing"),
    ({"nb_res": 4, "jobs": []}, "the 'profiles' object is missing"),
    ({"nb_res": 4, "profiles": {}}, "the 'jobs' array is missing"),
    ({"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 1}},
      "jobs": [{"id": 1, "res": 1, "profile": "d"}]}, r"jobs\[0\]: job 'w0!1' has no 'subtime' field"),
    ({"nb_res": 4, "profiles": {"p": {"type": "parallel", "cpu": [1, 1, 1], "com": [0] * 9}},
      "jobs": [{"id": 1, "subtime": 0, "res": 2, "profile": "p"}]},
     r"jobs\[0\]: job 'w0!1' requests 2 hosts but its parallel profile 'p' has 3 cpu entries"),
])
def test_workload_documents_batsim_aborts_on(tmp_path, document, match):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(document))
    with pytest.raises(EmulatorError, match=rf"workload w0 \({path}\): {match}.*Batsim 4.2.1 aborts"):
        load_workload(path, "w0", nb_hosts=4)


@pytest.mark.parametrize("profile,match", [
    # as Batsim's own checks: a composed profile runs something, a parallel one has a rank x rank com matrix
    ({"type": "composed", "seq": [], "repeat": 1_000_000_000}, "'seq' must be a non-empty list of profile names"),
    ({"type": "parallel", "cpu": [1, 2], "com": [0, 0, 0]}, r"'com' has 3 entries; 2 cpu entries need 2x2 = 4"),
    ({"type": "parallel", "cpu": [1], "com": [0, 1]}, r"'com' has 2 entries; 1 cpu entries need 1x1 = 1"),
    ({"type": "parallel", "cpu": [], "com": []}, "'cpu' must be a non-empty list of non-negative numbers"),
    ({"type": "parallel", "cpu": [1, -2], "com": [0, 0, 0, 0]}, "'cpu' must be a non-empty list of non-negative"),
    ({"type": "parallel", "cpu": [1, True], "com": [0, 0, 0, 0]}, "'cpu' must be a non-empty list of non-negative"),
    ({"type": "parallel", "cpu": [1, 1], "com": [0, 0, "0", 0]}, "'com' must be a list of non-negative numbers"),
    ({"delay": 1}, "a profile must be an object with a string 'type'"),
    ({"type": "delay", "delay": 1, "ret": 1.5}, "'ret' must be an integer, got 1.5"),
    ({"type": "delay", "delay": -1}, "field 'delay' must be a non-negative number, got -1"),
    ({"type": "delay"}, "field 'delay' must be a non-negative number, got None"),
    ({"type": "delay", "delay": float("nan")}, "field 'delay' must be a non-negative number, got nan"),
    ({"type": "parallel_homogeneous", "cpu": "1e9"}, "field 'cpu' must be a non-negative number, got '1e9'"),
    ({"type": "composed", "seq": ["d"], "repeat": 0}, "'repeat' must be a positive integer"),
    ({"type": "composed", "seq": [3]}, "'seq' must be a non-empty list of profile names"),
    ({"type": "msg_par_hg"}, "'msg_par_hg' is Batsim 3's name for 'parallel_homogeneous': convert the workload "
                             "with 'batsched-py workload upgrade IN OUT'"),
    ({"type": "quantum"}, r"unknown profile type 'quantum' \(Batsim 4.2.1 has delay"),
])
def test_bad_profiles_are_named(tmp_path, profile, match):
    with pytest.raises(EmulatorError, match=r"w\.json.*profile 'p': " + match):
        load_workload(write(tmp_path, {"p": profile}), "w0", nb_hosts=4)


def test_profiles_too_long_to_list_are_refused_at_once(tmp_path, monkeypatch):
    """A composed profile repeated a billion times (nested or not) is refused with its size,
    instead of filling memory while the workload loads.  (The limit is lowered to keep this quick.)"""
    monkeypatch.setattr(profiles_module, "MAX_TASKS", 1000)
    delay = {"type": "delay", "delay": 1}
    flat = {"p": {"type": "composed", "seq": ["d"], "repeat": 10 ** 12}, "d": delay}
    nested = {"p": {"type": "composed", "seq": ["c"], "repeat": 10 ** 9},
              "c": {"type": "composed", "seq": ["d", "d"], "repeat": 100}, "d": delay}
    for profiles, repeat in ((flat, "1,000,000,000,000 of 1"), (nested, "1,000,000,000 of 1")):
        with pytest.raises(EmulatorError, match=f"profile 'p' expands to more than 1,000 tasks "
                                                f"\\(repeat {repeat} profile\\(s\\)\\)"):
            load_workload(write(tmp_path, profiles), "w0", nb_hosts=4)
    fits = {"p": {"type": "composed", "seq": ["d"], "repeat": 1000}, "d": delay}
    assert load_workload(write(tmp_path, fits), "w0", nb_hosts=4).jobs[0].profile == "p"


@pytest.mark.parametrize("content, match", [
    (b"\xa1\x00binary", r"not UTF-8 text \(invalid start byte at byte 0\)"),
    (b"[1, 2]", "the top level must be a JSON object"),
    (b'{"profiles": [], "jobs": []}', "'profiles' must be an object and 'jobs' a list"),
    (b'{"jobs": [', r"invalid JSON \(Expecting value"),
])
def test_unreadable_workload_files_are_named(tmp_path, content, match):
    """The emulator, the oracle policy and the upgrade read a workload file's top level alike
    (models/document.py); a binary file was a UnicodeDecodeError traceback."""
    from batsched_py.workloads.upgrade import WorkloadError, upgrade_workload_file
    path = tmp_path / "w.json"
    path.write_bytes(content)
    with pytest.raises(EmulatorError, match=rf"workload w0 \({path}\): {match}"):
        load_workload(path, "w0", nb_hosts=4)
    with pytest.raises(WorkloadError, match=f"{path}: {match}"):
        upgrade_workload_file(path, tmp_path / "out.json")
    with pytest.raises(EmulatorError, match="cannot read it"):
        load_workload(tmp_path / "missing.json", "w0", nb_hosts=4)


@pytest.mark.parametrize("path", sorted((Path(__file__).parents[2] / "workloads").glob("*.json")), ids=lambda p: p.name)
def test_shipped_workloads_pass_batsims_checks(path):
    nb_res = json.loads(path.read_text())["nb_res"]
    assert load_workload(path, "w0", nb_hosts=nb_res).jobs


@pytest.mark.parametrize("profile, job_extra, match", [
    ({"type": "delay", "delay": 1}, {"note": {"score": float("inf")}}, r"jobs\[0\]: job 'w0!1': note\.score is inf"),
    ({"type": "delay", "delay": 1, "tags": [1, float("nan")]}, {}, r"profile 'p': tags\[1\] is nan"),
])
def test_nan_and_infinity_in_forwarded_fields_are_refused(tmp_path, profile, job_extra, match):
    # Jobs (and, with --forward-profiles-on-submission, profiles) go to the scheduler as they are
    # in the file: JSON has no NaN nor Infinity (Batsim's parser refuses them; serialising failed).
    path = write(tmp_path, {"p": profile}, [{"id": 1, "subtime": 0, "res": 1, "profile": "p", **job_extra}])
    with pytest.raises(EmulatorError, match=match + r": JSON has no NaN nor Infinity \(Batsim 4\.2\.1 aborts\)"):
        load_workload(path, "w0", nb_hosts=4)
