"""The scheduler API: the view follows events, decision helpers refuse what Batsim would refuse."""
from __future__ import annotations

import json

import pytest
from procset import ProcSet

from batsched_py import protocol as p
from batsched_py.scheduler import DecisionError, HostState, JobStatus, Scheduler, Session, SessionError
from helpers.messages import (begins, completed, decoded, ends, killed, notify, state_changed, submitted)


class Recorder(Scheduler):
    """Records callbacks; ``plan(self)`` (set by the test) runs in schedule()."""
    description = "test recorder"

    def __init__(self, options=None):
        super().__init__(options)
        self.calls = []
        self.plan = None

    def on_simulation_begins(self, event): self.calls.append(("begins", len(event.compute_resources)))
    def on_job_submitted(self, job): self.calls.append(("submitted", job.id))
    def on_job_completed(self, job): self.calls.append(("completed", job.id, job.final_state))
    def on_jobs_killed(self, jobs, event): self.calls.append(("killed", [j.id for j in jobs]))
    def on_resource_state_changed(self, hosts, pstate): self.calls.append(("pstate", str(hosts), pstate))
    def on_machine_unavailable(self, hosts): self.calls.append(("unavailable", str(hosts)))
    def on_machine_available(self, hosts): self.calls.append(("available", str(hosts)))
    def on_no_more_static_jobs(self): self.calls.append(("no_more_jobs",))
    def on_requested_call(self): self.calls.append(("call", self.now))

    def schedule(self):
        self.calls.append(("schedule", self.now))
        if self.plan is not None:
            plan, self.plan = self.plan, None
            plan(self)


def started(nb_hosts=8, energy=False):
    s = Recorder()
    session = Session(s)
    session.handle(decoded(0, begins(nb_hosts, energy)))
    return s, session


def run(session, now, *events, plan=None):
    session.scheduler.plan = plan
    reply = session.handle(decoded(now, *events))
    # every reply is itself a valid scheduler message
    p.decode_message(p.encode_message(reply), sender="scheduler")
    return reply


# --- the view follows the events ---------------------------------------------------------------

def test_view_follows_job_life():
    s, session = started(8)
    assert s.platform.free == ProcSet((0, 7)) and len(s.platform) == 8
    run(session, 1, submitted("w!1", 3, 1), submitted("w!2", 2, 1))
    assert list(s.jobs.queue) == ["w!1", "w!2"] and s.jobs["w!1"].status is JobStatus.QUEUED
    reply = run(session, 2, plan=lambda s: s.execute("w!1", ProcSet((2, 4))))
    assert [e.TYPE for e in reply.events] == ["EXECUTE_JOB"] and reply.events[0].alloc == ProcSet((2, 4))
    job = s.jobs["w!1"]
    assert job.status is JobStatus.RUNNING and job.start_time == 2 and job.waiting_time == 1
    assert s.platform.free == ProcSet((0, 1), (5, 7))
    assert {h.id for h in s.platform if h.state is HostState.COMPUTING} == {2, 3, 4}
    assert list(s.jobs.running) == ["w!1"] and list(s.jobs.queue) == ["w!2"]
    run(session, 9, completed("w!1", "2-4", 9))
    assert s.platform.free == ProcSet((0, 7))
    assert job.status is JobStatus.COMPLETED and job.final_state == "COMPLETED_SUCCESSFULLY" and job.finish_time == 9
    assert "w!1" in s.jobs.finished and not s.jobs.running
    assert ("completed", "w!1", "COMPLETED_SUCCESSFULLY") in s.calls
    run(session, 10, notify("no_more_static_job_to_submit", 10))
    assert s.no_more_static_jobs
    reply = run(session, 11, ends(11))
    assert reply == p.Message(11.0, ()) and s.finished and session.ended
    with pytest.raises(SessionError, match="after SIMULATION_ENDS"):
        session.handle(decoded(12))


def test_schedule_runs_once_per_message_after_callbacks():
    s, session = started(4)
    s.calls.clear()
    run(session, 1, submitted("w!1", 1, 1), submitted("w!2", 1, 1))
    assert s.calls == [("submitted", "w!1"), ("submitted", "w!2"), ("schedule", 1.0)]


