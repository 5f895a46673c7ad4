"""The environments' backends are the caller-driven Backend of transport/backend.py: the same
policy driven by drive() through each gives the same schedule."""
from __future__ import annotations

import csv
from pathlib import Path

from batsched_py.envs.backends import make_backend
from batsched_py.scheduler import Session, create
from batsched_py.transport.backend import drive
from helpers.rl import DAY, PLATFORM


def schedule(prefix: Path) -> dict[str, tuple[str, str, str]]:
    with open(f"{prefix}_jobs.csv", newline="") as f:
        return {r["job_id"]: (r["starting_time"], r["finish_time"], r["allocated_resources"])
                for r in csv.DictReader(f)}


def run(backend_name: str, prefix: Path) -> Session:
    backend = make_backend(backend_name, PLATFORM, DAY, output_prefix=str(prefix))
    try:
        session = Session(create("easy", {}))
        drive(session.handle, backend)
        return session
    finally:
        backend.close()


def test_drive_gives_the_same_schedule_in_process_and_from_a_batsim_process(tmp_path, batsim_process):
    in_process = run("emulator", tmp_path / "emulator")
    process = run("batsim", tmp_path / "batsim")
    assert in_process.ended and process.ended and in_process.messages == process.messages
    assert schedule(tmp_path / "emulator") == schedule(tmp_path / "batsim")
