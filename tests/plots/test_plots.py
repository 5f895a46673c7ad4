from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from batsched_py.plots import comparison_plots  # noqa: E402
from batsched_py.plots.cli import main  # noqa: E402

GOLDEN = Path(__file__).parents[1] / "data" / "golden_outputs"


def test_comparison_plots(tmp_path):
    results = {"easy": GOLDEN / "easy_bf-e128-hpc250", "fcfs": GOLDEN / "fcfs_fast-e128-hpc250"}
    paths = comparison_plots(results, tmp_path)
    names = {p.name for p in paths}
    assert {"bar_waiting_time_mean.png", "cdf_slowdown.pdf", "bar_makespan.pdf"} <= names
    assert "bar_energy_total.png" not in names  # no energy in these runs
    assert all(p.stat().st_size > 1000 for p in paths)


def test_gantt_and_power(tmp_path):
    case = GOLDEN / "idle_sleeper-taurus-2016w13-E"
    assert main(["gantt", str(case), "-o", str(tmp_path / "g")]) == 0
    assert main(["power", str(case), "-o", str(tmp_path / "p.png"), "--time-unit", "min"]) == 0
    assert (tmp_path / "g.png").exists() and (tmp_path / "p.pdf").exists()
    assert main(["power", str(GOLDEN / "nope"), "-o", str(tmp_path / "x")]) == 2
