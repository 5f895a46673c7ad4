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
    # (a guard against a hang only: a busy machine may take many times a quiet one's minute or two)
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=full_env, capture_output=True, text=True,
                          timeout=1800)


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
    # FCFS beside EASY, and what the target leaves the scheduler side once EASY's engine side is paid
    assert re.search(r"^KTH-SP2 fcfs: 27954 jobs in [\d.]+ s \(scheduler [\d.]+ s, engine side [\d.]+ s\)", done.stdout, re.M)
    easy = re.search(r"KTH-SP2 easy: 27954 jobs in [\d.]+ s \(.*?scheduler ([\d.]+) s, engine side ([\d.]+) s\)",
                     done.stdout)
    budget = re.search(rf"^budget: {target} leaves ([\d.]+) s; EASY's engine side takes ([\d.]+) s, which leaves "
                       r"(-?[\d.]+) s \((-?[\d.]+) us per message\) for the scheduler side, against ([\d.]+) s for EASY",
                       done.stdout, re.M)
    assert easy and budget and budget[2] == easy[2] and budget[5] == easy[1]
    assert abs(float(budget[1]) - float(budget[2]) - float(budget[3])) <= 0.011


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


def test_bench_env_prints_every_measure_and_the_cost_of_switching():
    # (the repository's Taurus days: no ../shared needed; `batsched-py emulate` stands in for batsim)
    stand_in = f"{sys.executable} -m batsched_py.cli emulate"
    done = _run("scripts/bench_env.py", "--episodes", "1", "--subprocess-episodes", "1",
                env={"BATSCHED_PY_BATSIM": stand_in})
    assert done.returncode == 0, done.stderr
    for name, agent in (("Shutdown", "random"), ("Shutdown", "T5"), ("Shutdown", "never"),
                        ("Scheduling", "random"), ("Scheduling", "masked")):
        # the same episode on both backends: the same number of steps (a Shutdown day: 1,440)
        steps = re.findall(rf"^{name} +{agent} +(?:emulator|batsim) +(\d+) ", done.stdout, re.M)
        assert len(steps) == 2 and steps[0] == steps[1] and (name != "Shutdown" or steps[0] == "1440")
        assert re.search(rf"^  {name} +{agent} +[\d.]+x$", done.stdout, re.M)
    floor = re.search(r"^Shutdown-v0 floor \(no node ever switched\): ([\d,]+) steps/s, (\d+) us/step; random "
                      r"actions switch ([\d.]+) nodes/step and take (\d+) us/step: (-?\d+) us per node switched",
                      done.stdout, re.M)
    assert floor and float(floor[3]) > 0
    # the per-node figure is (random's us/step - the floor's) / nodes per step, from unrounded
    # figures: it lies within what the printed ones allow once each is off by half its last digit
    # (on a busy machine the difference of us/step is large, and nodes/step's 2 decimals matter)
    difference, nodes = int(floor[4]) - int(floor[2]), float(floor[3])
    half_digit = 0.5 * 10 ** -len(floor[3].partition(".")[2])
    bounds = [d / n for d in (difference - 1, difference + 1) for n in (nodes - half_digit, nodes + half_digit)]
    assert min(bounds) - 0.5 <= int(floor[5]) <= max(bounds) + 0.5, floor[0]
