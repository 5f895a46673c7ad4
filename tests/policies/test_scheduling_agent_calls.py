"""The scheduling agent decides every ``dt`` time units: one chain of CALL_ME_LATERs, not one per event."""
import json

from batsched_py.emulator import simulate
from batsched_py.scheduler import create
from helpers import GOLDEN

PLATFORM = GOLDEN / "fcfs_fast-e128-semantics-E" / "inputs" / "energy_platform_homogeneous_no_net_128.xml"


def test_decisions_every_dt_do_not_multiply_with_events(tmp_path):
    # 12 jobs of the whole platform, 100 s each, submitted at distinct times: the queue is never empty
    # for about 1200 s.  Each submission used to start its own reminder chain (at now + dt, again and
    # again while jobs wait): 12 chains, about 12 messages per time unit instead of one.
    jobs = [{"id": str(i), "subtime": 0.3 + 1.1 * i, "res": 128, "profile": "d", "walltime": 200}
            for i in range(12)]
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 128, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 100}}}))
    result = simulate(PLATFORM, [workload], create("scheduling-agent", {"policy": "FF", "dt": 1.0, "cores_per_node": 16}), energy=True)
    assert all(j.final_state == "COMPLETED_SUCCESSFULLY" for j in result.jobs.values())
    assert result.end_time > 1200
    # one decision per dt over the simulation, plus the messages of the events (submissions,
    # completions, switches): well under twice the number of time units
    assert result.messages < 2 * result.end_time, (result.messages, result.end_time)
