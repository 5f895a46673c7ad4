"""pybatsim 3.2.1 schedulers against ``batsched-py emulate``, two processes over ZeroMQ.

pybatsim's Python module is ``batsim`` and its launcher the ``pybatsim`` console script; the test
is skipped where they are absent.  Each run must give every job the starting time and hosts real
Batsim 4.2.1 gave it with the same scheduler (golden recordings), or, without a recording, a
valid schedule.
"""
from __future__ import annotations

import csv
import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from golden_replay import GOLDEN, meta
from tests.helpers.net import free_tcp_endpoint
from helpers import OUTPUTS, SHARED, output_differences

pytest.importorskip("batsim", reason="pybatsim 3.2.1 (module 'batsim') is not installed")
PYBATSIM = shutil.which("pybatsim")
pytestmark = pytest.mark.skipif(PYBATSIM is None, reason="the pybatsim launcher is not on PATH")

ROOT = Path(__file__).resolve().parents[2]
KTH = SHARED / "golden" / "large-kth_sp2"


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)


def run_pair(scheduler: str, batsim_args: list[str], cwd: Path, out: Path, timeout: float) -> None:
    """pybatsim ``scheduler`` (REP, binds) and the emulator (REQ, connects) until both exit."""
    endpoint = free_tcp_endpoint()
    port = endpoint.rsplit(":", 1)[1]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    sched = subprocess.Popen([PYBATSIM, scheduler, "-s", f"tcp://127.0.0.1:{port}", "-v", "warning"],
                             cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    emu = None
    try:
        emu = subprocess.Popen([sys.executable, "-m", "batsched_py.cli", "emulate", *batsim_args,
                                "-s", endpoint, "-e", str(out), "--timeout", str(int(timeout))],
                               cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, err = emu.communicate(timeout=timeout)
        assert emu.returncode == 0, f"emulator failed: {err[-2000:]}"
        log, _ = sched.communicate(timeout=30)
        assert sched.returncode == 0, f"pybatsim {scheduler} failed: {log[-2000:]}"
    finally:
        if emu is not None:
            _stop(emu)
        _stop(sched)


def read_jobs(path: Path) -> dict[str, dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return {r["job_id"]: r for r in csv.DictReader(f)}


def schedule_differences(golden: dict[str, dict], ours: dict[str, dict]) -> list[str]:
    diffs = []
    for jid, want in golden.items():
        got = ours.get(jid)
        if got is None:
            diffs.append(f"{jid}: missing")
        elif (got["starting_time"], got["allocated_resources"]) != (want["starting_time"],
                                                                     want["allocated_resources"]):
            diffs.append(f"{jid}: ours {got['starting_time']} on {got['allocated_resources']}, "
                         f"Batsim {want['starting_time']} on {want['allocated_resources']}")
    return diffs


def check_valid(jobs: dict[str, dict]) -> None:
    """Every job completed on as many hosts as requested, no host running two jobs at once."""
    busy: dict[int, list[tuple[float, float]]] = {}
    for jid, r in jobs.items():
        assert r["final_state"] == "COMPLETED_SUCCESSFULLY", (jid, r["final_state"])
        hosts = []
        for part in r["allocated_resources"].split():
            a, _, b = part.partition("-")
            hosts.extend(range(int(a), int(b or a) + 1))
        assert len(hosts) == int(r["requested_number_of_resources"]), jid
        assert float(r["starting_time"]) >= float(r["submission_time"]), jid
        for h in hosts:
            busy.setdefault(h, []).append((float(r["starting_time"]), float(r["finish_time"])))
    for h, spans in busy.items():
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:]):
            assert start >= end - 1e-6, f"host {h} runs two jobs at once"


@pytest.mark.golden
@pytest.mark.parametrize("case,scheduler", [("pybatsim_easy-e128-hpc250-E", "easyBackfill"),
                                            ("pybatsim_fillerevents-e128-events", "fillerSchedWithEvents")])
def test_same_schedule_as_real_batsim(case, scheduler, tmp_path):
    run_pair(scheduler, meta(case)["batsim_args"], GOLDEN / case, tmp_path / "out", timeout=60)
    diffs = schedule_differences(read_jobs(GOLDEN / case / "out_jobs.csv"), read_jobs(tmp_path / "out_jobs.csv"))
    assert not diffs, f"{len(diffs)} jobs differ, e.g. {diffs[:3]}"
    for name in OUTPUTS:
        if (GOLDEN / case / f"out_{name}.csv").exists():
            assert output_differences(GOLDEN / case / f"out_{name}.csv", tmp_path / f"out_{name}.csv", name) is None


def test_filler_without_events_gives_a_valid_schedule(tmp_path):
    case = "pybatsim_fillerevents-e128-events"
    args = meta(case)["batsim_args"]
    i = args.index("--events")
    args = args[:i] + args[i + 2:]
    run_pair("fillerSched", args, GOLDEN / case, tmp_path / "out", timeout=60)
    jobs = read_jobs(tmp_path / "out_jobs.csv")
    assert len(jobs) == len(read_jobs(GOLDEN / case / "out_jobs.csv"))
    check_valid(jobs)


@pytest.mark.slow
def test_easy_backfill_whole_kth_sp2(tmp_path):
    if not KTH.is_dir():
        pytest.skip(f"{KTH} is absent")
    inputs = KTH / "inputs"
    run_pair("easyBackfill", ["-p", str(inputs / "energy_platform_homogeneous_no_net_128.xml"),
                              "-w", str(inputs / "kth_sp2.json"), "--mmax", "100"],
             tmp_path, tmp_path / "out", timeout=600)
    diffs = schedule_differences(read_jobs(KTH / "pybatsim_easy_jobs.csv.gz"), read_jobs(tmp_path / "out_jobs.csv"))
    assert not diffs, f"{len(diffs)} of 27954 jobs differ, e.g. {diffs[:3]}"
    for name, theirs in (("jobs", "pybatsim_easy_jobs.csv.gz"), ("schedule", "pybatsim_easy_schedule.csv")):
        assert output_differences(KTH / theirs, tmp_path / f"out_{name}.csv", name) is None
