"""A battery of nonsense given to the commands that do not learn (swf2json, run, compare, metrics,
plot, campaign): each is refused with a non-zero exit and one line naming the file or option and
what is wrong (argparse's usage lines aside), never a traceback, never accepted in silence.
Each case was accepted silently, or ended in a traceback, before (issue 33).  Add a case with
every nonsense found."""
import csv
import json
import shutil
from pathlib import Path

import pytest

from batsched_py.cli import main
from helpers import GOLDEN

ROOT = Path(__file__).resolve().parents[1]
TINY_SWF = ROOT / "tests" / "data" / "swf" / "tiny.swf"
E128 = ROOT / "platforms" / "energy_platform_homogeneous_no_net_128.xml"      # (counts in seconds)
SEMANTICS = GOLDEN / "fcfs_fast-e128-semantics-E" / "inputs" / "semantics_8.json"
RUN = GOLDEN / "easy_bf-e128-hpc250"      # a whole run's outputs: out_jobs.csv, ...


def _inputs(tmp: Path) -> dict[str, str]:
    """The files the cases name, by placeholder."""
    shutil.copy(TINY_SWF, tmp / "tiny.swf")
    (tmp / "empty.swf").write_text("")
    negative = E128.read_text().replace("95.0:95.0:190.738", "-95.0:95.0:190.738", 1)
    assert negative != E128.read_text()
    (tmp / "negative.xml").write_text(negative)
    nan = tmp / "nan"
    shutil.copytree(RUN, nan, ignore=shutil.ignore_patterns("inputs", "transcript*", "meta.json"))
    with open(RUN / "out_jobs.csv") as f:
        rows = list(csv.reader(f))
    rows[3][rows[0].index("finish_time")] = "nan"
    with open(nan / "out_jobs.csv", "w", newline="") as f:
        csv.writer(f).writerows(rows)
    for unit in ("s", "min"):         # two runs whose `run` recorded different time units
        shutil.copytree(RUN, tmp / f"in_{unit}", ignore=shutil.ignore_patterns("inputs", "transcript*", "meta.json"))
        (tmp / f"in_{unit}" / "out_time_unit.json").write_text(json.dumps({"time_unit": unit, "platform": str(E128)}))
    (tmp / "folder").mkdir()
    (tmp / "campaign.toml").write_text(f'output = "out"\n[platforms]\np = "{E128}"\n[workloads]\nweeks = []\n'
                                       '[policies]\neasy = { scheduler = "easy" }\n')
    return {"tmp": str(tmp), "tiny": str(tmp / "tiny.swf"), "empty": str(tmp / "empty.swf"), "e128": str(E128),
            "negative": str(tmp / "negative.xml"), "w": str(SEMANTICS), "nan": str(nan), "run": str(RUN),
            "in_s": str(tmp / "in_s"), "in_min": str(tmp / "in_min"), "campaign": str(tmp / "campaign.toml")}


RUN_ARGS = ["run", "-p", "{e128}", "-w", "{w}", "--scheduler", "easy", "--no-progress"]

