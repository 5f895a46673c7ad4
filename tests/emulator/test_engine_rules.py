"""Bad decisions end the run like Batsim aborts: EmulatorError naming the decision and the rule,
and the outputs written so far are flushed and marked incomplete."""
import csv
import json

import pytest
from procset import ProcSet

from batsched_py import protocol as p
from batsched_py.emulator import EmulatorError, run_engine
from batsched_py.emulator.options import EngineOptions

from golden_replay import GOLDEN

PLATFORM = GOLDEN / "killer-e128-semantics" / "inputs" / "energy_platform_homogeneous_no_net_128.xml"


def workload(tmp_path, jobs, profiles=None):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs,
                                "profiles": profiles or {"d": {"type": "delay", "delay": 10}}}))
    return path


def scripted(*replies):
    """exchange answering the i-th request with replies[i](request) (default: empty reply)."""
    calls = []

    def exchange(req):
        i = len(calls)
        calls.append(req)
        make = replies[i] if i < len(replies) else None
        events = make(req) if make else ()
        return p.Message(max([req.now, *(e.timestamp for e in events)]), tuple(events))
    exchange.calls = calls
    return exchange


def run(tmp_path, exchange, jobs=None, energy=False, **kw):
    jobs = jobs or [{"id": "1", "subtime": 0, "res": 2, "profile": "d"}]
    return run_engine(PLATFORM, [workload(tmp_path, jobs)], exchange, output_prefix=tmp_path / "out",
                      energy=energy, **kw)


def fails(tmp_path, exchange, *words, **kw):
    with pytest.raises(EmulatorError) as info:
        run(tmp_path, exchange, **kw)
    msg = str(info.value)
    for w in words:
        assert w in msg, msg
    assert (tmp_path / "out_INCOMPLETE").exists()
    assert (tmp_path / "out_jobs.csv").exists()
    return msg


def test_good_run_completes(tmp_path):
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1)))])
    res = run(tmp_path, ex)
    assert res.complete and res.jobs["w0!1"].final_state == "COMPLETED_SUCCESSFULLY"
    assert res.jobs["w0!1"].finish_time == 10.0
    assert not (tmp_path / "out_INCOMPLETE").exists()


def test_busy_host(tmp_path):
    jobs = [{"id": "1", "subtime": 0, "res": 2, "profile": "d"}, {"id": "2", "subtime": 0, "res": 2, "profile": "d"}]
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1))),
                                   p.ExecuteJob(r.now, "w0!2", ProcSet((1, 2)))])
    fails(tmp_path, ex, "message 2", "EXECUTE_JOB", "Job 'w0!2': Invalid allocation ('1-2'): machine 1 "
          "(hostname='host1') is currently computing jobs (these ones: {w0!1})", jobs=jobs)


def test_wrong_number_of_hosts(tmp_path):
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet(0))])
    fails(tmp_path, ex, "EXECUTE_JOB", "The job requires 2 machines but only 1 were given")


def test_unknown_job(tmp_path):
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!nope", ProcSet((0, 1)))])
    fails(tmp_path, ex, "EXECUTE_JOB", "Cannot get job 'w0!nope': it does not exist")


def test_job_started_twice(tmp_path):
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1))),
                                   p.ExecuteJob(r.now, "w0!1", ProcSet((2, 3)))])
    fails(tmp_path, ex, "EXECUTE_JOB", "Cannot execute job 'w0!1': its state (RUNNING) is not")


def test_reject_running_job(tmp_path):
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1))), p.RejectJob(r.now, "w0!1")])
    fails(tmp_path, ex, "REJECT_JOB", "cannot be rejected")


def test_kill_not_started(tmp_path):
    ex = scripted(None, lambda r: [p.KillJob(r.now, ("w0!1",))])
    fails(tmp_path, ex, "KILL_JOB", "Invalid KILL_JOB: job_id 'w0!1' refers to a job not being executed")


def test_call_me_later_not_in_future(tmp_path):
    ex = scripted(None, lambda r: [p.CallMeLater(r.now, r.now)])
    fails(tmp_path, ex, "CALL_ME_LATER", "You asked to be awaken in the past!")


def test_reply_going_back_in_time(tmp_path):
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1)))],
                  lambda r: [])

    def back(req):
        if req.now > 0:
            return p.Message(req.now - 1, ())
        return ex(req)
    fails(tmp_path, back, "before the request", jobs=[{"id": "1", "subtime": 5, "res": 2, "profile": "d"}])


def test_events_out_of_order(tmp_path):
    def bad(req):
        return p.Message(req.now + 2, (p.CallMeLater(req.now + 2, 50.0), p.CallMeLater(req.now + 1, 60.0)))
    fails(tmp_path, bad, "ascending")


def test_pstate_that_does_not_exist(tmp_path):
    ex = scripted(lambda r: [p.SetResourceState(r.now, ProcSet(0), "99")])
    fails(tmp_path, ex, "SET_RESOURCE_STATE", "machine 0 ('host0') has no pstate 99", energy=True)


