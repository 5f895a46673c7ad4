"""Batsim's machine state machine on a volunteer pool, against a real Batsim 4.2.1 (skipped unless
``$BATSCHED_PY_BATSIM`` is one): PCs made unavailable while asleep or switching, and switched while
logged into.  volunteer-agent (bandit, rooms) on a generated pool that real Batsim finishes: the
emulator writes the same jobs, machine states, pstate changes and schedule figures, and the same
energy rows (but for the epower of same-time rows, docs/fidelity.md)."""
from __future__ import annotations

import csv
import json

import pytest

from batsched_py.platforms.volunteer import generate_pool, write_pool_platform
from batsched_py.runner import run_simulation
from batsched_py.workloads.volunteer import generate_jobs, generate_logins, write_events
from helpers.batsim import real_batsim

pytestmark = pytest.mark.skipif(real_batsim() is None, reason="$BATSCHED_PY_BATSIM is not a real Batsim binary")

WALL_CLOCK = ("simulation_time", "scheduling_time")


def _run(tmp_path, backend: str) -> str:
    pool = generate_pool(20, 3, seed=1)      # 20 PCs, 3 rooms, 2 days: a pool real Batsim finishes
    write_pool_platform(pool, tmp_path / "pool.xml")
    write_events(generate_logins(pool, 2, seed=1), tmp_path / "events.jsonl", seed=1)
    (tmp_path / "jobs.json").write_text(json.dumps(generate_jobs(2, 20, jobs_per_hour=5, seed=1)))
    prefix = str(tmp_path / backend)
    run_simulation(tmp_path / "pool.xml", [tmp_path / "jobs.json"], "volunteer-agent",
                   {"policy": "bandit", "level": "cluster", "epsilon": 0.1}, export=prefix, energy=True,
                   events=[tmp_path / "events.jsonl"], backend=backend)
    return prefix


def _rows(prefix: str, name: str) -> list[dict[str, str]]:
    with open(f"{prefix}_{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_volunteer_pool_outputs_equal_batsims(tmp_path):
    real, emulated = _run(tmp_path, "batsim"), _run(tmp_path, "emulator")
    for name in ("jobs", "machine_states", "pstate_changes"):
        assert _rows(emulated, name) == _rows(real, name), name
    theirs, ours = _rows(real, "schedule")[0], _rows(emulated, "schedule")[0]
    assert {k: v for k, v in ours.items() if k not in WALL_CLOCK} == \
        {k: v for k, v in theirs.items() if k not in WALL_CLOCK}
    theirs_e, ours_e = _rows(real, "consumed_energy"), _rows(emulated, "consumed_energy")
    assert [(r["time"], r["event_type"], r["wattmin"]) for r in ours_e] == \
        [(r["time"], r["event_type"], r["wattmin"]) for r in theirs_e]
    assert all(abs(float(a["energy"]) - float(b["energy"])) <= 2e-6 for a, b in zip(ours_e, theirs_e))
    assert any(r["event_type"] == "p" for r in theirs_e)
