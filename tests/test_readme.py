"""The README's two commands: what CI runs, and the headline example."""
import re
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
