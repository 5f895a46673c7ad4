"""Backend ``docker``, tested up to the Docker SDK boundary (this machine has no Docker engine).

The fake client records the exact ``containers.run`` call and plays the container with a local
process: the container's command, with its paths mapped back through the requested volumes, is
run by ``batsched-py emulate`` (or the scripted fake), so the whole exchange is real.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from batsched_py.launcher import DEFAULT_IMAGE, LaunchError, launch
from batsched_py.scheduler import create
from launcher_support import EMULATE, FAKE, PLATFORM, WORKLOAD, alive


class FakeContainer:
    def __init__(self, client, argv, name):
        self.client, self.name = client, name
        self.log = open(client.tmp / f"{name}.log", "w+b")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
        self.status, self.attrs = "running", {"State": {"ExitCode": 0}}
        self.calls: list[str] = []

    def reload(self):
        self.calls.append("reload")
        if self.client.interrupt_on_reload and len(self.calls) >= 2:
            raise KeyboardInterrupt
        code = self.proc.poll()
        if code is not None:
            self.status, self.attrs = "exited", {"State": {"ExitCode": code}}

    def wait(self, timeout=None):
        self.calls.append("wait")
        return {"StatusCode": self.proc.wait(timeout), "Error": None}

    def logs(self, stdout=True, stderr=True, tail="all"):
        self.log.flush()
        self.log.seek(0)
        return b"\n".join(self.log.read().splitlines()[-tail:])

    def stop(self, timeout=10):
        self.calls.append("stop")
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()

    def remove(self, force=False):
        self.calls.append(f"remove(force={force})")
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        self.client.removed.append(self.name)


class FakeContainers:
    def __init__(self, client):
        self.client = client

    def run(self, image, command=None, **kw):
        self.client.runs.append({"image": image, "command": command, **kw})
        if self.client.run_error is not None:
            raise self.client.run_error
        mapping = {}
        for spec in kw["volumes"]:
            host, inside, mode = spec.rsplit(":", 2)
            mapping[inside] = host
        argv = []
        for arg in command:
            for inside, host in mapping.items():
                if arg.startswith(inside + "/"):
                    arg = host + arg[len(inside):]
            argv.append(arg)
        container = FakeContainer(self.client, self.client.runner + argv, kw["name"])
        self.client.containers_made.append(container)
        return container

    def get(self, name):
        self.client.gets.append(name)
        raise LookupError(f"no such container {name}")


class FakeDocker:
    def __init__(self, tmp: Path, runner=EMULATE):
        self.tmp, self.runner = tmp, list(runner)
        self.containers = FakeContainers(self)
        self.runs: list[dict] = []
        self.removed: list[str] = []
        self.gets: list[str] = []
        self.containers_made: list[FakeContainer] = []
        self.run_error = None
        self.interrupt_on_reload = False


@pytest.fixture
def inputs(tmp_path):
    """Inputs in their own directory, outputs in another (as a user would have them)."""
    indir = tmp_path / "in"
    indir.mkdir()
    platform, workload = indir / PLATFORM.name, indir / WORKLOAD.name
    platform.write_bytes(PLATFORM.read_bytes())
    workload.write_bytes(WORKLOAD.read_bytes())
    return platform, workload


def test_default_image_is_a_pinned_batsim_4():
    name, tag = DEFAULT_IMAGE.split(":")
    assert name == "oarteam/batsim" and tag.startswith("4.") and tag != "latest"


def test_exact_run_arguments_and_cleanup_on_success(tmp_path, inputs):
    platform, workload = inputs
    client = FakeDocker(tmp_path)
    export = tmp_path / "results" / "easy"
    prefix = launch("docker", create("fcfs", {}), platform, [workload], export=str(export), energy=True,
                    mmax=100, timeout=20, docker_client=client, image="oarteam/batsim:4.2.0")
    assert prefix == export
    assert Path(f"{export}_jobs.csv").is_file() and Path(f"{export}_schedule.csv").is_file()
    (run,) = client.runs
    endpoint = run["command"][run["command"].index("-s") + 1]
    port = int(endpoint.rsplit(":", 1)[1])
    assert run == {
        "image": "oarteam/batsim:4.2.0",
        "command": ["-p", f"/data/in/0/{platform.name}", "-w", f"/data/in/0/{workload.name}",
                    "-e", "/data/out/easy", "-E", "--mmax", "100", "-s", f"tcp://127.0.0.1:{port}"],
        "detach": True,
        "name": f"batsched-py-batsim-{os.getpid()}-{port}",
        "network_mode": "host",
        "init": True,
        "user": f"{os.getuid()}:{os.getgid()}",
        "volumes": [f"{platform.parent}:/data/in/0:ro", f"{export.parent}:/data/out:rw"],
        "working_dir": "/data",
        "labels": {"org.batsched-py.role": "batsim"},
    }
    (container,) = client.containers_made
    assert container.calls[-1] == "remove(force=True)" and "stop" not in container.calls  # exited by itself
    assert client.removed == [run["name"]]


def test_inputs_in_several_directories_and_output_beside_inputs(tmp_path, inputs, fake_mode):
    platform, workload = inputs
    other = tmp_path / "ev"
    other.mkdir()
    events = other / "events.json"
    events.write_text("[]")
    client = FakeDocker(tmp_path, runner=FAKE)
    fake_mode("ok")
    launch("docker", create("fcfs", {}), platform, [workload], events=[events], export=str(platform.parent / "o"),
           timeout=20, docker_client=client)
    run = client.runs[0]
    assert run["image"] == DEFAULT_IMAGE
    assert run["volumes"] == [f"{platform.parent}:/data/in/0:ro", f"{other}:/data/in/1:ro",
                              f"{platform.parent}:/data/out:rw"]
    assert run["command"][run["command"].index("--events") + 1] == "/data/in/1/events.json"


def test_image_from_environment(tmp_path, inputs, fake_mode, monkeypatch):
    platform, workload = inputs
    fake_mode("ok")
    monkeypatch.setenv("BATSCHED_PY_BATSIM_IMAGE", "oarteam/batsim:4.2.1")
    client = FakeDocker(tmp_path, runner=FAKE)
    launch("docker", create("fcfs", {}), platform, [workload], export=str(tmp_path / "out"), timeout=20,
           docker_client=client)
    launch("docker", create("fcfs", {}), platform, [workload], export=str(tmp_path / "out"), timeout=20,
           docker_client=client, image="mirror.example/batsim:4.2.0")
    assert [r["image"] for r in client.runs] == ["oarteam/batsim:4.2.1", "mirror.example/batsim:4.2.0"]


def test_container_crash_is_reported_and_removed(tmp_path, inputs, fake_mode):
    platform, workload = inputs
    fake_mode("crash")
    client = FakeDocker(tmp_path, runner=FAKE)
    with pytest.raises(LaunchError, match=r"batsim container batsched-py-batsim-\S+ \(oarteam/batsim:4\S*\) "
                                          r"exited with code 3 before the simulation ended; "
                                          r"last output: .*fake failure"):
        launch("docker", create("fcfs", {}), platform, [workload], export=str(tmp_path / "out"), timeout=20,
               docker_client=client)
    assert client.removed == [client.runs[0]["name"]]


def test_silent_container_is_stopped_and_removed(tmp_path, inputs, fake_mode):
    platform, workload = inputs
    pidfile = fake_mode("hang")
    client = FakeDocker(tmp_path, runner=FAKE)
    with pytest.raises(LaunchError, match="went silent"):
        launch("docker", create("fcfs", {}), platform, [workload], export=str(tmp_path / "out"), timeout=1,
               docker_client=client)
    (container,) = client.containers_made
    assert container.calls[-2:] == ["stop", "remove(force=True)"]
    assert not alive(int(pidfile.read_text()))


def test_interrupt_removes_the_container(tmp_path, inputs, fake_mode):
    platform, workload = inputs
    pidfile = fake_mode("hang")
    client = FakeDocker(tmp_path, runner=FAKE)
    client.interrupt_on_reload = True
    with pytest.raises(KeyboardInterrupt):
        launch("docker", create("fcfs", {}), platform, [workload], export=str(tmp_path / "out"), timeout=30,
               docker_client=client)
    (container,) = client.containers_made
    assert container.calls[-1] == "remove(force=True)"
    assert client.removed == [container.name]
    assert not alive(int(pidfile.read_text()))


def test_run_failure_is_one_line_and_cleans_up_by_name(tmp_path, inputs):
    platform, workload = inputs
    client = FakeDocker(tmp_path)
    client.run_error = RuntimeError("404 Client Error: pull access denied for oarteam/batsim,\nrepository does not exist")
    with pytest.raises(LaunchError, match=r"docker backend: cannot start oarteam/batsim:\S+: 404 Client Error: "
                                          r"pull access denied for oarteam/batsim, repository does not exist$"):
        launch("docker", create("fcfs", {}), platform, [workload], export=str(tmp_path / "out"),
               docker_client=client)
    assert client.gets == [client.runs[0]["name"]]


def test_missing_input_is_reported_before_any_container(tmp_path, inputs):
    platform, _ = inputs
    client = FakeDocker(tmp_path)
    with pytest.raises(LaunchError, match=r"input file .*nope\.json not found"):
        launch("docker", create("fcfs", {}), platform, [tmp_path / "nope.json"], export=str(tmp_path / "out"),
               docker_client=client)
    assert client.runs == []


def test_missing_sdk_is_a_clear_error(tmp_path, inputs, monkeypatch):
    platform, workload = inputs
    monkeypatch.setitem(sys.modules, "docker", None)  # `import docker` now raises ImportError
    with pytest.raises(LaunchError, match=r"needs the Docker SDK for Python: pip install 'batsched_py\[docker\]'"):
        launch("docker", create("fcfs", {}), platform, [workload], export=str(tmp_path / "out"))


def test_unreachable_engine_is_a_clear_error(tmp_path, inputs, monkeypatch):
    docker = pytest.importorskip("docker")
    platform, workload = inputs
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with pytest.raises(LaunchError, match="docker backend: cannot reach the Docker engine"):
        launch("docker", create("fcfs", {}), platform, [workload], export=str(tmp_path / "out"))
    assert docker  # the SDK itself is installed; only the engine is missing


def test_output_folder_with_a_colon_is_reported_before_any_container(tmp_path, inputs):
    # Docker's HOST:CONTAINER:MODE volume syntax cannot hold it (inputs were checked, outputs not).
    platform, workload = inputs
    client = FakeDocker(tmp_path)
    with pytest.raises(LaunchError, match=r"docker backend: cannot mount .*a:b \(a ':' in the path\)"):
        launch("docker", create("fcfs", {}), platform, [workload], export=str(tmp_path / "a:b" / "out"),
               docker_client=client)
    assert client.runs == []


def test_the_environments_docker_backend_is_this_container(tmp_path, inputs, monkeypatch):
    """The environments' docker backend is the launcher's supervised container, driven request by
    request (transport/backend.py), and removed on close."""
    pytest.importorskip("gymnasium", reason="the environments need the rl extra")
    from batsched_py.envs.backends import make_backend
    from batsched_py.launcher import container
    from batsched_py.scheduler import Session
    from batsched_py.transport.backend import drive
    platform, workload = inputs
    client = FakeDocker(tmp_path)
    monkeypatch.setattr(container, "docker_client", lambda _=None: client)
    backend = make_backend("docker", platform, workload, output_prefix=str(tmp_path / "out" / "env"))
    try:
        drive(Session(create("fcfs", {})).handle, backend)
    finally:
        backend.close()
    want = launch("docker", create("fcfs", {}), platform, [workload], export=str(tmp_path / "out" / "launch"),
                  energy=True, timeout=20, docker_client=client)
    assert (tmp_path / "out" / "env_jobs.csv").read_text() == Path(f"{want}_jobs.csv").read_text()
    env_run, launch_run = client.runs
    assert env_run["name"].startswith(f"batsched-py-batsim-{os.getpid()}-")
    assert client.removed == [env_run["name"], launch_run["name"]]
