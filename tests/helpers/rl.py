"""What the environment and agent tests share: the DeepShutdown platform and days shipped in the
repository, and ``batsched-py emulate`` standing in for the batsim binary."""
import shutil
import sys
from importlib import import_module
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = ROOT / "platforms" / "taurus_deepshutdown.xml"
TRAIN = ROOT / "workloads" / "deepshutdown" / "train"
TEST = ROOT / "workloads" / "deepshutdown" / "test"
DAY = TEST / "2_test_102.json"


def emulate_command() -> str:
    """A ``$BATSCHED_PY_BATSIM`` value that runs ``batsched-py emulate`` (as the launcher tests do)."""
    exe = shutil.which("batsched-py")
    if exe:
        return f"'{exe}' emulate"
    return f"'{sys.executable}' -c 'from batsched_py.cli import command; command()' emulate"

# Elastic-v0: 140 hosts with sleep pstates (batsched-py platform cluster -n 140) and 1,200 LPC-EGEE jobs
ELASTIC_PLATFORM = ROOT / "platforms" / "elastic_140.xml"
ELASTIC_WORKLOAD = ROOT / "workloads" / "elastic" / "lpc_egee_small.json"


def tiny_day(path: Path, jobs=((0, 12, 30), (20, 24, 60), (100, 12, 45)), **changes) -> Path:
    """A small DeepShutdown day for PLATFORM (168 hosts, minutes): jobs (subtime, hosts, runtime)
    with delay profiles; ``changes`` replace fields of the first job (e.g. ``subtime="NaN"`` is
    written as JSON's NaN)."""
    import json
    docs = [{"id": str(i), "subtime": t, "res": r, "walltime": 2 * d, "profile": f"p{i}"}
            for i, (t, r, d) in enumerate(jobs)]
    docs[0].update(changes)
    profiles = {f"p{i}": {"type": "delay", "delay": d} for i, (_, _, d) in enumerate(jobs)}
    text = json.dumps({"nb_res": 168, "jobs": docs, "profiles": profiles})
    path.write_text(text.replace('"NaN"', "NaN"))
    return path


def baseline_action(kind, name):
    """A baseline of environment ``kind`` as ``act(env, obs)``, bound to each new episode's scheduler."""
    paper = {"shutdown": "deepshutdown", "scheduling": "deepscheduling", "elastic": "elastic"}[kind]
    baselines = import_module(f"batsched_py.agents.{paper}.baselines").BASELINES

    def act(env, obs, p=baselines[name]()):
        if p.scheduler is not env.scheduler:
            p.bind(env.scheduler)
        return p(obs)
    return act
