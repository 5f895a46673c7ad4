import csv
import gzip
import math
import re
from pathlib import Path

import pytest

from batsched_py.metrics import (MetricsInputError, batsim_schedule_metrics, compare_table,
                                 format_table, read_jobs, summary, write_csv, write_job_table)
from batsched_py.cli.metrics import main
from batsched_py.metrics.energy import onoff_cycles

GOLDEN = Path(__file__).parents[1] / "data" / "golden_outputs"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "out_jobs.csv").exists())
PLATFORM_128 = Path(__file__).parents[2] / "platforms" / "energy_platform_homogeneous_no_net_128.xml"
SCHEDULE_KEYS = ["mean_waiting_time", "mean_turnaround_time", "mean_slowdown", "max_waiting_time",
                 "max_turnaround_time", "max_slowdown", "makespan", "nb_jobs", "nb_jobs_finished",
                 "nb_jobs_success", "nb_jobs_killed", "nb_jobs_rejected", "success_rate"]
# consumed_joules = energy at the makespan in these cases; in energy_bf-e128-hpc250-E and
# pybatsim_easy-e128-hpc250-E Batsim's figure is 0.1-0.5 % below its own energy trace (unexplained).
ENERGY_EXACT = ["sleeper-e128-load50-E", "idle_sleeper-taurus-2016w13-E",
                "energy_watcher-e128-delays-E", "fcfs_fast-e128-semantics-E"]


def _schedule(case):
    with open(GOLDEN / case / "out_schedule.csv") as f:
        return {k: float(v) for k, v in next(csv.DictReader(f)).items() if k != "batsim_version"}


@pytest.mark.parametrize("case", CASES)
def test_reproduces_batsim_schedule(case):
    ours = batsim_schedule_metrics(read_jobs(GOLDEN / case / "out_jobs.csv"))
    theirs = _schedule(case)
    for key in SCHEDULE_KEYS:
        assert ours[key] == pytest.approx(theirs[key], abs=1e-6, rel=1e-9), key


@pytest.mark.parametrize("case", ENERGY_EXACT)
def test_energy_matches_consumed_joules(case):
    assert summary(GOLDEN / case)["energy_total"] == pytest.approx(_schedule(case)["consumed_joules"],
                                                                   rel=1e-9)


def test_summary_definitions():
    s = summary(GOLDEN / "easy_bf-e128-walltime")
    assert s["nb_jobs"] == 44 and s["nb_jobs_finished"] == 40
    # our means are over finished jobs; Batsim divides by all jobs
    assert s["turnaround_time_mean"] == pytest.approx(365 / 40)
    assert math.isnan(s["energy_total"])
    table = read_jobs(GOLDEN / "easy_bf-e128-hpc250" / "out_jobs.csv")
    i = 5
    wait, run = table.metrics["waiting_time"][i], table.run[i]
    assert table.metrics["bounded_slowdown"][i] == pytest.approx(max((wait + run) / max(run, 10), 1))
    assert table.metrics["utility"][i] == pytest.approx(run / (run + wait))
    assert table.metrics["stretch_walltime"][i] == pytest.approx(wait / table.walltime[i])


def test_energy_metrics_with_platform():
    s = summary(GOLDEN / "sleeper-e128-load50-E", platform=PLATFORM_128)
    assert s["nb_machines"] == 128
    assert s["onoff_cycles_total"] == 130 and s["onoff_cycles_per_node_max"] == 2
    # no idle time here: wasted = switching node-time x (on, off) watts of the platform
    expected = s["time_switching_on"] * 125.1743848996832 + s["time_switching_off"] * 100.99672131147543
    assert s["energy_wasted"] == pytest.approx(expected)
    assert 0 < s["utilisation"] < 1


def test_onoff_cycles_counts_switch_offs():
    cycles = onoff_cycles(GOLDEN / "sleeper-e128-load50-E" / "out_pstate_changes.csv")
    assert list(cycles[:3]) == [2, 2, 1]


def test_compare_table_and_writers(tmp_path, capsys):
    results = {"easy": GOLDEN / "easy_bf-e128-hpc250", "fcfs": GOLDEN / "fcfs_fast-e128-hpc250"}
    rows = compare_table(results)
    assert [r["run"] for r in rows] == ["easy", "fcfs"]
    write_csv(rows, tmp_path / "cmp.csv")
    with open(tmp_path / "cmp.csv") as f:
        read = list(csv.DictReader(f))
    assert float(read[0]["waiting_time_mean"]) == pytest.approx(rows[0]["waiting_time_mean"], rel=1e-5)
    text = format_table(rows)
    lines = text.splitlines()
    assert len({len(line) for line in lines}) == 1  # aligned
    table = read_jobs(GOLDEN / "rejecter-e128-delays" / "out_jobs.csv")
    write_job_table(table, tmp_path / "jobs.csv")
    assert (tmp_path / "jobs.csv").read_text().splitlines()[1].startswith("0,REJECTED,0,,")
    assert main([f"easy={results['easy']}", "-o", str(tmp_path / "m.csv")]) == 0
    assert "easy" in capsys.readouterr().out


