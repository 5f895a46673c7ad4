"""On the emulator, our policies give every job the starting time and hosts batsched gave it under Batsim.

Compared with the golden ``out_jobs.csv`` (and, marked slow, the whole KTH-SP2
trace run with batsched easy_bf / fcfs_fast / filler).  A difference here with
an exact transcript replay (test_golden_replay.py) points at the emulator's
message ordering, not at the policy: the policy's decisions are a function of
the messages it receives.
"""
import csv
import gzip
import json

import pytest

from batsched_py.scheduler import create
from tests.helpers.golden import GOLDEN
from helpers import SHARED, output_differences

emulator = pytest.importorskip("batsched_py.emulator")

KTH = SHARED / "golden" / "large-kth_sp2"


def differences(result, rows) -> list[str]:
    """Jobs whose start or allocation differs from a Batsim jobs.csv (rejected jobs: none expected)."""
    out = []
    for row in rows:
        job = result.jobs.get(f"{row['workload_name']}!{row['job_id']}")
        if job is None:
            out.append(f"{row['job_id']}: missing")
        elif row["starting_time"] == "":
            if job.starting_time >= 0:
                out.append(f"{row['job_id']}: started at {job.starting_time}, Batsim rejected it")
        elif abs(job.starting_time - float(row["starting_time"])) > 1e-6 \
                or str(job.allocated_resources) != row["allocated_resources"]:
            out.append(f"{row['job_id']}: ours {job.starting_time} on {job.allocated_resources}, "
                       f"batsched {row['starting_time']} on {row['allocated_resources']}")
    return out


@pytest.mark.parametrize("case,policy", [
    ("fcfs_fast-e128-hpc250", "fcfs"), ("fcfs_fast-e128-samesubmit", "fcfs"),
    ("easy_bf-e128-hpc250", "easy"), ("easy_bf-e128-walltime", "easy"),
    ("conservative_bf-e128-hpc250s2", "conservative"), ("filler-e128-seqdelay", "filler")])
def test_golden_cases(case, policy):
    folder = GOLDEN / case
    args = json.loads((folder / "meta.json").read_text())["batsim_args"]
    platform, workload = folder / args[args.index("-p") + 1], folder / args[args.index("-w") + 1]
    result = emulator.simulate(platform, [workload], create(policy))
    with open(folder / "out_jobs.csv") as f:
        diffs = differences(result, csv.DictReader(f))
    assert not diffs, f"{len(diffs)} jobs differ, e.g. {diffs[:3]}"


@pytest.mark.slow
@pytest.mark.parametrize("policy,golden", [("fcfs", "fcfs_fast"), ("filler", "filler"), ("easy", "easy_bf")])
def test_whole_kth_sp2(policy, golden, tmp_path):
    """Every job where batsched put it, and Batsim's jobs.csv and schedule.csv as Batsim printed them."""
    if not KTH.is_dir():
        pytest.skip(f"{KTH} is absent")
    result = emulator.simulate(KTH / "inputs" / "energy_platform_homogeneous_no_net_128.xml",
                               [KTH / "inputs" / "kth_sp2.json"], create(policy), mmax=100,
                               output_prefix=tmp_path / "out")
    with gzip.open(KTH / f"{golden}_jobs.csv.gz", "rt") as f:
        diffs = differences(result, csv.DictReader(f))
    assert not diffs, f"{len(diffs)} of 27954 jobs differ, e.g. {diffs[:3]}"
    for name, theirs in (("jobs", f"{golden}_jobs.csv.gz"), ("schedule", f"{golden}_schedule.csv")):
        assert output_differences(KTH / theirs, tmp_path / f"out_{name}.csv", name) is None


@pytest.mark.parametrize("policy,options", [
    ("saf", {}), ("sjf", {}), ("conservative", {"queue_order": "smallest"}), ("easy", {"contiguous": True}),
    ("filler", {"allocation": "round_robin", "cores_per_node": 8}),
    ("easy", {"allocation": "consolidation", "cores_per_node": 8}), ("fcfs", {"allocation": "random", "seed": 1})])
def test_variants_run_every_job_on_valid_hosts(policy, options):
    """Orders and selectors change the schedule, never its validity: every job runs on its size."""
    folder = GOLDEN / "easy_bf-e128-hpc250"
    result = emulator.simulate(folder / "inputs" / "energy_platform_homogeneous_no_net_128.xml",
                               [folder / "inputs" / "example_workload_hpc_seed1_jobs250.json"],
                               create(policy, options))
    assert len(result.jobs) == 250
    for job in result.jobs.values():
        assert job.final_state.startswith("COMPLETED") and len(job.allocated_resources) == job.requested_resources
        if options.get("contiguous"):
            assert len(list(job.allocated_resources.intervals())) == 1
