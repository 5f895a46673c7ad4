"""Inputs that used to end in a traceback, or to be accepted where Batsim aborts: each ends
`run` with exit code 2 and one line naming what is wrong and where."""
import json

import pytest

from batsched_py.cli import main
from helpers import GOLDEN

PLATFORM = GOLDEN / "fcfs_fast-e128-semantics-E" / "inputs" / "energy_platform_homogeneous_no_net_128.xml"
PROFILES = {"d": {"type": "delay", "delay": 5}}


def _job(**fields):
    return {"id": "1", "subtime": 0, "res": 1, "profile": "d", "walltime": 10, **fields}


@pytest.mark.parametrize("text,words", [
    ('{"nb_res": 4, "jobs": ' + "[" * 200_000 + "]" * 200_000 + "}", ["JSON nested too deep"]),
    (json.dumps({"nb_res": 4, "profiles": PROFILES}), ["the 'jobs' array is missing", "Batsim 4.2.1 aborts"]),
    (json.dumps({"nb_res": 4, "jobs": [_job(id="a!b!c")], "profiles": PROFILES}),
     ["jobs[0]", "'a!b!c'", "a job name must not contain a '!'"]),
    (json.dumps({"nb_res": 4, "jobs": [_job(subtime=1e300)], "profiles": PROFILES}),
     ["reservation profile", "cannot hold time 1e+300"]),
], ids=["nested-200k-deep", "no-jobs", "two-bangs", "subtime-1e300"])
def test_bad_workloads_end_in_one_line(tmp_path, capsys, text, words):
    workload = tmp_path / "w.json"
    workload.write_text(text)
    code = main(["run", "-p", str(PLATFORM), "-w", str(workload), "--scheduler", "easy",
                 "-e", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("batsched-py run: error: "), err
    for word in words:
        assert word in err
    if "reservation" not in err:      # refused while reading: the file is named
        assert str(workload) in err


def test_deep_json_in_config_is_one_line(capsys):
    code = main(["run", "-p", str(PLATFORM), "-w", "x.json", "--scheduler", "easy",
                 "--config", "{\"a\":" + "[" * 100_000 + "]" * 100_000 + "}"])
    assert code == 2 and "--config: JSON nested too deep" in capsys.readouterr().err


def test_a_policy_that_raises_ends_run_in_one_line_naming_the_time(tmp_path, capsys, clean_registry):
    """A bug in a policy's own code: `run` says where and when in one line, as `serve` does (it was a
    traceback), and the outputs written so far are marked incomplete."""
    from batsched_py.scheduler import Scheduler

    @clean_registry.register("test-raises")
    class Raises(Scheduler):
        def on_job_submitted(self, job):
            return {}[job.id]

    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": [_job(subtime=3)], "profiles": PROFILES}))
    code = main(["run", "-p", str(PLATFORM), "-w", str(workload), "--scheduler", "test-raises",
                 "-e", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "at t=3" in err and "KeyError: 'w0!1'" in err and "test_one_line_errors.py:" in err, err
    assert (tmp_path / "out_INCOMPLETE").exists() and (tmp_path / "out_jobs.csv").exists()