def test_prefix_layout(tmp_path):
    src = GOLDEN / "killer-e128-semantics" / "out_jobs.csv"
    (tmp_path / "run_jobs.csv").write_text(src.read_text())
    assert summary(tmp_path / "run")["nb_jobs"] == 7


def test_bad_inputs(tmp_path):
    with pytest.raises(MetricsInputError, match="nope_jobs.csv: file not found"):
        summary(tmp_path / "nope")
    (tmp_path / "a_jobs.csv").write_text("job_id,submission_time\n1,0\n")
    with pytest.raises(MetricsInputError, match=r"a_jobs\.csv: missing column\(s\) requested_number"):
        summary(tmp_path / "a")
    good = (GOLDEN / "killer-e128-semantics" / "out_jobs.csv").read_text().splitlines()
    (tmp_path / "b_jobs.csv").write_text("\n".join(good[:2] + ["x,y"]) + "\n")
    with pytest.raises(MetricsInputError, match=r"b_jobs\.csv:3: 2 fields"):
        summary(tmp_path / "b")
    assert main([str(tmp_path / "nope")]) == 2



@pytest.mark.parametrize("original, replacement, error", [
    ('"13:14:15"', '"13:14"', "host host0: sleep_pstates entry '13:14' must be sleep:off:on"),
    ('"13:14:15"', '"13:14:99"', "host host0: sleep_pstates names pstate 99, host has 16"),
    ('pstate="0"', 'pstate="99"', "<host id='host0'> pstate='99' is not one of its 16 pstates (0 to 15)"),
    ('"95.0:95.0:190.738,', '"zz:95.0:190.738,', "'zz:95.0:190.738' is not a list of numbers"),
])
def test_bad_platform_energy_is_named(tmp_path, capsys, original, replacement, error):
    """Wasted energy reads the platform's energy model as a scheduler does: an entry it cannot use
    is named with the file and host (it was an IndexError from deep inside)."""
    text = PLATFORM_128.read_text()
    assert original in text
    bad = tmp_path / "bad.xml"
    bad.write_text(text.replace(original, replacement, 1))
    with pytest.raises(ValueError, match=re.escape(error)) as raised:
        summary(GOLDEN / "sleeper-e128-load50-E", platform=bad)
    assert str(raised.value).startswith(f"{bad}: ")
    assert main(["-p", str(bad), str(GOLDEN / "sleeper-e128-load50-E")]) == 2
    assert error in capsys.readouterr().err


def test_damaged_gzip_output_is_named(tmp_path):
    data = gzip.compress((GOLDEN / "killer-e128-semantics" / "out_jobs.csv").read_bytes())
    (tmp_path / "z_jobs.csv.gz").write_bytes(data[:len(data) // 2])
    with pytest.raises(MetricsInputError, match=r"z_jobs\.csv\.gz: damaged gzip data"):
        summary(tmp_path / "z")


def test_two_sources_with_the_same_name_are_refused_not_merged(tmp_path, capsys):
    """`metrics a/out b/out` named both runs 'out' and silently reported only the second one."""
    for run, case in (("a", "killer-e128-semantics"), ("b", "sleeper-e128-load50-E")):
        (tmp_path / run).mkdir()
        (tmp_path / run / "out_jobs.csv").write_bytes((GOLDEN / case / "out_jobs.csv").read_bytes())
    sources = [str(tmp_path / "a" / "out"), str(tmp_path / "b" / "out")]
    assert main(sources) == 2
    assert "out" in capsys.readouterr().err.splitlines()[-1]
    assert main(["A=" + sources[0], "B=" + sources[1]]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[2:]] == ["A", "B"]


def test_a_host_set_that_does_not_parse_is_named_with_file_line_and_column(tmp_path, capsys):
    """A damaged machine_id cell was procset's bare 'Invalid interval format' naming no file."""
    case = GOLDEN / "sleeper-e128-load50-E"
    for path in case.iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    lines = (case / "out_pstate_changes.csv").read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[2].split(",")
    cells[header.index("machine_id")] = "4-x"
    bad = tmp_path / "out_pstate_changes.csv"
    bad.write_text("\n".join(lines[:2] + [",".join(cells)] + lines[3:]) + "\n")
    assert main([str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"metrics: error: {bad}:3: column machine_id: not a host set: '4-x'\n"


def test_an_output_under_a_file_is_named_as_path_and_reason(tmp_path, capsys):
    """It was Python's '[Errno 20] Not a directory: ...'."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    source = str(GOLDEN / "killer-e128-semantics")
    for option in ("-o", "--jobs-csv"):
        assert main([source, option, str(blocker / "x")]) == 2
        assert capsys.readouterr().err == f"metrics: error: {blocker / 'x'}: not a directory\n"


def test_a_source_whose_path_holds_an_equals_sign(tmp_path, capsys):
    """'lr=0.1/out' was split as NAME 'lr' and SOURCE '0.1/out': 'file not found'."""
    run = tmp_path / "lr=0.1"
    run.mkdir()
    (run / "out_jobs.csv").write_bytes((GOLDEN / "killer-e128-semantics" / "out_jobs.csv").read_bytes())
    assert main([str(run / "out"), f"named={run}"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[2:]] == ["out", "named"]
