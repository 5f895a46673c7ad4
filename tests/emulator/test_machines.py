"""Machines against real Batsim 4.2.1 runs: replay each golden transcript's
timeline (job starts/ends, switches, availability, queries) through
Machines + OutputWriters and compare energy and outputs with Batsim's."""

from __future__ import annotations

import csv
import gzip
import heapq
import json
from pathlib import Path

import pytest
from procset import ProcSet

from batsched_py.emulator.machines import Machines, MachineState
from batsched_py.emulator.outputs import OutputWriters
from batsched_py.models.platform import load_platform
from batsched_py.platforms.volunteer import generate_pool, write_pool_platform

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
ENERGY_CASES = ["sleeper-e128-load50-E", "energy_bf-e128-hpc250-E", "energy_watcher-e128-delays-E",
                "fcfs_fast-e128-semantics-E", "idle_sleeper-taurus-2016w13-E",
                "pybatsim_easy-e128-hpc250-E"]
ENERGY_PARAMS = ENERGY_CASES
# (the agent cases, recorded by scripts/record_agent_goldens.py, are replayed whole by
# test_golden_replay.py, whose comparison rounds Batsim's sub-microsecond times such as 4e-10 and
# knows their epower rows; this row-exact machine and writer replay covers the policy cases)
ALL_CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "meta.json").exists()
                   and "scheduler_options" not in json.loads((p / "meta.json").read_text()))


def read_transcript(case: str) -> list[dict]:
    base = GOLDEN / case / "transcript.jsonl"
    f = gzip.open(str(base) + ".gz", "rt") if not base.exists() else open(base)
    with f:
        return [json.loads(line) for line in f]


def _phases(profiles: dict, name: str, speed: float, nb_hosts: int) -> list[tuple[float, float]]:
    """(duration, cpu load) phases of a profile; enough for the golden workloads."""
    p = profiles[name]
    kind = p["type"]
    if kind == "delay":
        return [(p["delay"], 0.0)]
    if kind == "parallel_homogeneous":
        return [(p["cpu"] / speed, 1.0)]
    if kind == "parallel_homogeneous_total":
        return [(p["cpu"] / nb_hosts / speed, 1.0)]
    if kind == "composed":
        seq = [ph for sub in p["seq"] for ph in _phases(profiles, sub, speed, nb_hosts)]
        return seq * p.get("repeat", 1)
    raise NotImplementedError(kind)


