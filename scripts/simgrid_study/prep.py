"""Turn a recorded case (delay and parallel_homogeneous jobs without communication; CALL_ME_LATER /
EXECUTE_JOB / SET_RESOURCE_STATE / REJECT_JOB replies) into minibatsim's inputs: jobs.txt,
replies.txt, and expected.txt (the recorded requests, one line each: now|event;event...).

A case folder holds meta.json (Batsim's arguments, paths relative to the folder) and the exchange,
transcript.jsonl(.gz) as the golden cases record it, or replies.jsonl(.gz) (the scheduler's
replies only; then no expected.txt).  Usage: prep.py CASE_DIR OUT_DIR"""
import gzip
import json
import sys
from pathlib import Path

from batsched_py.models.json_numbers import rapidjson_double


def host_ids(text):
    ids = []
    for part in text.split():
        a, _, b = part.partition("-")
        ids += range(int(a), int(b or a) + 1)
    return " ".join(map(str, ids))


def condense(msg) -> str:
    """A request of Batsim's as one line, as minibatsim prints it: its time with 6 decimals, then
    its events (type, job, state, resources)."""
    events = []
    for e in msg["events"]:
        kind, d = e["type"], e["data"]
        if kind == "JOB_SUBMITTED":
            events.append(f"JOB_SUBMITTED {d['job_id']}")
        elif kind == "JOB_COMPLETED":
            events.append(f"JOB_COMPLETED {d['job_id']} {d['job_state']}")
        elif kind == "RESOURCE_STATE_CHANGED":
            events.append(f"RSC {d['resources'].replace(' ', ',')} {d['state']}")
        elif kind == "NOTIFY":
            events.append(f"NOTIFY {d['type']}")
        else:
            events.append(kind)
    return f'{msg["now"]:.6f}|' + ";".join(events)


def read_jsonl(case_dir: Path, name: str) -> list:
    for path, opener in ((case_dir / name, open), (case_dir / (name + ".gz"), gzip.open)):
        if path.exists():
            with opener(path, "rt") as f:
                return [json.loads(line) for line in f]
    return []


def write_replies(replies, f) -> None:
    for m in replies:
        f.write(f'R {m["now"]!r} {len(m["events"])}\n')
        for e in m["events"]:
            t, kind, d = e["timestamp"], e["type"], e["data"]
            if kind == "CALL_ME_LATER":
                f.write(f'CML {t!r} {d["timestamp"]!r}\n')
            elif kind == "EXECUTE_JOB":
                f.write(f'EXE {t!r} {d["job_id"]} {d["alloc"].replace(" ", ",")} {host_ids(d["alloc"])}\n')
            elif kind == "SET_RESOURCE_STATE":
                f.write(f'SRS {t!r} {d["state"]} {d["resources"].replace(" ", ",")} {host_ids(d["resources"])}\n')
            elif kind == "REJECT_JOB":
                f.write(f'REJ {t!r} {d["job_id"]}\n')
            else:
                raise SystemExit(f"unsupported decision {kind}")


def main(case_dir: Path, out_dir: Path) -> None:
    args = json.load(open(case_dir / "meta.json"))["batsim_args"]
    # numbers as Batsim reads them (RapidJSON's default parser), written back exactly by repr
    workload = json.load(open(case_dir / args[args.index("-w") + 1]), parse_float=rapidjson_double)
    with open(out_dir / "jobs.txt", "w") as f:
        for j in workload["jobs"]:
            p = workload["profiles"][j["profile"]]
            if p["type"] == "delay":
                amount, kind = float(p["delay"]), "delay"
            else:
                assert p["type"] == "parallel_homogeneous" and not p.get("com"), p
                amount, kind = float(p["cpu"]), "ph"
            f.write(f'w0!{j["id"]} {j["subtime"]!r} {j.get("walltime", -1)!r} {j["res"]} {amount!r} {kind}\n')
    lines = read_jsonl(case_dir, "transcript.jsonl")
    if lines:
        replies = [line["msg"] for line in lines if line["from"] == "scheduler"]
        with open(out_dir / "expected.txt", "w") as g:
            for line in lines:
                if line["from"] == "batsim":
                    g.write(condense(line["msg"]) + "\n")
    else:
        replies = read_jsonl(case_dir, "replies.jsonl")
    with open(out_dir / "replies.txt", "w") as f:
        write_replies(replies, f)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
