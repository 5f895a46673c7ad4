from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from batsched_py.plots import comparison_plots  # noqa: E402
from batsched_py.cli.plot import main  # noqa: E402

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


def test_comparison_labels_follow_the_time_unit_in_readable_units(tmp_path, monkeypatch):
    """Energies in kWh and long times in days, converted from the platform's time unit: the
    Taurus week's 2.08e+08 W·min are 3469 kWh, its 10436 min 7.2 days."""
    import batsched_py.plots.compare as module
    seen = _spy_on_save(monkeypatch, module)
    bars = {}
    original = module.plot_bars
    monkeypatch.setattr(module, "plot_bars", lambda rows, metric, out, label, factor: bars.setdefault(
        metric, factor) and original(rows, metric, out, label, factor))
    case = GOLDEN / "idle_sleeper-taurus-2016w13-E"     # a Taurus platform counted in minutes
    comparison_plots({"T": case}, tmp_path, time_unit="min")
    assert seen["bar_energy_total"][2] == "energy (kWh)" and bars["energy_total"] == pytest.approx(60 / 3.6e6)
    assert seen["bar_makespan"][2] == "makespan (days)" and bars["makespan"] == pytest.approx(1 / 1440)
    assert seen["cdf_waiting_time"][1] == "waiting time (hours)"    # (the longest wait: over 3 hours)
    bars.clear()
    comparison_plots({"T": case}, tmp_path)              # the same numbers read as s and J
    assert seen["bar_energy_total"][2] == "energy (kWh)" and bars["energy_total"] == pytest.approx(1 / 3.6e6)
    assert seen["bar_makespan"][2] == "makespan (s)"     # 10436 s: under 3 hours
    comparison_plots({"T": case}, tmp_path, time_unit="step")    # a unit we cannot convert: kept
    assert seen["bar_energy_total"][2] == "energy (W·step)" and seen["bar_makespan"][2] == "makespan (step)"


def test_cdf_curves_differ_in_line_style(tmp_path, monkeypatch):
    import batsched_py.plots.compare as module
    styles = {}
    original = module.save

    def spy(fig, out):
        styles[Path(out).name] = [line.get_linestyle() for line in fig.axes[0].get_lines()]
        return original(fig, out)
    monkeypatch.setattr(module, "save", spy)
    results = {name: GOLDEN / case for name, case in (("easy", "easy_bf-e128-hpc250"),
                                                      ("fcfs", "fcfs_fast-e128-hpc250"),
                                                      ("again", "easy_bf-e128-hpc250"))}
    comparison_plots(results, tmp_path)
    assert len(styles["cdf_slowdown"]) == 3 and len(set(styles["cdf_slowdown"])) == 3


def test_gantt_keeps_its_hatching_legend_under_any_title(tmp_path, monkeypatch):
    import batsched_py.plots.gantt as gantt
    legends = {}
    original = gantt.save

    def spy(fig, out):
        legend = fig.axes[0].get_legend()
        legends[Path(out).name] = {t.get_text(): h.get_hatch() for t, h in zip(legend.get_texts(),
                                                                                legend.legend_handles)}
        return original(fig, out)
    monkeypatch.setattr(gantt, "save", spy)
    case = GOLDEN / "idle_sleeper-taurus-2016w13-E"
    gantt.plot_gantt(case, tmp_path / "g", title="T5: jobs", time_unit="min")    # as compare calls it
    assert legends["g"] == {"completed": None, "killed or failed": "//"}


def test_power_of_an_empty_run_is_one_line_and_long_runs_read_in_days(tmp_path, capsys, monkeypatch):
    import batsched_py.plots.power as power
    seen = _spy_on_save(monkeypatch, power)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "out_jobs.csv").write_text((GOLDEN / "idle_sleeper-taurus-2016w13-E" / "out_jobs.csv").read_text())
    (empty / "out_machine_states.csv").write_text("time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,"
                                                  "nb_computing\n")
    assert main(["power", str(empty), "-o", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "out_machine_states.csv: no rows" in err
    assert main(["power", str(GOLDEN / "idle_sleeper-taurus-2016w13-E"), "-o", str(tmp_path / "p"),
                 "--time-unit", "min"]) == 0
    assert seen["p"][2] == "power (kW)"


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


def test_a_gantt_of_a_damaged_allocation_names_file_and_line(tmp_path, capsys):
    lines = (GOLDEN / "easy_bf-e128-hpc250" / "out_jobs.csv").read_text().splitlines()
    column = lines[0].split(",").index("allocated_resources")
    cells = lines[1].split(",")
    cells[column] = "7-3"       # (a reversed interval, as no Batsim writes)
    (tmp_path / "out_jobs.csv").write_text("\n".join([lines[0], ",".join(cells)]) + "\n")
    assert main(["gantt", str(tmp_path), "-o", str(tmp_path / "g")]) == 2
    assert capsys.readouterr().err.startswith(f"plot: error: {tmp_path / 'out_jobs.csv'}:2: column allocated_resources")


@pytest.mark.parametrize("command", ["gantt", "power", "compare"])
def test_a_run_marked_incomplete_is_refused_unless_forced_as_metrics_does(tmp_path, capsys, command):
    """An interrupted run was drawn as if whole (metrics refused it)."""
    run = tmp_path / "run"
    run.mkdir()
    for path in (GOLDEN / "idle_sleeper-taurus-2016w13-E").iterdir():
        (run / path.name).write_bytes(path.read_bytes())
    (run / "out_INCOMPLETE").write_text("simulation stopped at t=5.000000: interrupted by SIGTERM\n")
    target = ["-o", str(tmp_path / "fig")] if command != "compare" else ["-o", str(tmp_path / "figs")]
    assert main([command, str(run), *target]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"plot: error: {run / 'out_INCOMPLETE'}: the run is marked incomplete") and "--force" in err
    assert not list(tmp_path.glob("fig*"))
    assert main([command, str(run), *target, "--force"]) == 0
    assert "plot: warning: " in capsys.readouterr().err


def test_an_output_under_a_file_is_named_as_path_and_reason(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    case = str(GOLDEN / "easy_bf-e128-hpc250")
    assert main(["compare", case, "-o", str(blocker / "figs")]) == 2
    assert capsys.readouterr().err == f"plot: error: {blocker / 'figs'}: not a directory\n"


def test_plot_compare_reads_the_time_unit_from_the_platform_as_metrics_does(tmp_path, monkeypatch, capsys):
    """With -p of a platform counted in minutes, plot compare labelled the times 's' and the energies
    'J' (metrics and compare said min and W·min for the same runs)."""
    import batsched_py.cli.plot as module   # (where the command finds it)
    seen = {}
    monkeypatch.setattr(module, "comparison_plots", lambda *args: seen.setdefault("unit", args[3]) and [])
    platform = Path(__file__).parents[2] / "platforms" / "taurus_168.xml"
    case = str(GOLDEN / "idle_sleeper-taurus-2016w13-E")
    assert main(["compare", case, "-p", str(platform), "-o", str(tmp_path)]) == 0
    assert seen["unit"] == "min" and "time unit: min, detected from" in capsys.readouterr().err
    seen.clear()
    assert main(["compare", case, "-p", str(platform), "-o", str(tmp_path), "--time-unit", "s"]) == 0
    assert seen["unit"] == "s"
