#!/usr/bin/env python3
"""Round-trip benchmark of ``batsched-py serve`` against pybatsim, over real TCP loopback ZeroMQ.

A fake Batsim (this script, a ZeroMQ REQ client) drives a scheduler process exactly as Batsim
would: SIMULATION_BEGINS with N compute hosts, one JOB_SUBMITTED per submission time, and
JOB_COMPLETED at start + delay for every EXECUTE_JOB it receives (REQUESTED_CALL for
CALL_ME_LATER).  It keeps a small model of time and allocations and refuses a reply that would
start a job on busy hosts, so the exchange stays realistic for any policy.

Timed: from just before ``send`` to just after ``recv`` of each message (JSON encoding of the
request and decoding of the reply are outside), SIMULATION_BEGINS and SIMULATION_ENDS excluded.

    python scripts/bench_serve.py                    # our fcfs and easy vs pybatsim easyBackfill
    python scripts/bench_serve.py --scheduler easy --jobs 2000 --runs 5
    python scripts/bench_serve.py --scheduler easy --no-pybatsim --profile prof.out   # cProfile our server
    python scripts/bench_serve.py --server-python /path/to/venv/bin/python   # also an installed (compiled) build
    python scripts/bench_serve.py --parallel 2 4   # what polling costs simulations run side by side
"""
from __future__ import annotations

import argparse
import heapq
import importlib
import json
import math
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zmq

ROOT = Path(__file__).resolve().parents[1]
CONFIG = {"redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379, "redis-prefix": "default",
          "profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": False,
          "dynamic-jobs-acknowledged": False, "profile-reuse-enabled": False, "sched-config": "",
          "forward-unknown-events": False}


# --- workload ------------------------------------------------------------------------------------

def make_workload(nb_jobs: int, nb_hosts: int, seed: int, load: float = 0.7):
    """Delay jobs: sizes 1..nb_hosts (small ones common), 100 delay profiles, walltime >= delay."""
    rng = random.Random(seed)
    delays = [round(rng.uniform(30, 3000), 2) for _ in range(100)]
    sizes = [s for s in (1, 1, 1, 2, 2, 4, 4, 8, 8, 16, 32, 64) if s <= nb_hosts]
    mean_work = statistics.fmean(sizes) * statistics.fmean(delays)
    interarrival = mean_work / (nb_hosts * load)
    jobs, t = [], 0.0
    for i in range(nb_jobs):
        t += rng.expovariate(1 / interarrival)
        prof = rng.randrange(len(delays))
        jobs.append({"id": f"w0!{i}", "subtime": round(t, 6), "res": rng.choice(sizes), "profile": f"p{prof}",
                     "walltime": math.ceil(delays[prof] * rng.uniform(1.05, 3.0)), "_delay": delays[prof]})
    profiles = {f"p{i}": {"type": "delay", "delay": d} for i, d in enumerate(delays)}
    return jobs, profiles


def begins_message(nb_hosts: int, profiles: dict) -> dict:
    hosts = [{"id": i, "name": f"host{i}", "state": "idle", "properties": {"role": ""}, "zone_properties": {}}
             for i in range(nb_hosts)]
    data = {"nb_resources": nb_hosts, "nb_compute_resources": nb_hosts, "nb_storage_resources": 0,
            "allow_compute_sharing": False, "allow_storage_sharing": True, "config": CONFIG,
            "compute_resources": hosts, "storage_resources": [], "workloads": {"w0": "bench.json"},
            "profiles": {"w0": profiles}}
    return {"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": data}]}


def parse_alloc(text: str) -> list[int]:
    hosts = []
    for part in text.split():
        lo, _, hi = part.partition("-")
        hosts.extend(range(int(lo), int(hi or lo) + 1))
    return hosts


# --- the fake Batsim --------------------------------------------------------------------------------

class BenchError(RuntimeError):
    pass


