"""scripts/finetune_shutdown_agent.py: more PPO on a saved agent; bad inputs are one line."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts/finetune_shutdown_agent.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=300)


def test_a_missing_model_and_a_glob_without_days_are_named(tmp_path):
    r = run(tmp_path / "none.zip", tmp_path / "out.zip", "-w", str(ROOT / "workloads/deepshutdown/train/*.json"))
    assert r.returncode == 2 and "none.zip: no such file" in r.stderr and "Traceback" not in r.stderr
    r = run(ROOT / "models/deepshutdown-taurus.zip", tmp_path / "out.zip", "-w", str(tmp_path / "*.json"))
    assert r.returncode == 2 and "matches no day" in r.stderr and "Traceback" not in r.stderr


def test_it_continues_the_shipped_agent_and_saves_one_that_loads(tmp_path):
    from batsched_py.agents.common.saved import load_agent
    import numpy as np
    out = tmp_path / "more.zip"
    r = run(ROOT / "models/deepshutdown-taurus.zip", out, "--steps", 128, "--actors", 1,
            "-w", str(ROOT / "workloads/deepshutdown/train/*.json"))
    assert r.returncode == 0, r.stderr[-2000:]
    agent = load_agent(str(out), "shutdown")
    # (the shipped model's observation, QB's advice included, from its record: the script adopts it)
    assert agent.model.observation_space.shape == (20, 104)
    assert agent(np.zeros((20, 104), np.float32)) in range(15)
