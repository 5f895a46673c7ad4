"""The README's two commands: what CI runs, and the headline example."""
import csv
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    """The commands of the README's first code block (install and run; install and test)."""
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert block, "the README starts with a bash block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_ci_runs_the_readmes_test_command_in_a_fresh_venv_without_shared():
    script = (ROOT / ".ci" / "run").read_text()
    test_command = readme_commands()[1]
    assert "python -m pytest" in test_command
    lines = [line.strip() for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert lines[-1] == test_command
    # the interpreter is a fresh venv's, and ../shared is out of reach unless asked for
    assert re.search(r"python3 -m venv \"\$venv\"", script) and 'export PATH="$venv/bin:$PATH"' in script
    assert 'BATSCHED_PY_SHARED="$venv/no-shared"' in script


def _run_headline(tmp_path: Path, scheduler: str = "timeout") -> subprocess.CompletedProcess:
    """The README's first command, but for its pip install, as written, in a directory holding
    the repository's platforms and workloads."""
    command = readme_commands()[0]
    install, _, run = command.partition(" && ")
    assert install == "pip install -e ." and run.startswith("batsched-py run ")
    for name in ("platforms", "workloads"):
        (tmp_path / name).symlink_to(ROOT / name)
    argv = shlex.split(run)[1:]
    argv[argv.index("--scheduler") + 1] = scheduler
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    done = subprocess.run([sys.executable, "-c", "from batsched_py.cli import command; command()",
                           *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def _energy_line(summary: str) -> str:
    return next(line for line in summary.splitlines() if line.strip().startswith("energy ("))


def _energy(summary: str) -> float:
    return float(_energy_line(summary).split(")", 1)[1].split()[0])


def test_the_headline_example_has_an_energy_result_that_means_something(tmp_path):
    """Power varies (jobs compute, hosts sleep and wake) and switching idle hosts off saves
    energy against the same run without it; the summary states the platform's unit."""
    done = _run_headline(tmp_path)
    assert "energy (W·min)" in done.stdout and "kWh" in done.stdout and "time unit: min, detected" in done.stderr
    with open(tmp_path / "out" / "out_machine_states.csv") as f:
        assert max(int(row["nb_sleeping"]) for row in csv.DictReader(f)) > 0
    with open(tmp_path / "out" / "out_consumed_energy.csv") as f:
        powers = {row["epower"] for row in csv.DictReader(f)} - {"NA"}
    assert len(powers) > 10
    (tmp_path / "easy").mkdir()
    always_on = _run_headline(tmp_path / "easy", "easy")
    assert _energy(done.stdout) < 0.6 * _energy(always_on.stdout)
    # the kWh the README quotes for both runs are the ones printed now (they went stale once)
    quoted = re.search(r"also given in kWh: (\d+) kWh, where the same week with every host left on\s+"
                       r"\(`--scheduler easy`\) takes (\d+) kWh", (ROOT / "README.md").read_text())
    assert quoted, "the README quotes the headline example's energies"
    assert [f"(= {kwh} kWh)" for kwh in quoted.groups()] == [_printed_kwh(done.stdout), _printed_kwh(always_on.stdout)]


def _printed_kwh(summary: str) -> str:
    line = _energy_line(summary)
    return line[line.index("(= "):].strip()