def drive(endpoint: str, jobs: list[dict], profiles: dict, nb_hosts: int, proc: subprocess.Popen,
          label: str, timeout: float = 30.0, progress: bool = True) -> dict:
    """Play Batsim until every job ended; returns timings (ns per round trip) and counters."""
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    poller = zmq.Poller()
    poller.register(sock, zmq.POLLIN)

    def exchange(msg: dict, timed: bool) -> dict:
        raw = json.dumps(msg).encode()
        t0 = time.perf_counter_ns()
        sock.send(raw)
        deadline = time.monotonic() + timeout
        while not poller.poll(100):
            if proc.poll() is not None:
                raise BenchError(f"{label}: server exited with code {proc.returncode}")
            if time.monotonic() > deadline:
                raise BenchError(f"{label}: no reply within {timeout} s")
        reply = sock.recv()
        t1 = time.perf_counter_ns()
        if timed:
            rtts.append(t1 - t0)
        return json.loads(reply)

    by_id = {j["id"]: j for j in jobs}
    rtts: list[int] = []
    busy: set[int] = set()
    pending: list = []          # heap of (time, seq, kind, job_id, hosts)
    seq = 0
    next_sub = 0
    ended = 0
    now = 0.0
    counts = {"messages": 0, "executed": 0, "rejected": 0, "calls": 0}
    last_progress = time.monotonic()
    try:
        exchange(begins_message(nb_hosts, profiles), timed=False)
        while ended < len(jobs):
            t_sub = jobs[next_sub]["subtime"] if next_sub < len(jobs) else math.inf
            t_evt = pending[0][0] if pending else math.inf
            t = min(t_sub, t_evt)
            if t == math.inf:
                raise BenchError(f"{label}: deadlock at t={now}: {len(jobs) - ended} jobs neither started "
                                 f"nor rejected and nothing pending")
            now = max(now, t)
            events = []
            while pending and pending[0][0] <= t:
                _, _, kind, job_id, hosts = heapq.heappop(pending)
                if kind == "end":
                    busy.difference_update(hosts)
                    ended += 1
                    events.append({"timestamp": now, "type": "JOB_COMPLETED",
                                   "data": {"job_id": job_id, "job_state": "COMPLETED_SUCCESSFULLY",
                                            "return_code": 0, "alloc": hosts_text(hosts)}})
                else:
                    events.append({"timestamp": now, "type": "REQUESTED_CALL", "data": {}})
            if t_sub <= t:
                job = jobs[next_sub]
                next_sub += 1
                events.append({"timestamp": now, "type": "JOB_SUBMITTED",
                               "data": {"job_id": job["id"],
                                        "job": {k: v for k, v in job.items() if not k.startswith("_")}}})
                if next_sub == len(jobs):
                    events.append({"timestamp": now, "type": "NOTIFY",
                                   "data": {"type": "no_more_static_job_to_submit"}})
            reply = exchange({"now": now, "events": events}, timed=True)
            counts["messages"] += 1
            now = max(now, reply["now"])
            for ev in reply["events"]:
                kind, data = ev["type"], ev["data"]
                if kind == "EXECUTE_JOB":
                    hosts = parse_alloc(data["alloc"])
                    job = by_id[data["job_id"]]
                    if len(hosts) != job["res"] or busy.intersection(hosts):
                        raise BenchError(f"{label}: EXECUTE_JOB {job['id']} on {data['alloc']} at t={now}: "
                                         f"needs {job['res']} hosts, busy {sorted(busy.intersection(hosts))}")
                    busy.update(hosts)
                    counts["executed"] += 1
                    seq += 1
                    heapq.heappush(pending, (ev["timestamp"] + job["_delay"], seq, "end", job["id"], hosts))
                elif kind == "REJECT_JOB":
                    counts["rejected"] += 1
                    ended += 1
                elif kind == "CALL_ME_LATER":
                    counts["calls"] += 1
                    seq += 1
                    heapq.heappush(pending, (max(data["timestamp"], now), seq, "call", "", []))
            if progress and time.monotonic() - last_progress > 0.5:
                last_progress = time.monotonic()
                print(f"\r  {label}: {counts['messages']} messages, {ended}/{len(jobs)} jobs done, "
                      f"t={now:.0f}   ", end="", file=sys.stderr, flush=True)
        exchange({"now": now, "events": [{"timestamp": now, "type": "SIMULATION_ENDS", "data": {}}]}, timed=False)
    finally:
        sock.close(linger=0)
        if progress:
            print("\r" + " " * 78 + "\r", end="", file=sys.stderr, flush=True)
    counts["rtts"] = rtts
    counts["makespan"] = now
    return counts


def hosts_text(hosts: list[int]) -> str:
    hosts = sorted(hosts)
    parts, start = [], None
    for i, h in enumerate(hosts):
        if start is None:
            start = h
        if i + 1 == len(hosts) or hosts[i + 1] != h + 1:
            parts.append(str(start) if start == h else f"{start}-{h}")
            start = None
    return " ".join(parts)


