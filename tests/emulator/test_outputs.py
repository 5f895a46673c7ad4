"""OutputWriters against Batsim 4.2.1's own output files (golden cases)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from procset import ProcSet

from batsched_py.emulator.machines import MachineStats
from batsched_py.emulator.outputs import OutputWriters
from test_machines import ALL_CASES, ENERGY_CASES, GOLDEN, Replay, golden_csv

WALL_CLOCK = {"scheduling_time", "simulation_time"}
# Job e of this case is a composed delay/compute profile whose energy SimGrid
# integrates lazily (see report); everything else must match exactly.
KNOWN_ENERGY_DIFF = {"fcfs_fast-e128-semantics-E"}


def _records(case: str, energies: dict[str, float]) -> list[dict]:
    """job_row's arguments for each row of the case's golden jobs.csv."""
    recs = []
    for row in golden_csv(case, "jobs"):
        rejected = row["final_state"] == "REJECTED"
        recs.append(dict(
            job_id=row["job_id"], workload_name=row["workload_name"], profile=row["profile"],
            submission_time=float(row["submission_time"]),
            requested_number_of_resources=int(row["requested_number_of_resources"]),
            requested_time=float(row["requested_time"]), final_state=row["final_state"],
            starting_time=0.0 if rejected else float(row["starting_time"]),
            finish_time=0.0 if rejected else float(row["finish_time"]),
            allocated_resources="" if rejected else ProcSet.from_str(row["allocated_resources"]),
            consumed_energy=energies.get(f"{row['workload_name']}!{row['job_id']}", -1.0),
            metadata=row["metadata"]))
    return recs


@pytest.fixture(scope="module", params=ALL_CASES)
def written(request, tmp_path_factory):
    case = request.param
    prefix = str(tmp_path_factory.mktemp(case) / "out")
    r = Replay(case, prefix).run()
    for rec in _records(case, r.job_energy):
        r.writers.job_row(**rec)
    r.writers.close(r.end_time, r.machines.stats(r.end_time), scheduling_time=0.5,
                    simulation_time=1.0)
    return case, prefix


# Its transcript rounds times to 1e-6 (Batsim really acts at 5e-10, 9.0000001...)
# so same-time rows may come out in another order: compare sorted, times rounded.
ROUNDED_TIMES = {"idle_sleeper-taurus-2016w13-E"}


def _lines(path) -> list[str]:
    with open(path) as f:
        return f.read().splitlines()


def _same_rows(case: str, ours_path, gold_path) -> None:
    ours, gold = _lines(ours_path), _lines(gold_path)
    if case in ROUNDED_TIMES:
        def times(rows):
            return sorted(round(float(r.split(",", 1)[0]), 5) for r in rows[1:])
        assert ours[0] == gold[0] and times(ours) == times(gold)
        assert ours[-1].split(",", 1)[1] == gold[-1].split(",", 1)[1]
    else:
        assert ours == gold


def test_machine_states_identical(written):
    case, prefix = written
    _same_rows(case, prefix + "_machine_states.csv", GOLDEN / case / "out_machine_states.csv")


def test_pstate_changes_identical(written):
    case, prefix = written
    if case not in ENERGY_CASES:
        return
    _same_rows(case, prefix + "_pstate_changes.csv", GOLDEN / case / "out_pstate_changes.csv")


def test_consumed_energy_rows(written):
    case, prefix = written
    if case not in ENERGY_CASES or case in KNOWN_ENERGY_DIFF | ROUNDED_TIMES:
        return
    ours = list(csv.DictReader(open(prefix + "_consumed_energy.csv")))
    gold = golden_csv(case, "consumed_energy")
    assert len(ours) == len(gold)
    for a, b in zip(ours, gold):
        assert a["event_type"] == b["event_type"]
        assert float(a["time"]) == pytest.approx(float(b["time"]), abs=2e-6)
        for col in ("energy", "wattmin"):
            assert float(a[col]) == pytest.approx(float(b[col]), rel=1e-6, abs=1e-4), (col, b)
        if b["epower"] == "NA" or a["epower"] == "NA":
            continue  # same-time rows: Batsim's sub-microsecond time offsets differ
        assert float(a["epower"]) == pytest.approx(float(b["epower"]), rel=1e-4), b


def _same_field(a: str, b: str) -> bool:
    """Equal, or numerically equal within the 1e-6 rounding of the golden inputs
    (Batsim prints e.g. -0.000000 for a start 1 ulp before the submission)."""
    if a == b:
        return True
    try:
        return abs(float(a) - float(b)) <= 2e-6 + 1e-9 * abs(float(b))
    except ValueError:
        return False


def test_jobs_csv_identical(written):
    case, prefix = written
    ours, gold = _lines(prefix + "_jobs.csv"), _lines(GOLDEN / case / "out_jobs.csv")
    assert len(ours) == len(gold) and ours[0] == gold[0]
    for a, b in zip(ours[1:], gold[1:]):
        fa, fb = a.split(","), b.split(",")
        if case in KNOWN_ENERGY_DIFF and fb[0] == "e":
            fa[15] = fb[15]
        assert len(fa) == len(fb) and all(map(_same_field, fa, fb)), (a, b)


def test_schedule_csv(written):
    case, prefix = written
    ours = list(csv.DictReader(open(prefix + "_schedule.csv")))[0]
    gold = golden_csv(case, "schedule")[0]
    assert list(ours) == list(gold)
    skip = WALL_CLOCK | ({"consumed_joules"} if case in KNOWN_ENERGY_DIFF else set())
    diff = {k: (ours[k], gold[k]) for k in gold
            if k not in skip and not _same_field(ours[k], gold[k])}
    assert not diff


def test_incomplete_run_keeps_outputs(tmp_path):
    prefix = str(tmp_path / "sub" / "out")
    w = OutputWriters(prefix, energy=True)
    w.state_rows.append("0.5,0,0,0,3,1\n")     # as Machines formats them
    w.job_row("1", "w0", "p", 0.0, 1, -1.0, "COMPLETED_SUCCESSFULLY", 0.5, 2.0, ProcSet(0), 12.0, 'a "b"')
    stats = MachineStats(0.0, 4, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    w.close(3.0, stats, nb_jobs=2, complete=False, error="EXECUTE_JOB on sleeping host 2")
    assert "sleeping host 2" in (tmp_path / "sub" / "out_INCOMPLETE").read_text()
    jobs = _lines(prefix + "_jobs.csv")
    assert jobs[1] == ('1,w0,p,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.500000,1.500000,'
                       '2.000000,0.500000,2.000000,1.333333,0,12.000000,"a ""b"""')
    assert _lines(prefix + "_machine_states.csv")[1] == "0.5,0,0,0,3,1"
    sched = list(csv.DictReader(open(prefix + "_schedule.csv")))[0]
    assert sched["nb_jobs"] == "2" and sched["success_rate"] == "0.500000"
    again = OutputWriters(prefix)  # a new run without -E: the previous run's files go, the marker says running
    assert not Path(prefix + "_consumed_energy.csv").exists() and not Path(prefix + "_pstate_changes.csv").exists()
    assert "running" in (tmp_path / "sub" / "out_INCOMPLETE").read_text()
    again.close(0.0, stats, nb_jobs=0)
    assert not (tmp_path / "sub" / "out_INCOMPLETE").exists()


