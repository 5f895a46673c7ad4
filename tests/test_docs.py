"""The documentation: the site in docs/ builds with MkDocs without a warning, and every shell
command and Python example that README.md and docs/ show runs as written.

The blocks of one page run in order in one temporary folder that links to the repository's
platforms/, workloads/, models/ and scripts/, with `batsched-py` and `python` meaning this
checkout's code, so a block may use what an earlier block of its page wrote. They run from the
session's start, page after page, in the background (helpers/early.py); a page's test waits until
its blocks have run, then asserts on each one's exit status in order. Markers, an HTML
comment on the line before a block (invisible on the rendered page):
- `<!-- not run: REASON -->`: the block needs what a test run has not (real Batsim, Docker, a Ray
  cluster, ../shared, hours of training). Each such block is a skipped test naming its page, line
  and reason, so `pytest -rs` lists how many are skipped and why.
- `<!-- file: NAME -->`: the block is written to NAME in the folder (a campaign file that a later
  command reads) instead of being run.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.early import Early

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# what the blocks read, linked into their folder (never results/: a block could overwrite it)
INPUTS = ("platforms", "workloads", "models", "scripts")
SHELL = {"bash", "sh", "shell", "console"}
PYTHON = {"python", "py"}

FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
MARKER = re.compile(r"^<!--\s*(not run|file):\s*(.*?)\s*-->$")


@dataclass(frozen=True)
class Block:
    page: str           # relative to the repository
    line: int           # of the opening fence, 1-based
    lang: str
    text: str
    not_run: str | None = None
    file: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def read_blocks(path: Path, root: Path = ROOT) -> tuple[list[Block], list[str]]:
    """The fenced blocks of a markdown page with their markers, and the problems found on the way
    (a fence without a language, a marker not right before a block, an unclosed block)."""
    page = str(path.relative_to(root))
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    problems: list[str] = []
    marker: tuple[str, str, int] | None = None
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        found = MARKER.match(stripped)
        fence = FENCE.match(lines[i])
        if found:
            if marker:
                problems.append(f"{page}:{marker[2]}: marker not followed by a block")
            marker = (found.group(1), found.group(2), i + 1)
        elif fence:
            indent, lang = fence.groups()
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
            if end is None:
                problems.append(f"{page}:{i + 1}: block never closed")
                break
            if not lang:
                problems.append(f"{page}:{i + 1}: block without a language (bash, python, text, ...)")
            body = "\n".join(line[len(indent):] if line.startswith(indent) else line.lstrip()
                             for line in lines[i + 1:end]) + "\n"
            kind, value = (marker[0], marker[1]) if marker else (None, None)
            if marker and not value:
                problems.append(f"{page}:{marker[2]}: marker without a reason or a file name")
            blocks.append(Block(page, i + 1, lang, body, value if kind == "not run" else None,
                                value if kind == "file" else None))
            marker = None
            i = end
        elif stripped and marker:
            problems.append(f"{page}:{marker[2]}: marker not followed by a block")
            marker = None
        i += 1
    if marker:
        problems.append(f"{page}:{marker[2]}: marker not followed by a block")
    return blocks, problems


def _all_blocks() -> list[Block]:
    return [block for page in PAGES for block in read_blocks(page)[0]]


def _is_command(block: Block) -> bool:
    return block.lang in SHELL or block.lang in PYTHON


def _runnable(page: Path) -> list[Block]:
    return [b for b in read_blocks(page)[0] if b.not_run is None and (b.file or _is_command(b))]


def _console_script(text: str) -> str:
    """The commands of a console block: its `$ ` lines and their continuations."""
    commands: list[str] = []
    continued = False
    for line in text.splitlines():
        if line.startswith("$ ") or continued:
            commands.append(line[2:] if line.startswith("$ ") and not continued else line)
            continued = line.endswith("\\")
    return "\n".join(commands) + "\n"


def _folder(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A folder with the repository's inputs, and an environment where `batsched-py` and
    `python` are this checkout's."""
    work = tmp_path / "work"
    work.mkdir()
    for name in INPUTS:
        (work / name).symlink_to(ROOT / name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # wrappers, not links: a venv's python finds its packages from where it is started
    for name, command in (("python", f'exec "{sys.executable}" "$@"'),
                          ("python3", f'exec "{sys.executable}" "$@"'),
                          ("batsched-py", f'exec "{sys.executable}" -c "import sys; from batsched_py.cli import main; '
                                          f'sys.exit(main())" "$@"')):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\n{command}\n")
        script.chmod(0o755)
    # one OpenMP thread: torch's spin-waiting threads make a trained agent's run 10x slower on a busy machine
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", MPLBACKEND="Agg", OMP_NUM_THREADS="1",
               PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}".rstrip(os.pathsep))
    return work, env


def test_every_block_is_well_formed():
    """Every block says its language, and every marker sits right before a block and says why
    (or which file)."""
    problems = [problem for page in PAGES for problem in read_blocks(page)[1]]
    assert not problems, "\n".join(problems)
    files = [b for b in _all_blocks() if b.file]
    for block in files:
        assert "/" not in block.file and not block.file.startswith("."), f"{block.where}: file marker names a plain file name"
    background = [b.where for b in _all_blocks() if b.not_run is None and b.lang in SHELL
                  and re.search(r"&\s*$", b.text, re.M)]
    assert not background, f"blocks that would leave a process running (mark them not run): {background}"
    installs = [b.where for b in _all_blocks() if b.not_run is None and b.lang in SHELL and "pip install" in b.text]
    assert not installs, f"blocks that would change the test's environment (mark them not run): {installs}"