class Replay:
    """Drives Machines from a golden transcript. Switch completions come from
    Machines' own completion times, load changes from the profiles."""

    def __init__(self, case: str, prefix: str | None = None):
        self.case = case
        meta = json.loads((GOLDEN / case / "meta.json").read_text())
        args = meta["batsim_args"]
        self.energy = "-E" in args
        self.platform = load_platform(GOLDEN / case / args[args.index("-p") + 1],
                                      energy=self.energy)
        self.writers = OutputWriters(prefix, energy=self.energy) if prefix else None
        self.machines = Machines(self.platform, self.writers, self.energy)
        self.answers: list[tuple[float, float, float]] = []  # (t, batsim, ours)
        self.job_energy: dict[str, float] = {}
        self.end_time = 0.0
        self._pending: list = []  # heap of (t, seq, kind, payload)
        self._seq = 0
        self._running: dict[str, ProcSet] = {}
        self.lines = read_transcript(case)
        begins = self.lines[0]["msg"]["events"][0]["data"]
        self.profiles = {wl: prof for wl, prof in begins.get("profiles", {}).items()}
        self.jobs: dict[str, dict] = {}
        self._load: dict[str, float] = {}  # cpu load of each running job's current phase

    def _push(self, t, kind, payload):
        self._seq += 1
        heapq.heappush(self._pending, (t, self._seq, kind, payload))

    def _flush(self, t, inclusive=False):
        # Transcript times are rounded to 1e-6: a switch ending "at" t is done
        # before Batsim reports it, but after the other events stamped t.
        limit = t + 1e-6 if inclusive else t - 1e-6
        while self._pending and self._pending[0][0] <= limit:
            when, _, kind, payload = heapq.heappop(self._pending)
            if kind == "switch":
                self.machines.switch_done(when, payload)
            elif payload[0] in self._running:  # load change of a still-running job
                job_id, load = payload
                self._phase_ended(when, job_id)
                self.machines.job_load_changed(when, job_id, self._running[job_id], load)
                self._load[job_id] = load

    def run(self):
        m = self.machines
        for line in self.lines:
            msg = line["msg"]
            for ev in msg["events"]:
                t, typ, data = ev["timestamp"], ev["type"], ev["data"]
                self._flush(t, inclusive=typ in ("RESOURCE_STATE_CHANGED", "SIMULATION_ENDS"))
                if typ in ("JOB_SUBMITTED", "REGISTER_JOB"):
                    m.job_submitted(t)
                    self.jobs[data["job_id"]] = data["job"]
                elif typ == "REGISTER_PROFILE":
                    self.profiles.setdefault(data["workload_name"], {})[data["profile_name"]] = \
                        data["profile"]
                elif typ == "EXECUTE_JOB":
                    self._start(t, data["job_id"], ProcSet.from_str(data["alloc"]))
                elif typ == "JOB_COMPLETED":
                    self._phase_ended(t, data["job_id"])
                    hosts = self._running.pop(data["job_id"])
                    self.job_energy[data["job_id"]] = m.job_ended(t, data["job_id"], hosts)
                elif typ == "SET_RESOURCE_STATE":
                    hosts = ProcSet.from_str(data["resources"])
                    assert m.check_set_state(hosts, int(data["state"])) is None
                    done = m.request_state(t, hosts, int(data["state"]))
                    m.write_held_rows()     # the server writes its rows
                    groups: dict[float, list[int]] = {}
                    for h, when in done.items():
                        groups.setdefault(when, []).append(h)
                    for when, hs in groups.items():
                        self._push(when, "switch", ProcSet(*hs))
                elif typ == "NOTIFY" and data["type"] == "event_machine_unavailable":
                    m.set_unavailable(t, ProcSet.from_str(data["resources"]))
                elif typ == "NOTIFY" and data["type"] == "event_machine_available":
                    m.set_available(t, ProcSet.from_str(data["resources"]))
                elif typ == "ANSWER":
                    self.answers.append((t, data["consumed_energy"], m.consumed_energy(t)))
                elif typ == "SIMULATION_ENDS":
                    self.end_time = t
        return self

    def _phase_ended(self, t, job_id):
        """The job's current SimGrid action ends: a computation updates the energy of all its
        hosts, a sleep that of its first host (where Batsim's job actor runs)."""
        hosts = self._running[job_id]
        self.machines.action_ended(t, hosts if self._load[job_id] else (hosts[0],))

    def _start(self, t, job_id, hosts):
        wl = job_id.split("!")[0]
        host = self.platform.hosts[hosts[0]]
        speed = host.pstates[self.machines.pstate(hosts[0])].speed
        phases = _phases(self.profiles[wl], self.jobs[job_id]["profile"], speed, len(hosts))
        assert self.machines.check_execute(hosts) is None
        self._running[job_id] = hosts
        self._load[job_id] = phases[0][1]
        self.machines.job_started(t, job_id, hosts, load=phases[0][1])
        self.machines.write_held_rows()     # the job's actor writes its rows
        when = t
        for (dur, _), (_, nxt) in zip(phases, phases[1:]):
            when += dur
            self._push(when, "load", (job_id, nxt))


def golden_csv(case: str, name: str) -> list[dict]:
    with open(GOLDEN / case / f"out_{name}.csv") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def replays():
    return {case: Replay(case).run() for case in ENERGY_CASES}


@pytest.mark.parametrize("case", ENERGY_PARAMS)
def test_total_energy_matches_batsim(replays, case):
    r = replays[case]
    expected = float(golden_csv(case, "schedule")[0]["consumed_joules"])
    got = r.machines.stats(r.end_time).consumed_joules
    assert got == pytest.approx(expected, rel=1e-6), (got, expected)


def test_query_answers_match_batsim(replays):
    answers = replays["energy_watcher-e128-delays-E"].answers
    assert answers
    for t, batsim, ours in answers:
        assert ours == pytest.approx(batsim, rel=1e-6, abs=1e-6), t


@pytest.mark.parametrize("case", ENERGY_PARAMS)
def test_job_energy_matches_batsim(replays, case):
    r = replays[case]
    bad = []
    for row in golden_csv(case, "jobs"):
        if row["final_state"] == "REJECTED":
            continue
        ours = r.job_energy[f"{row['workload_name']}!{row['job_id']}"]
        if ours != pytest.approx(float(row["consumed_energy"]), rel=1e-6, abs=1e-4):
            bad.append((row["job_id"], ours, row["consumed_energy"]))
    assert not bad, bad


