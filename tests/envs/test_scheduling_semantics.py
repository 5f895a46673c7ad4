"""Scheduling-v0 checked as Shutdown-v0 was: no job waits long for its hosts, decisions after every
event of their minute (the timeout beneath too), days that start with every node off, per-host
energy waste, figures that count unfinished jobs, and a reward that integrates time."""
from __future__ import annotations

import json
import math
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import batsched_py.envs  # noqa: F401
from batsched_py.models.platform import load_platform
from batsched_py.policies.agent.clock import LAG
from batsched_py.policies.agent.nodes import NodeState, node_states
from batsched_py.protocol import RequestedCall
from helpers.rl import PLATFORM, ROOT, baseline_action

DAYS = sorted((ROOT / "workloads/deepshutdown").glob("*/*.json"))
SPEED = 1e6     # flops per minute of the platform's compute pstate


def make(day, **kw):
    return gym.make("batsched_py/Scheduling-v0", platform=str(PLATFORM), workloads=[str(day)], **kw).unwrapped


def write_day(tmp_path, jobs) -> Path:
    """A day of (id, subtime, hosts, runtime) jobs, walltime 60, on the 168-host platform."""
    doc = {"nb_res": 168,
           "jobs": [{"id": i, "subtime": sub, "walltime": 60, "res": res, "profile": f"r{run}"}
                    for i, sub, res, run in jobs],
           "profiles": {f"r{run}": {"type": "parallel_homogeneous", "cpu": run * SPEED, "com": 0}
                        for _, _, _, run in jobs}}
    path = tmp_path / "day.json"
    path.write_text(json.dumps(doc))
    return path


def baseline(name):
    return baseline_action("scheduling", name)


def random_valid(seed):
    """A valid action drawn at random (waiting one time in three)."""
    rng = np.random.default_rng(seed)

    def act(env, obs):
        starts = np.flatnonzero(env.action_masks()[1:]) + 1
        return int(rng.choice(starts)) if len(starts) and rng.random() < 2 / 3 else 0
    return act


def play(env, act, check=None):
    """An episode; (return, last info, [(time, action, reward)] per step).  ``check(env)`` runs at each
    decision point, before the action."""
    obs, info = env.reset(seed=0)
    launched: dict[str, float] = {}
    s = env.scheduler
    start = s.start

    def recording_start(job, hosts, mapping=None, index=None):
        launched[job.id] = s.now
        start(job, hosts, mapping, index)
    s.start = recording_start
    env.launched = launched
    steps, done = [], False
    while not done:
        if check is not None:
            check(env)
        action = act(env, obs)
        now = s.now
        obs, r, term, trunc, info = env.step(action)
        steps.append((now, action, r))
        done = term or trunc
    return sum(r for _, _, r in steps), info, steps


def switching_time() -> float:
    host = next(h for h in load_platform(PLATFORM, energy=True).hosts if h.id >= 0)
    spec = host.sleep_pstates[0]
    return host.switch_on_time(spec) + host.switch_off_time(spec)


# --- stuck jobs ------------------------------------------------------------------------------
@pytest.mark.parametrize("policy", ["FF", "EASY", "SAF", "random"])
@pytest.mark.parametrize("day", DAYS, ids=lambda d: d.name)
def test_no_job_waits_for_its_hosts_longer_than_they_take_to_switch(day, policy):
    """A started job waits for its hosts (asleep, or still switching off) at most a switch-off and a
    switch-on, plus one decision period; every job ends (none is stuck waiting for hosts)."""
    env = make(day)
    act = random_valid(1) if policy == "random" else baseline(policy)
    _, info, _ = play(env, act)
    s = env.scheduler
    assert not s.pending and not s.queue and all(j.finish_time is not None for j in s.jobs.by_id.values())
    bound = switching_time() + s.dt
    waits = {job_id: s.jobs[job_id].start_time - t for job_id, t in env.launched.items()}
    assert len(waits) == info["nb_jobs"]
    assert max(waits.values()) <= bound, sorted(waits.items(), key=lambda kv: -kv[1])[:3]