def test_the_marker_reader_finds_markers_blocks_and_mistakes(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n<!-- not run: needs real Batsim -->\n```bash\nbatsim -p x\n```\n\n"
                    "<!-- file: c.toml -->\n```toml\na = 1\n```\n\n```\nno language\n```\n"
                    "<!-- not run: stray -->\nprose\n\n- item:\n\n  ```python\n  print(1)\n  ```\n", encoding="utf-8")
    blocks, problems = read_blocks(page, root=tmp_path)
    assert [(b.lang, b.not_run, b.file, b.text) for b in blocks] == [
        ("bash", "needs real Batsim", None, "batsim -p x\n"), ("toml", None, "c.toml", "a = 1\n"),
        ("", None, None, "no language\n"), ("python", None, None, "print(1)\n")]
    assert len(problems) == 2 and "without a language" in problems[0] and "not followed" in problems[1]
    assert _console_script("$ a \\\n  b\nout\n$ c\n") == "a \\\n  b\nc\n"


@pytest.mark.parametrize("block", [b for b in _all_blocks() if b.not_run],
                         ids=lambda b: b.where)
def test_a_block_not_run(block):
    """Listed, so that `pytest -rs` counts the blocks not run and says why."""
    pytest.skip(f"not run: {block.not_run}")


PAGES_WITH_COMMANDS = [p for p in PAGES if any(not b.file for b in _runnable(p))]


def _page_name(page: Path) -> str:
    return str(page.relative_to(ROOT)).replace("/", "_")


def _steps(page: Path, tmp_path: Path) -> list[dict]:
    """The page's blocks as helpers/in_order.py's steps, in a new folder (``_folder``) under ``tmp_path``."""
    work, env = _folder(tmp_path)
    steps = []
    for block in _runnable(page):
        if block.file:
            steps.append({"write": str(work / block.file), "text": block.text})
            continue
        if block.lang in PYTHON:
            script = tmp_path / f"block_{block.line}.py"
            script.write_text(block.text, encoding="utf-8")
            argv = [sys.executable, str(script)]
        else:
            text = _console_script(block.text) if block.lang == "console" else block.text
            argv = ["bash", "-c", "set -euo pipefail\n" + text]
        steps.append({"argv": argv, "cwd": str(work), "env": env})
    return steps


def _pages(folder: Path, items) -> dict:
    """The blocks of the pages of ``items`` (of every page with commands: none), a list a page."""
    pages = [item.callspec.params["page"] for item in items] or PAGES_WITH_COMMANDS
    lists = {}
    for i, page in enumerate(dict.fromkeys(pages)):
        (folder / f"page{i}").mkdir()
        lists[_page_name(page)] = _steps(page, folder / f"page{i}")
    return lists


# A couple of minutes of commands (trainings, evaluations): they run in the background from the
# session's start (helpers/early.py), each page's blocks in order in the page's own folder.
PAGE_COMMANDS = Early("the documentation's commands", _pages)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES_WITH_COMMANDS, ids=lambda p: str(p.relative_to(ROOT)))
@PAGE_COMMANDS.needed
def test_the_commands_of_a_page_run(page):
    if any(re.search(r"gymnasium|batsched_py\.envs|batsched-py (train|evaluate)", b.text) for b in _runnable(page)):
        pytest.importorskip("gymnasium")      # the rl extra, part of dev
        pytest.importorskip("stable_baselines3")
    commands = [b for b in _runnable(page) if not b.file]
    # (a hang guard: each block had 600 s when the test ran them itself)
    ran = PAGE_COMMANDS.ran(_page_name(page), timeout=600 * len(commands))
    for block, done in zip(commands, ran):
        assert done.returncode == 0, (f"{block.where} ({block.lang}) exited {done.returncode}:\n{block.text}\n"
                                      f"stdout: {done.stdout[-3000:]}\nstderr: {done.stderr[-3000:]}")
    assert len(ran) == len(commands), f"{len(ran)} of the {len(commands)} blocks ran"


def _links(text: str) -> list[str]:
    return [target for target in re.findall(r"\]\(([^)\s]+)\)", text)
            if not re.match(r"[a-z]+:", target) and not target.startswith("#")]


def test_the_readmes_links_lead_to_files():
    """README.md is not part of the site, so MkDocs does not check its links: this does."""
    missing = [t for t in _links((ROOT / "README.md").read_text(encoding="utf-8"))
               if not (ROOT / t.split("#")[0]).exists()]
    assert not missing


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")   # material's notice about MkDocs 2
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          cwd=config.parent, env=env, capture_output=True, text=True, timeout=600)


def _needs_mkdocs():
    for module in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python", "material"):
        if importlib.util.find_spec(module.split(".")[0]) is None or (
                "." in module and importlib.util.find_spec(module) is None):
            pytest.skip(f"{module} is not installed (the docs extra: pip install -e '.[docs]')")


def test_the_site_builds_without_a_warning(tmp_path):
    _needs_mkdocs()
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-5000:]
    # the API reference is rendered from the docstrings
    api = (tmp_path / "site" / "api" / "scheduler" / "index.html").read_text(encoding="utf-8")
    assert "Base class of every policy" in api


def test_a_warning_fails_the_build(tmp_path):
    """The configuration is strict: a link to a page that does not exist fails the build."""
    _needs_mkdocs()
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", copy / "docs")
    (copy / "batsched_py").symlink_to(ROOT / "batsched_py")
    with open(copy / "docs" / "testing.md", "a", encoding="utf-8") as f:
        f.write("\nSee [the missing page](missing.md).\n")
    done = _build(copy / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0 and "missing.md" in done.stderr
