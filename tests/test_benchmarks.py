"""The benchmark scripts run and print their figures (their targets are reported, not asserted)."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import SHARED

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    full_env.update(env or {})
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=full_env, capture_output=True, text=True,
                          timeout=300)


def test_bench_serve_prints_round_trips_and_floors(tmp_path):
    out = tmp_path / "figures.json"
    done = _run("scripts/bench_serve.py", "--jobs", "300", "--runs", "1", "--json", str(out),
                "--server-python", sys.executable)
    assert done.returncode == 0, done.stderr
    assert not (ROOT / "out_events.csv").exists()      # (pybatsim runs in a scratch directory)
    figures = json.loads(out.read_text())
    for policy in ("fcfs", "easy"):      # (the default policies: the target names FCFS or EASY)
        for label in (f"batsched-py {policy}", f"batsched-py {policy} --busy-wait 1000"):
            assert figures[label]["runs"][0]["executed"] == 300 and figures[label]["median"] > 0, label
        installed = [label for label in figures if label.startswith("batsched-py (") and f" {policy} " in label]
        assert len(installed) == 1 and figures[installed[0]]["runs"][0]["executed"] == 300, installed
    for transport in ("libzmq", "zmtp"):
        assert figures[f"echo_floor_{transport}_block"] > 0 and figures[f"echo_floor_{transport}_poll"] > 0
    if "pybatsim easyBackfill" in figures:   # installed by .ci/run
        assert figures["pybatsim easyBackfill"]["runs"][0]["executed"] == 300
        for label in ("batsched-py fcfs", "batsched-py easy --busy-wait 1000"):
            assert f"ratio {label} / pybatsim easyBackfill: median" in done.stdout
            assert figures[f"ratio_median {label}"] > 0


def test_bench_serve_times_simulations_run_side_by_side(tmp_path):
    out = tmp_path / "parallel.json"
    done = _run("scripts/bench_serve.py", "--parallel", "1", "2", "--scheduler", "fcfs", "--jobs", "200",
                "--runs", "1", "--json", str(out))
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert sorted(figures) == ["1 x fcfs", "2 x fcfs"]
    for n in (1, 2):
        walls = figures[f"{n} x fcfs"]
        assert walls["sleeping"] > 0 and walls["polling"] > 0
        assert f"{n} x fcfs at once: {walls['sleeping']:.2f} s sleeping in recv" in done.stdout


def test_bench_serve_parallel_runs_with_emulate_as_batsim(tmp_path):
    out = tmp_path / "parallel.json"
    done = _run("scripts/bench_serve.py", "--parallel", "1", "--peer", "emulate", "--scheduler", "fcfs",
                "--runs", "1", "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert "each simulation: batsched-py emulate -p platforms/" in done.stderr
    walls = json.loads(out.read_text())["1 x fcfs"]
    assert walls["sleeping"] > 0 and walls["polling"] > 0


@pytest.mark.parametrize("args, words", [
    (["--parallel", "0"], "--parallel takes counts >= 1"),
    (["--parallel", "2", "--busy-wait", "0"], "--parallel takes counts >= 1"),
    (["--peer", "emulate"], "--peer only applies to --parallel runs"),
])
def test_bench_serve_refuses_parallel_runs_it_cannot_compare(args, words):
    done = _run("scripts/bench_serve.py", *args)
    assert done.returncode == 2 and words in done.stderr


def test_bench_serve_refuses_unknown_policies():
    done = _run("scripts/bench_serve.py", "--scheduler", "easy", "no-such-policy")
    assert done.returncode == 2 and "unknown scheduler(s) no-such-policy" in done.stderr


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED / "golden" / "large-kth_sp2").exists(), reason="needs ../shared/golden/large-kth_sp2")
def test_bench_emulator_compares_with_a_batsim_binary():
    # `batsched-py emulate` stands in for the batsim binary: the script must time it over ZeroMQ.
    stand_in = f"{sys.executable} -m batsched_py.cli emulate"
    done = _run("scripts/bench_emulator.py", "--quick", "--runs", "1", env={"BATSCHED_PY_BATSIM": stand_in})
    assert done.returncode == 0, done.stderr
    assert "27954 jobs in" in done.stdout and "0 jobs differ from Batsim easy_bf" in done.stdout
    assert f"`{stand_in}` + our easy over ZeroMQ (this run)" in done.stdout
    build = re.search(r"^build: (pure Python|compiled with mypyc: \d+ modules)$", done.stdout, re.M)
    assert build and f"| KTH-SP2 easy (whole run; {build[1]}) |" in done.stdout
    target = "12x" if build[1] == "pure Python" else "20x"
    assert f"x faster (target: {target}, time under " in done.stdout


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED / "golden" / "large-kth_sp2").exists(), reason="needs ../shared/golden/large-kth_sp2")
@pytest.mark.skipif(bool(shutil.which("batsim")), reason="a batsim binary is on PATH: the script times it")
def test_bench_emulator_without_batsim_says_which_recording_it_divides_by():
    done = _run("scripts/bench_emulator.py", "--quick", "--runs", "1", env={"BATSCHED_PY_BATSIM": ""})
    assert done.returncode == 0, done.stderr
    assert ("no batsim on PATH, so a recording: real Batsim 4.2.1 + batsched 1.4.0 easy_bf, live, measured by "
            "issue 22's author") in done.stdout
    ratio = re.search(r"recorded [\d.]+ s on an earlier, slower run\): 14\.28 s; in-process emulator .*?"
                      r"([\d.]+)x faster", done.stdout)
    wall = re.search(r"27954 jobs in ([\d.]+) s", done.stdout)
    assert ratio and wall and abs(float(ratio[1]) - 14.28 / float(wall[1])) < 0.1
