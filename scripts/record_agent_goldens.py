"""Record golden cases of the agent schedulers against a real Batsim 4.2.1 (tests/data/golden/<case>/).

Each case is laid out as the other golden cases (tests/data/golden/README in ../shared/golden):
``inputs/`` (platform, workload, events, the scheduler's options), ``transcript.jsonl.gz`` (every
request Batsim sent and the reply it got, through a recording proxy), Batsim's ``out_*.csv`` files and
``meta.json`` (Batsim's arguments and the scheduler's command, both run from the case folder).

    BATSCHED_PY_BATSIM=/opt/realbatsim/bin/batsim python scripts/record_agent_goldens.py [CASE ...]

A real Batsim is built by hand (../shared/real-batsim/README.md); it is never needed to run the tests,
which replay these recordings into the emulator.  A case on which Batsim aborts is not written: its
``[root/CRITICAL]`` line is printed and the script exits 1.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Callable

import zmq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from batsched_py.platforms.generate import plain_cluster, platform_xml  # noqa: E402
from batsched_py.platforms.volunteer import generate_pool, write_pool_platform  # noqa: E402
from batsched_py.agents.volunteer.mdp import VolunteerScheduler  # noqa: E402
from batsched_py.workloads.volunteer import generate_jobs, generate_logins, write_events  # noqa: E402

GOLDEN = ROOT / "tests" / "data" / "golden"
DEEPSHUTDOWN_DAY = ROOT / "workloads" / "deepshutdown" / "test" / "2_test_102.json"
LPC = ROOT / "workloads" / "elastic" / "lpc_egee_small.json"
Writers = dict[str, Callable[[Path], object]]       # an input file's name -> what writes it


def copy(src: Path) -> Callable[[Path], object]:
    return lambda dst: shutil.copyfile(src, dst)


def lpc_slice(nb_jobs: int, nb_res: int) -> Callable[[Path], object]:
    """The first ``nb_jobs`` jobs of the shipped LPC-EGEE window (single-core jobs), on ``nb_res`` hosts."""
    def write(dst: Path) -> None:
        w = json.loads(LPC.read_text())
        jobs = w["jobs"][:nb_jobs]
        used = {j["profile"] for j in jobs}
        dst.write_text(json.dumps({**w, "nb_res": nb_res, "jobs": jobs,
                                   "profiles": {k: v for k, v in w["profiles"].items() if k in used}}, indent=1))
    return write


def volunteer_inputs(seed: int) -> Writers:
    """A generated pool of 20 PCs in 3 rooms, with 2 days of logins and HTC jobs (the pool of tests/envs/test_volunteer)."""
    pool = generate_pool(20, 3, seed=seed)
    return {"pool.xml": lambda dst: write_pool_platform(pool, dst),
            "logins.jsonl": lambda dst: write_events(generate_logins(pool, 2, rate=0.6, seed=seed), dst, seed=seed),
            "jobs.json": lambda dst: dst.write_text(json.dumps(generate_jobs(2, 20, jobs_per_hour=3, miscreants=0.02,
                                                                            seed=seed), indent=1))}


def thermal_inputs() -> Writers:
    """8 processors of 24 cores (the shipped DQN's size), 300 one-core LPC-EGEE jobs."""
    return {"cluster_192.xml": lambda dst: dst.write_text(platform_xml(plain_cluster(192, 1e9), energy=False)),
            "lpc_300.json": lpc_slice(300, 192)}


DEEPSHUTDOWN_INPUTS = {"taurus_deepshutdown.xml": copy(ROOT / "platforms" / "taurus_deepshutdown.xml"),
                       "2_test_102.json": copy(DEEPSHUTDOWN_DAY)}
DEEPSHUTDOWN_ARGS = ["-p", "inputs/taurus_deepshutdown.xml", "-w", "inputs/2_test_102.json", "-E"]
VOLUNTEER_ARGS = ["-p", "inputs/pool.xml", "-w", "inputs/jobs.json", "--events", "inputs/logins.jsonl", "-E",
                  *VolunteerScheduler.batsim_flags]

#: case -> (inputs: file name -> writer, Batsim's arguments, scheduler, its options)
CASES: dict[str, tuple[Callable[[], Writers], list[str], str, dict]] = {
    "shutdown_agent_T5-deepshutdown-E": (lambda: DEEPSHUTDOWN_INPUTS, DEEPSHUTDOWN_ARGS, "shutdown-agent",
                                         {"policy": "T5"}),
    "shutdown_agent_ORstar-deepshutdown-E": (lambda: DEEPSHUTDOWN_INPUTS, DEEPSHUTDOWN_ARGS, "shutdown-agent",
                                             {"policy": "OR*", "workload": "inputs/2_test_102.json"}),
    "shutdown_agent_QB-deepshutdown-E": (lambda: DEEPSHUTDOWN_INPUTS, DEEPSHUTDOWN_ARGS, "shutdown-agent",
                                         {"policy": "QB"}),
    "scheduling_agent_SAF-deepshutdown-E": (lambda: DEEPSHUTDOWN_INPUTS, DEEPSHUTDOWN_ARGS, "scheduling-agent",
                                            {"policy": "SAF"}),
    # the shipped models (too big to copy into inputs/): re-record when they are retrained
    "deepshutdown-deepshutdown-E": (lambda: DEEPSHUTDOWN_INPUTS, DEEPSHUTDOWN_ARGS, "deepshutdown",
                                    {"model": "../../../../models/deepshutdown-taurus.zip"}),
    "deepscheduling-deepshutdown-E": (lambda: DEEPSHUTDOWN_INPUTS, DEEPSHUTDOWN_ARGS, "deepscheduling",
                                      {"model": "../../../../models/deepscheduling-taurus.zip"}),
    **{f"volunteer_agent_{policy}-pool20s{seed}-E": (
        partial(volunteer_inputs, seed), VOLUNTEER_ARGS, "volunteer-agent",
        {"policy": policy, "level": "cluster", "epsilon": 0.1} if policy == "bandit" else {"policy": policy})
       for policy in ("random", "bandit") for seed in (1, 2, 3)},
    "elastic_agent_EDF-elastic140-E": (
        lambda: {"elastic_140.xml": copy(ROOT / "platforms" / "elastic_140.xml"), "lpc_400.json": lpc_slice(400, 140)},
        ["-p", "inputs/elastic_140.xml", "-w", "inputs/lpc_400.json", "-E"], "elastic-agent",
        {"policy": "EDF", "mode": "elastic", "runtimes": "oracle", "workload": "inputs/lpc_400.json"}),
    "thermal_allocation_greedy-cluster192": (thermal_inputs, ["-p", "inputs/cluster_192.xml", "-w", "inputs/lpc_300.json"],
                                             "thermal-allocation", {"policy": "greedy"}),
    "dqn_allocation-cluster192": (
        lambda: {**thermal_inputs(), "dqn-a0.5.zip": copy(ROOT / "models" / "thermal-allocation-dqn-a0.5.zip")},
        ["-p", "inputs/cluster_192.xml", "-w", "inputs/lpc_300.json"], "dqn-allocation",
        {"model": "inputs/dqn-a0.5.zip"}),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def receive(sock: zmq.Socket, procs: list[subprocess.Popen]) -> bytes | None:
    """The next message on ``sock``; None once Batsim or the scheduler has exited."""
    while True:
        try:
            return sock.recv()
        except zmq.Again:
            if any(proc.poll() is not None for proc in procs):
                return None


def relay(front: zmq.Socket, back: zmq.Socket, procs: list[subprocess.Popen], case_dir: Path) -> list[dict]:
    """Forward every Batsim request to the scheduler and its reply back; the exchange, paths made relative."""
    prefix = str(case_dir) + "/"
    lines: list[dict] = []
    for sock in (front, back):
        sock.setsockopt(zmq.RCVTIMEO, 200)
    while True:
        request = receive(front, procs)
        if request is None:
            return lines
        back.send(request)
        reply = receive(back, procs)
        if reply is None:
            return lines
        front.send(reply)
        lines += [{"from": side, "msg": json.loads(raw.decode().replace(prefix, ""))}
                  for side, raw in (("batsim", request), ("scheduler", reply))]
        if any(e["type"] == "SIMULATION_ENDS" for e in lines[-2]["msg"]["events"]):
            return lines


def finish(proc: subprocess.Popen, grace: float = 60.0) -> int:
    """The exit status; a process still waiting after ``grace`` s (its peer died) is stopped (-15)."""
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.terminate()
        proc.wait()
        return -15


def record(case: str, batsim: list[str], keep: Path | None) -> bool:
    make_inputs, args, scheduler, options = CASES[case]
    work = GOLDEN / f".{case}.recording"       # beside the cases: options may name files of the repository
    shutil.rmtree(work, ignore_errors=True)
    (work / "inputs").mkdir(parents=True)
    for name, write in make_inputs().items():
        write(work / "inputs" / name)
    (work / "inputs" / "scheduler.json").write_text(json.dumps(options, indent=1) + "\n")
    sched_cmd = ["batsched-py", "serve", "--scheduler", scheduler, "--config", "inputs/scheduler.json"]
    front_port, back_port = free_port(), free_port()
    ctx: zmq.Context = zmq.Context.instance()
    front, back = ctx.socket(zmq.REP), ctx.socket(zmq.REQ)
    for s in (front, back):
        s.setsockopt(zmq.LINGER, 0)
    front.bind(f"tcp://127.0.0.1:{front_port}")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(work / "scheduler.log", "w") as slog, open(work / "batsim.log", "w") as blog:
        sched = subprocess.Popen([*sched_cmd, "-s", f"tcp://127.0.0.1:{back_port}"], cwd=work, env=env,
                                 stdout=slog, stderr=subprocess.STDOUT)
        back.connect(f"tcp://127.0.0.1:{back_port}")
        start = time.monotonic()
        sim = subprocess.Popen([*batsim, "-s", f"tcp://127.0.0.1:{front_port}", "-e", "out", *args], cwd=work,
                               stdout=blog, stderr=subprocess.STDOUT)
        lines = relay(front, back, [sim, sched], work)
        rc, src = finish(sim), finish(sched)
        wall = time.monotonic() - start
    front.close()
    back.close()
    log = (work / "batsim.log").read_text()
    if rc != 0 or src != 0:
        critical = [line[:300] for line in log.splitlines() if "CRITICAL" in line] or [log[-300:]]
        print(f"{case}: ABORTED (batsim rc={rc}, scheduler rc={src}, {len(lines)} messages): "
              f"{' | '.join(critical)}\n  scheduler: {(work / 'scheduler.log').read_text()[-600:]}")
        if keep:
            shutil.copytree(work, keep / case, dirs_exist_ok=True)
        shutil.rmtree(work)
        return False
    with gzip.GzipFile(work / "transcript.jsonl.gz", "wb", mtime=0) as f:
        f.write("".join(json.dumps(line) + "\n" for line in lines).encode())
    meta = {"name": case, "batsim_version": "4.2.1", "simgrid_version": "3.32.0", "batsim_args": args,
            "scheduler_command": sched_cmd, "scheduler_options": options, "batsim_exit_code": rc,
            "batsim_wall_seconds": round(wall, 3),
            "note": "scheduler and batsim talked through a recording proxy (scripts/record_agent_goldens.py); "
                    "run from this directory"}
    (work / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    (work / "scheduler.log").unlink()
    (work / "out_schedule.trace").unlink(missing_ok=True)     # Batsim's Pajé trace: no golden case keeps it
    if len(log) > 20000:
        (work / "batsim.log").unlink()
    shutil.rmtree(GOLDEN / case, ignore_errors=True)
    work.rename(GOLDEN / case)
    print(f"{case}: {len(lines)} messages, {wall:.1f} s")
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", help=f"cases to record (default: all): {', '.join(CASES)}")
    ap.add_argument("--keep-aborted", type=Path, help="copy an aborted case's folder (logs included) here")
    a = ap.parse_args(argv)
    batsim = shlex.split(os.environ.get("BATSCHED_PY_BATSIM", "batsim"))
    unknown = [c for c in a.cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; known: {', '.join(CASES)}")
    results = [record(case, batsim, a.keep_aborted) for case in a.cases or CASES]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
