"""Every message of every golden transcript (real Batsim 4.2.1 runs) decodes and re-encodes to an equal value."""
from __future__ import annotations

import json

import pytest
from procset import ProcSet

from batsched_py import protocol as p
from helpers import golden_cases, read_transcript

CASES = golden_cases()
pytestmark = pytest.mark.golden


@pytest.mark.parametrize("case", CASES)
def test_every_message_round_trips(case):
    transcript = read_transcript(case)
    assert transcript, case
    for i, entry in enumerate(transcript):
        sender = entry["from"]
        assert sender in (p.BATSIM, p.SCHEDULER)
        # The request/reply alternation of REQ/REP, starting with Batsim.
        assert sender == (p.BATSIM if i % 2 == 0 else p.SCHEDULER), f"{case} line {i + 1}"
        raw = json.dumps(entry["msg"])
        message = p.decode_message(raw, sender=sender)
        assert isinstance(message, p.Message)
        for event in message.events:
            assert sender in event.SENT_BY
        again = json.loads(p.encode_message(message))
        assert again == entry["msg"], f"{case} line {i + 1}"


@pytest.mark.parametrize("case", CASES)
def test_transcript_bounds(case):
    transcript = read_transcript(case)
    first = p.decode_message(transcript[0]["msg"], sender="batsim")
    last = p.decode_message(transcript[-2]["msg"], sender="batsim")
    assert isinstance(first.events[0], p.SimulationBegins)
    assert isinstance(last.events[-1], p.SimulationEnds)


def test_input_kinds_are_equivalent():
    msg = read_transcript("fcfs_fast-e128-hpc250")[2]["msg"]
    text = json.dumps(msg)
    decoded = [p.decode_message(x, sender="batsim") for x in (msg, text, text.encode(), bytearray(text.encode()),
                                                              memoryview(text.encode()))]
    assert all(d == decoded[0] for d in decoded)


# --- typed access spot checks ----------------------------------------------------------------

def _events(case, sender, kind):
    for entry in read_transcript(case):
        if entry["from"] != sender:
            continue
        for event in p.decode_message(entry["msg"], sender=sender).events:
            if isinstance(event, kind):
                yield event


def test_job_killed_nested_progress():
    killed = list(_events("killer-e128-semantics", "batsim", p.JobKilled))
    assert killed
    nested = [(job_id, prog) for e in killed for job_id, prog in e.job_progress.items()
              if prog.current_task is not None]
    assert nested, "killer-e128-semantics kills a composed job: its progress nests the running task"
    job_id, prog = nested[0]
    assert isinstance(prog, p.JobProgress)
    assert isinstance(prog.profile_name, str) and prog.profile_name
    assert isinstance(prog.current_task_index, int) and prog.current_task_index >= 0
    assert isinstance(prog.current_task, p.JobProgress)
    assert isinstance(prog.current_task.profile_name, str)
    # every progress entry belongs to a killed job; leaf progress is a fraction
    for e in killed:
        assert set(e.job_progress) <= set(e.job_ids)
        for prog in e.job_progress.values():
            while prog.current_task is not None:
                prog = prog.current_task
            assert prog.progress is None or 0.0 <= prog.progress <= 1.0


def test_killed_job_completes_before_job_killed():
    seen_completed = {}
    for entry in read_transcript("killer-e128-semantics"):
        if entry["from"] != "batsim":
            continue
        for e in p.decode_message(entry["msg"], sender="batsim").events:
            if isinstance(e, p.JobCompleted):
                seen_completed[e.job_id] = e.job_state
            elif isinstance(e, p.JobKilled):
                for job_id in e.job_progress:
                    assert seen_completed.get(job_id) == "COMPLETED_KILLED"


def test_notify_machine_unavailable_resources():
    notes = list(_events("pybatsim_fillerevents-e128-events", "batsim", p.Notify))
    unavailable = [n for n in notes if n.kind == "event_machine_unavailable"]
    available = [n for n in notes if n.kind == "event_machine_available"]
    assert unavailable and available
    for n in unavailable + available:
        assert isinstance(n.resources, ProcSet) and len(n.resources) > 0
        assert n.extra == {}
    assert any(n.kind == "no_more_static_job_to_submit" and n.resources is None for n in notes)


def test_answer_consumed_energy():
    answers = list(_events("energy_watcher-e128-delays-E", "batsim", p.Answer))
    assert answers
    energies = [a.consumed_energy for a in answers]
    assert all(isinstance(x, float) and x >= 0 for x in energies)
    assert energies == sorted(energies), "consumed energy only grows"
    assert energies[-1] > 0
    queries = list(_events("energy_watcher-e128-delays-E", "scheduler", p.Query))
    assert queries and all("consumed_energy" in q.requests for q in queries)


def test_simulation_begins_resources():
    begins = next(_events("fcfs_fast-e128-hpc250", "batsim", p.SimulationBegins))
    assert begins.nb_compute_resources == 128 == len(begins.compute_resources)
    host = begins.compute_resources[5]
    assert isinstance(host, p.ResourceInfo)
    assert [r.id for r in begins.compute_resources] == list(range(128))
    assert len({r.name for r in begins.compute_resources}) == 128
    assert (host.id, host.state) == (5, "idle") and host.name.startswith("host")
    assert host.properties["sleep_pstates"] == "13:14:15"
    assert host.properties["wattage_off"] == "10"
    assert host.properties["wattage_per_state"].startswith("95.0:95.0:190.738")
    assert begins.config["dynamic-jobs-enabled"] is False
    assert begins.allow_compute_sharing is False


def test_job_submitted_and_completed_typed():
    sub = next(_events("fcfs_fast-e128-semantics-E", "batsim", p.JobSubmitted))
    assert isinstance(sub.job, p.JobDescription)
    assert sub.job.id == sub.job_id and sub.job.res >= 1
    comps = list(_events("fcfs_fast-e128-semantics-E", "batsim", p.JobCompleted))
    assert {c.job_state for c in comps} >= {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"}
    assert any(c.return_code != 0 for c in comps), "the semantics case has failing jobs (ret)"
    assert all(isinstance(c.alloc, ProcSet) and c.alloc for c in comps)
