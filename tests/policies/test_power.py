"""Power management (timeout, oracle) over the scheduler API and on the Taurus platform.

The protocol-level tests drive a Session with the SIMULATION_BEGINS Batsim sent
in the idle_sleeper-taurus recording (168 Taurus hosts, pstate 1 computes,
0 sleeps), then with hand-written events.  The study test runs the emulator on
Grid'5000 Lyon 2016 weeks and checks what the research reports qualitatively.
"""
import datetime
import sys
from pathlib import Path

import pytest

from batsched_py.protocol import decode_message
from batsched_py.scheduler import Session, create
from batsched_py.policies.base import PolicyOptionError
from tests.helpers.golden import read_transcript
from helpers import SHARED

ROOT = Path(__file__).resolve().parents[2]


def taurus_session(policy: str, options: dict) -> tuple[Session, dict]:
    begins = read_transcript("idle_sleeper-taurus-2016w13-E")[0]["msg"]
    session = Session(create(policy, options))
    return session, session.handle(decode_message(begins, "batsim")).to_data()


def send(session: Session, now: float, *events: dict) -> list[dict]:
    msg = {"now": now, "events": [dict(e, timestamp=now) for e in events]}
    return session.handle(decode_message(msg, "batsim")).to_data()["events"]


def submitted(job_id: str, res: int, now: float, walltime: float = 60) -> dict:
    return {"type": "JOB_SUBMITTED", "data": {"job_id": job_id, "job": {
        "id": job_id, "res": res, "subtime": now, "walltime": walltime, "profile": "p"}}}


def changed(hosts: str, state: str) -> dict:
    return {"type": "RESOURCE_STATE_CHANGED", "data": {"resources": hosts, "state": state}}


def test_timeout_zero_sleeps_at_once_and_wakes_whole_nodes_for_a_job():
    session, reply = taurus_session("timeout", {"base": "easy", "timeout": 0, "cores_per_node": 12})
    assert reply["events"] == [{"timestamp": 0.0, "type": "SET_RESOURCE_STATE",
                                "data": {"resources": "0-167", "state": "0"}}]
    assert send(session, 3, changed("0-167", "0")) == []
    # A 6-core job: EASY picks hosts 0-5, their node (0-11) is switched on as a whole ...
    events = send(session, 10, submitted("w0!1", 6, 10))
    assert [(e["type"], e["data"]) for e in events] == [
        ("SET_RESOURCE_STATE", {"resources": "0-11", "state": "1"})]
    # ... and the job runs once the node is on; the 6 idle cores keep the node on.
    events = send(session, 11, changed("0-11", "1"))
    assert [(e["type"], e["data"]) for e in events] == [("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-5"})]


