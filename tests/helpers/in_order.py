"""Run lists of steps, each list's in order, stopping a list at its first command that fails, one
list after the other: ``python in_order.py PLAN.json`` (the background run of early.py).

PLAN.json: ``[{"name": NAME, "steps": [STEP, ...]}, ...]``; a step writes a file
(``{"write": PATH, "text": TEXT}``) or runs a command (``{"argv": [...]}``, with ``"cwd"``,
``"env"`` and ``"timeout"`` (s) when given).  Beside PLAN.json, ``NAME.running`` says which command
of a list runs, and ``NAME.json``, written whole once the list has ended, holds each command that
ran: ``{"argv", "returncode", "stdout", "stderr"}`` (a command killed at its timeout: -1).
"""
import json
import os
import subprocess
import sys
from pathlib import Path


def write_whole(path: Path, text: str) -> None:
    part = path.with_name(path.name + ".part")
    part.write_text(text, encoding="utf-8")
    os.replace(part, path)


def _text(output) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


def run_list(folder: Path, name: str, steps: list) -> None:
    ran = []
    for i, step in enumerate(steps):
        if "write" in step:
            Path(step["write"]).write_text(step["text"], encoding="utf-8")
            continue
        write_whole(folder / f"{name}.running", f"step {i}: {' '.join(step['argv'])}\n")
        try:
            done = subprocess.run(step["argv"], cwd=step.get("cwd"), env=step.get("env"), capture_output=True,
                                  text=True, timeout=step.get("timeout"))
            ran.append({"argv": step["argv"], "returncode": done.returncode, "stdout": done.stdout,
                        "stderr": done.stderr})
        except subprocess.TimeoutExpired as hung:
            ran.append({"argv": step["argv"], "returncode": -1, "stdout": _text(hung.stdout),
                        "stderr": _text(hung.stderr) + f"\n(killed: still running after {step['timeout']} s)"})
        if ran[-1]["returncode"] != 0:
            break
    write_whole(folder / f"{name}.json", json.dumps(ran))


if __name__ == "__main__":
    plan = Path(sys.argv[1])
    for entry in json.loads(plan.read_text(encoding="utf-8")):
        run_list(plan.parent, entry["name"], entry["steps"])
