#!/bin/sh
# Build minibatsim against Debian's SimGrid 3.32 and compare its requests with a golden case's.
# Needs: apt-get install libsimgrid-dev g++.   Usage: run.sh [CASE] (default: the taurus case)
set -e
here=$(cd "$(dirname "$0")" && pwd)
case=${1:-idle_sleeper-taurus-2016w13-E}
golden=$here/../../tests/data/golden/$case
work=${TMPDIR:-/tmp}/minibatsim-$case
mkdir -p "$work"
g++ -O1 -std=c++17 "$here/minibatsim.cpp" -o "$work/minibatsim" -lsimgrid
python3 "$here/prep.py" "$golden" "$work"
platform=$(python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['batsim_args']; print(a[a.index('-p')+1])" "$golden/meta.json")
cd "$work"
./minibatsim "$golden/$platform" --log=root.thres:critical > got.txt
if cmp -s expected.txt got.txt; then echo "identical: $(wc -l < got.txt) requests"; else diff expected.txt got.txt | head; exit 1; fi