def test_no_energy_means_minus_one():
    r = Replay("easy_bf-e128-hpc250").run()
    assert set(r.job_energy.values()) == {-1.0}
    assert r.machines.consumed_energy(r.end_time) == 0.0


def test_switch_durations_and_states():
    p = load_platform(GOLDEN / "sleeper-e128-load50-E/inputs/energy_platform_homogeneous_no_net_128.xml",
                      energy=True)
    m = Machines(p, None, energy_enabled=True)
    hosts = ProcSet((0, 3))
    done = m.request_state(0.0, hosts, 13)
    assert done[0] == pytest.approx(6.1)
    assert m.state(0) is MachineState.SWITCHING_OFF and m.pstate(0) == 14
    assert m.check_execute(hosts) is not None
    assert m.check_set_state(hosts, 0) is not None  # still switching
    m.switch_done(6.1, hosts)
    assert m.state(2) is MachineState.SLEEPING and m.pstate(2) == 13
    assert m.check_set_state(ProcSet(0), 14) is not None  # virtual pstate
    done = m.request_state(10.0, ProcSet(0), 0)
    assert done[0] == pytest.approx(10.0 + 151.52)
    assert m.state(0) is MachineState.SWITCHING_ON
    m.switch_done(done[0], 0)
    assert m.state(0) is MachineState.IDLE and m.pstate(0) == 0
    # compute -> compute: immediate, power follows
    assert m.request_state(200.0, ProcSet(0), 2) == {0: 200.0}
    assert m.pstate(0) == 2
    assert m.check_set_state(ProcSet(0), 99) is not None


def test_unavailability_counts_and_times():
    r = Replay("pybatsim_fillerevents-e128-events").run()
    s = r.machines.stats(r.end_time)
    row = golden_csv("pybatsim_fillerevents-e128-events", "schedule")[0]
    assert s.time_unavailable == pytest.approx(float(row["time_unavailable"]))
    assert s.time_idle == pytest.approx(float(row["time_idle"]))
    assert s.time_computing == pytest.approx(float(row["time_computing"]))
    assert r.machines.counts()[MachineState.UNAVAILABLE] == 0


def test_start_rows_held_after_same_round_end_rows(tmp_path):
    # With -E a job's actor sets its hosts computing and writes its start rows after its energy
    # reads: a job ending in the same round (its actor woken then) writes its rows first, with
    # the counts before the start (as minibatsim on SimGrid 3.32 does).
    p = load_platform(GOLDEN / "sleeper-e128-load50-E/inputs/energy_platform_homogeneous_no_net_128.xml",
                      energy=True)
    writers = OutputWriters(str(tmp_path / "out"), energy=True)
    m = Machines(p, writers, energy_enabled=True)
    m.job_started(1.0, "a", ProcSet(0))
    m.write_held_rows()
    m.job_started(5.0, "b", ProcSet((1, 2)))     # held
    m.job_ended(5.0, "a", ProcSet(0))            # a's actor wakes in the same round
    m.write_held_rows()
    m.job_started(7.0, "c", ProcSet(3))          # a job ending as it starts: start rows first
    m.job_ended(7.0, "c", ProcSet(3))
    writers.close(7.0, m.stats(7.0), nb_jobs=3, scheduling_time=0.0, simulation_time=0.0, complete=True)
    with open(tmp_path / "out_machine_states.csv") as f:
        rows = [(r["time"], r["nb_idle"], r["nb_computing"]) for r in csv.DictReader(f)]
    assert rows[-4:] == [("5", "128", "0"), ("5", "126", "2"), ("7", "125", "3"), ("7", "126", "2")]


def test_single_reader_reads_as_in_lockstep():
    """A round's only energy reader (walked straight through) gives what the lockstep loop gives
    with an idle second reader: same sub-round, same hosts paid for in the same sub-rounds, same
    energies; with a full read of a fresh round too (one pass over the stale hosts)."""
    platform = load_platform(str(Path(__file__).resolve().parents[2] / "platforms" / "taurus_deepshutdown.xml"))
    for host_sets, touched in (([None], {}), ([None], {6: 9, 7: 1, 30: 2}),
                               ([ProcSet((3, 9)), None], {6: 9, 30: 2}), ([ProcSet(5, 7, 100)], {7: 3})):
        results = []
        for readers in ([(2, host_sets)], [(2, host_sets), (2, [])]):
            m = Machines(platform, energy_enabled=True)
            m.job_started(0.0, "j", ProcSet((0, 20)))
            m.hosts_energy(50.0, ProcSet((4, 8)))          # some hosts up to date at 50
            read = dict(touched)                           # read earlier in the round
            subs = m.read_energy(50.0, readers, read)
            results.append((subs[0], read, list(m._host_energy), list(m._host_t)))
        assert results[0] == results[1]
        assert results[0][0] > 2