def test_killed_job_frees_its_hosts_exactly_once():
    """Batsim 4.2.1 sends JOB_COMPLETED(COMPLETED_KILLED) then JOB_KILLED; the second must free nothing
    (pybatsim frees on both, so a job started on those hosts in between loses them)."""
    s, session = started(4)
    run(session, 1, submitted("w!1", 4, 1), submitted("w!2", 4, 1), plan=lambda s: s.execute("w!1", ProcSet((0, 3))))
    reply = run(session, 2, plan=lambda s: s.kill("w!1"))
    assert [e.TYPE for e in reply.events] == ["KILL_JOB"] and s.jobs["w!1"].kill_requested
    # JOB_COMPLETED(killed) alone in a message: the policy reuses the hosts at once ...
    run(session, 3, completed("w!1", "0-3", 3, state="COMPLETED_KILLED"),
        plan=lambda s: s.execute("w!2", s.platform.free))
    assert s.jobs["w!2"].alloc == ProcSet((0, 3)) and s.platform.free == ProcSet()
    # ... and the JOB_KILLED that follows must not hand them out again.
    run(session, 3, killed(["w!1"], 3, {"w!1": {"profile_name": "p", "progress": 0.4}}))
    assert s.platform.free == ProcSet()
    assert all(s.platform[h].jobs == {"w!2"} for h in range(4))
    assert ("killed", ["w!1"]) in s.calls
    assert s.jobs["w!1"].final_state == "COMPLETED_KILLED"
    run(session, 9, completed("w!2", "0-3", 9))
    assert s.platform.free == ProcSet((0, 3))


def test_passing_the_live_free_set_is_safe():
    """Regression: execute(job, s.platform.free) once emptied the allocation it sent (in-place ``free -= hosts``)."""
    s, session = started(4, energy=True)
    reply = run(session, 1, submitted("w!1", 4, 1), plan=lambda s: s.execute("w!1", s.platform.free))
    assert str(reply.events[0].alloc) == "0-3" and s.jobs["w!1"].alloc == ProcSet((0, 3))
    assert s.platform.free == ProcSet()
    run(session, 2, completed("w!1", "0-3", 2))
    reply = run(session, 3, plan=lambda s: s.set_pstate(s.platform.free, 1))
    assert str(reply.events[0].resources) == "0-3"


def test_killed_job_completed_and_killed_in_one_message():
    s, session = started(4)
    run(session, 1, submitted("w!1", 2, 1), plan=lambda s: s.execute("w!1", [0, 1]))
    run(session, 2, plan=lambda s: s.kill(s.jobs["w!1"]))
    run(session, 3, completed("w!1", "0-1", 3, state="COMPLETED_KILLED"), killed(["w!1"], 3))
    assert s.platform.free == ProcSet((0, 3))
    assert [c[0] for c in s.calls[-3:]] == ["completed", "killed", "schedule"]


def test_machine_unavailability():
    s, session = started(4)
    run(session, 1, notify("event_machine_unavailable", 1, "1-2"))
    assert s.platform.free == ProcSet(0, 3) and s.platform[1].unavailable
    run(session, 2, submitted("w!1", 1, 2))
    with pytest.raises(DecisionError, match="not free .*unavailable"):
        s.execute("w!1", 1)
    run(session, 3, notify("event_machine_available", 3, "1-2"))
    assert s.platform.free == ProcSet((0, 3))
    assert ("unavailable", "1-2") in s.calls and ("available", "1-2") in s.calls


def test_pstate_changes_and_sleep():
    s, session = started(4, energy=True)
    assert s.platform.energy_aware
    reply = run(session, 1, plan=lambda s: s.switch_off([0, 1]))
    assert [(e.TYPE, str(e.resources), e.state) for e in reply.events] == [("SET_RESOURCE_STATE", "0-1", "3")]
    assert s.platform[0].state is HostState.SWITCHING_OFF and s.platform.free == ProcSet((2, 3))
    run(session, 5, state_changed("0-1", 3, 5))
    assert s.platform[0].state is HostState.SLEEPING and s.platform.sleeping == ProcSet((0, 1))
    run(session, 6, plan=lambda s: s.switch_on(0))
    assert s.platform[0].state is HostState.SWITCHING_ON
    run(session, 8, state_changed("0", 0, 8))
    assert s.platform[0].state is HostState.IDLE and s.platform.free == ProcSet(0, 2, 3)
    assert ("pstate", "0", 0) in s.calls


def test_requested_call_and_answer():
    s, session = started(2, energy=True)
    reply = run(session, 1, plan=lambda s: (s.call_me_later(5), s.query_consumed_energy()))
    assert [e.TYPE for e in reply.events] == ["CALL_ME_LATER", "QUERY"] and reply.events[0].at == 5
    run(session, 5, {"timestamp": 5, "type": "REQUESTED_CALL", "data": {}},
        {"timestamp": 5, "type": "ANSWER", "data": {"consumed_energy": 123.5}})
    assert ("call", 5.0) in s.calls and s.platform.consumed_energy == 123.5


