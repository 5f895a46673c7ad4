"""`batsched-py run` and `compare`: whole simulations from the command line, outputs in Batsim's formats."""
import csv
import subprocess
import sys
from pathlib import Path

import pytest

from batsched_py.cli import main
from batsched_py.compare import parse_schedulers
from batsched_py.errors import InputError

from helpers import GOLDEN

REPO = Path(__file__).resolve().parents[1]
CASE = GOLDEN / "fcfs_fast-e128-semantics-E"


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_run_reproduces_the_golden_jobs_file(tmp_path, capsys):
    code = main(["run", "-p", str(CASE / "inputs/energy_platform_homogeneous_no_net_128.xml"),
                 "-w", str(CASE / "inputs/semantics_8.json"), "--scheduler", "fcfs", "-E",
                 "-e", str(tmp_path / "out"), "--no-progress"])
    assert code == 0
    ours = {r["job_id"]: r for r in _rows(tmp_path / "out_jobs.csv")}
    golden = {r["job_id"]: r for r in _rows(CASE / "out_jobs.csv")}
    assert ours.keys() == golden.keys()
    for job_id, row in golden.items():
        for column in ("starting_time", "finish_time", "allocated_resources", "final_state", "consumed_energy"):
            assert ours[job_id][column] == row[column], (job_id, column)
    summary = capsys.readouterr().out
    assert "fcfs: outputs in" in summary and "makespan (s)" in summary and "energy (J)" in summary


