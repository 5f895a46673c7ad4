"""Building the package as pip would, from a copy of the sources (the build writes build/ and an
egg-info beside them, which must not land in the checkout)."""
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_wheel(tmp_path: Path, env: dict) -> Path:
    """The wheel of a copy of this checkout's sources, built without isolation under ``env``."""
    run(wheel_command(tmp_path), env=env)
    return built_wheel(tmp_path)


def wheel_command(tmp_path: Path) -> list:
    """Copy this checkout's sources to ``tmp_path/src``: the command that builds their wheel in
    ``tmp_path/dist`` (see ``built_wheel``)."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "batsched_py", src / "batsched_py", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for name in ("setup.py", "setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    return [sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "-w", tmp_path / "dist",
            src]


def built_wheel(tmp_path: Path) -> Path:
    wheel, = (tmp_path / "dist").glob("batsched_py-*.whl")
    return wheel


# A guard against a hang, not a measure: mypyc's build took more than 10 minutes beside two
# CPU-bound processes on 2 cores (its C file is compiled at -O3 in one piece).
HANG_GUARD_S = 3600


def run(cmd: list, **kwargs) -> subprocess.CompletedProcess:
    """Run ``cmd``; on failure, fail with its command line and the end of its output."""
    return succeeded(subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=HANG_GUARD_S,
                                    **kwargs))


def succeeded(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    """``done``, which must have exited 0 (else: its command line and the end of its output)."""
    assert done.returncode == 0, f"{' '.join(map(str, done.args))}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done
