"""Record a scenario for minibatsim: run the emulator with a built-in policy and keep the exchange.

    scenario.py CASE_DIR -p PLATFORM -w WORKLOAD --scheduler fcfs [--config JSON] [-E]

writes CASE_DIR/meta.json (Batsim's arguments, paths relative to CASE_DIR) and
CASE_DIR/transcript.jsonl.gz (the emulator's requests and the policy's replies, as the golden cases
record them).  Then ``run.sh CASE_DIR`` replays the replies in minibatsim (real SimGrid) and
compares its requests with the emulator's, message by message.  Run with the package importable
(PYTHONPATH=the repository)."""
import argparse
import gzip
import json
import os
from pathlib import Path

from batsched_py.emulator import simulate
from batsched_py.scheduler import Session, create


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("case_dir", type=Path)
    ap.add_argument("-p", "--platform", required=True)
    ap.add_argument("-w", "--workload", required=True)
    ap.add_argument("--scheduler", required=True)
    ap.add_argument("--config", default="{}")
    ap.add_argument("-E", "--energy", action="store_true")
    a = ap.parse_args()
    a.case_dir.mkdir(parents=True, exist_ok=True)
    session = Session(create(a.scheduler, json.loads(a.config)))
    lines = []

    def exchange(request):
        reply = session.handle(request)
        lines.append({"from": "batsim", "msg": request.to_data()})
        lines.append({"from": "scheduler", "msg": reply.to_data()})
        return reply

    simulate(a.platform, [a.workload], exchange, energy=a.energy)
    rel = [os.path.relpath(x, a.case_dir) for x in (a.platform, a.workload)]
    args = ["-p", rel[0], "-w", rel[1]] + (["-E"] if a.energy else [])
    (a.case_dir / "meta.json").write_text(json.dumps(
        {"batsim_args": args, "scheduler": a.scheduler, "config": json.loads(a.config)}, indent=1) + "\n")
    with gzip.open(a.case_dir / "transcript.jsonl.gz", "wt") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    print(f"{a.case_dir}: {len(lines) // 2} requests")


if __name__ == "__main__":
    main()
