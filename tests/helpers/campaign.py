"""Inputs and task functions for the campaign and executor tests.  The task functions live here,
not in test modules, so Ray workers can import them (``tests/`` on their PYTHONPATH)."""
from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from batsched_py.campaigns.simulation import simulate_to_files, without_wall_clock

from .golden import GOLDEN

REPO = Path(__file__).resolve().parents[2]
PLATFORM = REPO / "platforms" / "taurus_168.xml"
SMALL_WORKLOADS = [REPO / "workloads" / "taurus_2016-03-27.json",
                   GOLDEN / "easy_bf-e128-hpc250" / "inputs" / "example_workload_hpc_seed1_jobs250.json"]
POLICIES = """
[policies.easy]
scheduler = "easy"
[policies.fcfs]
scheduler = "fcfs"
[policies.conservative]
scheduler = "conservative"
[policies.T0]
scheduler = "timeout"
options = { base = "easy", timeout = 0 }
"""


def write_campaign(folder: Path, workloads=SMALL_WORKLOADS, policies: str = POLICIES, energy: bool = True,
                   platform: Path = PLATFORM) -> Path:
    """A campaign of len(workloads) x policies runs, output in ``folder/out``."""
    listed = ", ".join(json.dumps(str(w)) for w in workloads)
    path = folder / "campaign.toml"
    path.write_text(f'output = "out"\nenergy = {str(energy).lower()}\n'
                    f'[platforms]\ntaurus = {json.dumps(str(platform))}\n'
                    f'[workloads]\nset = [{listed}]\n{policies}')
    return path


def slow_workload(path: Path, jobs: int, nb_res: int = 160) -> Path:
    """Many short delay jobs: a run of about 0.1 ms per job, long enough to be interrupted."""
    data = {"nb_res": nb_res, "jobs": [{"id": str(i), "subtime": i * 5, "res": 1 + (i * 7) % 16,
                                         "walltime": 2000, "profile": f"d{i % 10}"} for i in range(jobs)],
            "profiles": {f"d{k}": {"type": "delay", "delay": 100 + 97 * k} for k in range(10)}}
    path.write_text(json.dumps(data))
    return path


def tree_bytes(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by relative path, schedule.csv without its wall-clock columns."""
    return {str(p.relative_to(folder)): without_wall_clock(p.name, p.read_bytes())
            for p in sorted(folder.rglob("*.csv"))}


def sequential_files(campaign) -> dict[str, bytes]:
    """The campaign's runs one after the other in this process, laid out as the campaign stores them."""
    out = {}
    for run in campaign.runs:
        for suffix, content in simulate_to_files(run.spec).files.items():
            out[f"{run.key}/out_{suffix}"] = without_wall_clock(suffix, content)
    return out


# ---- task functions -------------------------------------------------------------------------

def square(x: int) -> int:
    if x == 2:
        raise ValueError("two is refused")
    return x * x


def die_once(marker: str) -> str:
    """Kills its own worker the first time (``marker`` does not exist yet), then succeeds."""
    if not os.path.exists(marker):
        Path(marker).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return "survived"


def always_die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def sleep_and_record(folder: str, name: str, seconds: float) -> str:
    """Writes ``folder/started-NAME`` (holding its pid), then sleeps."""
    Path(folder, f"started-{name}").write_text(str(os.getpid()))
    time.sleep(seconds)
    return name


def sleep_setting(settings: dict) -> dict:
    """A sweep's train function: ``sleep_and_record`` for ``settings["seconds"]`` in ``settings["folder"]``."""
    return {"slept": sleep_and_record(settings["folder"], str(settings["seconds"]), settings["seconds"])}


def cartpole_score(settings: dict) -> dict:
    """A tiny stand-in for training: mean episode length of a fixed policy on CartPole."""
    import gymnasium as gym
    env = gym.make("CartPole-v1")
    lengths = []
    for episode in range(settings["episodes"]):
        obs, _ = env.reset(seed=episode)
        done, steps = False, 0
        while not done:
            obs, _, terminated, truncated, _ = env.step(int(obs[2] * settings["gain"] > 0))
            done, steps = terminated or truncated, steps + 1
        lengths.append(steps)
    return {"mean_length": sum(lengths) / len(lengths), "pid": os.getpid()}


def interrupt_once_started(folder: Path, count: int, signum: int = signal.SIGINT, timeout: float = 120) -> dict:
    """Send ``signum`` to this process from a thread as soon as ``count`` tasks have recorded their
    start in ``folder`` (or after ``timeout`` seconds: a loaded machine took over 30 s to start Ray's
    second worker), whatever the machine's load.  The returned
    dict gets ``"at"``: when the signal went (``time.monotonic()``)."""
    import threading
    sent: dict = {}

    def watch() -> None:
        deadline = time.monotonic() + timeout
        while len(list(folder.glob("started-*"))) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.1)    # the started tasks are well inside their sleep
        sent["at"] = time.monotonic()
        os.kill(os.getpid(), signum)

    threading.Thread(target=watch, daemon=True).start()
    return sent