CASES = {
    # swf2json: an output that is the input trace overwrote the trace with JSON
    # (-q: no progress lines on stderr)
    "swf2json-output-is-input": (["swf2json", "{tiny}", "{tiny}", "-q"], ["tiny.swf is the input trace", "overwrite"]),
    "swf2json-report-is-input": (["swf2json", "{tiny}", "{tmp}/o.json", "-q", "--report", "{tiny}"],
                                 ["--report", "tiny.swf is the input trace"]),
    # a workload of 0 jobs: said, and an error unless --allow-empty
    "swf2json-empty-file": (["swf2json", "{empty}", "{tmp}/o.json", "-q"],
                            ["empty.swf: no job to write: 0 records", "--allow-empty"]),
    "swf2json-start-after-end": (["swf2json", "{tiny}", "{tmp}/o.json", "-q", "--start", "100", "--end", "50"],
                                 ["--start 100 is not before --end 50"]),
    "swf2json-skip-past-the-end": (["swf2json", "{tiny}", "{tmp}/o.json", "-q", "--skip-jobs", "100"],
                                   ["tiny.swf: no job to write", "3 skipped_first_jobs", "--allow-empty"]),
    # run
    "run-time-unit": ([*RUN_ARGS, "--time-unit", "parsecs"], ["--time-unit", "'parsecs': not a time unit"]),
    "run-negative-watts": (["run", "-p", "{negative}", "-w", "{w}", "--scheduler", "easy", "-E", "-e", "{tmp}/o",
                            "--no-progress"], ["negative.xml", "wattage_per_state", "watts must be finite and >= 0"]),
    "run-mmax-above-the-platform": ([*RUN_ARGS, "--mmax", "1000", "-e", "{tmp}/o"],
                                    ["--mmax 1000", "has only 128 compute hosts"]),
    "run-cores-per-node-not-dividing": ([*RUN_ARGS, "--mmax", "16", "--config", '{{"cores_per_node": 5}}',
                                         "-e", "{tmp}/o"],
                                        ["cores_per_node: 5 does not divide the platform's 16 hosts"]),
    "run-empty-prefix": ([*RUN_ARGS, "-e", ""], ["-e ''", "must not be empty"]),
    "run-prefix-ending-in-slash": ([*RUN_ARGS, "-e", "{tmp}/out/"], ["out/: this prefix names a folder",
                                                                     "out/_jobs.csv"]),
    "run-prefix-naming-a-folder": ([*RUN_ARGS, "-e", "{tmp}/folder"], ["folder: this prefix names a folder"]),
    # compare
    "compare-empty-entry": (["compare", "-p", "{e128}", "-w", "{w}", "--schedulers", "easy,,fcfs", "-o", "{tmp}/c"],
                            ["--schedulers 'easy,,fcfs': entry 2 is empty"]),
    "compare-time-unit": (["compare", "-p", "{e128}", "-w", "{w}", "--schedulers", "easy", "-o", "{tmp}/c",
                           "--time-unit", "parsecs"], ["--time-unit", "'parsecs': not a time unit"]),
    # metrics and plot
    "metrics-nan": (["metrics", "{nan}"], ["nan/out_jobs.csv:4: column finish_time: 'nan' is not a finite number"]),
    "metrics-time-unit": (["metrics", "{run}", "--time-unit", "parsecs"], ["--time-unit", "'parsecs'"]),
    "metrics-runs-in-two-units": (["metrics", "{in_s}", "{in_min}"],
                                  ["the runs count time in different units", "in_min in min", "--time-unit"]),
    "metrics-record-against-platform": (["metrics", "{in_min}", "-p", "{e128}"],
                                        ["in_min/out_time_unit.json says the run counted in min", "counts in s"]),
    "plot-gantt-nan": (["plot", "gantt", "{nan}", "-o", "{tmp}/g"], ["nan/out_jobs.csv:4: column finish_time"]),
    "plot-power-time-unit": (["plot", "power", "{run}", "-o", "{tmp}/p", "--time-unit", "parsecs"],
                             ["--time-unit", "'parsecs'"]),
    # campaign: a workload set naming no file was "0 runs to do", exit 0
    "campaign-no-workload": (["campaign", "run", "{campaign}"], ["workloads.weeks: [] names no workload file"]),
}


@pytest.mark.parametrize("case", CASES)
def test_nonsense_is_refused_in_one_line(tmp_path, capsys, case):
    args, words = CASES[case]
    names = _inputs(tmp_path)
    tiny_before = (tmp_path / "tiny.swf").read_bytes()
    argv = [a.format(**names) for a in args]
    try:
        code = main(argv)
    except SystemExit as exc:          # (argparse's refusals)
        code = exc.code
    err = capsys.readouterr().err
    assert code not in (0, None) and "Traceback" not in err, err
    lines = err.splitlines()
    if lines and lines[0].startswith("usage:"):       # argparse: its usage, then the one line
        lines = lines[[i for i, line in enumerate(lines) if "error:" in line][0]:]
    assert len(lines) == 1 and "error: " in lines[0], err
    for word in words:
        assert word.format(**names) in lines[0], err
    assert (tmp_path / "tiny.swf").read_bytes() == tiny_before     # (the trace is never overwritten)
    assert not (tmp_path / "o.json").exists()


def test_an_empty_workload_is_written_when_allowed_and_said(tmp_path, capsys):
    out = tmp_path / "o.json"
    assert main(["swf2json", str(TINY_SWF), str(out), "--skip-jobs", "100", "--allow-empty", "-q"]) == 0
    assert json.loads(out.read_text())["jobs"] == []
    err = capsys.readouterr().err
    assert err.startswith("swf2json: warning: ") and "no job to write" in err and err.count("\n") == 1


def test_swf2json_prints_plain_lines_with_the_real_count_into_a_log(tmp_path, capsys):
    """Off a terminal (capsys is not one): no \\r bar, and the lines read are counted (it said 0)."""
    assert main(["swf2json", str(TINY_SWF), str(tmp_path / "o.json")]) == 0
    err = capsys.readouterr().err
    lines = len(TINY_SWF.read_text().splitlines())
    assert "\r" not in err and err == f"reading tiny.swf: {lines} lines, done\n"
