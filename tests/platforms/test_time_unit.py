"""The time unit of a platform: detected (Grid'5000 Taurus platforms count in minutes) or given,
and stated in `run`'s summary and `metrics`' table instead of labelling W·min as J."""
import importlib
import json
from pathlib import Path

from batsched_py.cli import main
from batsched_py.emulator import simulate
from batsched_py.cli.metrics import main as metrics_main
from batsched_py.cli.plot import main as plot_main
from batsched_py.scheduler import create
from batsched_py.platforms.time_unit import detect_time_unit
from helpers import GOLDEN

ROOT = Path(__file__).resolve().parents[2]
TAURUS = ROOT / "platforms" / "taurus_16.xml"
E128 = ROOT / "platforms" / "energy_platform_homogeneous_no_net_128.xml"
TAURUS_CASE = GOLDEN / "idle_sleeper-taurus-2016w13-E"


def test_detection(tmp_path):
    assert detect_time_unit(TAURUS)[0] == "min"          # switching on in 1, off in 3 time units
    assert detect_time_unit(E128)[0] == "s"              # on in 151.52 s, off in 6.1 s
    no_sleep = tmp_path / "p.xml"
    no_sleep.write_text('<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Full">'
                        '<host id="master_host" speed="1Gf"/><host id="h0" speed="1Gf"/></zone></platform>')
    assert detect_time_unit(no_sleep) is None
    assert detect_time_unit(tmp_path / "missing.xml") is None


def test_run_on_a_taurus_platform_states_minutes_and_counts_killed_jobs(tmp_path, capsys):
    platform = TAURUS_CASE / "inputs" / "taurus_168.xml"
    workload = TAURUS_CASE / "inputs" / "taurus_2016-03-27.json"
    assert main(["run", "-p", str(platform), "-w", str(workload), "--scheduler", "easy", "-E",
                 "-e", str(tmp_path / "out"), "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "time unit: min, detected from" in captured.err
    out = captured.out
    assert "makespan (min)" in out and "energy (W·min)" in out and "kWh)" in out and "(J)" not in out
    killed = [line for line in out.splitlines() if "killed (walltime reached, or failed)" in line]
    assert killed and int(killed[0].split()[-1]) > 0          # some jobs of that week reach their walltime
    assert metrics_main([str(tmp_path / "out"), "-p", str(platform)]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    for title in ("nb_jobs_killed", "nb_jobs_rejected", "makespan (min)", "waiting_time_mean (min)",
                  "energy_total (W·min)"):
        assert title in header


def test_metrics_table_units_default_to_seconds_and_follow_time_unit(tmp_path, capsys):
    source = GOLDEN / "easy_bf-e128-hpc250"
    assert metrics_main([str(source)]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "makespan (s)" in header and "waiting_time_p90 (s)" in header
    assert metrics_main([str(source), "--time-unit", "h"]) == 0
    assert "makespan (h)" in capsys.readouterr().out


def _taurus_run(tmp_path, capsys) -> str:
    """A short run on a Taurus platform (minutes): its output prefix."""
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 16, "profiles": {"d": {"type": "delay", "delay": 20}}, "jobs": [
        {"id": str(i), "subtime": 3 * i, "res": 1 + i % 4, "profile": "d", "walltime": 100} for i in range(10)]}))
    prefix = str(tmp_path / "out")
    assert main(["run", "-p", str(TAURUS), "-w", str(workload), "--scheduler", "timeout", "-E", "-e", prefix,
                 "--no-progress"]) == 0
    capsys.readouterr()
    return prefix


def test_metrics_and_plots_label_a_run_in_the_unit_run_recorded(tmp_path, capsys, monkeypatch):
    """After a run in minutes, `metrics PREFIX` said "makespan (s)" and joules, and `plot power`
    "time (s)": they read the unit `run` recorded now, as the note says."""
    prefix = _taurus_run(tmp_path, capsys)
    assert json.loads(Path(f"{prefix}_time_unit.json").read_text()) == {"time_unit": "min",
                                                                       "platform": str(TAURUS.resolve())}
    assert metrics_main([prefix]) == 0
    captured = capsys.readouterr()
    assert "makespan (min)" in captured.out and "energy_total (W·min)" in captured.out and "(s)" not in captured.out
    assert captured.err == (f"metrics: time unit: min, as the run recorded in {prefix}_time_unit.json; energies are "
                            "in W·min; --time-unit s to say otherwise\n")
    assert metrics_main([prefix, "--time-unit", "s"]) == 0 and "makespan (s)" in capsys.readouterr().out
    drawn = []
    for kind, function in (("gantt", "plot_gantt"), ("power", "plot_power_states")):
        module = importlib.import_module("batsched_py.cli.plot")     # (where the command finds them)
        monkeypatch.setattr(module, function, lambda *args, time_unit, **kw: drawn.append(time_unit) or [])
        assert plot_main([kind, prefix, "-o", str(tmp_path / kind)]) == 0
        Path(f"{prefix}_time_unit.json").rename(tmp_path / "kept.json")      # no record: -p tells
        assert plot_main([kind, prefix, "-o", str(tmp_path / kind), "-p", str(TAURUS)]) == 0
        assert plot_main([kind, prefix, "-o", str(tmp_path / kind)]) == 0      # nothing tells: s
        (tmp_path / "kept.json").rename(f"{prefix}_time_unit.json")
    assert drawn == ["min", "min", "s"] * 2


def test_a_later_run_at_the_prefix_removes_the_record(tmp_path, capsys):
    """A run that records no unit (the emulator as a library, a real Batsim) leaves no stale one."""
    prefix = _taurus_run(tmp_path, capsys)
    simulate(E128, [GOLDEN / "fcfs_fast-e128-semantics-E" / "inputs" / "semantics_8.json"], create("easy"),
             output_prefix=prefix)
    assert not Path(f"{prefix}_time_unit.json").exists()
    assert metrics_main([prefix]) == 0 and "makespan (s)" in capsys.readouterr().out
