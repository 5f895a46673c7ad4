import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("gymnasium", reason="the environments need the rl extra: pip install 'batsched_py[rl]'")

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = ROOT / "platforms" / "taurus_deepshutdown.xml"
TRAIN = ROOT / "workloads" / "deepshutdown" / "train"
TEST = ROOT / "workloads" / "deepshutdown" / "test"
DAY = TEST / "2_test_102.json"


def emulate_command() -> str:
    """``batsched-py emulate`` standing in for the batsim binary (as the launcher tests do)."""
    exe = shutil.which("batsched-py")
    if exe:
        return f"'{exe}' emulate"
    return f"'{sys.executable}' -c 'import sys; from batsched_py.cli import main; sys.exit(main())' emulate"


@pytest.fixture
def emulate_as_batsim(monkeypatch):
    monkeypatch.setenv("BATSCHED_PY_BATSIM", emulate_command())