def test_timeout_waits_T_then_switches_off():
    session, reply = taurus_session("timeout", {"base": "fcfs", "timeout": 5, "cores_per_node": 12})
    assert [(e["type"], e["data"]) for e in reply["events"]] == [("CALL_ME_LATER", {"timestamp": 5.0})]
    events = send(session, 2, submitted("w0!1", 12, 2))       # runs on node 0 at once (all on)
    assert events[0]["type"] == "EXECUTE_JOB" and events[0]["data"]["alloc"] == "0-11"
    events = send(session, 5, {"type": "REQUESTED_CALL", "data": {}})
    assert [(e["type"], e["data"]) for e in events] == [
        ("SET_RESOURCE_STATE", {"resources": "12-167", "state": "0"})]
    events = send(session, 7, {"type": "JOB_COMPLETED", "data": {
        "job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "0-11"}})
    assert [(e["type"], e["data"]) for e in events] == [("CALL_ME_LATER", {"timestamp": 12.0})]


def test_power_needs_sleep_pstates_and_a_queue_policy():
    with pytest.raises(PolicyOptionError, match="base"):
        create("timeout", {"base": "nope"})
    with pytest.raises(PolicyOptionError, match="unknown option"):
        create("timeout", {"base": "easy", "timout": 3})
    begins = read_transcript("easy_bf-e128-hpc250")[0]["msg"]
    for host in begins["events"][0]["data"]["compute_resources"]:
        host.get("properties", {}).pop("sleep_pstates", None)       # hosts without sleep pstates
    with pytest.raises(PolicyOptionError, match="sleep pstates"):
        Session(create("timeout", {})).handle(decode_message(begins, "batsim"))


def test_oracle_reads_runtimes_from_profiles_or_workload(tmp_path):
    from batsched_py.policies.power import profile_runtime, read_runtimes
    assert profile_runtime({"type": "delay", "delay": 7}, None) == 7
    assert profile_runtime({"type": "parallel_homogeneous", "cpu": 3e6, "com": 0}, 1e6) == 3
    assert profile_runtime({"type": "parallel_homogeneous", "cpu": 3e6, "com": 0}, None) is None
    wl = tmp_path / "w.json"
    wl.write_text('{"jobs": [{"id": "#1", "res": 1, "subtime": 0, "profile": "a"}],'
                  ' "profiles": {"a": {"type": "delay", "delay": 4}}}')
    assert read_runtimes(str(wl), None) == {"#1": 4.0}


WEEKS = SHARED / "data" / "gridgym" / "others" / "workloads" / "lyon_2016"


def study(weeks):
    pytest.importorskip("batsched_py.emulator")
    if not WEEKS.is_dir():
        pytest.skip(f"{WEEKS} is absent")
    sys.path.insert(0, str(ROOT / "scripts"))
    import energy_policies_study as s
    results = s.study(weeks, processes=2)
    return {name: [sum(r[name]["wasted"] for r in results.values()),
                   sum(r[name]["switches"] for r in results.values())] for name in s.POLICIES}


def check_research_claims(totals):
    wasted = {k: v[0] for k, v in totals.items()}
    switches = {k: v[1] for k, v in totals.items()}
    assert wasted["T(5)"] > wasted["T(1)"] > wasted["T(0)"] > wasted["oracle"], wasted
    assert switches["T(5)"] < switches["T(1)"] < switches["T(0)"], switches


def test_taurus_study_on_a_subset_of_2016_weeks():
    """Four weeks spread over 2016, to stay fast (the whole year is the slow test below)."""
    weeks = sorted(WEEKS.glob("*2016-*.json"))[::13] if WEEKS.is_dir() else []
    check_research_claims(study(weeks))


@pytest.mark.slow
def test_taurus_study_on_all_2016_weeks():
    check_research_claims(study(sorted(WEEKS.glob("*2016-*.json"))))


@pytest.mark.parametrize("policy,options", [
    ("timeout", {"base": "conservative", "timeout": 2, "cores_per_node": 2}),
    ("oracle", {"base": "conservative", "threshold": 50, "keep_on": 5}),
    ("timeout", {"base": "easy", "timeout": 1, "cores_per_node": 8, "contiguous": True}),
    ("oracle", {"base": "easy", "threshold": 30, "keep_on": 10, "cores_per_node": 4, "contiguous": True})])
def test_power_over_any_base_finishes_every_job(policy, options):
    """Regressions: launches that wait for hosts made reservations end before their jobs (the
    profile's present ran past its first slice and the scheduler stalled); preferring awake hosts
    made the contiguous selector refuse placements that existed (stalled too)."""
    emulator = pytest.importorskip("batsched_py.emulator")
    from tests.helpers.golden import GOLDEN
    inputs = GOLDEN / "easy_bf-e128-hpc250" / "inputs"
    result = emulator.simulate(inputs / "energy_platform_homogeneous_no_net_128.xml",
                               [inputs / "example_workload_hpc_seed1_jobs250.json"],
                               create(policy, options), energy=True)
    assert len(result.jobs) == 250
    for job in result.jobs.values():
        assert job.final_state.startswith("COMPLETED") and len(job.allocated_resources) == job.requested_resources
        if options.get("contiguous"):
            assert len(list(job.allocated_resources.intervals())) == 1


@pytest.mark.parametrize("name, options, match", [
    ("timeout", {"timeout": "x"}, "option timeout: 'x' is not a finite non-negative number"),
    ("timeout", {"timeout": True}, "option timeout: True is not"),
    ("timeout", {"timeout": float("inf")}, "option timeout: inf is not a finite"),
    ("timeout", {"base": ["easy"]}, r"option base: \['easy'\] is not a policy name"),
    # an agent scheduler beneath: two power managers (shutdown-agent: a simulation that never ended)
    ("timeout", {"base": "shutdown-agent", "policy": "T0"},
     r"option base: 'shutdown-agent' is not a queue-based policy; choose from \['conservative', 'easy', 'fcfs', "
     r"'filler', 'saf', 'sjf'\]"),
    ("oracle", {"base": "thermal-allocation"}, "option base: 'thermal-allocation' is not a queue-based policy"),
    ("oracle", {"threshold": -1}, "option threshold: -1 is not a finite non-negative number"),
    ("oracle", {"keep_on": 10 ** 400}, r"option keep_on: 1000+ is not a finite"),   # (JSON holds it: OverflowError)
    ("oracle", {"keep_on": "1"}, "option keep_on: '1' is not"),
    ("oracle", {"host_speed": 0}, "option host_speed: 0 is not a finite positive number"),
    ("oracle", {"workload": True}, "option workload: True is not a file name"),   # (open(True) is stdout)
    ("oracle", {"workload": "/no/such.json"}, "option workload: /no/such.json: cannot read it"),
    ("easy", {"queue_order": ["sjf"]}, r"option queue_order: unknown order \['sjf'\]"),
    ("easy", {"allocation": "random", "seed": [1]}, r"option seed: \[1\] is not an integer or a string"),
    # checked whatever the allocation (a TOML date as seed was accepted beside allocation lowest)
    ("easy", {"seed": datetime.date(2024, 1, 2)}, r"option seed: datetime.date\(2024, 1, 2\) is not an integer"),
    ("timeout", {"seed": 1.5}, "option seed: 1.5 is not an integer or a string"),
    # the scheduling agent's power management is a timeout beneath its own decisions: no base to choose
    ("scheduling-agent", {"policy": "FF", "base": "fcfs"}, r"unknown option\(s\) \['base'\]"),
    # the thermal allocators keep FCFS order and choose the processor themselves
    ("thermal-allocation", {"queue_order": "ljf"}, r"unknown option\(s\) \['queue_order'\]"),
    ("thermal-allocation", {"allocation": "random", "seed": 3}, r"unknown option\(s\) \['allocation', 'seed'\]"),
    ("easy", {"contiguous": "false"}, "option contiguous: 'false' is not true or false"),   # (was truthy: on)
    ("easy", {"cores_per_node": True}, "option cores_per_node: True is not a positive integer"),
    ("filler", {"custom_mapping": "no"}, "option custom_mapping: 'no' is not true or false"),
])
def test_bad_option_values_are_named(name, options, match):
    """Every built-in option is checked when the policy is created (these were tracebacks)."""
    with pytest.raises(PolicyOptionError, match=match):
        create(name, options)


def test_oracle_workload_option_must_be_a_batsim_workload(tmp_path):
    path = tmp_path / "w.json"
    for text, match in (("{", "invalid JSON"), ("[1]", "the top level must be a JSON object"),
                        ('{"profiles": {}, "jobs": [3]}', r"jobs\[0\] is not a job object"),
                        ('{"profiles": {"p": {"type": "delay", "delay": "x"}}, "jobs": [{"id": 1, "profile": "p"}]}',
                         "job 1: profile 'p' gives no runtime"),
                        # (a parallel_homogeneous profile without host_speed: planned with walltimes, silently)
                        ('{"profiles": {"p": {"type": "parallel_homogeneous", "cpu": 5, "com": 0}}, "jobs": [{"id": 1, '
                         '"profile": "p"}, {"id": 2, "profile": "q"}]}', r"2 of 2 jobs' profiles give no runtime, "
                         r"e\.g\. job 1: profile 'p' \(type 'parallel_homogeneous'\).*host_speed")):
        path.write_text(text)
        with pytest.raises(PolicyOptionError, match=f"option workload: {path}: {match}"):
            create("oracle", {"workload": str(path)})


def test_an_oracle_that_cannot_know_a_runtime_says_so_once():
    session, _ = taurus_session("oracle", {"base": "easy"})
    with pytest.warns(UserWarning, match=r"oracle: job w0!1: its real runtime is unknown .* walltimes"):
        send(session, 1.0, submitted("w0!1", 4, 1.0))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        send(session, 2.0, submitted("w0!2", 4, 2.0))
