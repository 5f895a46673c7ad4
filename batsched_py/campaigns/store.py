"""A campaign's results table: one SQLite row per run, written as soon as the run ends."""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Optional

from .spec import Campaign, CampaignError, CampaignRun

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    platform TEXT, workload_set TEXT, workload TEXT, policy TEXT,
    scheduler TEXT, options TEXT, seed INTEGER, repetition INTEGER, energy INTEGER,
    digest TEXT,
    status TEXT NOT NULL,            -- done, failed or interrupted
    metrics TEXT,                    -- JSON: the metrics summary of a done run
    wall_s REAL,                     -- the simulation's own wall time; for a failed run, until it failed
    attempts INTEGER,
    error TEXT,
    finished_at TEXT
)
"""
STATUSES = ("done", "failed", "interrupted")


class ResultStore:
    def __init__(self, path: Path):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CampaignError(f"output {path.parent}: cannot create the folder ({exc.strerror or exc})") from None
        self.path = path
        self._db = sqlite3.connect(path)
        try:
            # Each run is committed alone; WAL without a sync per commit keeps that cheap, and a
            # commit still survives the campaign's process dying (only a power cut can lose it).
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(SCHEMA)
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise CampaignError(f"{path}: not a campaign results database ({exc}); "
                                "move it away to start afresh") from None

    def close(self) -> None:
        self._db.close()

    def rows(self) -> dict[str, dict[str, Any]]:
        cursor = self._db.execute("SELECT * FROM runs")
        names = [d[0] for d in cursor.description]
        return {row[0]: dict(zip(names, row)) for row in cursor}

    def record(self, run: CampaignRun, status: str, digest: str, *, metrics: Optional[dict] = None,
               wall_s: Optional[float] = None, attempts: Optional[int] = None, error: Optional[str] = None) -> None:
        assert status in STATUSES, status
        spec = run.spec
        self._db.execute(
            "INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (run.key, run.platform, run.workload_set, run.workload, run.policy, spec.scheduler,
             json.dumps(spec.options, sort_keys=True), run.seed, run.repetition, int(spec.energy), digest, status,
             json.dumps(metrics, sort_keys=True) if metrics is not None else None, wall_s, attempts, error,
             time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
        self._db.commit()   # at once: a run is kept even if the campaign dies right after


def progress_counts(campaign: Campaign, rows: dict[str, dict], digests: dict[str, str]) -> dict[str, list[str]]:
    """Run keys by state: done, failed, interrupted, missing (never run, inputs changed since, or
    its files removed)."""
    out: dict[str, list[str]] = {"done": [], "failed": [], "interrupted": [], "missing": []}
    for run in campaign.runs:
        row = rows.get(run.key)
        if row is None or (row["status"] == "done" and (row["digest"] != digests[run.key] or not
                                                         (campaign.run_dir(run) / "out_jobs.csv").is_file())):
            out["missing"].append(run.key)
        else:
            out[row["status"]].append(run.key)
    return out