# --- decisions are checked -----------------------------------------------------------------

@pytest.fixture
def busy():
    """8 hosts with energy: w!run on 0-1, 2 asleep, 3 switching off, 4 unavailable; w!a (1 host), w!b (2) queued."""
    s, session = started(8, energy=True)
    run(session, 1, submitted("w!run", 2, 1), submitted("w!a", 1, 1), submitted("w!b", 2, 1),
        plan=lambda s: (s.execute("w!run", [0, 1]), s.set_pstate(2, 3)))
    run(session, 2, state_changed("2", 3, 2), notify("event_machine_unavailable", 2, "4"),
        plan=lambda s: s.set_pstate(3, 3))
    return s, session


@pytest.mark.parametrize("decide, words", [
    (lambda s: s.execute("w!a", 0), "not free (computing)"),
    (lambda s: s.execute("w!a", 2), "not free (sleeping)"),
    (lambda s: s.execute("w!a", 3), "not free (switching_off)"),
    (lambda s: s.execute("w!a", 4), "not free (unavailable)"),
    (lambda s: s.execute("w!a", 99), "do not exist"),
    (lambda s: s.execute("w!a", [5, 6]), "requests 1 hosts, allocation has 2"),
    (lambda s: s.execute("w!b", 5), "requests 2 hosts, allocation has 1"),
    (lambda s: s.execute("w!a", []), "empty allocation"),
    (lambda s: s.execute("w!nope", 5), "no such job"),
    (lambda s: s.execute("w!run", [5, 6]), "job is running"),
    (lambda s: s.reject("w!run"), "only a queued job"),
    (lambda s: s.reject("w!nope"), "no such job"),
    (lambda s: s.kill([["w!run"]]), "KILL_JOB ['w!run'] at t=2.0: no such job"),
    (lambda s: s.kill("w!a"), "only a running job"),
    (lambda s: s.kill([]), "at least one job"),
    (lambda s: s.call_me_later(2), "strictly after now"),
    (lambda s: s.call_me_later(1), "strictly after"),
    (lambda s: s.set_pstate(0, 1), "computing job"),
    (lambda s: s.set_pstate(3, 0), "still switching"),
    (lambda s: s.set_pstate(5, 9), "no pstate 9"),
    (lambda s: s.set_pstate(5, 4), "no pstate 4"),   # a virtual (switching) pstate
    (lambda s: s.set_pstate(99, 0), "do not exist"),
    (lambda s: s.set_pstate([], 0), "empty resource set"),
    (lambda s: s.register_job("nobang", 1, "p"), "WORKLOAD!NAME"),
    (lambda s: s.register_job("w!a", 1, "p"), "already exists"),
    (lambda s: s.change_job_state("w!a", "DONE"), "unknown state"),
    (lambda s: s.advance_to(1.5), "cannot move decision time back"),
    # values of the wrong kind are named too (these were TypeErrors deep inside, or sent as they were)
    (lambda s: s.advance_to(float("nan")), "nan is not a finite time"),
    (lambda s: s.advance_to(float("inf")), "inf is not a finite time"),
    (lambda s: s.call_me_later(float("inf")), "inf is not a finite time"),
    (lambda s: s.call_me_later("5"), "'5' is not a finite time"),
    (lambda s: s.call_me_later(10 ** 400), "is not a finite time"),     # (an OverflowError from math.isfinite)
    (lambda s: s.execute("w!a", "5"), "hosts '5' are not host ids"),
    (lambda s: s.execute("w!a", -1), "hosts -1 are not host ids"),
    (lambda s: s.execute("w!a", [5.5]), r"hosts [5.5] are not host ids"),
    (lambda s: s.execute("w!a", None), "hosts None are not host ids"),
    (lambda s: s.execute("w!a", 5, mapping=5), "mapping 5 is not an object"),
    (lambda s: s.set_pstate("5", 0), "hosts '5' are not host ids"),
    (lambda s: s.set_pstate(5, "1"), "pstate '1' is not a pstate number"),
    (lambda s: s.set_pstate(5, 1.5), "pstate 1.5 is not a pstate number"),
    (lambda s: s.set_pstate(5, True), "pstate True is not a pstate number"),
    (lambda s: s.switch_off(99), "do not exist"),
    (lambda s: s.switch_on(99), "do not exist"),
    (lambda s: s.register_job("w!z", 0, "p"), "res 0 is not a positive number of hosts"),
    (lambda s: s.register_job("w!z", "2", "p"), "res '2' is not a positive number of hosts"),
    (lambda s: s.set_metadata("w!a", 5), "metadata 5 is not a string"),
    (lambda s: s.register_job(5, 1, "p"), "REGISTER_JOB 5 at t=2.0: job id must be WORKLOAD!NAME"),
    (lambda s: s.register_job("w!z", 1, None), "profile None is not a profile name"),
    (lambda s: s.register_job("w!z", 1, "p", float("nan")), "walltime nan is not a positive finite number"),
    (lambda s: s.register_job("w!z", 1, "p", 0), "walltime 0 is not a positive finite number"),
    (lambda s: s.register_profile("w", "p", 5), "REGISTER_PROFILE w!p at t=2.0: needs workload and profile names"),
])
def test_decisions_refused(busy, decide, words):
    s, session = busy
    assert s.now == 2
    before = (ProcSet(s.platform.free), list(s.jobs.queue), list(s.jobs.running))
    with pytest.raises(DecisionError) as info:
        decide(s)
    assert words in str(info.value), str(info.value)
    assert "\n" not in str(info.value)
    assert "at t=2" in str(info.value), str(info.value)    # the simulated time of the decision
    # a refused decision changes nothing and sends nothing
    assert (s.platform.free, list(s.jobs.queue), list(s.jobs.running)) == before
    assert s.take_decisions() == []


