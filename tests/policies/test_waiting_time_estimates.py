"""Batsim's estimate_waiting_time QUERY, answered by conservative backfilling from its plan."""
import pytest

from batsched_py.scheduler import Session, create
from helpers.messages import begins, decoded, event, submitted


def query(job_id: str, t: float, **job) -> dict:
    return event("QUERY", {"requests": {"estimate_waiting_time": {"job_id": job_id, "job": job}}}, t)


def estimates(reply) -> list:
    return [(e.answers["estimate_waiting_time"]["job_id"], e.answers["estimate_waiting_time"]["estimated_waiting_time"])
            for e in reply.events if e.TYPE == "ANSWER"]


def started(policy: str, *jobs) -> Session:
    session = Session(create(policy))
    session.handle(decoded(0, begins(4)))
    session.handle(decoded(0, *jobs))
    return session


def test_conservative_estimates_from_its_reservations():
    # w!a runs on hosts 0-1 until 100; w!b (all 4 hosts) is reserved for [100, 150).
    session = started("conservative", submitted("w!a", 2, 0, walltime=100), submitted("w!b", 4, 0, walltime=50))
    reply = session.handle(decoded(10, query("q1", 10, res=2, walltime=80), query("q2", 10, res=2, walltime=95),
                                   query("q3", 10, res=4, walltime=10), query("q4", 10, res=1)))
    assert estimates(reply) == [
        ("q1", 0.0),        # fits on hosts 2-3 before w!b's reservation
        ("q2", 140.0),      # would still run at 100: after w!b, at 150
        ("q3", 140.0),      # needs every host: after w!b
        ("q4", -1.0),       # no walltime: conservative backfilling cannot place it
    ]
    assert [e.timestamp for e in reply.events] == [10.0] * 4


def test_the_estimate_sees_the_decisions_of_its_message():
    session = started("conservative")
    reply = session.handle(decoded(5, submitted("w!a", 4, 5, walltime=20), query("q", 5, res=1, walltime=1)))
    assert [e.TYPE for e in reply.events] == ["EXECUTE_JOB", "ANSWER"]
    assert estimates(reply) == [("q", 20.0)]


def test_a_job_larger_than_the_platform_gets_no_estimate():
    session = started("conservative")
    assert estimates(session.handle(decoded(1, query("q", 1, res=5, walltime=10)))) == [("q", -1.0)]


@pytest.mark.parametrize("policy", ["easy", "fcfs"])
def test_policies_without_a_full_plan_cannot_tell(policy):
    session = started(policy, submitted("w!a", 4, 0, walltime=100))
    assert estimates(session.handle(decoded(1, query("q", 1, res=1, walltime=10)))) == [("q", -1.0)]
