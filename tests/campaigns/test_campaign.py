"""Campaign files: one folder and one SQLite row per run, parallel runs byte-identical to
sequential ones, resume after an interrupt, and one-line errors for bad files."""
import json
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from batsched_py.campaigns.campaign import campaign_status, run_campaign
from batsched_py.campaigns.executor import LocalExecutor
from batsched_py.campaigns.spec import load_campaign
from batsched_py.cli import main

from helpers.campaign import PLATFORM, SMALL_WORKLOADS, sequential_files, slow_workload, tree_bytes, write_campaign


def _rows(database) -> dict[str, dict]:
    db = sqlite3.connect(database)
    cursor = db.execute("SELECT * FROM runs")
    names = [d[0] for d in cursor.description]
    rows = {r[0]: dict(zip(names, r)) for r in cursor}
    db.close()
    return rows


def _any_done(database) -> bool:
    try:   # the file can exist a moment before its table does
        return database.is_file() and any(r["status"] == "done" for r in _rows(database).values())
    except sqlite3.OperationalError:
        return False


def test_eight_runs_in_parallel_match_sequential_runs_and_each_has_a_row(tmp_path):
    campaign = load_campaign(write_campaign(tmp_path))
    assert len(campaign.runs) == 8
    report = run_campaign(campaign, LocalExecutor(2), show_progress=False)
    assert len(report.done) == 8 and not report.failed
    stored = tree_bytes(campaign.output / "runs")
    assert stored == sequential_files(campaign)
    assert len(stored) == 8 * 5        # jobs, schedule, machine_states, consumed_energy, pstate_changes
    rows = _rows(campaign.database)
    assert {r["status"] for r in rows.values()} == {"done"} and len(rows) == 8
    easy = rows["taurus/set/taurus_2016-03-27/easy"]
    assert json.loads(easy["metrics"])["nb_jobs"] == 77 and easy["wall_s"] > 0 and easy["error"] is None
    assert json.loads(rows["taurus/set/taurus_2016-03-27/T0"]["options"]) == {"base": "easy", "timeout": 0}


def test_status_counts_and_a_changed_input_makes_its_runs_missing_again(tmp_path, capsys):
    week = tmp_path / "week.json"
    week.write_bytes(SMALL_WORKLOADS[0].read_bytes())
    path = write_campaign(tmp_path, workloads=[week], policies='[policies.easy]\nscheduler = "easy"\n')
    assert main(["campaign", "status", str(path)]) == 0
    assert "1 run: 0 done, 0 failed, 0 interrupted, 1 missing" in capsys.readouterr().out
    assert main(["campaign", "run", str(path), "--no-progress"]) == 0
    assert main(["campaign", "status", str(path)]) == 0
    assert "1 done, 0 failed, 0 interrupted, 0 missing" in capsys.readouterr().out
    week.write_text(week.read_text().replace('"subtime": 0', '"subtime": 1', 1))
    assert campaign_status(load_campaign(path))["missing"] == ["taurus/set/week/easy"]


def test_a_failing_run_is_stored_as_failed_and_the_others_are_kept(tmp_path, capsys):
    # (timeout switches hosts off: without -E the platform has no power states, which it finds out
    # when the simulation begins)
    path = write_campaign(tmp_path, workloads=SMALL_WORKLOADS[:1], energy=False,
                          policies='[policies.easy]\nscheduler = "easy"\n[policies.off]\nscheduler = "timeout"\n')
    code = main(["campaign", "run", str(path), "--no-progress"])
    err = capsys.readouterr().err
    rows = _rows(tmp_path / "out" / "results.sqlite")
    assert code == 1, err
    assert rows["taurus/set/taurus_2016-03-27/easy"]["status"] == "done"
    assert rows["taurus/set/taurus_2016-03-27/off"]["status"] == "failed" and rows["taurus/set/taurus_2016-03-27/off"]["error"]
    assert "failed: taurus/set/taurus_2016-03-27/off: " in err