def test_executing_twice_refused(busy):
    s, _ = busy
    s.execute("w!a", 5)
    with pytest.raises(DecisionError, match="job is running"):
        s.execute("w!a", 6)
    assert [e.TYPE for e in s.take_decisions()] == ["EXECUTE_JOB"]


def test_decision_error_inside_serve_path_propagates(busy):
    s, session = busy
    with pytest.raises(DecisionError, match="EXECUTE_JOB w!a"):
        run(session, 3, plan=lambda s: s.execute("w!a", 0))


def test_reply_now_covers_every_decision_time(busy):
    s, session = busy

    def plan(s):
        s.execute("w!a", 5)
        s.advance_to(3.5)
        s.execute("w!b", [6, 7])
        s.advance_to(4)
        s.call_me_later(10)

    reply = run(session, 3, plan=plan)
    stamps = [e.timestamp for e in reply.events]
    assert stamps == [3.0, 3.5, 4.0] and reply.now == 4.0
    assert all(t <= reply.now for t in stamps)
    assert s.jobs["w!b"].start_time == 3.5


def test_advance_to_moves_decisions_forward(busy):
    s, session = busy
    reply = run(session, 3, plan=lambda s: (s.advance_to(7.5), s.execute("w!a", 5)))
    assert reply.now == 7.5 and reply.events[0].timestamp == 7.5 and s.jobs["w!a"].start_time == 7.5
    reply = run(session, 8, plan=lambda s: s.call_me_later(8.5))
    assert reply.now == 8 and reply.events[0].at == 8.5
    assert json.loads(p.encode_message(reply))["now"] == 8


def test_session_sequencing_errors():
    session = Session(Recorder())
    with pytest.raises(SessionError, match="first event must be SIMULATION_BEGINS"):
        session.handle(decoded(0, submitted("w!1", 1, 0)))
    s, session = started(2)
    with pytest.raises(SessionError, match="twice"):
        session.handle(decoded(1, begins(2, t=1)))
    s, session = started(2)
    run(session, 5)
    with pytest.raises(SessionError, match="back in time"):
        session.handle(decoded(4))
    s, session = started(2)
    with pytest.raises(SessionError, match="never executed"):
        session.handle(decoded(1, completed("w!1", "0", 1)))
    s, session = started(2)
    run(session, 1, submitted("w!1", 1, 1))
    with pytest.raises(SessionError, match="submitted twice"):
        session.handle(decoded(2, submitted("w!1", 1, 2)))


def test_empty_message_gets_empty_reply():
    s, session = started(2)
    assert run(session, 3) == p.Message(3.0, ())


def test_procset_of_matches_procset():
    import random
    from batsched_py.scheduler.view import procset_of
    rng = random.Random(3)
    for _ in range(200):
        ids = [rng.randrange(40) for _ in range(rng.randrange(30))]
        assert procset_of(ids) == ProcSet(*ids)
    assert procset_of(range(64)) == ProcSet((0, 63)) and procset_of([]) == ProcSet()


