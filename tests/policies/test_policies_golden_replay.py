"""Replaying Batsim's side of the golden recordings: our policies must reply exactly as batsched did.

Each request Batsim sent is fed to a Session and the reply compared, message by
message, with what batsched 1.4.0 answered (same decisions, same order, same
timestamps).  No batsched defect needed an exception on these cases.
"""
import json

import pytest

from batsched_py.protocol import decode_message
from batsched_py.scheduler import Session, available, create
from tests.helpers.golden import GOLDEN, read_transcript

CASES = {  # golden case -> our policy matching the batsched algorithm that produced it
    "fcfs_fast-e128-hpc250": "fcfs",
    "fcfs_fast-e128-samesubmit": "fcfs",
    "fcfs_fast-e128-semantics-E": "fcfs",
    "easy_bf-e128-hpc250": "easy",
    "easy_bf-e128-walltime": "easy",
    "conservative_bf-e128-hpc250s2": "conservative",
    "filler-e128-seqdelay": "filler",
}


def replay(case: str, policy: str, options=None) -> list[tuple[int, dict, dict]]:
    """(index, ours, theirs) for every reply that differs."""
    lines = read_transcript(case)
    session = Session(create(policy, options))
    diffs = []
    for i in range(0, len(lines) - 1, 2):
        request, reply = lines[i], lines[i + 1]
        assert request["from"] == "batsim" and reply["from"] == "scheduler"
        ours = session.handle(decode_message(request["msg"], "batsim")).to_data()
        if ours != reply["msg"]:
            diffs.append((i // 2, ours, reply["msg"]))
    return diffs


@pytest.mark.parametrize("case,policy", sorted(CASES.items()))
def test_same_decisions_as_batsched(case, policy):
    if not (GOLDEN / case).exists():
        pytest.skip(f"golden case {case} is not mirrored")
    diffs = replay(case, policy)
    assert not diffs, f"{len(diffs)} replies differ; first: ours={diffs[0][1]} batsched={diffs[0][2]}"


def agent_cases() -> list[str]:
    """Cases of our agent schedulers against real Batsim (scripts/record_agent_goldens.py): their
    meta.json holds the scheduler's options."""
    return sorted(m.parent.name for m in GOLDEN.glob("*/meta.json") if "scheduler_options" in json.loads(m.read_text()))


@pytest.mark.parametrize("case", agent_cases())
def test_agents_reply_as_they_did_to_real_batsim(case, monkeypatch):
    """The agent schedulers (seeded, learning online or loading a model) are deterministic: fed real
    Batsim's requests, each gives the recorded reply."""
    meta = json.loads((GOLDEN / case / "meta.json").read_text())
    command = meta["scheduler_command"]
    monkeypatch.chdir(GOLDEN / case)        # the options name files under inputs/
    diffs = replay(case, command[command.index("--scheduler") + 1], meta["scheduler_options"])
    assert not diffs, f"{len(diffs)} replies differ; first (exchange {diffs[0][0]}): ours={diffs[0][1]} recorded={diffs[0][2]}"


def test_policies_are_registered_with_a_description():
    names = available()
    for name in ("fcfs", "easy", "conservative", "filler", "saf", "sjf", "timeout", "oracle"):
        assert name in names and names[name].description
