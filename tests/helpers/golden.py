"""Golden recordings: one folder per case, transcript alternating batsim request / scheduler reply."""
from __future__ import annotations

import csv
import gzip
import os
import json
from functools import lru_cache
from pathlib import Path
from typing import Iterator

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
# The workplace's shared material sits beside the repository (``../shared``); tests needing it skip without it.
SHARED = Path(os.environ.get("BATSCHED_PY_SHARED", Path(__file__).resolve().parents[2].parent / "shared"))


def golden_cases() -> list[str]:
    """Names of the cases that hold a transcript, sorted (empty when the data is absent)."""
    if not GOLDEN.is_dir():
        return []
    return sorted(d.name for d in GOLDEN.iterdir() if d.is_dir() and transcript_path(d.name) is not None)


def transcript_path(case: str) -> Path | None:
    for name in ("transcript.jsonl", "transcript.jsonl.gz"):
        path = GOLDEN / case / name
        if path.is_file():
            return path
    return None


def _lines(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield line


@lru_cache(maxsize=None)
def _read(case: str) -> tuple[tuple[str, str], ...]:
    path = transcript_path(case)
    if path is None:
        raise FileNotFoundError(f"no transcript for golden case {case!r} under {GOLDEN}")
    return tuple((json.loads(line)["from"], line) for line in _lines(path))


def read_transcript(case: str) -> list[dict]:
    """The transcript as ``[{"from": "batsim"|"scheduler", "msg": {...}}, ...]`` (fresh objects each call)."""
    return [json.loads(line) for _, line in _read(case)]


# Batsim's output files the golden tests compare, and the columns Batsim fills with wall-clock
# measurements (they vary between its own runs of one simulation).
OUTPUTS = ("jobs", "machine_states", "consumed_energy", "pstate_changes", "schedule")
WALL_CLOCK = {"schedule": ("simulation_time", "scheduling_time")}


def _rows(path: Path, drop: tuple[str, ...]) -> tuple[list[str], list[list[str]]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0] if rows else []
    keep = [i for i, name in enumerate(header) if name not in drop]
    return [header[i] for i in keep], [[row[i] for i in keep] for row in rows[1:]]


def output_differences(golden: Path, mine: Path, name: str) -> str | None:
    """None if ``mine`` holds Batsim's ``name`` file (jobs, schedule, ...) row for row, in Batsim's
    order, every field as Batsim printed it (but the wall-clock columns); else the first
    difference."""
    if not mine.exists():
        return f"{name}: {mine.name} missing"
    drop = WALL_CLOCK.get(name, ())
    (head_a, a), (head_b, b) = _rows(golden, drop), _rows(mine, drop)
    if head_a != head_b:
        return f"{name}: columns: Batsim {head_a}, emulator {head_b}"
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"{name}: row {i + 1}: Batsim {','.join(x)!r}, emulator {','.join(y)!r}"
    if len(a) != len(b):
        return f"{name}: Batsim wrote {len(a)} rows, the emulator {len(b)}"
    return None
