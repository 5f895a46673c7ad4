"""simulate(): platforms whose network is not modelled run with a warning; progress on the terminal."""
import csv
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from batsched_py.emulator import simulate
from batsched_py.models.errors import EmulatorError, NetworkNotModelledWarning
from batsched_py.scheduler import Session, create
from batsched_py.scheduler.failure import SchedulerFailure

from golden_replay import GOLDEN

ROOT = Path(__file__).resolve().parents[2]
NO_NET = GOLDEN / "fcfs_fast-e128-hpc250" / "inputs" / "energy_platform_homogeneous_no_net_128.xml"
LINKED = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <cluster id="c" prefix="h" suffix="" radical="0-3" speed="1Gf" bw="125MBps" lat="50us"/>
    <cluster id="m" prefix="master_host" suffix="" radical="0-0" speed="1Gf" bw="125MBps" lat="50us">
      <prop id="role" value="master"/>
    </cluster>
    <link id="backbone" bandwidth="1.25GBps" latency="500us"/>
    <zoneRoute src="c" dst="m" gw_src="hc_router" gw_dst="master_hostm_router"><link_ctn id="backbone"/></zoneRoute>
  </zone>
</platform>
"""
# Floyd routing: shortest paths the emulator does not compute (see network.py).
UNMODELLED = LINKED.replace('<zone id="AS0" routing="Full">', '<zone id="AS0" routing="Floyd">')


def _inputs(tmp_path: Path, text: str = UNMODELLED) -> tuple[Path, Path]:
    platform = tmp_path / "linked.xml"
    platform.write_text(text)
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 2, "profile": "d"}],
                                    "profiles": {"d": {"type": "delay", "delay": 10}}}))
    return platform, workload


def test_unmodelled_network_runs_with_a_warning(tmp_path):
    platform, workload = _inputs(tmp_path)
    with pytest.warns(NetworkNotModelledWarning, match="routing='Floyd'.*latency"):
        result = simulate(platform, [workload], create("fcfs"))
    assert result.complete and result.jobs["w0!1"].final_state == "COMPLETED_SUCCESSFULLY"


def test_modelled_network_runs_silently_and_takes_time(tmp_path):
    platform, workload = _inputs(tmp_path, LINKED)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = simulate(platform, [workload], create("fcfs"))
    job = result.jobs["w0!1"]
    # The submitter's hello, the first reply's "ready", the submission, the submitter's goodbye
    # and the decision each cross the master host's route to itself, one after the other: its
    # private link up and down (its cluster has no backbone), 2 x 50 us, + 1 byte at 125 MB/s.
    # The job's end, known to Batsim when its message arrives, crosses h0's link up, the
    # backbone link and the master's link down: 50 + 500 + 50 us, + 1 byte at 125 MB/s.
    assert job.starting_time == pytest.approx(5 * (100e-6 + 8e-9), abs=1e-12)
    assert job.finish_time == pytest.approx(job.starting_time + 10 + 600e-6 + 8e-9, abs=1e-9)


def test_platform_without_links_runs_silently(tmp_path):
    _, workload = _inputs(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        simulate(NO_NET, [workload], create("fcfs"))


def test_command_line_prints_one_warning_line(tmp_path):
    platform, workload = _inputs(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "batsched_py.cli", "run", "-p", str(platform), "-w", str(workload),
                           "--scheduler", "fcfs", "-e", str(tmp_path / "out"), "--no-progress"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("batsched-py: warning: ") and "linked.xml" in lines[0]


def test_plain_progress_ends_with_the_final_count(tmp_path, monkeypatch, capsys):
    # Without tqdm, the fallback progress line must end on the final count, not the last shown.
    monkeypatch.setitem(sys.modules, "tqdm", None)
    _, workload = _inputs(tmp_path)
    simulate(NO_NET, [workload], create("fcfs"), progress=True)
    assert capsys.readouterr().err.rstrip().endswith("1/1 jobs finished (100%)")


def test_kill_is_acknowledged_once_the_killers_message_crossed(tmp_path):
    # Batsim's killer actor (master host) kills, then reports the kills with its own message over
    # the master host's route (100 us + 1 byte at 125 MB/s, as every message of the master host):
    # the KILL_JOB decision crosses, then the reply's "ready", then the killer's message.
    from procset import ProcSet
    from batsched_py import protocol as p
    platform, workload = _inputs(tmp_path, LINKED)
    requests = []

    def exchange(req):
        requests.append(req)
        events: tuple = ()
        if any(isinstance(e, p.JobSubmitted) for e in req.events):
            events = (p.ExecuteJob(req.now, "w0!1", ProcSet((0, 1))), p.CallMeLater(req.now, req.now + 5))
        elif any(isinstance(e, p.RequestedCall) for e in req.events):
            events = (p.KillJob(req.now, ("w0!1",)),)
        return p.Message(req.now, events)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = simulate(platform, [workload], exchange)
    hop = 100e-6 + 8e-9
    called = next(r for r in requests if any(isinstance(e, p.RequestedCall) for e in r.events))
    killed = next(r for r in requests if any(isinstance(e, p.JobKilled) for e in r.events))
    assert [type(e) for e in killed.events] == [p.JobCompleted, p.JobKilled]
    assert killed.now == pytest.approx(called.now + 3 * hop, abs=2e-6)
    job = result.jobs["w0!1"]
    assert job.final_state == "COMPLETED_KILLED"
    assert job.finish_time == pytest.approx(called.now + hop, abs=2e-6)


@pytest.mark.parametrize("energy", [False, True])
def test_a_finished_run_is_freed_without_the_cyclic_collector(energy, tmp_path):
    """Jobs, the engine and the policy's view go as soon as the result is taken: a loop of runs
    (comparisons, learning episodes) must not hold the previous runs until a full collection."""
    import gc
    workload = ROOT / "workloads" / "kth_sp2_first2000.json"
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.disable()
    try:
        result = simulate(NO_NET, [workload], create("easy"), output_prefix=tmp_path / "out", energy=energy)
        assert len(result.jobs) == 2000
        del result
        gc.collect()
        kept = {f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage}
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        gc.enable()
    for name in ("batsched_py.emulator.engine.Engine", "batsched_py.models.workload.Job",
                 "batsched_py.scheduler.view.Job", "batsched_py.policies.backfilling.EASY"):
        assert name not in kept


def _three_pairs(tmp_path: Path, nb_res) -> Path:
    workload = tmp_path / "pairs.json"
    doc = {"jobs": [{"id": str(i), "subtime": 0, "res": 2, "profile": "d"} for i in range(3)],
           "profiles": {"d": {"type": "delay", "delay": 10}}}
    if nb_res is not None:
        doc["nb_res"] = nb_res
    workload.write_text(json.dumps(doc))
    return workload


def test_mmax_workload_uses_only_the_hosts_the_workload_asks_for(tmp_path):
    workload = _three_pairs(tmp_path, 4)
    assert simulate(NO_NET, [workload], create("fcfs")).end_time == 10      # 128 hosts: all start at once
    result = simulate(NO_NET, [workload], create("fcfs"), mmax_workload=True)
    assert result.end_time == 20                                             # 4 hosts: two pairs, then one
    assert sorted(j.starting_time for j in result.jobs.values()) == [0, 0, 10]


@pytest.mark.parametrize("nb_res, words", [(None, "'nb_res' must be a positive integer, got None"),
                                           ("4", "'nb_res' must be a positive integer, got '4'"),
                                           (0, "'nb_res' must be a positive integer, got 0")])
def test_mmax_workload_needs_nb_res(tmp_path, nb_res, words):
    workload = _three_pairs(tmp_path, nb_res)
    with pytest.raises(EmulatorError) as info:
        simulate(NO_NET, [workload], create("fcfs"), mmax_workload=True)
    assert str(info.value) == f"--mmax-workload: {workload}: {words}"


def test_mmax_workload_names_an_unreadable_workload(tmp_path):
    workload = tmp_path / "broken.json"
    workload.write_text("[1, 2")
    with pytest.raises(EmulatorError, match=r"--mmax-workload: .*broken\.json: invalid JSON"):
        simulate(NO_NET, [workload], create("fcfs"), mmax_workload=True)


def _three_jobs(tmp_path) -> Path:
    workload = tmp_path / "three.json"
    workload.write_text(json.dumps({"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 5}},
                                    "jobs": [{"id": str(i), "subtime": 10 * i, "res": 1, "profile": "d"}
                                             for i in range(3)]}))
    return workload


def test_progress_counts_against_the_workloads_jobs_in_plain_lines_off_a_terminal(tmp_path, capsys):
    """stderr is not a terminal here: lines out of the workload's 3 jobs (not out of the jobs
    submitted so far, which read ~100% throughout), and no carriage return."""
    from batsched_py.emulator.progress import progress_bar
    simulate(NO_NET, [_three_jobs(tmp_path)], create("fcfs"), progress=True)
    err = capsys.readouterr().err
    assert err == "3/3 jobs finished (100%)\n"
    update, close = progress_bar(True, 20)     # a line per tenth of the jobs, and the last count
    for finished in range(8):
        update(finished + 5, finished)
    close()
    err = capsys.readouterr().err
    assert err.splitlines() == ["0/20 jobs finished (0%)", "2/20 jobs finished (10%)", "4/20 jobs finished (20%)",
                                "6/20 jobs finished (30%)", "7/20 jobs finished (35%)"]


def test_progress_on_a_terminal_rewrites_one_line(tmp_path, monkeypatch):
    import os
    import pty
    from batsched_py.emulator.progress import progress_bar
    monkeypatch.setitem(sys.modules, "tqdm", None)
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as terminal:
        update, close = progress_bar(True, 3, terminal)
        update(1, 0)
        close()
    text = os.read(master, 1000).decode()
    os.close(master)
    assert text.startswith("\r0/3 jobs finished (0%)"), text


def test_job_outcomes_are_built_when_first_read(tmp_path):
    """result.jobs (JobOutcomes) costs nothing until read; then it is each job's outcome, the same
    objects on every read, and pickles (for Ray) as the plain dict."""
    import csv
    import pickle
    hpc = GOLDEN / "fcfs_fast-e128-hpc250" / "inputs"
    result = simulate(NO_NET, [next(hpc.glob("*.json"))], create("easy"), output_prefix=tmp_path / "out")
    assert result.jobs._outcomes is None and len(result.jobs) == 250
    with open(tmp_path / "out_jobs.csv") as f:
        rows = {f"w0!{r['job_id']}": r for r in csv.DictReader(f)}
    assert sorted(result.jobs) == sorted(rows)
    for job_id, job in result.jobs.items():
        row = rows[job_id]
        assert (f"{job.starting_time:.6f}", f"{job.finish_time:.6f}", str(job.allocated_resources),
                job.final_state) == (row["starting_time"], row["finish_time"], row["allocated_resources"],
                                     row["final_state"])
    assert result.jobs["w0!1"] is result.jobs["w0!1"]
    copy = pickle.loads(pickle.dumps(result))
    assert type(copy.jobs) is dict and copy.jobs == result.jobs and result.jobs == copy.jobs


def test_a_run_keeps_the_gc_off_its_inputs_and_restores_it(tmp_path):
    """run_engine freezes what is alive once the inputs are loaded (the run's collections skip
    them) and leaves the GC as it found it; a caller's own frozen objects or disabled GC are left
    alone."""
    import gc
    from batsched_py.scheduler import Session
    _, workload = _inputs(tmp_path)
    seen = []

    def exchange():
        session = Session(create("fcfs"))

        def handle(message):
            seen.append((gc.isenabled(), gc.get_freeze_count()))
            return session.handle(message)
        return handle

    thresholds = gc.get_threshold()
    simulate(NO_NET, [workload], exchange())
    assert seen and all(enabled and frozen > 0 for enabled, frozen in seen)
    assert (gc.isenabled(), gc.get_freeze_count(), gc.get_threshold()) == (True, 0, thresholds)
    gc.disable()
    try:
        seen.clear()
        simulate(NO_NET, [workload], exchange())
        assert seen and all(not enabled and frozen == 0 for enabled, frozen in seen)
        assert not gc.isenabled()
    finally:
        gc.enable()
    gc.freeze()
    try:
        count = gc.get_freeze_count()
        simulate(NO_NET, [workload], exchange())
        assert 0 < gc.get_freeze_count() <= count       # (not unfrozen; some frozen objects died)
    finally:
        gc.unfreeze()


def test_the_schedulers_time_is_the_outputs_scheduling_time(tmp_path):
    """The emulator counts the time from a request given to its reply as the scheduler's, as
    Batsim does: a scheduler that sleeps 20 ms on each of its first 5 requests took at least 0.1 s."""
    _, workload = _inputs(tmp_path)
    session = Session(create("fcfs"))

    def slow(message):
        if session.messages < 5:
            time.sleep(0.02)
        return session.handle(message)

    result = simulate(NO_NET, [workload], slow, output_prefix=tmp_path / "out")
    with open(tmp_path / "out_schedule.csv", newline="") as f:
        row = next(csv.DictReader(f))
    assert result.complete and session.messages >= 5
    assert 0.1 <= float(row["scheduling_time"]) <= float(row["simulation_time"])


def test_a_policy_bug_is_named_with_its_time_and_the_outputs_say_so(tmp_path):
    """A bug in the policy's code (not one of the package's errors) stops the run with one line
    naming the time of the message it was answering; the outputs are marked incomplete with it."""
    _, workload = _inputs(tmp_path)
    session = Session(create("fcfs"))

    def buggy(message):
        if message.now > 0:
            raise ZeroDivisionError("policy bug")
        return session.handle(message)

    with pytest.raises(SchedulerFailure, match=r"the scheduler failed at t=\S+ \(answering that message\): "
                                               r"ZeroDivisionError: policy bug") as failed:
        simulate(NO_NET, [workload], buggy, output_prefix=tmp_path / "out")
    assert isinstance(failed.value.__cause__, ZeroDivisionError)
    marker = (tmp_path / "out_INCOMPLETE").read_text()
    assert "policy bug" in marker and (tmp_path / "out_jobs.csv").exists()
