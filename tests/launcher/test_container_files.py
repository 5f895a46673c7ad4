"""docker-compose.yml, Dockerfile and .dockerignore: structure checks (no engine here to build or run them)."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import pytest

from batsched_py.launcher import DEFAULT_IMAGE
from launcher_support import REPO

yaml = pytest.importorskip("yaml")

COMPOSE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "Dockerfile"
VAR = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def interpolate(value, env: dict[str, str]):
    """Compose's ${VAR:-default} substitution, applied like compose to the parsed values."""
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if isinstance(value, str):
        return VAR.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), value)
    return value


def services(env: dict[str, str] | None = None) -> dict:
    return interpolate(yaml.safe_load(COMPOSE.read_text()), env or {})["services"]


def batsim_argv(svc: dict) -> list[str]:
    command = svc["batsim"]["command"]
    return shlex.split(command) if isinstance(command, str) else command


def test_compose_services_and_pinned_batsim_4_image():
    svc = services()
    assert set(svc) == {"batsim", "scheduler"}
    image = svc["batsim"]["image"]
    assert re.fullmatch(r"oarteam/batsim:4\.\d+\.\d+", image), image
    assert image == DEFAULT_IMAGE  # the compose file and the docker backend use the same Batsim
    assert svc["scheduler"]["build"] == "."
    for s in svc.values():
        assert s["restart"] == "no" and s["init"] is True
    assert svc["batsim"]["depends_on"] == {"scheduler": {"condition": "service_started"}}
    assert svc["batsim"]["user"] == "1000:1000"
    assert services({"UID": "1234", "GID": "99"})["batsim"]["user"] == "1234:99"
    assert "ports" not in svc["scheduler"]  # reachable on the project network only


def test_compose_commands_connect_the_two_sides():
    svc = services()
    sched = svc["scheduler"]["entrypoint"] + svc["scheduler"]["command"]
    assert sched[:3] == ["python", "-m", "batsched_py.cli.linger"]
    serve = sched[sched.index("serve"):]
    assert serve[serve.index("--socket") + 1] == "tcp://0.0.0.0:28000"
    assert serve[serve.index("--scheduler") + 1] == "easy"
    assert "--timeout" in serve
    argv = batsim_argv(svc)
    assert argv[argv.index("-s") + 1] == "tcp://scheduler:28000"
    assert argv[argv.index("-e") + 1] == "/data/out/out"
    assert svc["batsim"]["volumes"] == [".:/data/in:ro", "./out:/data/out"]


def test_compose_defaults_are_shipped_examples():
    argv = batsim_argv(services())
    for flag in ("-p", "-w"):
        inside = argv[argv.index(flag) + 1]
        assert inside.startswith("/data/in/")
        assert (REPO / inside[len("/data/in/"):]).is_file(), inside


def test_compose_variables():
    env = {"SCHEDULER": "fcfs", "SCHEDULER_CONFIG": '{"order": "sjf"}', "PLATFORM": "platforms/taurus_16.xml",
           "WORKLOAD": "w/x.json", "OUTPUT_DIR": "/tmp/res", "BATSIM_EXTRA": "-E --mmax 64",
           "BATSIM_IMAGE": "oarteam/batsim:4.2.1", "EXPORT_NAME": "fcfs"}
    svc = services(env)
    serve = svc["scheduler"]["command"]
    assert serve[serve.index("--scheduler") + 1] == "fcfs"
    assert serve[serve.index("--config") + 1] == '{"order": "sjf"}'
    assert svc["batsim"]["image"] == "oarteam/batsim:4.2.1"
    assert svc["batsim"]["volumes"][1] == "/tmp/res:/data/out"
    assert batsim_argv(svc) == ["-p", "/data/in/platforms/taurus_16.xml", "-w", "/data/in/w/x.json",
                                "-e", "/data/out/fcfs", "-s", "tcp://scheduler:28000", "-E", "--mmax", "64"]