# --- servers -----------------------------------------------------------------------------------------

def free_endpoint() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def ours_command(scheduler: str, endpoint: str, profile: str | None, busy_wait: float,
                 python: str | None = None) -> list[str]:
    prefix = [python or sys.executable]
    if profile:
        prefix += ["-m", "cProfile", "-o", os.path.abspath(profile)]
    return prefix + ["-m", "batsched_py.cli", "serve", "--scheduler", scheduler, "--socket", endpoint,
                     "--quiet", "--timeout", "60", "--busy-wait", f"{busy_wait:g}"]


def pybatsim_installed(scheduler: str) -> bool:
    try:
        import batsim.cmds.launcher  # noqa: F401
        importlib.import_module(f"schedulers.{scheduler}")
    except ImportError:
        return False
    return True


def pybatsim_command(scheduler: str, endpoint: str) -> list[str]:
    return [sys.executable, "-m", "batsim.cmds.launcher", scheduler, "-s", endpoint, "-v", "warning"]


def run_once(label: str, command_for, jobs, profiles, nb_hosts, source_tree: bool = True,
             progress: bool = True) -> dict:
    """One server run; ``source_tree``: import batsched_py from this checkout, else as installed."""
    endpoint = free_endpoint()
    env = dict(os.environ)
    if source_tree:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # A scratch directory: pybatsim writes out_events.csv where it runs.
    scratch = tempfile.TemporaryDirectory(prefix="bench_serve_")
    proc = subprocess.Popen(command_for(endpoint), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                            cwd=scratch.name)
    try:
        t0 = time.perf_counter()
        result = drive(endpoint, jobs, profiles, nb_hosts, proc, label, progress=progress)
        result["wall"] = time.perf_counter() - t0
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        if code not in (0, None):
            err = proc.stderr.read().decode(errors="replace").strip().splitlines()
            print(f"  {label}: server exited with {code}: {err[-1] if err else ''}", file=sys.stderr)
        return result
    except BenchError:
        err = b""
        if proc.poll() is not None:
            err = proc.stderr.read()
        if err:
            print(err.decode(errors="replace"), file=sys.stderr)
        raise
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        scratch.cleanup()


ECHO_SERVER = """
import sys, zmq
sock = zmq.Context.instance().socket(zmq.REP)
sock.bind(sys.argv[1])
poll = sys.argv[2] == "poll"
while True:
    if poll:  # like serve's --busy-wait: never sleep in recv
        while True:
            try:
                request = sock.recv(zmq.NOBLOCK)
                break
            except zmq.Again:
                pass
    else:
        request = sock.recv()
    if request == b"stop":
        sock.send(b"")
        break
    sock.send(b'{"now":1.0,"events":[{"timestamp":1.0,"type":"EXECUTE_JOB","data":{"job_id":"w0!1","alloc":"0-3"}}]}')
"""


ZMTP_ECHO_SERVER = """
import sys
from batsched_py.transport.endpoints import bind_rep
rep = bind_rep(sys.argv[1], "zmtp")
while True:
    request = rep.poll(1.0) if sys.argv[2] == "poll" else None
    while request is None:
        request = rep.wait(1.0)
    if request == b"stop":
        rep.send(b"")
        break
    rep.send(b'{"now":1.0,"events":[{"timestamp":1.0,"type":"EXECUTE_JOB","data":{"job_id":"w0!1","alloc":"0-3"}}]}')
rep.close()
"""


def echo_floor(mode: str, exchanges: int = 5000, transport: str = "libzmq") -> float:
    """Median round trip (us) to a REP server that does no work: the transport and OS floor.

    mode "block" sleeps in recv like pybatsim; "poll" polls like ``serve --busy-wait``.
    transport "libzmq" is pyzmq's REP socket (pybatsim's), "zmtp" is serve's own endpoint.
    On a small VM this floor moves a lot with how busy the CPUs are (idle vCPUs wake slowly),
    so it is measured in the same run as the servers.
    """
    endpoint = free_endpoint()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    script = ZMTP_ECHO_SERVER if transport == "zmtp" else ECHO_SERVER
    proc = subprocess.Popen([sys.executable, "-c", script, endpoint, mode], env=env)
    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 10000)
    sock.connect(endpoint)
    request = json.dumps({"now": 10.0, "events": [{"timestamp": 10.0, "type": "JOB_SUBMITTED", "data": {
        "job_id": "w0!1", "job": {"id": "w0!1", "subtime": 10, "res": 4, "walltime": 100, "profile": "p"}}}]}).encode()
    rtts = []
    try:
        for _ in range(exchanges):
            t0 = time.perf_counter_ns()
            sock.send(request)
            sock.recv()
            rtts.append(time.perf_counter_ns() - t0)
        sock.send(b"stop")
        sock.recv()
    finally:
        sock.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
    return statistics.median(rtts) / 1000


