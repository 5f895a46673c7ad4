"""The reservation profile's exact time arithmetic and the host selectors (bitmask host sets)."""
import random
from fractions import Fraction

import pytest
from procset import ProcSet

from batsched_py.policies.profile import FRACTION_BITS, Profile, TimeResolutionError, fixed
from batsched_py.policies.selection import contiguous, lowest, make_selector, preferring
from batsched_py.scheduler.view import bits_of, mask_of


def test_fixed_point_is_the_exact_rational_of_the_double():
    for t in (0.0, 0.1, 0.2, 0.3, 6834.000001, 1e9 + 0.5, 3, 2 ** -60):
        assert Fraction(fixed(t), 2 ** FRACTION_BITS) == Fraction(t)
    # like batsched's GMP rationals (and unlike float sums): 0.1 + 0.2 is not 0.3
    assert fixed(0.1) + fixed(0.2) != fixed(0.3) and 0.1 + 0.2 != 0.3
    assert (fixed(0.1) + fixed(0.2) > fixed(0.3)) == (Fraction(0.1) + Fraction(0.2) > Fraction(0.3))
    with pytest.raises(TimeResolutionError):
        fixed(1e-300)


def test_profile_first_fit_uses_exact_sums():
    """Gap [0.1, 0.3) for a 0.2 job: 0.3 - 0.1 < 0.2 in rationals of the doubles (batsched's
    GMP arithmetic), although the decimals are equal: the job must go after the gap."""
    assert Fraction(0.3) - Fraction(0.1) < Fraction(0.2)
    first = lambda avail, n: mask_of(bits_of(avail)[:n])
    prof = Profile(mask_of([0, 1]), 0.0)
    assert prof.insert("b", 1, 0.3, first).hosts == 0b01      # host 0 until 0.3
    assert prof.insert("a", 1, 0.1, first).hosts == 0b10      # host 1 until 0.1
    assert prof.insert("d", 2, 1.0, first).begin == fixed(0.3)  # both hosts [0.3, 1.3)
    placed = prof.insert("c", 1, 0.2, first)
    assert placed.begin == fixed(0.3) + fixed(1.0) and not placed.starts_now
    assert prof.remove("d") and not prof.remove("d") and "d" not in prof and "c" in prof



def test_a_late_job_keeps_its_hosts_when_the_present_passes_its_reservation():
    """A job still running after its reservation ended (a power policy's launch waited for hosts,
    or an oracle's runtime was short): the slices up to now become one instant that still holds
    it, so nothing else can take its hosts now, and nothing else moves."""
    first = lambda avail, n: mask_of(bits_of(avail)[:n])
    prof = Profile(mask_of([0, 1, 2, 3]), 0.0)
    assert prof.insert("late", 2, 10.0, first).hosts == 0b0011     # [0, 10) on hosts 0-1
    assert prof.insert("other", 2, 5.0, first).hosts == 0b1100     # [0, 5) on hosts 2-3
    prof.remove("other")                          # it ended on time, at 5
    prof.update_first_slice(5.0)
    assert not prof.lapsed(10.0) and prof.lapsed(12.0)
    prof.update_first_slice(12.0)                 # "late" is still running at 12
    assert [(s.begin, s.end, s.available, s.jobs) for s in prof.slices] == [
        (fixed(12.0), fixed(12.0) + 1, 0b1100, {"late": 0b0011}),
        (fixed(12.0) + 1, float("inf"), 0b1111, {})]
    placed = prof.insert("wide", 3, 1.0, first)   # 3 hosts: not while "late" holds two
    assert placed is not None and not placed.starts_now and placed.begin == fixed(12.0) + 1
    assert prof.fits_now(2, 1.0, first) is None and prof.fits_now(1, 1.0, first) == 0b1000   # ("wide" has 0-2)
    prof.remove("late")
    prof.remove("wide")
    assert [(s.available, s.jobs) for s in prof.slices] == [(0b1111, {})]