def test_a_job_takes_sleeping_hosts_before_switching_off_ones(tmp_path):
    """Timeout 0: node 0 switches off as soon as job a ends; b, submitted a minute later, takes a
    sleeping node (one minute to switch on), not node 0 (it would wait for its switch-off too)."""
    env = make(write_day(tmp_path, [("a", 10, 12, 5), ("b", 17, 12, 5)]), timeout=0)
    play(env, baseline("FF"))
    a, b = env.scheduler.jobs["w0!a"], env.scheduler.jobs["w0!b"]
    assert b.subtime - a.finish_time == pytest.approx(1.0, abs=0.01)
    assert b.start_time - b.subtime == pytest.approx(1.0, abs=0.01)
    assert not set(b.alloc) & set(a.alloc)


# --- decision lag ------------------------------------------------------------------------------
@pytest.mark.parametrize("day", DAYS[-1:], ids=lambda d: d.name)
def test_decisions_come_after_every_event_of_their_minute(day):
    """Decision points lie just after a whole minute (the clock grid), and there the scheduler has
    seen every job submitted by then and every job that ended by then; the agent is asked only where
    a queued job could start (elsewhere waiting is its only choice)."""
    doc = json.loads(day.read_text())
    runtimes = {str(j["id"]): doc["profiles"][j["profile"]]["cpu"] / SPEED for j in doc["jobs"]}
    seen, calls = [], []

    def check(env):
        s = env.scheduler
        assert s.grid.index(s.now) is not None
        past_minute = (s.now - env.warmup) - math.floor(s.now - env.warmup)
        assert LAG <= past_minute < 0.01
        submitted = {str(j["id"]) for j in doc["jobs"] if j["subtime"] + env.warmup <= s.now}
        assert submitted <= {job_id.split("!", 1)[1] for job_id in s.jobs.by_id}
        for job in s.jobs.running.values():
            assert job.start_time + runtimes[job.id.split("!", 1)[1]] > s.now
        assert env.action_masks()[1:].any()        # (asked only when a queued job could start)
        seen.append(s.now)
    env = make(day)
    receive = env._receive

    def receiving(request):
        if any(isinstance(e, RequestedCall) for e in request.events):
            calls.append(request.now)
        receive(request)
    env._receive = receiving
    play(env, random_valid(2), check)
    assert len(seen) > 30
    # every call comes at the decision point it asked for (Batsim wakes a scheduler no sooner than
    # 1e-5 after it asks: a point asked for by an event just before it would come late)
    assert all(env.scheduler.grid.index(t) is not None for t in calls)


@pytest.mark.parametrize("timeout", [0, 5])
def test_a_node_freed_at_minute_t_takes_a_job_submitted_at_t(tmp_path, timeout):
    """a ends at the minute b arrives: b takes a's node at once, before the timeout (even 0) sees it
    idle; the node is switched on once and off once."""
    env = make(write_day(tmp_path, [("a", 10, 12, 5), ("b", 16, 12, 5)]), timeout=timeout)
    _, info, _ = play(env, baseline("FF"))
    s = env.scheduler
    a, b = s.jobs["w0!a"], s.jobs["w0!b"]
    assert a.finish_time - b.subtime == pytest.approx(0.0, abs=0.01)
    assert b.start_time - b.subtime == pytest.approx(0.0, abs=0.01)
    assert set(b.alloc) == set(a.alloc)
    assert info["nb_switches"] == 2


@pytest.mark.parametrize("timeout", [0, 1, 5])
def test_the_timeout_keeps_a_node_idle_that_long_after_its_job(tmp_path, timeout):
    env = make(write_day(tmp_path, [("a", 10, 12, 5)]), timeout=timeout)
    play(env, baseline("FF"))
    assert env.meter.host_time_of("idle") == pytest.approx(12 * timeout, abs=0.05)
    assert env.scheduler.switches == 2


