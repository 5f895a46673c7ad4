"""Turn a golden case (parallel_homogeneous jobs, CALL_ME_LATER / EXECUTE_JOB / SET_RESOURCE_STATE /
REJECT_JOB replies) into minibatsim's inputs: jobs.txt, replies.txt, and expected.txt (Batsim's
recorded requests, one line each: now|event;event...).  Usage: prep.py GOLDEN_CASE_DIR OUT_DIR"""
import gzip
import json
import sys

case_dir, out_dir = sys.argv[1], sys.argv[2]
args = json.load(open(f"{case_dir}/meta.json"))["batsim_args"]
workload = json.load(open(f"{case_dir}/{args[args.index('-w') + 1]}"))


def host_ids(text):
    ids = []
    for part in text.split():
        a, _, b = part.partition("-")
        ids += range(int(a), int(b or a) + 1)
    return " ".join(map(str, ids))


with open(f"{out_dir}/jobs.txt", "w") as f:
    for j in workload["jobs"]:
        p = workload["profiles"][j["profile"]]
        assert p["type"] == "parallel_homogeneous" and not p["com"], p
        f.write(f'w0!{j["id"]} {j["subtime"]!r} {j.get("walltime", -1)!r} {j["res"]} {float(p["cpu"])!r}\n')

lines = [json.loads(l) for l in gzip.open(f"{case_dir}/transcript.jsonl.gz", "rt")]
with open(f"{out_dir}/replies.txt", "w") as f, open(f"{out_dir}/expected.txt", "w") as g:
    for line in lines:
        m = line["msg"]
        if line["from"] == "scheduler":
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
        else:
            events = []
            for e in m["events"]:
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
            g.write(f'{m["now"]:.6f}|' + ";".join(events) + "\n")
