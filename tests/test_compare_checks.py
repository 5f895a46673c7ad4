"""`compare` checks every policy against the platform and workload, the published outputs it
will read, and matplotlib, before its first run: a bad input ends it in one line, no run started."""
import sys

import pytest

from batsched_py.cli import main
from helpers import GOLDEN

CASE = GOLDEN / "fcfs_fast-e128-semantics-E" / "inputs"
PLATFORM = CASE / "energy_platform_homogeneous_no_net_128.xml"
WORKLOAD = CASE / "semantics_8.json"

NO_SLEEP = """<?xml version="1.0"?>
<platform version="4.1"><zone id="AS0" routing="Full">
<host id="master_host" speed="1Gf"><prop id="wattage_per_state" value="95:190"/><prop id="wattage_off" value="9"/></host>
""" + "".join(f'<host id="h{i}" speed="1Gf"><prop id="wattage_per_state" value="95:190"/>'
              f'<prop id="wattage_off" value="9"/></host>\n' for i in range(8)) + "</zone></platform>\n"


def _compare(tmp_path, *extra, platform=PLATFORM, workload=WORKLOAD):
    return main(["compare", "-p", str(platform), "-w", str(workload), "-o", str(tmp_path / "c"), "-j", "1", *extra])


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_a_power_policy_without_energy_is_refused_before_any_run(tmp_path, capsys):
    assert _compare(tmp_path, "--schedulers", "easy,timeout", "--no-plots") == 2
    assert "--schedulers timeout: timeout switches hosts on and off, which needs -E" in _one_line_error(capsys)
    assert not (tmp_path / "c").exists()


def test_a_policy_refusing_the_platform_is_named_before_any_run(tmp_path, capsys):
    platform = tmp_path / "no_sleep.xml"
    platform.write_text(NO_SLEEP)
    assert _compare(tmp_path, "--schedulers", "easy,T5:timeout={\"timeout\":5}", "-E", "--no-plots",
                    platform=platform) == 2
    err = _one_line_error(capsys)
    assert "--schedulers T5 on -p" in err and "needs hosts with sleep pstates" in err
    assert not (tmp_path / "c").exists()


def test_a_workload_the_platform_cannot_run_is_refused_before_any_run(tmp_path, capsys):
    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 200, "profile": "d"}],'
                        ' "profiles": {"d": {"type": "delay", "delay": 1}}}')
    assert _compare(tmp_path, "--schedulers", "easy,fcfs", "--no-plots", workload=workload) == 2
    assert "requests 200 hosts but the platform has 128" in _one_line_error(capsys)
    assert not (tmp_path / "c").exists()


def test_garbage_published_outputs_are_refused_before_any_run(tmp_path, capsys):
    garbage = tmp_path / "published"
    garbage.mkdir()
    (garbage / "out_jobs.csv").write_bytes(b"\x00\x01 not,a\ncsv")
    assert _compare(tmp_path, "--schedulers", "easy", "--no-plots", "--include-published", str(garbage)) == 2
    assert f"--include-published {garbage}: " in _one_line_error(capsys)
    assert not (tmp_path / "c").exists()


def test_without_matplotlib_compare_notes_it_and_writes_the_table(tmp_path, capsys, monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # import matplotlib raises ImportError
    assert _compare(tmp_path, "--schedulers", "easy") == 0
    err = capsys.readouterr().err
    assert "matplotlib is not installed, so no plots" in err
    assert (tmp_path / "c" / "comparison.csv").is_file() and not list((tmp_path / "c").rglob("*.png"))


def test_one_run_on_one_process_is_said_in_good_english(tmp_path, capsys):
    assert _compare(tmp_path, "--schedulers", "easy", "--no-plots") == 0
    assert "compare: 1 run on 1 local process\n" in capsys.readouterr().err
    assert _compare(tmp_path, "--schedulers", "easy,fcfs", "--no-plots") == 0
    assert "compare: 2 runs on 1 local process\n" in capsys.readouterr().err