def test_run_console_script_on_the_shipped_example(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "batsched_py.cli", "run",
                           "-p", str(REPO / "platforms/taurus_168.xml"),
                           "-w", str(REPO / "workloads/taurus_2016-03-27.json"),
                           "--scheduler", "easy", "-E", "-e", str(tmp_path / "week"), "--time-unit", "min"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for suffix in ("jobs", "schedule", "machine_states", "consumed_energy", "pstate_changes"):
        assert (tmp_path / f"week_{suffix}.csv").is_file(), suffix
    assert len(_rows(tmp_path / "week_jobs.csv")) == 77
    assert "jobs" in proc.stdout and "wasted energy, idle + switching (W·min)" in proc.stdout
    assert "makespan (min)" in proc.stdout and "(J)" not in proc.stdout


def test_run_refuses_bad_inputs_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.xml"
    bad.write_text("<platform><zone")
    code = main(["run", "-p", str(bad), "-w", str(CASE / "inputs/semantics_8.json"), "--scheduler", "fcfs",
                 "-e", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0 and "bad.xml" in err and "XML" in err


def test_parse_schedulers_labels_options_and_repeats():
    runs = parse_schedulers('easy,T5:timeout={"timeout": 5, "base": "easy"},timeout={"timeout":0},easy')
    assert runs == [("easy", "easy", {}), ("T5", "timeout", {"timeout": 5, "base": "easy"}),
                    ("timeout(timeout=0)", "timeout", {"timeout": 0}), ("easy#2", "easy", {})]


@pytest.mark.parametrize("spec, message", [
    ("easy={bad", "unbalanced braces"),
    ("easy={\"a\": }", "invalid JSON"),
    ("easy=[1]", "must be a JSON object"),
    (" , ", "entry 1 is empty"),
    ("easy,,fcfs", "'easy,,fcfs': entry 2 is empty"),
    ("easy,", "entry 2 is empty"),
])
def test_parse_schedulers_errors(spec, message):
    with pytest.raises(InputError, match=message):
        parse_schedulers(spec)


def test_compare_writes_table_plots_and_includes_published(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    published = GOLDEN / "easy_bf-e128-hpc250"
    code = main(["compare", "-p", str(published / "inputs/energy_platform_homogeneous_no_net_128.xml"),
                 "-w", str(published / "inputs/example_workload_hpc_seed1_jobs250.json"), "-E",
                 "--schedulers", 'easy,fcfs,T0:timeout={"timeout": 0}', "-o", str(tmp_path), "-j", "2",
                 "--include-published", str(published)])
    assert code == 0
    rows = _rows(tmp_path / "comparison.csv")
    assert [r["run"] for r in rows] == ["easy", "fcfs", "T0", "published:easy_bf-e128-hpc250"]
    by_run = {r["run"]: r for r in rows}
    # Our EASY reproduces batsched's easy_bf on this case, so its row equals the published one.
    for column in ("nb_jobs", "makespan", "waiting_time_mean", "slowdown_mean"):
        assert by_run["easy"][column] == by_run["published:easy_bf-e128-hpc250"][column], column
    # Switching idle hosts off wastes less energy than leaving them on.
    assert float(by_run["T0"]["energy_wasted"]) < float(by_run["easy"]["energy_wasted"])
    table = capsys.readouterr().out
    assert "T0" in table and "energy_wasted" in table
    for name in ("bar_waiting_time_mean", "bar_energy_wasted", "cdf_waiting_time", "cdf_slowdown"):
        assert (tmp_path / f"{name}.png").stat().st_size > 1000
        assert (tmp_path / f"{name}.pdf").is_file()
    for run in ("easy", "fcfs", "T0", "published_easy_bf-e128-hpc250"):
        assert (tmp_path / run / "gantt.png").is_file()
        assert (tmp_path / run / "power_states.png").is_file()
    assert not list(published.glob("*.png")) and not list(published.glob("*.pdf"))  # inputs stay untouched


def test_run_and_compare_name_a_policy_that_fails_to_start(tmp_path, capsys, clean_registry):
    """A bad option, or a policy whose constructor raises, ends `run` and `compare` with one
    line (compare before any run starts), not a traceback."""
    from batsched_py.scheduler import Scheduler, register

    @register("broken-init")
    class Broken(Scheduler):
        def __init__(self, options=None):
            raise ZeroDivisionError("no")

    inputs = ["-p", str(CASE / "inputs/energy_platform_homogeneous_no_net_128.xml"),
              "-w", str(CASE / "inputs/semantics_8.json")]
    assert main(["run", *inputs, "--scheduler", "timeout", "--config", '{"timeout": "x"}', "-E",
                 "-e", str(tmp_path / "a"), "--no-progress"]) == 2
    assert "run: error: option timeout: 'x' is not a finite non-negative number" in capsys.readouterr().err
    assert main(["run", *inputs, "--scheduler", "broken-init", "-e", str(tmp_path / "b"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "run: error: scheduler 'broken-init' failed to start with options {}: ZeroDivisionError: no" in err
    assert main(["compare", *inputs, "--schedulers", 'easy,T:timeout={"timeout":-1}', "-o", str(tmp_path / "c"),
                 "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert "compare: error: --schedulers T: option timeout: -1 is not a finite non-negative number" in err
    assert not (tmp_path / "c" / "easy").exists()


def test_compare_checks_its_directories_before_any_run(tmp_path, capsys):
    inputs = ["-p", str(CASE / "inputs/energy_platform_homogeneous_no_net_128.xml"),
              "-w", str(CASE / "inputs/semantics_8.json"), "--schedulers", "easy", "--no-plots"]
    assert main(["compare", *inputs, "-o", str(tmp_path / "c"), "--include-published", str(tmp_path)]) == 2
    assert f"compare: error: --include-published {tmp_path}: no out_jobs.csv there" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["compare", *inputs, "-o", str(blocker / "c")]) == 2
    assert (f"compare: error: -o {blocker / 'c'}: cannot create the output directory (Not a directory)"
            in capsys.readouterr().err)


def test_run_writes_into_a_directory_with_o_as_compare_does(tmp_path, capsys):
    inputs = ["-p", str(CASE / "inputs/energy_platform_homogeneous_no_net_128.xml"),
              "-w", str(CASE / "inputs/semantics_8.json"), "--scheduler", "fcfs", "--no-progress"]
    assert main(["run", *inputs, "-o", str(tmp_path / "d")]) == 0
    assert (tmp_path / "d" / "out_jobs.csv").is_file() and f"{tmp_path / 'd' / 'out'}_*.csv" in capsys.readouterr().out
    with pytest.raises(SystemExit):      # one place or the other
        main(["run", *inputs, "-o", str(tmp_path / "d"), "-e", str(tmp_path / "p")])
    assert "not allowed with argument" in capsys.readouterr().err


def test_compare_refuses_a_workload_no_run_could_take_in_one_line_before_running(tmp_path, capsys):
    bad = tmp_path / "too_wide.json"      # a job wider than the platform: every run would fail
    bad.write_text('{"nb_res": 500, "jobs": [{"id": "1", "subtime": 0, "res": 500, "walltime": 10, "profile": "p"}],'
                   ' "profiles": {"p": {"type": "delay", "delay": 1}}}')
    code = main(["compare", "-p", str(CASE / "inputs/energy_platform_homogeneous_no_net_128.xml"), "-w", str(bad),
                 "--schedulers", "easy,fcfs", "-o", str(tmp_path / "c"), "--no-plots"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2
    assert err[-1].startswith("batsched-py compare: error: --schedulers easy on ") and "too_wide.json" in err[-1]
    assert "requests 500 hosts but the platform has 128 compute hosts" in err[-1]
    assert not (tmp_path / "c" / "easy").exists()       # refused before any run


def test_compare_refuses_labels_sharing_a_folder_and_numbers_published_runs_of_one_name(tmp_path, capsys):
    """'x y' and 'x_y' both wrote into DIR/x_y, so the table showed the second run's figures for
    both; two published folders of one name kept only the second."""
    inputs = ["-p", str(CASE / "inputs/energy_platform_homogeneous_no_net_128.xml"),
              "-w", str(CASE / "inputs/semantics_8.json"), "-E", "--no-plots", "-j", "1"]
    assert main(["compare", *inputs, "--schedulers", "x y:fcfs,x_y:easy", "-o", str(tmp_path / "c")]) == 2
    assert ("compare: error: --schedulers: labels 'x y' and 'x_y' would share the folder "
            f"{tmp_path / 'c' / 'x_y'}; give them distinct labels") in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
    assert main(["compare", *inputs, "--schedulers", "easy#2:fcfs,easy,easy", "-o", str(tmp_path / "c")]) == 2
    assert "compare: error: --schedulers: label 'easy#2' names two runs" in capsys.readouterr().err
    # '..' wrote its run into DIR's parent
    assert main(["compare", *inputs, "--schedulers", "..:fcfs", "-o", str(tmp_path / "c")]) == 2
    assert "compare: error: --schedulers: label '..' cannot name a folder" in capsys.readouterr().err
    assert not (tmp_path / "c").exists() and not (tmp_path / "out_jobs.csv").exists()
    published = []
    for case in ("fcfs_fast-e128-semantics-E", "easy_bf-e128-hpc250"):
        published.append(tmp_path / case / "run")
        published[-1].mkdir(parents=True)
        (published[-1] / "out_jobs.csv").write_bytes((GOLDEN / case / "out_jobs.csv").read_bytes())
    assert main(["compare", *inputs, "--schedulers", "fcfs", "-o", str(tmp_path / "d"),
                 "--include-published", *map(str, published)]) == 0
    rows = {r["run"]: r for r in _rows(tmp_path / "d" / "comparison.csv")}
    assert list(rows) == ["fcfs", "published:run", "published:run#2"]
    assert rows["published:run"]["nb_jobs"] == rows["fcfs"]["nb_jobs"] != rows["published:run#2"]["nb_jobs"]


def test_run_help_gives_the_timeout_unit_default_and_backends(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "silent this many seconds (0: wait forever; default 600)" in text and "the emulator does not wait" in text


def test_compare_into_a_used_directory_keeps_no_file_of_the_earlier_run(tmp_path, capsys):
    """An -E compare then one without -E into the same -o: the earlier run's consumed_energy.csv
    stayed beside the new files and the table showed its energy for a run without energy."""
    inputs = ["-p", str(CASE / "inputs/energy_platform_homogeneous_no_net_128.xml"),
              "-w", str(CASE / "inputs/semantics_8.json"), "--schedulers", "fcfs", "--no-plots", "-j", "1",
              "-o", str(tmp_path / "c")]
    assert main(["compare", *inputs, "-E"]) == 0
    assert (tmp_path / "c" / "fcfs" / "out_consumed_energy.csv").is_file()
    assert main(["compare", *inputs]) == 0
    assert not (tmp_path / "c" / "fcfs" / "out_consumed_energy.csv").exists()
    assert _rows(tmp_path / "c" / "comparison.csv")[0]["energy_total"] == ""


def test_compare_is_a_library_function(tmp_path):
    """compare() called from Python: typed options in, the table, each run's files and the
    notes out, nothing printed; FCFS's run reproduces the golden recording."""
    from batsched_py.compare import CompareOptions, compare
    platform = CASE / "inputs/energy_platform_homogeneous_no_net_128.xml"
    notes: list[str] = []
    options = CompareOptions(platform=platform, workloads=(CASE / "inputs/semantics_8.json",),
                             runs=(("FCFS", "fcfs", {}), ("T0", "timeout", {"timeout": 0})), outdir=tmp_path / "c",
                             energy=True, jobs=2, plots=False, time_unit="s")
    result = compare(options, notes.append)
    assert result.failed == {} and result.plots == [] and result.time_unit == "s"
    assert [row["run"] for row in result.rows] == ["FCFS", "T0"]
    assert [r["run"] for r in _rows(result.table)] == ["FCFS", "T0"]
    assert result.table == tmp_path / "c" / "comparison.csv"
    assert result.results == {"FCFS": tmp_path / "c" / "FCFS" / "out", "T0": tmp_path / "c" / "T0" / "out"}
    ours = {r["job_id"]: r for r in _rows(tmp_path / "c" / "FCFS" / "out_jobs.csv")}
    golden = {r["job_id"]: r for r in _rows(CASE / "out_jobs.csv")}
    assert {k: (v["starting_time"], v["finish_time"]) for k, v in ours.items()} == \
        {k: (v["starting_time"], v["finish_time"]) for k, v in golden.items()}
    by_run = {row["run"]: row for row in result.rows}
    assert by_run["FCFS"]["nb_jobs"] == by_run["T0"]["nb_jobs"] == len(golden)
    # Switching idle hosts off at once wastes less energy than leaving them on.
    assert float(by_run["T0"]["energy_wasted"]) < float(by_run["FCFS"]["energy_wasted"])
    assert notes[0].startswith("compare: 2 runs on") and sorted(notes[1:]) == ["  done: FCFS", "  done: T0"]


def test_compare_as_a_library_refuses_bad_options_before_any_run(tmp_path):
    from batsched_py.compare import CompareOptions, compare
    options = CompareOptions(platform=CASE / "inputs/energy_platform_homogeneous_no_net_128.xml",
                             workloads=(CASE / "inputs/semantics_8.json",),
                             runs=(("a/b", "fcfs", {}), ("a_b", "easy", {})), outdir=tmp_path / "c")
    with pytest.raises(InputError, match="labels 'a/b' and 'a_b' would share the folder"):
        compare(options)
    with pytest.raises(InputError, match="--mmax 500: the platform .* has only 128 compute hosts"):
        compare(CompareOptions(options.platform, options.workloads, (("x", "fcfs", {}),), tmp_path / "c", mmax=500))
    assert not (tmp_path / "c").exists()