def test_host_masks_match_procsets():
    import random
    from batsched_py.scheduler.view import bits_of, lowest_bits, mask_of, procset_of_mask
    rng = random.Random(5)
    for _ in range(300):
        ids = sorted({rng.randrange(200) for _ in range(rng.randrange(60))})
        if rng.random() < 0.3:                       # long runs too
            lo = rng.randrange(150)
            ids = sorted(set(ids) | set(range(lo, lo + rng.randrange(50))))
        m = mask_of(ids)
        assert m == mask_of(ProcSet(*ids)) and bits_of(m) == ids
        assert procset_of_mask(m) == ProcSet(*ids) and str(procset_of_mask(m)) == str(ProcSet(*ids))
        n = rng.randrange(len(ids) + 2)
        assert bits_of(lowest_bits(m, n)) == ids[:n]
    assert mask_of(3) == 8 and procset_of_mask(0) == ProcSet()


def test_view_state_and_jobs_follow_allocations():
    s, session = started(8)
    run(session, 1, submitted("w!1", 3, 1), submitted("w!2", 2, 1),
        plan=lambda s: (s.execute("w!1", [0, 1, 2]), s.execute("w!2", [5, 6])))
    pf = s.platform
    assert [r.state for r in pf] == [HostState.COMPUTING] * 3 + [HostState.IDLE] * 2 \
        + [HostState.COMPUTING] * 2 + [HostState.IDLE]
    assert pf[1].jobs == {"w!1"} and pf[6].jobs == {"w!2"} and pf[3].jobs == set()
    assert pf.hosts_in(HostState.COMPUTING) == ProcSet((0, 2), (5, 6)) and pf.nb_free == 3
    free = pf.free
    run(session, 2, completed("w!1", "0-2", 2))
    assert free == ProcSet((3, 4), 7), "a ProcSet handed out earlier is never modified"
    assert pf.free == ProcSet((0, 4), 7) and pf[1].jobs == set() and pf[1].state is HostState.IDLE
    assert pf.mask_in(HostState.IDLE) == pf.free_mask == 0b10011111



def test_hosts_shared_by_jobs_stay_computing_until_their_last_job_leaves():
    """Platform.allocate() lets a policy model shared hosts (execute() never shares): a host is
    free again only when every job on it released it, wholly or in part."""
    s, _ = started(4)
    pf = s.platform
    pf.allocate(ProcSet((0, 1)), "w!1")
    pf.allocate(ProcSet((1, 2)), "w!2")           # host 1 now runs both
    assert pf[1].jobs == {"w!1", "w!2"} and pf.free == ProcSet(3)
    pf.release_job("w!1")
    assert pf[0].state is HostState.IDLE and pf[1].state is HostState.COMPUTING and pf.free == ProcSet(0, 3)
    pf.release(ProcSet(2), "w!2")                 # part of a job's hosts
    assert pf[2].state is HostState.IDLE and pf[1].jobs == {"w!2"} and pf.free == ProcSet(0, (2, 3))
    pf.release_job("w!2")
    assert pf.free == ProcSet((0, 3)) and pf.hosts_in(HostState.COMPUTING) == ProcSet()
    pf.release_job("w!2")                         # (nothing left: no effect)
    assert pf.free == ProcSet((0, 3))
    assert "Resource(id=1," in repr(pf[1]) and "jobs=set()" in repr(pf[1])

# --- the remaining decisions and Batsim's QUERY -------------------------------------------------

def test_registration_metadata_and_state_decisions():
    s, session = started(4)
    run(session, 1, submitted("w!a", 1, 1))

    def plan(s):
        s.register_profile("dyn", "p1", {"type": "delay", "delay": 5})
        s.register_job("dyn!1", 2, "p1", walltime=60, custom="x")
        s.notify_registration_finished()
        s.set_metadata("w!a", "tag")
        s.change_job_state("w!a", "COMPLETED_KILLED", kill_reason="test")

    reply = run(session, 2, plan=plan)
    assert [e.TYPE for e in reply.events] == ["REGISTER_PROFILE", "REGISTER_JOB", "NOTIFY", "SET_JOB_METADATA",
                                              "CHANGE_JOB_STATE"]
    data = json.loads(p.encode_message(reply))["events"]
    assert data[0]["data"] == {"workload_name": "dyn", "profile_name": "p1",
                               "profile": {"type": "delay", "delay": 5}}
    assert data[1]["data"] == {"job_id": "dyn!1", "job": {"id": "dyn!1", "subtime": 2.0, "res": 2,
                                                           "profile": "p1", "walltime": 60, "custom": "x"}}
    assert data[2]["data"] == {"type": "registration_finished"}
    assert data[3]["data"] == {"job_id": "w!a", "metadata": "tag"}
    assert data[4]["data"] == {"job_id": "w!a", "job_state": "COMPLETED_KILLED", "kill_reason": "test"}
    assert s.jobs["w!a"].metadata == "tag"
    reply = run(session, 3, plan=lambda s: s.notify_continue_registration())
    assert [(e.TYPE, e.kind) for e in reply.events] == [("NOTIFY", "continue_registration")]