def test_documented_commands_match_the_compose_file():
    text = (REPO / "docs" / "guide" / "real-batsim.md").read_text()
    assert "SCHEDULER=easy docker compose up" in text
    assert "docker compose up --abort-on-container-exit --exit-code-from batsim" in text
    for var in re.findall(r"\b([A-Z][A-Z_]+)=\S", text):
        if var in {"SCHEDULER", "SCHEDULER_CONFIG", "PLATFORM", "WORKLOAD", "OUTPUT_DIR", "BATSIM_EXTRA",
                   "BATSIM_IMAGE", "EXPORT_NAME", "INPUT_DIR", "SCHEDULER_TIMEOUT"}:
            assert "${" + var in COMPOSE.read_text(), var


def test_compose_client_accepts_the_file():
    if shutil.which("docker-compose"):
        cmd = ["docker-compose", "-f", str(COMPOSE), "config", "-q"]
    elif shutil.which("docker") and subprocess.run(["docker", "compose", "version"],
                                                   capture_output=True).returncode == 0:
        cmd = ["docker", "compose", "-f", str(COMPOSE), "config", "-q"]
    else:
        pytest.skip("no docker compose client installed (apt-get install docker-compose)")
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={**os.environ, "SCHEDULER": "fcfs", "BATSIM_EXTRA": "-E"})
    assert done.returncode == 0, done.stderr


def stages(text: str) -> list[list[tuple[str, str]]]:
    """Dockerfile instructions per stage, continuation lines joined, comments dropped."""
    out: list[list[tuple[str, str]]] = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word.upper() == "FROM":
            out.append([])
        out[-1].append((word.upper(), rest.strip()))
    return out


def test_dockerfile_structure():
    all_stages = stages(DOCKERFILE.read_text())
    for stage in all_stages:
        assert stage[0][0] == "FROM" and stage[0][1].split()[0] == "python:3.11-slim"
    final = dict(all_stages[-1])  # the last occurrence of each instruction is the one that counts
    final_text = " ".join(f"{k} {v}" for k, v in all_stages[-1])
    users = [v for k, v in all_stages[-1] if k == "USER"]
    assert users and users[-1] not in ("root", "0", "0:0")
    assert not re.search(r"build-essential|\bgcc\b|\bg\+\+|apt-get install", final_text)
    runs = [v for k, v in all_stages[-1] if k == "RUN"]
    assert any("pip install --no-cache-dir" in r for r in runs)
    assert final["ENTRYPOINT"] == '["batsched-py"]'
    cmd = [v for k, v in all_stages[-1] if k == "CMD"][-1]
    assert cmd.startswith('["serve"') and "tcp://0.0.0.0:28000" in cmd


def test_dockerignore_keeps_the_context_small():
    entries = {ln.strip() for ln in (REPO / ".dockerignore").read_text().splitlines()
               if ln.strip() and not ln.startswith("#")}
    assert {".git", "tests", "out", "**/__pycache__", "*.egg-info"} <= entries
    assert "batsched_py" not in entries and "setup.cfg" not in entries


def test_linger_exits_at_once_on_failure_and_lingers_on_success():
    t0 = time.monotonic()
    bad = subprocess.run([sys.executable, "-m", "batsched_py.cli.linger", "--linger", "30",
                          "serve", "--scheduler", "no-such-policy"], capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "no-such-policy" in bad.stderr
    assert time.monotonic() - t0 < 10
    t0 = time.monotonic()
    good = subprocess.run([sys.executable, "-m", "batsched_py.cli.linger", "--linger", "0.5",
                           "list-schedulers"], capture_output=True, text=True, timeout=30)
    assert good.returncode == 0 and "easy" in good.stdout
    assert time.monotonic() - t0 >= 0.5


def test_linger_stops_on_sigterm():
    proc = subprocess.Popen([sys.executable, "-m", "batsched_py.cli.linger", "--linger", "60",
                             "list-schedulers"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout.readline()  # the command ran; now lingering
        time.sleep(0.2)
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("value, words", [("-1", "'-1' is negative"), ("nan", "'nan' is not a finite number")])
def test_linger_refuses_a_time_that_is_not_one(value, words):
    out = subprocess.run([sys.executable, "-m", "batsched_py.cli.linger", "--linger", value, "list-schedulers"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and out.stderr.strip().endswith(f"argument --linger: {words}")
