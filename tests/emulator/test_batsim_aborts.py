"""The emulator aborts wherever real Batsim 4.2.1 aborts, with Batsim's reason.

Each scenario drives a simulation with scripted decisions (and external events) up to a decision
or event Batsim refuses.  ``tests/data/golden/batsim_aborts.json`` holds what real Batsim 4.2.1
(SimGrid 3.32) printed as its ``[root/CRITICAL]`` reason for each one, recorded with
``python tests/emulator/test_batsim_aborts.py --record`` and ``$BATSCHED_PY_BATSIM`` pointing at it.
The emulator's error must quote that reason; where ``$BATSCHED_PY_BATSIM`` is a real Batsim, the
scenario also runs on it, through the environments' batsim backend, whose error must quote it too.
docs/fidelity.md lists the checks.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable

import pytest
from procset import ProcSet

from batsched_py import protocol as p
from batsched_py.emulator import EmulatorError
from batsched_py.envs.backends import make_backend
from batsched_py.launcher import LaunchError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))      # tests/, when run as a script (--record)
from helpers.batsim import real_batsim  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = ROOT / "platforms" / "energy_platform_homogeneous_no_net_128.xml"  # sleep pstate 13, switches 14/15
RECORDED = ROOT / "tests" / "data" / "golden" / "batsim_aborts.json"

Handler = Callable[[p.Message, p.Event], list]


def job(i: int, subtime: float = 0, res: int = 1) -> dict:
    return {"id": str(i), "subtime": subtime, "res": res, "profile": "d"}


def execute(job_id: str, hosts: str, **kw) -> Handler:
    return lambda r, e: [p.ExecuteJob(r.now, job_id, ProcSet.from_str(hosts), **kw)]


def set_state(hosts: str, pstate: int) -> Handler:
    return lambda r, e: [p.SetResourceState(r.now, ProcSet.from_str(hosts), str(pstate))]


def change(job_id: str, state: str) -> Handler:
    return lambda r, e: [p.ChangeJobState(r.now, job_id, state)]


def both(*handlers: Handler) -> Handler:
    return lambda r, e: [d for h in handlers for d in h(r, e)]


# name: (energy, jobs, external events (time, type, hosts), {event type answered: decisions})
SCENARIOS: dict[str, tuple[bool, list, list, dict[str, Handler]]] = {
    "execute_on_host_made_available_asleep": (
        True, [job(1, 120)], [(100, "machine_unavailable", "0"), (110, "machine_available", "0")],
        {"SIMULATION_BEGINS": set_state("0", 13), "JOB_SUBMITTED": execute("w0!1", "0")}),
    "switch_off_host_made_available_asleep": (
        True, [job(1, 120)], [(100, "machine_unavailable", "0"), (110, "machine_available", "0")],
        {"SIMULATION_BEGINS": set_state("0", 13), "JOB_SUBMITTED": set_state("0", 13)}),
    "available_after_switch_ended_unavailability": (
        True, [job(1, 20)], [(1, "machine_unavailable", "0"), (10, "machine_available", "0")],
        {"SIMULATION_BEGINS": set_state("0", 13), "JOB_SUBMITTED": execute("w0!1", "1")}),
    "unavailable_twice": (
        False, [job(1, 20)], [(1, "machine_unavailable", "0"), (2, "machine_unavailable", "0")],
        {"JOB_SUBMITTED": execute("w0!1", "1")}),
    "available_while_idle": (
        False, [job(1, 20)], [(1, "machine_available", "0")], {"JOB_SUBMITTED": execute("w0!1", "1")}),
    "execute_on_computing_host": (
        False, [job(1, 0, 2), job(2, 0, 2)], [],
        {"JOB_SUBMITTED": lambda r, e: execute(e.job_id, "0-1" if e.job_id == "w0!1" else "1-2")(r, e)}),
    "execute_on_sleeping_host": (
        True, [job(1, 50, 2)], [], {"SIMULATION_BEGINS": set_state("0-1", 13), "JOB_SUBMITTED": execute("w0!1", "0-1")}),
    "execute_on_switching_host": (
        True, [job(1, 1)], [], {"SIMULATION_BEGINS": set_state("0", 13), "JOB_SUBMITTED": execute("w0!1", "0")}),
    "execute_on_unavailable_host": (
        False, [job(1, 5)], [(1, "machine_unavailable", "0")], {"JOB_SUBMITTED": execute("w0!1", "0")}),
    "execute_on_missing_machine": (False, [job(1)], [], {"JOB_SUBMITTED": execute("w0!1", "200")}),
    "execute_wrong_size": (False, [job(1, 0, 2)], [], {"JOB_SUBMITTED": execute("w0!1", "0")}),
    "execute_mapping_wrong_size": (
        False, [job(1, 0, 2)], [], {"JOB_SUBMITTED": execute("w0!1", "0-1", mapping={"0": 0})}),
    "execute_twice": (
        False, [job(1, 0, 2)], [], {"JOB_SUBMITTED": both(execute("w0!1", "0-1"), execute("w0!1", "2-3"))}),
    "execute_unknown_job": (False, [job(1)], [], {"JOB_SUBMITTED": execute("w0!nope", "0")}),
    "reject_running_job": (
        False, [job(1)], [], {"JOB_SUBMITTED": both(execute("w0!1", "0"), lambda r, e: [p.RejectJob(r.now, "w0!1")])}),
    "kill_job_not_submitted": (
        False, [job(1), job(2, 100)], [], {"JOB_SUBMITTED": lambda r, e: [p.KillJob(r.now, ("w0!2",))]}),
    "call_me_later_now": (False, [job(1)], [], {"SIMULATION_BEGINS": lambda r, e: [p.CallMeLater(r.now, r.now)]}),
    "switch_off_computing_host": (
        True, [job(1, 0, 2)], [], {"JOB_SUBMITTED": both(execute("w0!1", "0-1"), set_state("0", 13))}),
    "switch_sleeping_host_to_virtual_pstate": (
        True, [job(1, 50)], [], {"SIMULATION_BEGINS": set_state("0", 13), "JOB_SUBMITTED": set_state("0", 14)}),
    "set_state_without_energy": (False, [job(1)], [], {"SIMULATION_BEGINS": set_state("0", 1)}),
    "metadata_with_double_quote": (
        False, [job(1)], [], {"JOB_SUBMITTED": lambda r, e: [p.SetJobMetadata(r.now, "w0!1", 'a"b')]}),
    "metadata_of_unknown_job": (
        False, [job(1)], [], {"JOB_SUBMITTED": lambda r, e: [p.SetJobMetadata(r.now, "w0!nope", "x")]}),
    "change_state_to_failed": (False, [job(1)], [], {"JOB_SUBMITTED": change("w0!1", "COMPLETED_FAILED")}),
    "change_state_of_unknown_job": (False, [job(1)], [], {"JOB_SUBMITTED": change("w0!nope", "RUNNING")}),
    "change_submitted_job_to_completed": (False, [job(1)], [], {"JOB_SUBMITTED": change("w0!1", "COMPLETED_KILLED")}),
    "change_running_job_to_rejected": (
        False, [job(1)], [], {"JOB_SUBMITTED": both(change("w0!1", "RUNNING"), change("w0!1", "REJECTED"))}),
    "change_rejected_job": (
        False, [job(1)], [], {"JOB_SUBMITTED": both(lambda r, e: [p.RejectJob(r.now, "w0!1")],
                                                    change("w0!1", "RUNNING"))}),
}


def _inputs(tmp: Path, name: str) -> tuple[Path, list[Path]]:
    energy, jobs, events, _ = SCENARIOS[name]
    workload = tmp / f"{name}.json"
    workload.write_text(json.dumps({"nb_res": 128, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 10}}}))
    files = []
    if events:
        path = tmp / f"{name}_events.txt"
        path.write_text("".join(json.dumps({"timestamp": t, "type": kind, "resources": hosts}) + "\n"
                                for t, kind, hosts in events))
        files.append(path)
    return workload, files


def run_scenario(backend: str, name: str, tmp: Path) -> str:
    """Runs the scenario on ``backend``; returns the error that ended it ("" if none did)."""
    energy, _, _, handlers = SCENARIOS[name]
    workload, events = _inputs(tmp, name)
    sim = make_backend(backend, PLATFORM, workload, energy=energy, output_prefix=str(tmp / name), events=events)
    try:
        request = sim.start()
        while request is not None:
            decisions = [d for e in request.events if e.TYPE in handlers for d in handlers[e.TYPE](request, e)]
            request = sim.send(p.Message(request.now, tuple(decisions)))
    except (EmulatorError, LaunchError) as exc:
        return str(exc)
    finally:
        sim.close()
    return ""


def recorded() -> dict[str, str]:
    return json.loads(RECORDED.read_text())


def test_every_scenario_recorded():
    assert sorted(recorded()) == sorted(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_emulator_aborts_with_batsims_reason(tmp_path, name):
    error = run_scenario("emulator", name, tmp_path)
    assert recorded()[name] in error, error
    assert (tmp_path / f"{name}_INCOMPLETE").exists()


@pytest.mark.skipif(real_batsim() is None, reason="$BATSCHED_PY_BATSIM is not a real Batsim binary")
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_real_batsim_still_says_so(tmp_path, name):
    error = run_scenario("batsim", name, tmp_path)
    assert f"[root/CRITICAL] {recorded()[name]}" in error, error
    assert "\n" not in error


def record() -> None:
    """Runs every scenario on the real Batsim of $BATSCHED_PY_BATSIM; writes its reasons."""
    import tempfile
    assert real_batsim(), "set $BATSCHED_PY_BATSIM to a real Batsim 4.2.1 binary"
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(SCENARIOS):
            error = run_scenario("batsim", name, Path(tmp))
            tag = "[root/CRITICAL] "
            assert tag in error, f"{name}: {error or 'Batsim did not abort'}"
            out[name] = error.split(tag, 1)[1]
            print(f"{name}: {out[name]}")
    RECORDED.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    record()