# --- start of day ------------------------------------------------------------------------------
def test_the_day_starts_with_every_node_off_and_the_warm_up_is_not_counted():
    env = make(DAYS[0])
    obs, _ = env.reset(seed=0)
    s = env.scheduler
    assert env.warmup == pytest.approx(3.0)            # the platform's switch-off time (1 flop at 1/3 flop/s)
    first = min(j["subtime"] for j in json.loads(DAYS[0].read_text())["jobs"])
    assert s.now == pytest.approx(first + 3.0, abs=0.01)    # the first decision: the first job, shifted
    assert node_states(s.platform, s.node_masks) == [NodeState.OFF] * len(s.node_masks)
    assert obs["snapshots"][-1][3] == 1.0              # every host asleep, in the observation too
    assert env.meter.waste == 0.0 and s.switches == 0  # (switching every node off before the day is no waste)
    assert all(j.subtime >= first + 3.0 for j in s.jobs.by_id.values())


def test_a_day_can_start_with_every_node_on(tmp_path):
    env = make(write_day(tmp_path, [("a", 10, 12, 5)]), start_asleep=False, timeout=5)
    _, info, _ = play(env, baseline("FF"))
    assert env.warmup == 0.0
    assert env.scheduler.jobs["w0!a"].subtime == 10.0
    assert info["nb_switches"] == 14 + 2               # every node off after its idle timeout; a's on and off


# --- figures -------------------------------------------------------------------------------
def test_the_energy_waste_counts_the_idle_cores_of_a_partly_busy_node(tmp_path):
    """A 6-host job on a node for 60 minutes: its 6 idle cores count (the authors' definition)."""
    env = make(write_day(tmp_path, [("a", 10, 6, 60)]), timeout=0)
    _, info, _ = play(env, baseline("FF"))
    assert env.meter.host_time_of("idle") == pytest.approx(6 * 60, abs=0.1)
    assert info["energy_waste"] >= 6 * 60 * 95.0


def test_unfinished_jobs_count_in_every_per_job_figure(tmp_path):
    """A policy that never starts b: the episode is truncated and b counts with its wait so far."""
    env = make(write_day(tmp_path, [("a", 10, 12, 5), ("b", 12, 12, 5)]), max_time=100)

    def only_a(env, obs):
        s = env.scheduler
        return next((i + 1 for i, j in enumerate(s.queue) if j.id.endswith("!a")), 0)
    _, info, _ = play(env, only_a)
    assert info["nb_jobs"] == 2
    b_wait = 100 + env.warmup - (12 + env.warmup)
    assert info["waiting_time"] == pytest.approx((1.0 + b_wait) / 2, abs=0.05)
    assert info["slowdown"] > b_wait / 2


# --- the reward ------------------------------------------------------------------------------
@pytest.mark.parametrize("policy", ["SAF", "random"])
def test_the_return_is_the_days_waste_stretch_and_work_however_many_decisions(policy):
    """A start lets no time pass and earns 0; over the episode the return is -(waste / every host's idle
    power) - (sum of the jobs' wait / walltime) + tau x (work / hosts), per dt."""
    env = make(DAYS[-1], rho=1.0, sigma=1.0, tau=0.2)
    act = random_valid(3) if policy == "random" else baseline(policy)
    total, info, steps = play(env, act)
    s = env.scheduler
    assert any(a > 0 for _, a, _ in steps)
    for (now, action, r), nxt in zip(steps, steps[1:]):
        if nxt[0] == now:               # (the next decision at the same instant: no time passed)
            assert r == 0.0
    jobs = list(s.jobs.by_id.values())
    stretch = sum((j.start_time - j.subtime) / j.walltime for j in jobs)
    work = sum(j.res * (j.finish_time - j.start_time) for j in jobs) / env.nb_hosts
    assert total == pytest.approx(-info["energy_waste"] / env.meter.idle_power - stretch + 0.2 * work, rel=1e-6)


def test_the_return_ranks_smallest_area_first_above_first_fit_on_a_busy_day():
    """On the shipped day where jobs wait, SAF waits less and wastes less than FF: its return is higher."""
    results = {}
    for name in ("FF", "SAF"):
        results[name] = play(make(DAYS[-1]), baseline(name))
    (ff, ff_info, _), (saf, saf_info, _) = results["FF"], results["SAF"]
    assert saf_info["waiting_time"] < ff_info["waiting_time"] and saf_info["energy_waste"] < ff_info["energy_waste"]
    assert saf > ff
