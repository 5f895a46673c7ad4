"""Timeline.execute_alone: the shortcut for a message's byte gives the very clock of the long way."""
from hypothesis import given, settings, strategies as st

from batsched_py.emulator.timeline import Timeline

LOOPBACK = 1e10      # 1 byte over SimGrid's 10 GB/s loopback: 1e-10 s

actions = st.lists(st.tuples(st.booleans(), st.floats(1e-11, 1e3)), max_size=8)


def _timeline(pending) -> Timeline:
    tl = Timeline()
    for is_sleep, x in pending:
        if is_sleep:
            tl.sleep(x, ("sleep", x))
        else:
            tl.execute(1.0 / x, ("exec", x))
    return tl


def _long_way(tl: Timeline, rate: float) -> list:
    """execute + steps until the byte arrives: what ended meanwhile (the engine's _transfer)."""
    comm = tl.execute(rate, None)
    ended = []
    while comm.alive:
        ended += [a.seq for a in tl.step() if a is not comm]
    return ended


def _drain(tl: Timeline) -> list:
    out = []
    while (ended := tl.step()) is not None:
        out.append((tl.now, [a.seq for a in ended]))
    return out


@settings(max_examples=300, deadline=None)
@given(actions, st.floats(0.0, 10.0), actions)
def test_execute_alone_is_the_long_way(before, advance, after):
    a, b = _timeline(before), _timeline(before)
    if advance:
        a.sleep(advance, None), b.sleep(advance, None)
        for tl in (a, b):        # the same steps on both, up to that sleep's end
            while any(x.item is None for x in [*tl.soon, *(e[2] for e in tl._heap)] if x.alive):
                tl.step()
    shortcut = a.execute_alone(LOOPBACK)
    ended_a = [] if shortcut else _long_way(a, LOOPBACK)
    ended_b = _long_way(b, LOOPBACK)
    if shortcut:
        assert ended_b == []          # the shortcut is only taken when nothing else ends meanwhile
    assert (a.now, a._deltas, a.last_seq, ended_a) == (b.now, b._deltas, b.last_seq, ended_b)
    for tl in (a, b):
        for is_sleep, x in after:
            (tl.sleep if is_sleep else tl.execute)(x if is_sleep else 1.0 / x, None)
    assert _drain(a) == _drain(b)


def test_execute_alone_declines_when_an_action_ends_with_the_byte():
    tl = Timeline()
    tl.sleep(1e-10, "same time")
    assert not tl.execute_alone(LOOPBACK)
    assert tl.now == 0.0 and tl.last_seq == 1
    tl.step()
    assert tl.execute_alone(LOOPBACK) and tl.now > 1e-10 and tl.last_seq == 2