def test_outputs_are_marked_incomplete_until_closed_complete(tmp_path):
    """A run killed before it can close (SIGKILL) leaves marked outputs, never bare partial CSVs."""
    prefix = str(tmp_path / "out")
    w = OutputWriters(prefix, energy=True)
    assert "killed" in Path(prefix + "_INCOMPLETE").read_text() and Path(prefix + "_jobs.csv").exists()
    w.close(1.0, MachineStats(0.0, 4, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), nb_jobs=0)
    assert not Path(prefix + "_INCOMPLETE").exists() and Path(prefix + "_consumed_energy.csv").exists()


@pytest.mark.parametrize("times", [
    (0.0, 3600.0, 0.0, 172.0),                # whole seconds (the usual), zeros included
    (-0.0, 3600.0, 0.0, 172.0),               # -0.0 prints as "-0.000000", as Batsim's printf does
    (5.0, -1.0, 7.0, 9.0),                    # no walltime
    (5.5, 10.0, 7.0, 9.0), (5.0, 10.0, 7.25, 9.0), (5.0, 10.0, 7.0, 9.125), (5.0, 10.5, 7.0, 9.0),
    (1e300, 1e300, 2e300, 3e300),             # whole, with more digits than %d of an int64
    (4.0, 8.0, 4.0, 4.0),                     # a null-time job: finish = start + 1e-5
    (0.1, 3.0, 2.0 ** 53, 2.0 ** 53 + 2),
])
def test_job_rows_print_times_with_six_decimals(tmp_path, times):
    """A row of whole seconds takes a quicker format; every row reads as Batsim's "%.6f" does."""
    subtime, walltime, start, finish = times
    w = OutputWriters(str(tmp_path / "out"))
    w.job_row("1", "w0", "p", subtime, 2, walltime, "COMPLETED_SUCCESSFULLY", start, finish, ProcSet((0, 1)), -1.0, "")
    w.close(finish, MachineStats(0.0, 4, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), nb_jobs=1)
    run = finish - start or 1e-5
    finish = start + run
    fields = [subtime, walltime, start, run, finish, start - subtime, finish - subtime, (finish - subtime) / run]
    want = "1,w0,p,%.6f,2,%.6f,1,COMPLETED_SUCCESSFULLY,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,0-1,-1.000000,\"\"" % tuple(fields)
    assert _lines(str(tmp_path / "out") + "_jobs.csv")[1] == want
