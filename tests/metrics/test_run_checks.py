"""`metrics` refuses, or with --force warns about, runs marked incomplete and files left at a
prefix by an earlier run; a run reusing a prefix removes the earlier run's files."""
import os
import shutil

import pytest

from batsched_py.cli.metrics import main
from batsched_py.runner import run_simulation
from helpers import GOLDEN

CASE = GOLDEN / "killer-e128-semantics" / "inputs"
PLATFORM = CASE / "energy_platform_homogeneous_no_net_128.xml"
WORKLOAD = CASE / "semantics_8.json"


def _run(prefix, energy):
    return run_simulation(PLATFORM, [WORKLOAD], "easy", export=str(prefix), energy=energy)


def test_a_reused_prefix_loses_the_earlier_runs_files(tmp_path):
    prefix = tmp_path / "out"
    _run(prefix, energy=True)
    assert (tmp_path / "out_consumed_energy.csv").exists()
    _run(prefix, energy=False)
    assert not (tmp_path / "out_consumed_energy.csv").exists()
    assert not (tmp_path / "out_pstate_changes.csv").exists()
    assert main([str(prefix)]) == 0


def test_a_stale_energy_file_is_refused_then_reported_with_force(tmp_path, capsys):
    """An energy file from an earlier -E run, left beside a run without energy (by an older
    version, or by hand): its energy must not pass for this run's."""
    _run(tmp_path / "e" / "out", energy=True)
    _run(tmp_path / "out", energy=False)
    shutil.copy2(tmp_path / "e" / "out_consumed_energy.csv", tmp_path / "out_consumed_energy.csv")
    assert main([str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "out_consumed_energy.csv" in err and "earlier run" in err, err
    assert main(["--force", str(tmp_path / "out")]) == 0
    assert "metrics: warning:" in capsys.readouterr().err


def test_a_file_older_than_its_run_is_refused(tmp_path, capsys):
    _run(tmp_path / "out", energy=True)
    old = (tmp_path / "out_schedule.csv").stat().st_mtime - 3600
    os.utime(tmp_path / "out_pstate_changes.csv", (old, old))
    assert main([str(tmp_path / "out")]) == 2
    assert "out_pstate_changes.csv: written before the run" in capsys.readouterr().err


@pytest.mark.parametrize("force", [False, True])
def test_a_run_marked_incomplete(tmp_path, capsys, force):
    _run(tmp_path / "out", energy=False)
    (tmp_path / "out_INCOMPLETE").write_text("simulation stopped at t=5.000000: interrupted by SIGTERM\n")
    code = main(["--force", str(tmp_path / "out")] if force else [str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert "marked incomplete (simulation stopped at t=5.000000: interrupted by SIGTERM)" in err
    assert code == (0 if force else 2)
