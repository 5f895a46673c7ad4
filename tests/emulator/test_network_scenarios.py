"""Platforms with links: the emulator sends what Batsim's actors on the real SimGrid 3.32 send.

Each folder of tests/data/network/scenarios/ was made by scripts/simgrid_study/record.sh: the
emulator ran a built-in policy on a small platform with links (the policy's replies are kept in
replies.jsonl.gz), then minibatsim (scripts/simgrid_study/minibatsim.cpp, Batsim 4.2.1's actors
linked with Debian's SimGrid 3.32, messages routed by SimGrid over the platform's links) replayed
those replies and printed its requests: requests.txt, one line a request (its time with 6
decimals, its events), and with -E its machine_states and consumed_energy rows.  These files
are the ground truth: this test needs neither g++ nor SimGrid.  Request times must agree within
1e-6 s, as in the golden tests; rows as printed.
"""
from __future__ import annotations

import csv
import gzip
import importlib.util
import json
from pathlib import Path

import pytest

from batsched_py import protocol as p
from batsched_py.emulator import simulate

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "data" / "network" / "scenarios"
_spec = importlib.util.spec_from_file_location("prep", ROOT / "scripts" / "simgrid_study" / "prep.py")
prep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prep)        # its condense(): a request as minibatsim prints it


def _run(case: Path, out: Path) -> list[str]:
    meta = json.loads((case / "meta.json").read_text())
    args = meta["batsim_args"]
    with gzip.open(case / "replies.jsonl.gz", "rt") as f:
        replies = [json.loads(line) for line in f]
    sent: list[str] = []

    def exchange(request: p.Message) -> p.Message:
        sent.append(prep.condense(request.to_data()))
        assert len(sent) <= len(replies), "more requests than minibatsim sent"
        return p.decode_message(replies[len(sent) - 1], sender="scheduler")

    simulate(case / args[args.index("-p") + 1], [case / args[args.index("-w") + 1]], exchange,
             energy="-E" in args, output_prefix=out)
    return sent


@pytest.mark.parametrize("case", sorted(d.name for d in SCENARIOS.iterdir() if d.is_dir()))
def test_requests_and_rows_match_minibatsim(case, tmp_path):
    d = SCENARIOS / case
    sent = _run(d, tmp_path / "out")
    want = (d / "requests.txt").read_text().splitlines()
    for i, (a, b) in enumerate(zip(want, sent)):
        (ta, ea), (tb, eb) = a.split("|", 1), b.split("|", 1)
        assert abs(float(ta) - float(tb)) <= 1e-6 and ea == eb, f"request {i + 1}: minibatsim {a!r}, emulator {b!r}"
    assert len(sent) == len(want)
    for name in ("machine_states", "consumed_energy"):
        if not (d / f"{name}.csv").exists():
            continue
        with open(d / f"{name}.csv") as f:
            rows = list(csv.reader(f))
        with open(tmp_path / f"out_{name}.csv") as f:
            mine = list(csv.reader(f))[1:]
        assert len(mine) == len(rows), name
        for i, (a, b) in enumerate(zip(rows, mine)):     # as printed, to the last digit
            assert a == b, f"{name} row {i + 1}: minibatsim {a}, emulator {b}"


def test_energy_updates_when_a_message_arrives(tmp_path, monkeypatch):
    # SimGrid's energy plugin updates the hosts of an action that ends, a message's too: with -E
    # a job's first host is updated when its JOB_COMPLETED reaches the server (checked with
    # SimGrid 3.32's host_energy debug log: scripts/simgrid_study/message_energy.cpp), and no
    # other: Batsim's server reads no energy then (consumed_joules is the e row's total).
    from batsched_py.emulator.machines import Machines
    calls = []
    totals = []

    # A subclass, not patched methods: the compiled build's engine calls a compiled Machines'
    # own methods directly.
    class Spy(Machines):
        def action_ended(self, t, hosts):
            calls.append((t, tuple(hosts)))
            return super().action_ended(t, hosts)

        def total_energy(self, t):
            totals.append(t)
            return super().total_energy(t)
    monkeypatch.setattr(importlib.import_module("batsched_py.emulator.simulate"), "Machines", Spy)
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 2, "profile": "d"}],
                                    "profiles": {"d": {"type": "delay", "delay": 10}}}))
    from batsched_py.scheduler import create
    result = simulate(ROOT / "tests" / "data" / "network" / "cluster16.xml", [workload], create("fcfs"), energy=True)
    finish = result.jobs["w0!1"].finish_time      # when the server got the message
    host = result.jobs["w0!1"].allocated_resources.min
    assert (finish, (host,)) in calls and finish not in totals
