"""The checks of scripts/reproduce_elastic.py outside Elastic-v0: what job order alone, or keeping
cores for the interactive jobs, gives on a fixed pool (the evidence that a target is out of reach),
and the pool's constraints read back from the Batsim outputs."""
import json
import sys

import pytest

from helpers.rl import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from reproduce_elastic import order_bound, pool_checks  # noqa: E402


def workload(tmp_path, jobs):
    """Single-core jobs (submission s, runtime s) as a Batsim workload."""
    path = tmp_path / "w.json"
    path.write_text(json.dumps({
        "nb_res": 1,
        "jobs": [{"id": str(i), "subtime": t, "res": 1, "profile": str(i)} for i, (t, _) in enumerate(jobs)],
        "profiles": {str(i): {"type": "delay", "delay": run} for i, (_, run) in enumerate(jobs)}}))
    return path


def test_one_core_behind_a_batch_job(tmp_path):
    # a batch job holds the core 0-1000 s; interactive jobs of 100 s (at 1 s) and 10 s (at 2 s) wait
    path = workload(tmp_path, [(0, 1000), (1, 100), (2, 10)])
    bound = order_bound(path, cores=1, skip=0)
    w = lambda run, wait: run / (run + wait)  # noqa: E731
    assert bound["FCFS"] == pytest.approx((w(100, 999) + w(10, 1098)) / 2)
    assert bound["shortest first"] == pytest.approx((w(10, 998) + w(100, 1009)) / 2)
    # alone, the 100 s job starts at once and the 10 s job waits for it
    assert bound["interactive alone"] == pytest.approx((1 + w(10, 99)) / 2)


def test_enough_cores_wait_for_nothing_and_the_ends_are_left_out(tmp_path):
    path = workload(tmp_path, [(0, 1000), (1, 100), (2, 10)])
    assert order_bound(path, cores=3, skip=0) == {"FCFS": 1.0, "shortest first": 1.0, "interactive alone": 1.0}
    # without the first job (left out) the measured job is the 100 s one, which waited 999 s on one core
    assert order_bound(path, cores=1, skip=1)["FCFS"] == pytest.approx(100 / 1099)


def outputs(tmp_path, states, changes):
    (tmp_path / "r_machine_states.csv").write_text(
        "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing\n"
        + "".join(",".join(map(str, r)) + "\n" for r in states))
    (tmp_path / "r_pstate_changes.csv").write_text(
        "time,machine_id,new_pstate\n" + "".join(",".join(map(str, r)) + "\n" for r in changes))
    return tmp_path / "r"


def test_pool_checks_read_the_floor_and_the_stable_time(tmp_path):
    prefix = outputs(tmp_path,
                     [(0, 0, 0, 0, 40, 0), (0, 0, 0, 10, 30, 0),    # the first pool: 10 of 40 hosts off
                      (900, 0, 5, 0, 20, 15), (1000, 5, 0, 0, 20, 15), (2000, 0, 0, 5, 20, 10)],
                     [(0, "0-39", 0), (0, "30-39", -2), (6.1, "30-39", 1), (6.1, "38-39", -1),
                      (900, "30-34", -1), (1051.5, "30-34", 0), (2000, "30-34", -2),
                      (2100, "35", -2),                               # the end of the change at 2000 s
                      (2800, "36", -2)])                              # a change 800 s after it
    # 20 idle + 10 computing at 2000 s; the switch-ons at 6.1 s end the first pool's setting
    assert pool_checks(prefix) == {"pool_fewest": 30, "pool_stable": 800.0}


def test_a_pool_that_never_changes_has_no_stable_time(tmp_path):
    prefix = outputs(tmp_path, [(0, 0, 0, 0, 40, 0), (5, 0, 0, 59, 81, 0)], [(0, "0-139", 0), (0, "81-139", -2)])
    assert pool_checks(prefix) == {"pool_fewest": 40, "pool_stable": None}


@pytest.mark.parametrize("argv,words", [(["--episodes", "-1"], ["--episodes", "negative"]),   # was run as 0
                                        (["--jobs", "0"], ["--jobs", "not above 0"])], ids=["episodes", "jobs"])
def test_bad_budgets_are_refused_before_any_work(argv, words, capsys):
    from reproduce_elastic import main
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert all(w in last for w in words), last
