"""What the environment and agent tests share: the DeepShutdown platform and days shipped in the
repository, and ``batsched-py emulate`` standing in for the batsim binary."""
import shutil
import sys
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
    return f"'{sys.executable}' -c 'import sys; from batsched_py.cli import main; sys.exit(main())' emulate"

# Elastic-v0: 140 hosts with sleep pstates (batsched-py platform cluster -n 140) and 1,200 LPC-EGEE jobs
ELASTIC_PLATFORM = ROOT / "platforms" / "elastic_140.xml"
ELASTIC_WORKLOAD = ROOT / "workloads" / "elastic" / "lpc_egee_small.json"


def baseline_action(kind, name):
    """A baseline of environment ``kind`` as ``act(env, obs)``, bound to each new episode's scheduler."""
    from batsched_py.policies.agent.baselines import BASELINES

    def act(env, obs, p=BASELINES[kind][name]()):
        if p.scheduler is not env.scheduler:
            p.bind(env.scheduler)
        return p(obs)
    return act
