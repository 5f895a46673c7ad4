"""scripts/oracles.py: the baselines given what no agent sees (real runtimes, the next submissions)
act on it, and run through ``evaluate`` as ``module:callable`` policies."""
import csv
import json
import os
import subprocess
import sys

import gymnasium as gym
import pytest

import batsched_py.envs  # noqa: F401  (registers the environments)
from batsched_py.agents.deepscheduling.baselines import BASELINES as SCHEDULING
from batsched_py.agents.deepshutdown.baselines import BASELINES as SHUTDOWN

from helpers.rl import PLATFORM, ROOT, tiny_day

sys.path.insert(0, str(ROOT / "scripts"))
import oracles  # noqa: E402


def played(kind, policy, day):
    env = gym.make(f"batsched_py/{kind}-v0", platform=str(PLATFORM), workloads=[str(day)]).unwrapped
    obs, _ = env.reset(seed=0, options={"workload": str(day)})
    policy.bind(env.scheduler)
    done = False
    while not done:
        obs, _, term, trunc, info = env.step(policy(obs))
        done = term or trunc
    env.close()
    return info


def delay_day(path, jobs):
    """A day on the 168-host platform of (subtime, hosts, runtime, walltime) delay jobs."""
    doc = {"nb_res": 168, "jobs": [{"id": str(i), "subtime": t, "res": r, "walltime": w, "profile": f"p{i}"}
                                   for i, (t, r, _, w) in enumerate(jobs)],
           "profiles": {f"p{i}": {"type": "delay", "delay": d} for i, (_, _, d, _) in enumerate(jobs)}}
    path.write_text(json.dumps(doc))
    return path


def test_saf_by_real_area_starts_the_really_short_job_first(tmp_path):
    # the platform busy until t=10; then two whole-platform jobs: the first asks 50 min and runs 40,
    # the second asks 100 min and runs 10 (by walltime SAF starts the first; by real area the second)
    jobs = [(0, 168, 10, 20), (1, 168, 40, 50), (1, 168, 10, 100)]
    day = delay_day(tmp_path / "day.json", jobs)
    saf = played("Scheduling", SCHEDULING["SAF"](), day)["waiting_time"]
    real = played("Scheduling", oracles.SafRuntimeOrder(), day)["waiting_time"]
    full = played("Scheduling", oracles.SafRuntime(), day)["waiting_time"]
    listed = played("Scheduling", oracles.SafRuntimeNoReservation(), day)["waiting_time"]
    # SAF: the second job waits 9 min, the third 49; by real area 39 and 9 (mean 19.3 against 15.3)
    assert real < saf - 3 and full == pytest.approx(real) and listed == pytest.approx(real)


def test_saf_without_reservation_starts_the_job_the_head_waits_behind(tmp_path):
    # half the platform busy until about minute 10; then the whole platform for 10 min (the smaller
    # area, SAF's head) and half of it for 100 min, which fits at once
    jobs = [(0, 84, 10, 10), (1, 168, 10, 10), (1, 84, 100, 100)]
    day = delay_day(tmp_path / "day.json", jobs)
    saf = played("Scheduling", SCHEDULING["SAF"](), day)["waiting_time"]
    listed = played("Scheduling", oracles.SafNoReservation(), day)["waiting_time"]
    # SAF keeps the long job back for its head (mean wait 11.0 min); without the reservation the long
    # job starts at once and the head waits about 100 min behind it (mean 34.7)
    assert listed > saf + 20


def test_or_star_with_foresight_keeps_on_the_node_a_job_is_about_to_take(tmp_path):
    # a node's job (switched on for it at the start of the day) ends at minute 31, the next job for
    # it comes at minute 32
    day = tiny_day(tmp_path / "day.json", jobs=((0, 12, 30), (32, 12, 10)))
    plain = played("Shutdown", SHUTDOWN["OR*"](), day)
    seen = played("Shutdown", oracles.OffReservationForesight(), day)
    # OR* switches the node off at 31 and the job waits for it to go off and on again; knowing the
    # job comes, the oracle keeps it on a minute: two switches fewer, less waste, less waiting
    assert (plain["nb_switches"], seen["nb_switches"]) == (4, 2)
    assert seen["energy_waste"] < plain["energy_waste"] and seen["waiting_time"] < plain["waiting_time"]


def test_the_oracles_run_through_evaluate_as_module_callables_and_baselines_with_arguments(tmp_path):
    (tmp_path / "days").mkdir()
    day = tiny_day(tmp_path / "days" / "day.json")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "scripts"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "batsched_py.cli", "evaluate", "--env", "shutdown", "-p", str(PLATFORM),
                           "-w", str(day.parent), "-o", str(tmp_path / "out"), "-j", "1", "--no-figures",
                           "--policies", 'OR*,quarter=OR*:{"max_stretch": 0.25},one=OR*:{"max_stretch": 1},'
                           "foresight=oracles:OffReservationForesight"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = list(csv.DictReader((tmp_path / "out" / "summary.csv").open()))
    assert [r["policy"] for r in rows] == ["OR*", "quarter", "one", "foresight"]


def test_or_star_on_walltimes_cannot_see_a_node_freed_early(tmp_path):
    # a node's job asks 100 min and runs 10; a second one-node job comes at minute 5 asking 40
    doc = {"nb_res": 168, "jobs": [{"id": "0", "subtime": 0, "res": 12, "walltime": 100, "profile": "p0"},
                                   {"id": "1", "subtime": 5, "res": 12, "walltime": 40, "profile": "p1"}],
           "profiles": {"p0": {"type": "delay", "delay": 10}, "p1": {"type": "delay", "delay": 20}}}
    day = tmp_path / "day.json"
    day.write_text(json.dumps(doc))
    real = played("Shutdown", SHUTDOWN["OR*"](), day)
    walls = played("Shutdown", SHUTDOWN["OR*"](real_runtimes=False), day)
    # knowing the first node frees at 10, OR* keeps the second job waiting for it (stretch 0.125);
    # by the walltime it frees at 100, too late, and a second node is switched on and off for it
    assert walls["nb_switches"] == real["nb_switches"] + 2
    assert walls["energy_waste"] > real["energy_waste"] and walls["waiting_time"] < real["waiting_time"]