def test_the_present_passing_reservations_that_ended_on_time_leaves_one_slice():
    first = lambda avail, n: mask_of(bits_of(avail)[:n])
    prof = Profile(mask_of([0, 1]), 0.0)
    prof.insert("a", 1, 5.0, first)
    prof.remove("a")                              # (it ended; the profile has no jobs left)
    prof.insert("b", 1, 5.0, first)
    prof.remove("b")
    prof.update_first_slice(7.0)
    assert [(s.begin, s.end) for s in prof.slices] == [(fixed(7.0), float("inf"))]


def _old_lowest(available: ProcSet, n: int):
    if n > len(available):
        return None
    return ProcSet(*list(available)[:n])


def _old_contiguous(available: ProcSet, n: int):
    for iv in available.intervals():
        if iv.sup - iv.inf + 1 >= n:
            return ProcSet((iv.inf, iv.inf + n - 1))
    return None


@pytest.mark.parametrize("new,old", [(lowest, _old_lowest), (contiguous, _old_contiguous)])
def test_selectors_match_procset_versions(new, old):
    rng = random.Random(7)
    for _ in range(500):
        ids = sorted({rng.randrange(130) for _ in range(rng.randrange(80))})
        n = rng.randrange(1, 40)
        got, want = new(mask_of(ids), n), old(ProcSet(*ids), n)
        assert (None if got is None else ProcSet(*bits_of(got))) == want


def test_preferring_and_node_selectors():
    pick = preferring(lowest, mask_of([4, 5, 9]))
    assert bits_of(pick(mask_of(range(12)), 2)) == [4, 5]
    assert bits_of(pick(mask_of(range(12)), 5)) == [0, 1, 4, 5, 9]
    rr = make_selector({"allocation": "round_robin", "cores_per_node": 4})
    assert bits_of(rr(mask_of(range(12)), 2)) == [0, 1] and bits_of(rr(mask_of(range(12)), 2)) == [4, 5]
    cons = make_selector({"allocation": "consolidation", "cores_per_node": 4})
    assert bits_of(cons(mask_of([0, 1, 2, 4, 5, 9]), 2)) == [4, 9]   # node 2 (1 core), then node 1


@pytest.mark.parametrize("policy", ["easy", "conservative"])
def test_backfilling_replans_when_a_job_ends_after_its_reservation(policy):
    """A JOB_COMPLETED later than start + walltime (Batsim only sends one for jobs that did not
    run as planned): the queue is planned afresh around the present, and waiting jobs start."""
    from batsched_py.scheduler import Session, create
    from helpers.messages import begins, completed, decoded, submitted
    session = Session(create(policy))
    session.handle(decoded(0, begins(4)))
    reply = session.handle(decoded(0, submitted("w!a", 4, 0, walltime=10), submitted("w!b", 2, 0, walltime=5),
                                   submitted("w!c", 2, 0, walltime=5)))
    assert [e.job_id for e in reply.events] == ["w!a"]
    reply = session.handle(decoded(12, completed("w!a", "0-3", 12)))
    assert [(e.job_id, str(e.alloc)) for e in reply.events] == [("w!b", "0-1"), ("w!c", "2-3")]
    profile = session.scheduler.profile
    assert profile.slices[0].begin == fixed(12.0)
    assert sorted(profile.placed) == ["w!b", "w!c"]


def _slices(profile: Profile):
    return [(s.begin, s.end, s.available, dict(s.jobs)) for s in profile.slices]


def test_first_fit_begin_is_where_insert_places_and_changes_nothing():
    rng = random.Random(7)
    for _ in range(200):
        profile = Profile(mask_of(range(16)), 0.0)
        for k in range(rng.randrange(1, 12)):
            profile.insert(f"j{k}", rng.randrange(1, 17), rng.choice([5.0, 10.0, 12.5, 40.0]), lowest)
        res, walltime = rng.randrange(1, 17), rng.choice([1.0, 5.0, 20.0, 100.0])
        before = _slices(profile)
        begin = profile.first_fit_begin(res, walltime, lowest)
        assert _slices(profile) == before
        placed = profile.insert("new", res, walltime, lowest)
        assert begin == (None if placed is None else placed.begin)
    assert Profile(mask_of(range(4))).first_fit_begin(5, 1.0, lowest) is None