def test_batsims_machine_state_machine_quirks():
    """Batsim 4.2.1's server and switch actors (server.cpp, pstate.cpp): the end of a switch sets
    the state whatever it is (a host made unavailable meanwhile is sleeping again, and a later
    machine_available aborts); machine_available makes a host idle in whatever pstate it is (a
    sleeping one included), from where a job aborts and only a switch on is accepted."""
    p = load_platform(GOLDEN / "sleeper-e128-load50-E/inputs/energy_platform_homogeneous_no_net_128.xml",
                      energy=True)
    m = Machines(p, None, energy_enabled=True)
    m.request_state(0.0, ProcSet(0, 1), 13)
    assert m.set_unavailable(1.0, ProcSet(0)) is None and m.state(0) is MachineState.UNAVAILABLE
    m.switch_reached(6.1, [0, 1])
    m.switch_done(6.1, [0, 1], ProcSet(0, 1), 13)
    assert m.state(0) is MachineState.SLEEPING and m.counts()[MachineState.UNAVAILABLE] == 0
    assert m.set_available(10.0, ProcSet(0)) == ("The making of machine 0 ('host0') available was requested but "
                                                 "this machine was not in UNAVAILABLE state (current state: sleeping).")
    assert m.set_unavailable(11.0, ProcSet(1)) is None
    assert m.set_unavailable(11.5, ProcSet(1)).endswith("was already in UNAVAILABLE state.")
    assert m.set_available(12.0, ProcSet(1)) is None
    assert m.state(1) is MachineState.IDLE and m.pstate(1) == 13
    assert m.check_start("w0!1", ProcSet(1)) == ("Job 'w0!1': Invalid job allocation ('1'): machine 1 "
                                                 "(hostname='host1') is not in a computation pstate (ps=13)")
    assert m.check_set_state(ProcSet(1), 13) == ("Switching from a sleep pstate to a non-computation pstate on "
                                                 "machine 1 ('host1') : 13 -> 13, which is forbidden")
    assert m.check_set_state(ProcSet(1), 0) is None
    done = m.request_state(20.0, ProcSet(1), 0)
    assert m.state(1) is MachineState.SWITCHING_ON and done[1] == pytest.approx(20.0 + 151.52)
    assert "has an invalid pstate : 15" in m.check_set_state(ProcSet(1), 13)     # switching: Batsim never answers
    m.switch_reached(done[1], [1])
    assert m.state(1) is MachineState.IDLE and m.check_start("w0!1", ProcSet(1)) is None



def test_a_task_loads_its_host_as_simgrid_counts_it(tmp_path):
    # SimGrid's energy plugin takes a host's load as its CPU constraint's usage (the task's flops
    # times its rate) over its speed: 12,530 flops at 1/12,530 per second on a 1 flop/s host is
    # 0.9999999999999999, so the host draws 59 + that x 65 W, 1 ulp below its 124 W (Batsim 4.2.1
    # on a volunteer pool: 1138749.7209800154 J after 260.65 s of such a job, not ...0156).
    write_pool_platform(generate_pool(20, 3, seed=0), tmp_path / "pool.xml")
    m = Machines(load_platform(tmp_path / "pool.xml", energy=True), None, energy_enabled=True)
    host = ProcSet(13)
    assert m.hosts[13].pstates[0].all_cores == 124.0
    m.job_started(0.0, "j", host)
    m.job_computes(0.0, "j", host, 12530.0, 1.0 / 12530.0)
    assert m.hosts_energy(1.0, host) == 123.99999999999999     # J, over 1 s
    m.job_computes(1.0, "j", host, 12529.0, 1.0 / 12529.0)     # (12,529 x 1/12,529 is 1.0)
    assert m.hosts_energy(2.0, host) == 123.99999999999999 + 124.0