def test_state_change_on_computing_host(tmp_path):
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1))),
                                   p.SetResourceState(r.now, ProcSet(0), "13")])
    fails(tmp_path, ex, "SET_RESOURCE_STATE", "jobs are running on machine 0", energy=True)


def test_execute_on_sleeping_host(tmp_path):
    ex = scripted(lambda r: [p.SetResourceState(r.now, ProcSet((0, 1)), "13")], None,
                  lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1)))])
    fails(tmp_path, ex, "EXECUTE_JOB", "machine 0 (hostname='host0') cannot compute jobs now (the machine is not "
          "computing nor idle, its state is 'sleeping')", energy=True,
          jobs=[{"id": "1", "subtime": 50, "res": 2, "profile": "d"}])


def test_state_change_without_energy(tmp_path):
    ex = scripted(lambda r: [p.SetResourceState(r.now, ProcSet(0), "1")])
    fails(tmp_path, ex, "SET_RESOURCE_STATE", "not been launched with energy support")


def test_scheduler_crash_still_marks_outputs(tmp_path):
    def crash(req):
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError):
        run(tmp_path, crash)
    assert "boom" in (tmp_path / "out_INCOMPLETE").read_text()


def test_kill_then_killed_with_progress(tmp_path):
    ex = scripted(None, lambda r: [p.ExecuteJob(0.0, "w0!1", ProcSet((0, 1))), p.KillJob(4.0, ("w0!1",))])
    res = run(tmp_path, ex)
    assert res.jobs["w0!1"].final_state == "COMPLETED_KILLED"
    # The submitter's bye follows its lone submission (sent after its SUBMITTER_HELLO and the
    # scheduler's first "ready"): NOTIFY no_more_static_job_to_submit comes with the kill.
    sent = ex.calls[2].events
    assert [e.TYPE for e in sent] == ["NOTIFY", "JOB_COMPLETED", "JOB_KILLED"]
    assert sent[1].return_code == -1 and sent[2].job_progress["w0!1"].progress == 0.4


def test_dynamic_registration_needs_flag(tmp_path):
    ex = scripted(lambda r: [p.RegisterProfile(r.now, "dyn", "x", {"type": "delay", "delay": 1})])
    fails(tmp_path, ex, "REGISTER_PROFILE", "--enable-dynamic-jobs")


def test_dynamic_registration_acknowledged(tmp_path):
    ex = scripted(lambda r: [p.RegisterProfile(r.now, "dyn", "x", {"type": "delay", "delay": 1}),
                             p.RegisterJob(r.now, "dyn!a", p.JobDescription("a", 1, "x", 0.0)),
                             p.Notify(r.now, "registration_finished")],
                  lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1))), p.ExecuteJob(r.now, "dyn!a", ProcSet(2))])
    res = run(tmp_path, ex, options=EngineOptions(dynamic_jobs=True, ack_dynamic_jobs=True))
    first = ex.calls[1].events
    assert any(e.TYPE == "JOB_SUBMITTED" and e.job_id == "dyn!a" for e in first)
    assert res.jobs["dyn!a"].final_state == "COMPLETED_SUCCESSFULLY"


def test_registered_job_with_unsupported_profile(tmp_path):
    ex = scripted(lambda r: [p.RegisterProfile(r.now, "dyn", "m", {"type": "smpi", "trace": "t.txt"}),
                             p.RegisterJob(r.now, "dyn!a", p.JobDescription("a", 1, "m", 0.0))])
    fails(tmp_path, ex, "'m'", "dyn!a", "SMPI", "real Batsim", options=EngineOptions(dynamic_jobs=True))


def test_unknown_external_events_forwarded_whole(tmp_path):
    """Batsim 4.2.1 forwards an unknown event as NOTIFY whose data is the event's JSON object from
    the file as is, its own "timestamp" and "type" included (Batsim's shared generic event file)."""
    events = tmp_path / "events.txt"
    events.write_text('{"type": "some_generic_event", "timestamp": 5, "x": [1, {"y": "z"}]}\n')
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1)))])
    run(tmp_path, ex, events=[events], options=EngineOptions(forward_unknown_events=True))
    notes = [e for m in ex.calls for e in m.events if e.TYPE == "NOTIFY" and e.kind == "some_generic_event"]
    assert len(notes) == 1 and notes[0].timestamp == 5.0
    assert notes[0].to_data() == {"type": "some_generic_event", "timestamp": 5, "x": [1, {"y": "z"}]}
    # without the flag Batsim drops it
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1)))])
    run(tmp_path, ex, events=[events])
    assert not [e for m in ex.calls for e in m.events if e.TYPE == "NOTIFY" and e.kind == "some_generic_event"]