def summarise(rtts_ns: list[int]) -> dict:
    us = sorted(x / 1000 for x in rtts_ns)
    return {"median": statistics.median(us), "p90": us[int(0.9 * (len(us) - 1))], "mean": statistics.fmean(us),
            "msgs_per_s": len(us) / (sum(us) / 1e6)}


def installed_build(python: str) -> str:
    """How ``python`` runs batsched_py: "batsched-py (compiled: N modules)" or "batsched-py (pure)"."""
    out = subprocess.run([python, "-c", "import batsched_py; print(len(batsched_py.compiled_modules()))"],
                         capture_output=True, text=True, cwd=tempfile.gettempdir())
    if out.returncode != 0:
        raise SystemExit(f"--server-python {python}: cannot import batsched_py: "
                         f"{(out.stderr.strip().splitlines() or ['?'])[-1]}")
    count = int(out.stdout)
    return f"batsched-py (compiled: {count} modules)" if count else "batsched-py (pure, installed)"


def unknown_schedulers(names: list[str]) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from batsched_py.scheduler import available
    return [name for name in names if name not in available()]


EMULATE_INPUTS = ("platforms/energy_platform_homogeneous_no_net_128.xml", "workloads/kth_sp2_first2000.json")


def _parallel_member(args: tuple) -> float:
    """One of the simulations of a parallel run (in a worker process): its wall time (s).

    Peer "fake": this script's fake Batsim on a generated workload.  Peer "emulate": ``batsched-py
    emulate`` (Batsim's event loop, heavier per message) on the first 2,000 KTH-SP2 jobs."""
    peer, scheduler, busy_wait, nb_jobs, nb_hosts, seed, load = args
    if peer == "fake":
        jobs, profiles = make_workload(nb_jobs, nb_hosts, seed, load)
        return run_once(f"{scheduler} (seed {seed})", lambda ep: ours_command(scheduler, ep, None, busy_wait),
                        jobs, profiles, nb_hosts, progress=False)["wall"]
    endpoint = free_endpoint()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    with tempfile.TemporaryDirectory(prefix="bench_serve_") as scratch:
        t0 = time.perf_counter()
        server = subprocess.Popen(ours_command(scheduler, endpoint, None, busy_wait), env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        batsim = subprocess.run([sys.executable, "-m", "batsched_py.cli", "emulate", "-p", EMULATE_INPUTS[0],
                                 "-w", EMULATE_INPUTS[1], "-s", endpoint, "-e", f"{scratch}/out"],
                                cwd=ROOT, env=env, capture_output=True, text=True)
        _, err = server.communicate(timeout=60)
        wall = time.perf_counter() - t0
    if batsim.returncode or server.returncode:
        raise BenchError(f"emulate exited with {batsim.returncode} ({batsim.stderr.strip()[-200:]}), "
                         f"serve with {server.returncode} ({err.decode(errors='replace').strip()[-200:]})")
    return wall


def parallel_walls(counts: list[int], scheduler: str, busy_wait: float, args) -> dict:
    """Wall time (s) of N simulations started together, for each N in ``counts``, sleeping in
    recv and polling for ``busy_wait`` us, interleaved; the median over ``args.runs`` runs."""
    from concurrent.futures import ProcessPoolExecutor
    walls: dict = {}
    for n in counts:
        for r in range(args.runs):
            for mode in (0.0, busy_wait):
                members = [(args.peer, scheduler, mode, args.jobs, args.hosts, args.seed + k, args.load)
                           for k in range(n)]
                with ProcessPoolExecutor(n) as pool:
                    list(pool.map(abs, range(n)))       # (workers started before the clock)
                    t0 = time.perf_counter()
                    list(pool.map(_parallel_member, members))
                    wall = time.perf_counter() - t0
                walls.setdefault((n, mode), []).append(wall)
                print(f"  run {r + 1}/{args.runs}: {n} x {scheduler} {'polling' if mode else 'sleeping'}: "
                      f"{wall:.2f} s", file=sys.stderr)
    return {key: statistics.median(values) for key, values in walls.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scheduler", nargs="+", default=["fcfs", "easy"], metavar="NAME",
                    help="our policies (default: %(default)s: the round-trip target names FCFS or EASY, "
                         "against pybatsim's easyBackfill)")
    ap.add_argument("--jobs", type=int, default=5000)
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--runs", type=int, default=3, help="runs per server (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--load", type=float, default=0.7, help="offered load (default %(default)s)")
    ap.add_argument("--busy-wait", type=float, default=1000.0, metavar="US",
                    help="also run our server with serve --busy-wait US (default %(default)g; 0: only the "
                         "default, sleeping in recv as pybatsim does)")
    ap.add_argument("--server-python", metavar="PYTHON",
                    help="also run our server (with --busy-wait) under this interpreter, batsched_py as installed "
                         "there: e.g. a venv holding the compiled build (README, 'Compiled build')")
    ap.add_argument("--pybatsim", nargs="+", default=["easyBackfill"], metavar="NAME",
                    help="pybatsim schedulers to run in the same harness, each a reference for the ratios "
                         "(default: %(default)s; schedFcfs is pybatsim's FCFS)")
    ap.add_argument("--no-pybatsim", action="store_true", help="do not run pybatsim")
    ap.add_argument("--profile", metavar="FILE", help="run our server under cProfile, stats to FILE (one run)")
    ap.add_argument("--parallel", type=int, nargs="+", metavar="N",
                    help="instead: run N simulations at once (each a Batsim side and our server, seeds "
                         "SEED..SEED+N-1), sleeping in recv and then with --busy-wait, and print their total "
                         "wall times: what polling costs or gains when simulations share the cores")
    ap.add_argument("--peer", choices=("fake", "emulate"), default="fake",
                    help="with --parallel, the Batsim side: this script's fake Batsim (default), or batsched-py "
                         "emulate on the first 2,000 KTH-SP2 jobs (a heavier peer, like real Batsim)")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = ap.parse_args(argv)
    if args.parallel and (min(args.parallel) < 1 or not args.busy_wait):
        ap.error("--parallel takes counts >= 1, and compares sleeping with a --busy-wait above 0")
    if args.peer != "fake" and not args.parallel:
        ap.error("--peer only applies to --parallel runs (the round-trip runs use the fake Batsim)")
    unknown = unknown_schedulers(args.scheduler)
    if unknown:
        ap.error(f"unknown scheduler(s) {', '.join(unknown)} (see batsched-py list-schedulers)")
    if args.profile and len(args.scheduler) > 1:
        ap.error("--profile times one policy: give a single --scheduler")
    if args.parallel:
        return print_parallel(args)
    jobs, profiles = make_workload(args.jobs, args.hosts, args.seed, args.load)
    print(f"workload: {len(jobs)} delay jobs, {args.hosts} hosts, load {args.load}, seed {args.seed}; "
          f"{args.runs} run(s) per server", file=sys.stderr)

    # (label, command for an endpoint, whether batsched_py comes from this checkout)
    servers = []
    build = installed_build(args.server_python) if args.server_python else None
    for name in args.scheduler:
        servers.append((f"batsched-py {name}", lambda ep, name=name: ours_command(name, ep, args.profile, 0.0), True))
        if args.busy_wait and not args.profile:
            servers.append((f"batsched-py {name} --busy-wait {args.busy_wait:g}",
                            lambda ep, name=name: ours_command(name, ep, None, args.busy_wait), True))
            if build:
                servers.append((f"{build} {name} --busy-wait {args.busy_wait:g}",
                                lambda ep, name=name: ours_command(name, ep, None, args.busy_wait,
                                                                   args.server_python), False))
    references = []
    if not args.no_pybatsim and not args.profile:
        for name in args.pybatsim:
            if not pybatsim_installed(name):
                print(f"pybatsim scheduler {name} not installed: skipping (pip install --no-deps pybatsim==3.2.1 "
                      "procset sortedcontainers docopt)", file=sys.stderr)
                continue
            references.append(f"pybatsim {name}")
            servers.append((references[-1], lambda ep, name=name: pybatsim_command(name, ep), True))
    runs = 1 if args.profile else args.runs
    results: dict[str, list[dict]] = {label: [] for label, _, _ in servers}
    floors: dict[tuple[str, str], list[float]] = {(t, m): [] for t in ("libzmq", "zmtp") for m in ("block", "poll")}
    for r in range(runs):
        for (transport, mode), values in floors.items():
            values.append(echo_floor(mode, transport=transport))
            print(f"  run {r + 1}/{runs} transport floor ({transport} echo server, {mode}) median "
                  f"{values[-1]:7.1f} us", file=sys.stderr)
        for label, command_for, source_tree in servers:   # interleaved, so drifts hit all alike
            res = run_once(label, command_for, jobs, profiles, args.hosts, source_tree)
            s = summarise(res["rtts"])
            results[label].append(s | {k: res[k] for k in ("messages", "executed", "rejected", "makespan", "wall")})
            print(f"  run {r + 1}/{runs} {label:<36} median {s['median']:7.1f} us  p90 {s['p90']:7.1f} us  "
                  f"{s['msgs_per_s']:8.0f} msg/s  ({res['messages']} msgs, {res['executed']} started, "
                  f"makespan {res['makespan']:.0f}, {res['wall']:.1f} s)", file=sys.stderr)

    print()
    width = max(len(label) for label in results) + 2
    print(f"{'server':<{width}}{'median us':>10}{'p90 us':>10}{'msg/s':>10}   (median over {runs} run(s))")
    figures = {}
    for label, rs in results.items():
        fig = {k: statistics.median(x[k] for x in rs) for k in ("median", "p90", "msgs_per_s")}
        figures[label] = fig | {"runs": rs}
        print(f"{label:<{width}}{fig['median']:>10.1f}{fig['p90']:>10.1f}{fig['msgs_per_s']:>10.0f}")
    floor = {key: statistics.median(values) for key, values in floors.items()}
    for (transport, mode), value in floor.items():
        figures[f"echo_floor_{transport}_{mode}"] = value
    print("transport floor (do-nothing echo server, same run): " + "; ".join(
        f"{transport} {floor[transport, 'block']:.1f} us sleeping in recv, {floor[transport, 'poll']:.1f} us polling"
        for transport in ("libzmq", "zmtp")))
    for reference in references:
        theirs = figures[reference]
        suffix = "" if reference == "pybatsim easyBackfill" else f" vs {reference}"
        for label, _, _ in servers:
            if label in references:
                continue
            ours = figures[label]
            ratio = ours["median"] / theirs["median"]
            figures[f"ratio_median {label}{suffix}"] = ratio
            figures[f"ratio_p90 {label}{suffix}"] = ours["p90"] / theirs["p90"]
            verdict = "meets" if ratio <= 0.5 else "misses"
            print(f"ratio {label} / {reference}: median {ratio:.2f}, p90 {ours['p90'] / theirs['p90']:.2f} "
                  f"({verdict} the target of at most 0.5)")
    if args.profile:
        import pstats
        print(f"\ncProfile of our server written to {args.profile}; top 25 by internal time:")
        pstats.Stats(args.profile).sort_stats("tottime").print_stats(25)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return 0


def print_parallel(args) -> int:
    what = (f"{args.jobs} delay jobs, {args.hosts} hosts, load {args.load}, this script's fake Batsim" if args.peer == "fake"
            else f"batsched-py emulate -p {EMULATE_INPUTS[0]} -w {EMULATE_INPUTS[1]}")
    print(f"{os.cpu_count()} CPUs; each simulation: {what}; {args.runs} run(s) each", file=sys.stderr)
    figures = {}
    for scheduler in args.scheduler:
        walls = parallel_walls(args.parallel, scheduler, args.busy_wait, args)
        for n in args.parallel:
            sleeping, polling = walls[n, 0.0], walls[n, args.busy_wait]
            figures[f"{n} x {scheduler}"] = {"sleeping": sleeping, "polling": polling}
            print(f"{n} x {scheduler} at once: {sleeping:.2f} s sleeping in recv, {polling:.2f} s with --busy-wait "
                  f"{args.busy_wait:g} (x{polling / sleeping:.2f})")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        sys.exit(f"bench_serve: {exc}")
