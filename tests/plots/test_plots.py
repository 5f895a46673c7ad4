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


def _spy_on_save(monkeypatch, module) -> dict:
    """Record (title, xlabel, ylabel) of the first axes of each figure ``module`` saves."""
    seen = {}
    original = module.save

    def spy(fig, out):
        ax = fig.axes[0]
        seen[Path(out).name] = (ax.get_title(), ax.get_xlabel(), ax.get_ylabel())
        return original(fig, out)
    monkeypatch.setattr(module, "save", spy)
    return seen


def test_comparison_labels_follow_the_time_unit(tmp_path, monkeypatch):
    import batsched_py.plots.compare as module
    seen = _spy_on_save(monkeypatch, module)
    case = GOLDEN / "idle_sleeper-taurus-2016w13-E"     # a Taurus platform counted in minutes
    comparison_plots({"T": case}, tmp_path, time_unit="min")
    assert seen["bar_energy_total"][2] == "energy (W·min)"
    assert seen["bar_makespan"][2] == "makespan (min)"
    assert seen["cdf_waiting_time"][1] == "waiting time (min)"
    comparison_plots({"T": case}, tmp_path)
    assert seen["bar_energy_total"][2] == "energy (J)"


def test_power_and_gantt_titles(tmp_path, monkeypatch):
    import batsched_py.plots.gantt as gantt
    import batsched_py.plots.power as power
    seen = _spy_on_save(monkeypatch, power)
    seen_gantt = _spy_on_save(monkeypatch, gantt)
    case = GOLDEN / "idle_sleeper-taurus-2016w13-E"
    assert main(["power", str(case), "-o", str(tmp_path / "p"), "--title", "T(5): states"]) == 0
    assert seen["p"][0] == "T(5): states"
    assert main(["power", str(case), "-o", str(tmp_path / "q")]) == 0
    assert seen["q"][0] == f"Power and machine states: {case}"
    assert main(["gantt", str(case), "-o", str(tmp_path / "g"), "--title", "T(5): jobs"]) == 0
    assert seen_gantt["g"][0] == "T(5): jobs"
