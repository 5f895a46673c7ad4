"""EASY keeps the priority job's reservation without re-placing it when that would change nothing.

``Profile.fits_before`` must say exactly whether a removed and re-inserted job would move earlier,
and EASY with the shortcut must take the very decisions it takes without it.
"""
from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from batsched_py import emulator
from batsched_py.policies.backfilling import EASY
from batsched_py.policies.profile import Profile
from batsched_py.policies.selection import lowest

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = ROOT / "platforms" / "energy_platform_homogeneous_no_net_128.xml"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(1, 40)), min_size=1, max_size=12),
       st.lists(st.integers(0, 11), max_size=4), st.integers(0, 11), st.integers(0, 30))
def test_fits_before_says_whether_reinsertion_moves_the_job_earlier(jobs, removed, which, now):
    profile = Profile((1 << 8) - 1, 0.0)
    for k, (res, wall) in enumerate(jobs):
        profile.insert(f"j{k}", res, float(wall), lowest)
    for k in removed:                       # jobs that ended: holes before the others
        profile.remove(f"j{k}")
    job = f"j{which % len(jobs)}"
    if job not in profile.placed:
        return
    res, wall = jobs[which % len(jobs)]
    first = profile.slices[0]
    if now * 2 ** 128 <= first.end:
        profile.update_first_slice(float(now))
    begin = profile.placed[job]
    again = copy.deepcopy(profile)
    again.remove(job)
    moved = again.insert(job, res, float(wall), lowest).begin < begin
    assert profile.fits_before(job, res, float(wall), begin) == moved


class EasyWithoutShortcut(EASY):
    def _reservation_stays(self, job, freed_until):
        return False


def _workload(path: Path, seed: int, jobs: int = 800) -> Path:
    """Delay jobs on 128 hosts at high load; walltimes from exact to 3x the delay."""
    rng = random.Random(seed)
    sizes = [1, 1, 2, 4, 4, 8, 16, 32, 64, 128]
    t, out, profiles = 0.0, [], {}
    for i in range(jobs):
        t += rng.expovariate(1 / 40)
        delay = rng.choice([30, 60, 125.5, 300, 900, 1800])
        walltime = delay if rng.random() < 0.2 else round(delay * rng.uniform(1.0, 3.0), 3)
        profiles[f"d{delay}"] = {"type": "delay", "delay": delay}
        out.append({"id": str(i), "subtime": round(t, 3), "res": rng.choice(sizes), "profile": f"d{delay}",
                    "walltime": walltime})
    path.write_text(json.dumps({"nb_res": 128, "jobs": out, "profiles": profiles}))
    return path


# Seeds where dropping any one condition of _reservation_stays changes some decision (checked).
@pytest.mark.parametrize("seed", [1, 10, 14, 18])
def test_easy_decides_the_same_with_and_without_the_shortcut(seed, tmp_path):
    workload = _workload(tmp_path / "w.json", seed)
    kept = []

    class Counting(EASY):
        def _reservation_stays(self, job, freed_until):
            stays = super()._reservation_stays(job, freed_until)
            kept.append(stays)
            return stays

    fast = emulator.simulate(PLATFORM, [workload], Counting({}))
    plain = emulator.simulate(PLATFORM, [workload], EasyWithoutShortcut({}))
    assert {j: (o.starting_time, str(o.allocated_resources)) for j, o in fast.jobs.items()} == \
        {j: (o.starting_time, str(o.allocated_resources)) for j, o in plain.jobs.items()}
    assert sum(kept) > 50 and not all(kept)     # (both branches were taken)