def test_switch_on_into_a_chosen_pstate():
    s, session = started(4, energy=True)
    run(session, 1, plan=lambda s: s.switch_off(0))
    run(session, 5, state_changed("0", 3, 5))
    reply = run(session, 6, plan=lambda s: s.switch_on(0, pstate=1))
    assert [(e.TYPE, str(e.resources), e.state) for e in reply.events] == [("SET_RESOURCE_STATE", "0", "1")]


class Estimator(Recorder):
    def estimate_waiting_time(self, job):
        return 10.0 * job.res


def query(requests: dict, t: float = 1) -> dict:
    return {"timestamp": t, "type": "QUERY", "data": {"requests": requests}}


def test_batsim_asks_for_a_waiting_time_estimate():
    session = Session(Estimator())
    session.handle(decoded(0, begins(4)))
    reply = session.handle(decoded(1, query({"estimate_waiting_time": {"job_id": "w!9",
                                                                        "job": {"res": 3, "walltime": 50}}})))
    assert [e.TYPE for e in reply.events] == ["ANSWER"]
    assert reply.events[0].answers == {"estimate_waiting_time": {"job_id": "w!9", "estimated_waiting_time": 30.0}}


@pytest.mark.parametrize("estimate", [float("nan"), float("inf"), "soon", None, True, 10 ** 400])
def test_an_estimate_that_is_no_time_is_named(estimate):
    """What estimate_waiting_time() returns goes to Batsim: anything but a finite number was sent as it
    was ("soon", null) or failed in the JSON encoder without naming the policy's method."""
    class Estimates(Scheduler):
        def estimate_waiting_time(self, job):
            return estimate

    session = Session(Estimates())
    session.handle(decoded(0, begins(4)))
    with pytest.raises(DecisionError, match=r"^estimate_waiting_time\(w!9\) at t=1.0: returned .* not a finite number"):
        session.handle(decoded(1, query({"estimate_waiting_time": {"job_id": "w!9", "job": {"res": 3}}})))


@pytest.mark.parametrize("requests, error, words", [
    ({"estimate_waiting_time": {"job": {"res": 1}}}, p.ProtocolError, "needs a string job_id and a job object"),
    ({"estimate_waiting_time": {"job_id": "w!1", "job": 5}}, p.ProtocolError, "needs a string job_id"),
    ({"estimate_waiting_time": {"job_id": "w!1", "job": {"res": "many"}}}, p.ProtocolError,
     "QUERY.requests.estimate_waiting_time.job.res"),
    ({"what_time_is_it": {}}, SessionError, "unknown query 'what_time_is_it'"),
])
def test_malformed_queries_are_named(requests, error, words):
    session = Session(Estimator())
    session.handle(decoded(0, begins(4)))
    with pytest.raises(error) as info:
        session.handle(decoded(1, query(requests)))
    assert words in str(info.value)


def test_queries_are_answered_after_the_message_decisions():
    """As batsched does: the estimate sees the plan this message's decisions leave."""
    class Seer(Recorder):
        def estimate_waiting_time(self, job):
            return float(len(self.jobs.running))
    session = Session(Seer())
    session.handle(decoded(0, begins(4)))
    session.scheduler.plan = lambda s: s.execute("w!1", ProcSet((0, 1)))
    reply = session.handle(decoded(1, query({"estimate_waiting_time": {"job_id": "w!9", "job": {"res": 1}}}),
                                   submitted("w!1", 2, 1)))
    assert [e.TYPE for e in reply.events] == ["EXECUTE_JOB", "ANSWER"]
    assert reply.events[1].answers["estimate_waiting_time"]["estimated_waiting_time"] == 1.0
