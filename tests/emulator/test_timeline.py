"""The timeline's grouped executions and the single-reader energy reads do exactly what their
one-by-one forms do (same steps, same clock, same order; same energies and sub-rounds)."""
import random

from procset import ProcSet

from batsched_py.emulator.machines import Machines
from batsched_py.emulator.platform import load_platform
from batsched_py.emulator.timeline import Timeline

from helpers.rl import PLATFORM


def _drive(grouped: bool, seed: int) -> list:
    """Random sleeps and executions, some created as groups; every step's clock and ended items."""
    rng = random.Random(seed)
    tl = Timeline()
    trace = []
    for _ in range(60):
        for _ in range(rng.randrange(3)):
            tl.sleep(rng.choice([1e-10, 2e-10, 0.5, 1.0, 3.0 + 2e-10]), ("sleep", tl.last_seq + 1))
        if rng.random() < 0.5:
            rate = rng.choice([1.0, 1 / 3, 0.3333333333333333, 1e6])
            n = rng.randrange(1, 6)
            items = [("exec", tl.last_seq + 1 + i) for i in range(n)]
            if grouped:
                tl.execute_group(rate, items)
            else:
                for item in items:
                    tl.execute(rate, item)
        ended = tl.step()
        if ended is not None:
            trace.append((tl.now, [a.item for a in ended]))
    while (ended := tl.step()) is not None:
        trace.append((tl.now, [a.item for a in ended]))
    return trace


def test_grouped_executions_end_as_single_ones():
    for seed in range(20):
        single = _drive(False, seed)
        assert single == _drive(True, seed)
        assert sum(len(items) for _, items in single) > 20


def test_cancelled_group_never_ends():
    tl = Timeline()
    group = tl.execute_group(1.0, ["a", "b", "c"])
    tl.execute(0.5, "d")
    for a in group:
        a.alive = False
    assert [a.item for a in tl.step()] == ["d"] and tl.now == 2.0
    assert tl.step() is None


def _machines() -> Machines:
    return Machines(load_platform(str(PLATFORM)), energy_enabled=True)


def test_single_reader_reads_as_in_lockstep():
    """One reader alone (the direct walk) gives what the lockstep loop gives with an idle second
    reader: same sub-round, same hosts updated in the same sub-rounds, same energies."""
    cases = [[None], [ProcSet((3, 9)), None], [ProcSet(5, 7, 100)]]
    for host_sets in cases:
        results = []
        for readers in ([(2, host_sets)], [(2, host_sets), (2, [])]):
            m = _machines()
            m.job_started(0.0, "j", ProcSet((0, 20)))
            m.hosts_energy(50.0, ProcSet((4, 8)))                  # some hosts up to date at 50
            touched = {6: 9, 7: 1, 30: 2}                           # read earlier in the round
            subs = m.read_energy(50.0, readers, touched)
            results.append((subs[0], touched, list(m._host_energy), list(m._host_t)))
        assert results[0] == results[1]
        assert results[0][0] > 2
