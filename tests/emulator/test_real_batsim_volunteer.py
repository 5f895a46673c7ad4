"""Volunteer pools that real Batsim 4.2.1 finishes.  Batsim aborts at an owner's logout when the login
came during a switch (the switch's end overwrote it, docs/fidelity.md): volunteer-agent (bandit,
rooms, epsilon 0.1) given the pool's events file starts no switch an owner's event falls into, so
every generated pool (20 PCs in 3 rooms over 2 days, seeds 0-4) finishes on the emulator, which
aborts where Batsim does; without the file, some seeds abort.  Against a real Batsim (skipped
unless ``$BATSCHED_PY_BATSIM`` is one) the emulator writes the same jobs, machine states, pstate
changes, schedule figures and energy rows (epower included)."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from batsched_py.models.errors import EmulatorError
from batsched_py.models.events_file import load_events
from batsched_py.platforms.volunteer import OFF_TIME, ON_TIME, generate_pool, write_pool_platform
from batsched_py.runner import run_simulation
from batsched_py.workloads.volunteer import generate_jobs, generate_logins, write_events
from helpers.batsim import real_batsim

needs_batsim = pytest.mark.skipif(real_batsim() is None, reason="$BATSCHED_PY_BATSIM is not a real Batsim binary")

WALL_CLOCK = ("simulation_time", "scheduling_time")
SEEDS = range(5)
BANDIT = {"policy": "bandit", "level": "cluster", "epsilon": 0.1}


def _pool(tmp_path: Path, seed: int) -> Path:
    """20 PCs in 3 rooms, 2 days of logins and HTC jobs."""
    d = tmp_path / f"seed{seed}"
    d.mkdir(exist_ok=True)
    pool = generate_pool(20, 3, seed=seed)
    write_pool_platform(pool, d / "pool.xml")
    write_events(generate_logins(pool, 2, seed=seed), d / "events.jsonl", seed=seed)
    (d / "jobs.json").write_text(json.dumps(generate_jobs(2, 20, jobs_per_hour=5, seed=seed)))
    return d


def _run(d: Path, backend: str, owner_events: bool = True) -> str:
    prefix = str(d / backend)
    options = {**BANDIT, "events": str(d / "events.jsonl")} if owner_events else BANDIT
    run_simulation(d / "pool.xml", [d / "jobs.json"], "volunteer-agent", options, export=prefix, energy=True,
                   events=[d / "events.jsonl"], backend=backend)
    return prefix


def _rows(prefix: str, name: str) -> list[dict[str, str]]:
    with open(f"{prefix}_{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("seed", SEEDS)
def test_every_pool_finishes_and_no_switch_meets_an_owner(tmp_path, seed):
    d = _pool(tmp_path, seed)
    prefix = _run(d, "emulator")
    jobs = _rows(prefix, "jobs")
    assert len(jobs) > 100 and all(r["final_state"] for r in jobs)
    owners = [(e.timestamp, h) for e in load_events(d / "events.jsonl", nb_hosts=20) for h in e.resources]
    switches = 0
    for row in _rows(prefix, "pstate_changes"):
        if row["new_pstate"] in ("-1", "-2"):           # a switch on (-1) or off (-2) starts
            t = float(row["time"])
            end = t + (ON_TIME if row["new_pstate"] == "-1" else OFF_TIME)
            hosts = {h for part in row["machine_id"].split() for h in _interval(part)}
            switches += 1
            assert not [(when, h) for when, h in owners if h in hosts and t <= when <= end], row
    assert switches > 50


def _interval(text: str) -> range:
    lo, _, hi = text.partition("-")
    return range(int(lo), int(hi or lo) + 1)


def test_without_the_events_file_a_login_during_a_switch_aborts_as_batsim_does(tmp_path):
    with pytest.raises(EmulatorError, match=r"available was requested but this machine was not in UNAVAILABLE "
                                            r"state \(current state: idle\)"):
        _run(_pool(tmp_path, 0), "emulator", owner_events=False)


@needs_batsim
@pytest.mark.parametrize("seed", SEEDS)
def test_volunteer_pool_outputs_equal_batsims(tmp_path, seed):
    d = _pool(tmp_path, seed)
    real, emulated = _run(d, "batsim"), _run(d, "emulator")
    for name in ("jobs", "machine_states", "pstate_changes"):
        assert _rows(emulated, name) == _rows(real, name), name
    theirs, ours = _rows(real, "schedule")[0], _rows(emulated, "schedule")[0]
    assert {k: v for k, v in ours.items() if k not in WALL_CLOCK} == \
        {k: v for k, v in theirs.items() if k not in WALL_CLOCK}
    theirs_e = _rows(real, "consumed_energy")
    assert _rows(emulated, "consumed_energy") == theirs_e
    assert any(r["event_type"] == "p" for r in theirs_e)
