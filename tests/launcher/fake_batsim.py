"""A tiny stand-in for the ``batsim`` binary, for the failure paths of the launcher tests.

Accepts Batsim's flags (``-p -w -e -E -s --events --mmax``) and behaves as ``FAKE_BATSIM_MODE`` says:
- ``ok``: SIMULATION_BEGINS (128 hosts, no job) then SIMULATION_ENDS, then writes ``{export}_jobs.csv``;
- ``crash``: prints an error and exits 3 at once;
- ``hang``: connects, sends nothing, sleeps;
- ``hang-ignore-term``: the same, ignoring SIGTERM (only SIGKILL ends it);
- ``nooutput``: like ``ok`` but writes no output file;
- ``exit-after``: like ``ok`` but exits 4 after the simulation ended;
- ``critical``: SIMULATION_BEGINS, then, as Batsim aborting on the reply, closes its socket, prints
  a ``[root/CRITICAL]`` line (then some noise) and exits 1.
``FAKE_BATSIM_PIDFILE``: write the pid there first.
"""
import argparse
import json
import os
import signal
import sys
import time

import zmq


def begins() -> dict:
    resources = [{"id": i, "name": f"host{i}", "state": "idle", "properties": {}, "zone_properties": {}}
                 for i in range(128)]
    return {"nb_resources": 128, "nb_compute_resources": 128, "nb_storage_resources": 0,
            "allow_compute_sharing": False, "allow_storage_sharing": True,
            "config": {"redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
                       "redis-prefix": "default", "profiles-forwarded-on-submission": False,
                       "dynamic-jobs-enabled": False, "dynamic-jobs-acknowledged": False,
                       "profile-reuse-enabled": False, "sched-config": "", "forward-unknown-events": False},
            "compute_resources": resources, "storage_resources": [], "workloads": {"w0": "w.json"},
            "profiles": {"w0": {}}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-p")
    ap.add_argument("-w", action="append")
    ap.add_argument("-e", default="out")
    ap.add_argument("-E", action="store_true")
    ap.add_argument("-s", default="tcp://127.0.0.1:28000")
    ap.add_argument("--events", action="append")
    ap.add_argument("--mmax")
    args, _unknown = ap.parse_known_args()
    mode = os.environ.get("FAKE_BATSIM_MODE", "ok")
    if os.environ.get("FAKE_BATSIM_PIDFILE"):
        with open(os.environ["FAKE_BATSIM_PIDFILE"], "w") as f:
            f.write(str(os.getpid()))
    if mode == "crash":
        print("[batsim/ERROR] fake failure: cannot read platform", file=sys.stderr)
        return 3
    if mode == "hang-ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sock = zmq.Context.instance().socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(args.s)
    if mode.startswith("hang"):
        print("fake batsim: connected, now silent", file=sys.stderr, flush=True)
        while True:
            time.sleep(1)
    if mode == "critical":
        sock.send_string(json.dumps({"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS",
                                                               "data": begins()}]}))
        sock.recv()
        sock.close()
        time.sleep(0.5)      # (the scheduler sees the connection lost before the exit)
        print("[master_host:server:(1) 0.000000] [server/INFO] Job w0!1 SUBMITTED.", file=sys.stderr)
        print("[master_host:server:(1) 0.000000] /src/batsim/src/server.cpp:1011: [root/CRITICAL] Job 'w0!1': "
              "Invalid job allocation ('0-11'): machine 0 (hostname='0') is not in a computation pstate (ps=0)",
              file=sys.stderr)
        print("Backtrace (displayed in actor server):", file=sys.stderr)
        return 1
    for now, event in ((0.0, {"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": begins()}),
                       (1.0, {"timestamp": 1.0, "type": "SIMULATION_ENDS", "data": {}})):
        sock.send_string(json.dumps({"now": now, "events": [event]}))
        json.loads(sock.recv())
    sock.close()
    if mode != "nooutput":
        with open(f"{args.e}_jobs.csv", "w") as f:
            f.write("job_id,workload_name\n")
    print("fake batsim: simulation ended", file=sys.stderr)
    return 4 if mode == "exit-after" else 0


if __name__ == "__main__":
    sys.exit(main())