def test_computation_ending_at_its_walltime_completes(tmp_path):
    # 1e9 flops at 100 Mf: the computation and the 10 s walltime end in the same SimGrid step;
    # SimGrid 3.32 answers the job's actor with the execution (scripts/simgrid_study/walltime_tie.cpp).
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 2, "profile": "c",
                                                       "walltime": 10}],
                                "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}))
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1)))])
    res = run_engine(PLATFORM, [path], ex)
    assert res.jobs["w0!1"].final_state == "COMPLETED_SUCCESSFULLY" and res.jobs["w0!1"].finish_time == 10.0


def _reuse_after_completion(profiles: dict, reused: str):
    """Registers dyn!a (profile "top") and runs it; in the reply to its JOB_COMPLETED, registers
    dyn!b with profile ``reused`` and runs it; then ends the registrations."""
    def exchange(req):
        events = []
        for e in req.events:
            if e.TYPE == "SIMULATION_BEGINS":
                events += [p.RegisterProfile(req.now, "dyn", name, data) for name, data in profiles.items()]
                events += [p.RegisterJob(req.now, "dyn!a", p.JobDescription("a", 1, "top", 0.0)),
                           p.ExecuteJob(req.now, "dyn!a", ProcSet(2))]
            elif e.TYPE == "JOB_SUBMITTED":
                events.append(p.ExecuteJob(req.now, e.job_id, ProcSet((0, 1))))
            elif e.TYPE == "JOB_COMPLETED" and e.job_id == "dyn!a":
                events += [p.RegisterJob(req.now, "dyn!b", p.JobDescription("b", 1, reused, req.now)),
                           p.ExecuteJob(req.now, "dyn!b", ProcSet(2))]
            elif e.TYPE == "JOB_COMPLETED" and e.job_id == "dyn!b":
                events.append(p.Notify(req.now, "registration_finished"))
        return p.Message(req.now, tuple(events))
    return exchange


COMPOSED = {"d": {"type": "delay", "delay": 1}, "top": {"type": "composed", "seq": ["d"]}}


@pytest.mark.parametrize("profiles,reused", [({"top": {"type": "delay", "delay": 1}}, "top"),
                                             (COMPOSED, "top"), (COMPOSED, "d")])
def test_profile_of_an_ended_job_is_deleted(tmp_path, profiles, reused):
    """Batsim 4.2.1 deletes an ended job's profile (a composed one with its sub-profiles) once
    the JOB_COMPLETED is sent; a REGISTER_JOB naming it then aborts Batsim."""
    fails(tmp_path, _reuse_after_completion(profiles, reused), "REGISTER_JOB", "'dyn!b'", f"profile {reused!r}",
          "no longer accessible", "--enable-profile-reuse", options=EngineOptions(dynamic_jobs=True))


@pytest.mark.parametrize("profiles,reused", [({"top": {"type": "delay", "delay": 1}}, "top"), (COMPOSED, "d")])
def test_profile_reuse_keeps_profiles(tmp_path, profiles, reused):
    res = run(tmp_path, _reuse_after_completion(profiles, reused),
              options=EngineOptions(dynamic_jobs=True, profile_reuse=True))
    assert res.complete and res.jobs["dyn!b"].final_state == "COMPLETED_SUCCESSFULLY"


def test_job_killed_as_it_starts_gets_batsims_epsilon_runtime(tmp_path):
    """Batsim writes a job that ran in no time with runtime 1e-5 ("Putting epsilon instead"):
    execution_time 0.000010, finish_time start + 1e-5, and the stretch and schedule figures
    that follow from them."""
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1))), p.KillJob(r.now, ("w0!1",))])
    res = run(tmp_path, ex, jobs=[{"id": "1", "subtime": 5, "res": 2, "profile": "d"}])
    assert res.jobs["w0!1"].final_state == "COMPLETED_KILLED"
    row = next(csv.DictReader(open(tmp_path / "out_jobs.csv")))
    assert (row["starting_time"], row["execution_time"], row["finish_time"], row["stretch"]) == \
        ("5.000000", "0.000010", "5.000010", "1.000000")
    schedule = next(csv.DictReader(open(tmp_path / "out_schedule.csv")))
    assert (schedule["makespan"], schedule["max_slowdown"]) == ("5.000010", "1.000000")


@pytest.mark.parametrize("mapping,words", [
    ({"0": 0, "2": 1}, "no resource associated to executor 1."),
    ({"0": 0, "1": 5}, "executor 1 should use the 5-th resource within the allocation, but there are only 2"),
    ({"0": "x"}, "all keys and values must be integers"),
    ({"0": 1, "1": 0}, "a custom mapping other than one executor per allocated machine is not modelled"),
])
def test_execute_job_mapping_checked_as_batsim_reads_it(tmp_path, mapping, words):
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1)), mapping=mapping)])
    fails(tmp_path, ex, "EXECUTE_JOB", words)


def test_identity_mapping_runs(tmp_path):
    ex = scripted(None, lambda r: [p.ExecuteJob(r.now, "w0!1", ProcSet((0, 1)), mapping={"0": 0, "1": "1"})])
    assert run(tmp_path, ex).jobs["w0!1"].final_state == "COMPLETED_SUCCESSFULLY"
