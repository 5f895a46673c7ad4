"""Build Batsim-side messages (as JSON values) for scheduler tests and the benchmark client."""
from __future__ import annotations

from typing import Any, Optional

from batsched_py import protocol as p

# Three compute pstates, one sleep pstate (3) with its switching-off (4) and switching-on (5) virtual pstates.
ENERGY_PROPERTIES = {"wattage_per_state": "95:95:190, 95:95:170, 95:95:150, 9.75:9.75:9.75, 100:100:100, 125:125:125",
                     "wattage_off": "10", "sleep_pstates": "3:4:5"}


def host(i: int, energy: bool = False, state: str = "idle") -> dict:
    return {"id": i, "name": f"host{i}", "state": state,
            "properties": dict(ENERGY_PROPERTIES) if energy else {}, "zone_properties": {}}


def begins(nb_hosts: int, energy: bool = False, t: float = 0.0) -> dict:
    return event("SIMULATION_BEGINS", {
        "nb_resources": nb_hosts, "nb_compute_resources": nb_hosts, "nb_storage_resources": 0,
        "allow_compute_sharing": False, "allow_storage_sharing": True, "config": {},
        "compute_resources": [host(i, energy) for i in range(nb_hosts)]}, t)


def event(kind: str, data: dict, t: float) -> dict:
    return {"timestamp": t, "type": kind, "data": data}


def submitted(job_id: str, res: int, t: float, walltime: Optional[float] = None, profile: str = "p") -> dict:
    job: dict[str, Any] = {"id": job_id, "subtime": t, "res": res, "profile": profile}
    if walltime is not None:
        job["walltime"] = walltime
    return event("JOB_SUBMITTED", {"job_id": job_id, "job": job}, t)


def completed(job_id: str, alloc: str, t: float, state: str = "COMPLETED_SUCCESSFULLY", rc: int = 0) -> dict:
    return event("JOB_COMPLETED", {"job_id": job_id, "job_state": state, "return_code": rc, "alloc": alloc}, t)


def killed(job_ids: list[str], t: float, progress: Optional[dict] = None) -> dict:
    return event("JOB_KILLED", {"job_ids": job_ids, "job_progress": progress or {}}, t)


def notify(kind: str, t: float, resources: Optional[str] = None) -> dict:
    data = {"type": kind}
    if resources is not None:
        data["resources"] = resources
    return event("NOTIFY", data, t)


def state_changed(resources: str, pstate: int, t: float) -> dict:
    return event("RESOURCE_STATE_CHANGED", {"resources": resources, "state": str(pstate)}, t)


def ends(t: float) -> dict:
    return event("SIMULATION_ENDS", {}, t)


def message(now: float, *events: dict) -> dict:
    return {"now": now, "events": list(events)}


def decoded(now: float, *events: dict) -> p.Message:
    return p.decode_message(message(now, *events), sender="batsim")
