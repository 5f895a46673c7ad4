#!/bin/sh
# Record a network scenario as tests/emulator/test_network_scenarios.py reads it: the emulator runs
# a built-in policy (scenario.py), minibatsim replays its replies on the real SimGrid 3.32 and must
# send the same requests (run.sh); the case keeps the replies and minibatsim's requests (and, with
# -E, its machine_states and consumed_energy rows) as the expected data.
#   PYTHONPATH=. scripts/simgrid_study/record.sh CASE_DIR -p PLATFORM -w WORKLOAD --scheduler P [--config C] [-E]
set -e
here=$(cd "$(dirname "$0")" && pwd)
case=$1; shift
${PYTHON:-python} "$here/scenario.py" "$case" "$@"
"$here/run.sh" "$case"
dir=$(cd "$case" && pwd)
work=${TMPDIR:-/tmp}/minibatsim-$(basename "$dir")
cp "$work/got.txt" "$dir/requests.txt"
if python3 -c "import json,sys; sys.exit('-E' not in json.load(open(sys.argv[1]))['batsim_args'])" "$dir/meta.json"; then
  platform=$(python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['batsim_args']; print(a[a.index('-p')+1])" "$dir/meta.json")
  (cd "$work" && unset MB_NOENERGY && MB_ROWS=1 ./minibatsim "$dir/$platform" --log=root.thres:critical > /dev/null)
  cp "$work/machine_states.csv" "$work/consumed_energy.csv" "$dir/"
fi
python3 - "$dir" <<'PY'
import gzip, json, sys
d = sys.argv[1]
lines = [json.loads(l) for l in gzip.open(f"{d}/transcript.jsonl.gz", "rt")]
with gzip.open(f"{d}/replies.jsonl.gz", "wt") as f:
    for line in lines:
        if line["from"] == "scheduler":
            f.write(json.dumps(line["msg"], separators=(",", ":")) + "\n")
PY
rm "$dir/transcript.jsonl.gz"
echo "recorded $dir"