def test_an_empty_workload_list_is_refused(tmp_path, capsys):
    path = write_campaign(tmp_path, workloads=[], policies='[policies.easy]\nscheduler = "easy"\n')
    assert main(["campaign", "run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("workloads.set: [] names no workload file; name at least one") and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("job, words", [
    ({"res": 500}, ["'w0!1' requests 500 hosts"]),
    ({"subtime": "NaN"}, ["'w0!1'", "subtime"]),
], ids=["too-large", "nan-subtime"])
def test_a_bad_workload_stops_the_campaign_before_any_run(tmp_path, capsys, job, words):
    bad = tmp_path / "bad.json"
    doc = {"nb_res": 500, "jobs": [{"id": "1", "subtime": 0, "res": 1, "walltime": 10, "profile": "p", **job}],
           "profiles": {"p": {"type": "delay", "delay": 1}}}
    bad.write_text(json.dumps(doc).replace('"NaN"', "NaN"))
    path = write_campaign(tmp_path, workloads=[SMALL_WORKLOADS[0], bad], policies='[policies.easy]\nscheduler = "easy"\n')
    assert main(["campaign", "run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert all(w in err for w in ["workloads.set", "bad.json", *words]), err
    assert not (tmp_path / "out" / "results.sqlite").exists()


@pytest.mark.parametrize("text, message", [
    ("output = \n", "invalid TOML"),
    ('output = "o"\nplaces = 1\n', "unknown setting 'places'"),
    ('energy = true\n', "missing setting 'output'"),
    ('output = "o"\n[platforms]\nt = "nowhere.xml"\n', "platforms.t: "),
    ('output = "o"\nrepetitions = 0\n', "repetitions must be at least 1"),
    ('output = "o"\nmmax = -2\n', "mmax must be at least 0"),
    # such a name made a run's folder its workload's (or its parent's), removed when the run was stored
    *((f'output = "o"\n[platforms]\nt = "{PLATFORM}"\n[workloads]\nw = "{SMALL_WORKLOADS[0]}"\n'
       f'[policies."{name}"]\nscheduler = "easy"\n', f"policies: {name!r} cannot name a run's folder")
      for name in (".", "..", "")),
    # a TOML date was a TypeError traceback from json
    (f'output = "o"\n[platforms]\nt = "{PLATFORM}"\n[workloads]\nw = "{SMALL_WORKLOADS[0]}"\n'
     '[policies.e]\nscheduler = "easy"\noptions = {seed = 1979-05-27}\n',
     "policies.e: options: 1979-05-27 is not a JSON value"),
    # a repeated seed was a ValueError traceback from the executor
    (f'output = "o"\nseeds = [1, 1]\n[platforms]\nt = "{PLATFORM}"\n[workloads]\nw = "{SMALL_WORKLOADS[0]}"\n'
     '[policies.e]\nscheduler = "easy"\n', "run t/w/taurus_2016-03-27/e/seed1 appears twice"),
    # the campaign's seed silently replaced the policy's own
    (f'output = "o"\nseeds = [1, 2]\n[platforms]\nt = "{PLATFORM}"\n[workloads]\nw = "{SMALL_WORKLOADS[0]}"\n'
     '[policies.e]\nscheduler = "easy"\noptions = {seed = 7}\n', "policies.e: options.seed and seeds both"),
])
def test_bad_campaign_files_end_in_one_line_naming_file_and_entry(tmp_path, capsys, text, message):
    path = tmp_path / "c.toml"
    path.write_text(text)
    assert main(["campaign", "run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and str(path) in err, err


@pytest.mark.parametrize("workloads, policies, message", [
    ([SMALL_WORKLOADS[0]], '[policies.x]\nscheduler = "nosuch"\n', "policies.x: unknown scheduler 'nosuch'"),
    ([SMALL_WORKLOADS[0]], '[policies.x]\nscheduler = "timeout"\noptions = {timeout = -1}\n',
     "policies.x: option timeout: -1 is not a finite non-negative number"),
    ([SMALL_WORKLOADS[0].with_name("missing.json")], '[policies.x]\nscheduler = "easy"\n',
     "workloads.set: " + str(SMALL_WORKLOADS[0].with_name("missing.json")) + " matches no workload file"),
])
def test_unknown_policies_bad_options_and_missing_workloads_are_refused_before_any_run(tmp_path, capsys, workloads,
                                                                                      policies, message):
    path = write_campaign(tmp_path, workloads=workloads, policies=policies)
    assert main(["campaign", "run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and str(path) in err, err
    assert not (tmp_path / "out").exists()


def test_yaml_campaign_files_read_as_toml_ones(tmp_path):
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"output": "out", "platforms": {"t": str(PLATFORM)},
                                    "workloads": {"w": [str(SMALL_WORKLOADS[0])]}, "seeds": [1, 2],
                                    "policies": {"easy": {"scheduler": "easy", "options": {"allocation": "random"}}}}))
    runs = load_campaign(path).runs
    assert [r.key for r in runs] == ["t/w/taurus_2016-03-27/easy/seed1", "t/w/taurus_2016-03-27/easy/seed2"]
    assert runs[1].spec.options == {"allocation": "random", "seed": 2}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_campaign_promptly_and_a_second_run_does_only_the_missing_runs(tmp_path, signum):
    workloads = [slow_workload(tmp_path / f"slow{i}.json", 3000) for i in range(2)]
    path = write_campaign(tmp_path, workloads=workloads, energy=False,
                          policies='[policies.easy]\nscheduler = "easy"\n[policies.fcfs]\nscheduler = "fcfs"\n')
    proc = subprocess.Popen([sys.executable, "-m", "batsched_py.cli", "campaign", "run", str(path), "-j", "1"],
                            stderr=subprocess.PIPE, text=True)
    database = tmp_path / "out" / "results.sqlite"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if _any_done(database):
                break
            time.sleep(0.05)
        proc.send_signal(signum)
        signalled = time.monotonic()
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert time.monotonic() - signalled < 8, "the campaign did not stop promptly"   # (its runs take far longer)
    assert proc.returncode == 128 + signum, err      # SIGTERM was told as SIGINT, status 130
    assert (f"interrupted by {signal.Signals(signum).name}: 1 run finished and kept, 3 marked interrupted; "
            "run it again to resume") in err, err
    campaign = load_campaign(path)
    states = campaign_status(campaign)
    assert (len(states["done"]), len(states["interrupted"])) == (1, 3)
    kept = campaign.output / "runs" / states["done"][0]
    before = {p.name: p.stat().st_mtime_ns for p in kept.iterdir()}
    assert sorted(before) == ["out_jobs.csv", "out_machine_states.csv", "out_schedule.csv"]
    assert not (campaign.output / "runs" / states["interrupted"][0]).exists()

    report = run_campaign(campaign, LocalExecutor(2), show_progress=False)
    assert report.skipped == 1 and sorted(report.done) == sorted(states["interrupted"])
    assert {p.name: p.stat().st_mtime_ns for p in kept.iterdir()} == before   # the kept run was not redone
    assert {r["status"] for r in _rows(database).values()} == {"done"}


def test_the_workload_placeholder_gives_each_run_its_own_workload(tmp_path):
    policies = '[policies.oracle]\nscheduler = "oracle"\noptions = { base = "easy", host_speed = 1e6, workload = "{workload}" }\n'
    runs = load_campaign(write_campaign(tmp_path, policies=policies)).runs
    assert [r.spec.options["workload"] for r in runs] == [str(w) for w in SMALL_WORKLOADS]


def test_an_unreachable_ray_cluster_ends_compare_and_campaign_in_one_line(tmp_path, capsys, monkeypatch):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'batsched_py[ray]')")

    def refuse(address=None, **options):
        raise ConnectionError(f"nothing listens at {address}")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    path = write_campaign(tmp_path, workloads=[SMALL_WORKLOADS[0]], policies='[policies.easy]\nscheduler = "easy"\n')
    assert main(["campaign", "run", str(path), "--address", "ray://nowhere:10001"]) == 2
    assert main(["compare", "-p", str(PLATFORM), "-w", str(SMALL_WORKLOADS[0]), "--schedulers", "easy",
                 "-o", str(tmp_path / "cmp"), "--address", "auto"]) == 2
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "time unit:" not in ln]   # (compare's note)
    assert lines[-2] == ("batsched-py campaign run: error: --address ray://nowhere:10001: cannot connect to Ray "
                         "(ConnectionError: nothing listens at ray://nowhere:10001)")
    assert lines[-1] == ("batsched-py compare: error: --address auto: cannot connect to Ray "
                         "(ConnectionError: nothing listens at auto)")


def test_inputs_shipped_with_a_task_give_the_same_bytes_where_the_paths_do_not_exist(tmp_path):
    """What a Ray node without the caller's disk gets: the files' bytes inside the task."""
    from batsched_py.campaigns.simulation import simulate_to_files, with_inputs, without_wall_clock
    week = tmp_path / "week.json"
    week.write_bytes(SMALL_WORKLOADS[0].read_bytes())
    policies = ('[policies.oracle]\nscheduler = "oracle"\n'
                'options = { base = "easy", cores_per_node = 12, host_speed = 1e6, workload = "{workload}" }\n')
    spec = load_campaign(write_campaign(tmp_path, workloads=[week], policies=policies)).runs[0].spec
    expected = simulate_to_files(spec)
    shipped = with_inputs(spec)
    week.unlink()
    got = simulate_to_files(shipped)
    assert got.files.keys() == expected.files.keys() and len(got.files) == 5
    for name, content in expected.files.items():
        assert without_wall_clock(name, got.files[name]) == without_wall_clock(name, content), name
    assert got.metrics == expected.metrics


def test_a_damaged_results_database_or_an_output_that_is_a_file_is_one_line(tmp_path, capsys):
    """A results.sqlite that is not a database was a traceback from sqlite3, in run and status."""
    path = write_campaign(tmp_path, workloads=SMALL_WORKLOADS[:1], policies='[policies.easy]\nscheduler = "easy"\n')
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.sqlite").write_text("not a database\n" * 100)
    for action in ("run", "status"):
        assert main(["campaign", action, str(path), "--no-progress"][:3 + (action == "run")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert f"{tmp_path / 'out' / 'results.sqlite'}: not a campaign results database" in err, err
    (tmp_path / "out" / "results.sqlite").unlink()
    (tmp_path / "out").rmdir()
    (tmp_path / "out").write_text("")
    assert main(["campaign", "run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"output {tmp_path / 'out'}: cannot create the folder" in err, err


def test_a_done_run_whose_folder_was_removed_is_missing_and_runs_again(tmp_path, capsys):
    """Its row said done, so status counted it done and a second run skipped it: its files stayed lost."""
    path = write_campaign(tmp_path, workloads=SMALL_WORKLOADS[:1], policies='[policies.easy]\nscheduler = "easy"\n')
    assert main(["campaign", "run", str(path), "--no-progress"]) == 0
    campaign = load_campaign(path)
    folder = campaign.run_dir(campaign.runs[0])
    (folder / "out_jobs.csv").unlink()
    assert campaign_status(campaign)["missing"] == [campaign.runs[0].key]
    capsys.readouterr()
    assert main(["campaign", "run", str(path), "--no-progress"]) == 0
    assert "1 run done now, 0 before" in capsys.readouterr().err
    assert (folder / "out_jobs.csv").stat().st_size > 1000


def test_a_run_folder_that_cannot_be_written_is_path_and_reason(tmp_path, capsys):
    path = write_campaign(tmp_path, workloads=SMALL_WORKLOADS[:1], policies='[policies.easy]\nscheduler = "easy"\n')
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "runs").write_text("")     # a file where the runs' folders go
    assert main(["campaign", "run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    partial = tmp_path / "out" / "runs" / "taurus" / "set" / "taurus_2016-03-27" / "easy.partial"
    assert err == f"batsched-py campaign run: error: {partial}: not a directory"


def test_a_yaml_seed_beyond_64_bits_is_refused_before_any_run(tmp_path, capsys):
    """TOML stops at 64 bits, YAML does not: such a seed ran, then its row could not be stored
    (an OverflowError traceback from sqlite3, the run's result lost)."""
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"output": "out", "platforms": {"t": str(PLATFORM)}, "seeds": [2 ** 64],
                                    "workloads": {"w": [str(SMALL_WORKLOADS[0])]},
                                    "policies": {"easy": {"scheduler": "easy"}}}))
    assert main(["campaign", "run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "seeds must be a non-empty list of 64-bit integers" in err, err
    assert not (tmp_path / "out").exists()


def test_a_file_named_by_an_option_is_part_of_the_digest(tmp_path):
    """A retrained agent's model.zip (or any file an option names) changed nothing: its done runs stayed done."""
    copy = tmp_path / "oracle_input.json"
    copy.write_bytes(SMALL_WORKLOADS[0].read_bytes())
    path = write_campaign(tmp_path, workloads=SMALL_WORKLOADS[:1], policies=(
        f'[policies.oracle]\nscheduler = "oracle"\noptions = {{ base = "easy", host_speed = 1e6, workload = "{copy}" }}\n'))
    report = run_campaign(load_campaign(path), LocalExecutor(1), show_progress=False)
    assert len(report.done) == 1
    assert campaign_status(load_campaign(path))["missing"] == []
    report_jobs = _rows(tmp_path / "out" / "results.sqlite")["taurus/set/taurus_2016-03-27/oracle"]["metrics"]
    report_jobs = json.loads(report_jobs)["nb_jobs"]
    copy.write_text(copy.read_text() + "\n")
    assert campaign_status(load_campaign(path))["missing"] == ["taurus/set/taurus_2016-03-27/oracle"]
    # and it travels with a task to a Ray node that does not share the caller's disk
    from batsched_py.campaigns.simulation import simulate_to_files, with_inputs
    shipped = with_inputs(load_campaign(path).runs[0].spec)
    copy.unlink()
    assert simulate_to_files(shipped).metrics["nb_jobs"] == report_jobs


def test_off_a_terminal_each_finished_run_is_a_line_of_the_log(tmp_path, capsys):
    """With stderr in a log file (a batch job) a campaign said nothing between its first and last line."""
    # (timeout without -E fails when the simulation begins: see test_a_failing_run_is_stored_as_failed...)
    path = write_campaign(tmp_path, workloads=SMALL_WORKLOADS[:1], energy=False,
                          policies='[policies.easy]\nscheduler = "easy"\n[policies.off]\nscheduler = "timeout"\n')
    assert main(["campaign", "run", str(path), "-j", "1"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[1:3] == ["  done (1/2): taurus/set/taurus_2016-03-27/easy",
                          "  failed (2/2): taurus/set/taurus_2016-03-27/off"]
    assert main(["campaign", "run", str(path), "-j", "1", "--no-progress"]) == 1
    assert not any(line.startswith("  failed (") for line in capsys.readouterr().err.splitlines())
