"""evaluate --dedupe-against: a held-out day that is also a training day is left out, and said so."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from batsched_py.agents.common.evaluate import dedupe

ROOT = Path(__file__).resolve().parents[2]
DAY = ROOT / "workloads/deepshutdown/test/2_test_102.json"


def test_dedupe_drops_days_with_the_same_jobs_whatever_their_name(tmp_path):
    train, test = tmp_path / "train", tmp_path / "test"
    train.mkdir(), test.mkdir()
    doc = json.loads(DAY.read_text())
    (train / "a.json").write_text(json.dumps(doc, indent=2))          # same jobs, other layout and name
    (test / "b.json").write_text(json.dumps(doc))
    doc["jobs"][0]["subtime"] += 1
    (test / "c.json").write_text(json.dumps(doc))
    kept, dropped = dedupe(sorted(test.glob("*.json")), sorted(train.glob("*.json")))
    assert [p.name for p in kept] == ["c.json"] and [p.name for p in dropped] == ["b.json"]


def test_evaluate_says_which_days_it_left_out_and_refuses_an_empty_set(tmp_path):
    cmd = [sys.executable, "-m", "batsched_py.cli", "evaluate", "--env", "shutdown", "--policies", "T0",
           "-p", str(ROOT / "platforms/taurus_deepshutdown.xml"), "-w", str(DAY), "-o", str(tmp_path / "out"),
           "--dedupe-against", str(DAY.parent), "--no-figures", "-j", "1"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    assert "1 day(s) equal to a day of --dedupe-against left out" in r.stderr
    assert "every evaluation day is also a --dedupe-against day" in r.stderr
    assert "Traceback" not in r.stderr
