"""The layers run one way (docs/architecture.md): agents -> envs -> policies.agent -> policies ->
scheduler -> models -> protocol, and inside a paper's folder its decision points and baselines
import neither its environment nor its agent nor the rl extra.  import-linter checks the contract of setup.cfg; an import written inside a
function cannot hide an upward one, since no such import of our own modules is allowed there."""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "batsched_py"
# the floors of the contract: here a function imports only third-party packages (lazily: optional ones)
FLOORS = ("agents", "envs", "policies", "scheduler", "models")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """import-linter over the package under ``root`` with ``root/setup.cfg``'s contracts (a subprocess:
    it must find that tree's batsched_py, not the one this test imported)."""
    pytest.importorskip("importlinter", reason="import-linter is in the dev extra: pip install -e '.[dev]'")
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename='setup.cfg', no_cache=True, no_logo=True))")
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_contract_is_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout


@pytest.mark.parametrize("module,upward", [
    ("scheduler/base.py", "from ..policies import fcfs"),              # scheduler -> policies
    ("policies/fcfs.py", "from .agent import base"),                   # policies -> policies.agent
    ("policies/agent/base.py", "from ...envs import core"),            # policies.agent -> envs
    ("envs/meter.py", "from ..agents.common import saved"),            # envs -> agents
    ("models/power.py", "from ..scheduler import view"),               # models -> scheduler
    ("metrics/io.py", "from ..cli import common"),                     # a library module -> cli
    ("campaigns/store.py", "from .. import compare"),                  # campaigns -> compare
    ("transport/polling.py", "from ..emulator import engine"),         # transport -> emulator
    ("models/platform.py", "from ..platforms import generate"),        # models -> platforms
    ("agents/deepshutdown/mdp.py", "from . import env"),               # decision points -> the environment
    ("agents/elastic/baselines.py", "from . import scheduler"),        # baselines -> the deployable scheduler
    ("agents/volunteer/mdp.py", "import torch"),                       # decision points -> the rl extra
    ("agents/allocation/mdp.py", "from ...envs import core"),          # decision points -> envs
])
def test_an_upward_import_breaks_the_contract(tmp_path, module, upward):
    shutil.copytree(PACKAGE, tmp_path / "batsched_py", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(ROOT / "setup.cfg", tmp_path / "setup.cfg")
    target = tmp_path / "batsched_py" / module
    target.write_text(target.read_text() + f"\n{upward}  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0 and "BROKEN" in result.stdout, result.stdout + result.stderr


def own_imports_in_functions(path: Path) -> list[str]:
    """``line: import`` of each batsched_py module imported inside a function of ``path``."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("batsched_py")):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
            elif isinstance(node, ast.Import) and any(a.name.startswith("batsched_py") for a in node.names):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(set(found))


def test_no_import_of_our_own_modules_inside_a_function():
    found = {}
    for floor in FLOORS:
        for path in sorted((PACKAGE / floor).rglob("*.py")):
            found.update({f"{path.relative_to(ROOT)}:{hit}": None for hit in own_imports_in_functions(path)})
    assert not found, "imports to move to the module's top (a cycle they would hide shows there):\n" + "\n".join(found)


def test_the_function_import_finder_finds_them(tmp_path):
    # (the check above must be able to fail: relative, absolute and nested imports are all found)
    module = tmp_path / "m.py"
    module.write_text("import numpy\n\ndef f():\n    import json\n    from . import x\n\n"
                      "class C:\n    def g(self):\n        if True:\n            import batsched_py.envs\n")
    assert own_imports_in_functions(module) == ["10: import batsched_py.envs", "5: from . import x"]
