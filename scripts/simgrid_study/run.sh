#!/bin/sh
# Build minibatsim against Debian's SimGrid 3.32 and compare its requests with a recorded case's.
# Needs: apt-get install libsimgrid-dev g++.
# Usage: run.sh [CASE]: a golden case name (default: the taurus case) or a case folder (see prep.py).
# The case's Batsim arguments choose the platform and -E (without it: MB_NOENERGY=1).
set -e
here=$(cd "$(dirname "$0")" && pwd)
case=${1:-idle_sleeper-taurus-2016w13-E}
if [ -d "$case" ]; then dir=$(cd "$case" && pwd); else dir=$here/../../tests/data/golden/$case; fi
work=${TMPDIR:-/tmp}/minibatsim-$(basename "$dir")
mkdir -p "$work"
g++ -O1 -std=c++17 "$here/minibatsim.cpp" -o "$work/minibatsim" -lsimgrid
PYTHONPATH="$here/../..${PYTHONPATH:+:$PYTHONPATH}" python3 "$here/prep.py" "$dir" "$work"
platform=$(python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['batsim_args']; print(a[a.index('-p')+1])" "$dir/meta.json")
energy=$(python3 -c "import json,sys; print('-E' in json.load(open(sys.argv[1]))['batsim_args'])" "$dir/meta.json")
cd "$work"
if [ "$energy" = True ]; then unset MB_NOENERGY; else export MB_NOENERGY=1; fi
./minibatsim "$dir/$platform" --log=root.thres:critical > got.txt
if [ ! -f expected.txt ]; then echo "minibatsim: $(wc -l < got.txt) requests in $work/got.txt"; exit 0; fi
if cmp -s expected.txt got.txt; then echo "identical: $(wc -l < got.txt) requests"; else diff expected.txt got.txt | head; exit 1; fi
