"""VolunteerPool-v0 (Forshaw & McGough): the pool and login generators (Table 1 powers, seasonality),
the availability-trace reader and its errors, the pool's mechanics on the emulator (evictions
resubmitted from scratch, 3am reboots, sleep and wake-on-demand, miscreants), the Gymnasium contract
and seeding, and named errors."""
import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import batsched_py.envs  # noqa: F401  (registers the environments)
from batsched_py.policies.agent import ActionError
from batsched_py.agents.volunteer import RandomPlacement, run_episode
from batsched_py.models.events_file import load_events
from batsched_py.envs import EnvError
from batsched_py.platforms.volunteer import Cluster, PoolError, generate_pool, write_pool_platform
from batsched_py.agents.volunteer.mdp import LEVELS, next_reboot
from batsched_py.workloads.volunteer import (Login, generate_jobs, generate_logins, in_term, read_availability_trace,
                                             write_events)

HOUR, DAY = 3600.0, 86400.0


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """20 PCs in 3 rooms, a week of logins and HTC jobs."""
    d = tmp_path_factory.mktemp("volunteer")
    pool = generate_pool(20, 3, seed=2)
    write_pool_platform(pool, d / "pool.xml")
    write_events(generate_logins(pool, 7, rate=0.6, seed=2), d / "events.jsonl")
    (d / "jobs.json").write_text(json.dumps(generate_jobs(7, 20, jobs_per_hour=3, miscreants=0.02, seed=2)))
    return {"platform": d / "pool.xml", "workloads": d / "jobs.json", "events": d / "events.jsonl"}


def make(inputs, **kw):
    return gym.make("batsched_py/VolunteerPool-v0", **inputs, **kw).unwrapped


def one_pc(tmp_path, jobs, logins=(), opens=0, closes=24):
    """A pool of one PC (Normal type) with ``jobs`` ((subtime, runtime[, kill_at])) and ``logins``."""
    write_pool_platform([Cluster("room", 1, "normal", 57.0, 40.0, 2.0, opens, closes, True, 1.0)], tmp_path / "p.xml")
    wl = {"nb_res": 1, "jobs": [], "profiles": {}}
    for i, (sub, run, *kill) in enumerate(jobs):
        wl["jobs"].append({"id": str(i), "subtime": sub, "res": 1, "profile": f"p{i}",
                           **({"kill_at": kill[0]} if kill else {})})
        wl["profiles"][f"p{i}"] = {"type": "parallel_homogeneous", "cpu": run, "com": 0}
    (tmp_path / "w.json").write_text(json.dumps(wl))
    write_events([Login(a, 0, b) for a, b in logins] or [Login(40 * DAY, 0, 40 * DAY + 600)], tmp_path / "e.jsonl")
    return {"platform": tmp_path / "p.xml", "workloads": tmp_path / "w.json", "events": tmp_path / "e.jsonl"}


def play(inputs, level="system", **kw):
    """An episode with random placement; the scheduler after it (its jobs, counts, figures)."""
    env = make(inputs, level=level, **kw)
    figures = run_episode(env, RandomPlacement(0), seed=0)
    return env.scheduler, figures


# --- the pool and its users ---------------------------------------------------------------
def test_default_pool_is_the_papers_size_with_table_1_powers():
    pool = generate_pool()
    assert len(pool) == 37 and sum(c.nb_pcs for c in pool) == 1359 and min(c.nb_pcs for c in pool) >= 1
    for c in pool:
        expect = {"normal": (57, 40, 2), "high_end": (114, 67, 3)}.get(c.kind)
        if expect:
            assert (c.active_w, c.idle_w, c.sleep_w) == expect
        else:
            assert 100 <= c.active_w <= 180 and 50 <= c.idle_w <= 80 and c.sleep_w == 4
    assert {c.kind for c in pool} == {"normal", "high_end", "legacy"}


def test_logins_show_hour_weekday_term_and_room_seasonality():
    pool = [Cluster(f"r{i}", 30, "normal", 57, 40, 2, 0, 24, True, pop) for i, pop in enumerate((0.5, 2.0))]
    logins = generate_logins(pool, 28, seed=3)       # weeks 0-1 vacation, 2-3 term
    starts = np.array([lg.start for lg in logins])
    hour = (starts // HOUR) % 24
    assert np.sum((hour >= 11) & (hour < 15)) > 4 * np.sum(hour < 4)          # afternoon vs night (same 4 h)
    day = (starts // DAY) % 7
    assert np.sum(day < 5) / 5 > 2 * np.sum(day >= 5) / 2                     # per weekday vs per weekend day
    term = np.array([in_term(t) for t in starts])
    assert term.sum() > 2.5 * (~term).sum()                                    # two term weeks vs two vacation weeks
    room = np.array([lg.host >= 30 for lg in logins])
    assert room.sum() > 2 * (~room).sum()                                      # popularity 2 vs 0.5
    for lg in logins:
        assert lg.end - lg.start >= 60


def test_closed_rooms_have_no_logins_and_sessions_end_at_closing():
    pool = [Cluster("r", 10, "normal", 57, 40, 2, 9, 17, False, 1.0)]
    for lg in generate_logins(pool, 14, rate=1.0, seed=1):
        assert 9 * HOUR <= lg.start % DAY < 17 * HOUR and (lg.start // DAY) % 7 < 5
        assert lg.end <= (lg.start // DAY) * DAY + 17 * HOUR


def test_events_file_is_what_batsim_reads(tmp_path):
    path = write_events([Login(100.0, 3, 700.0), Login(200.0, 1, 300.0)], tmp_path / "e.jsonl")
    events = load_events(path, nb_hosts=4)
    assert [(e.type, str(e.resources)) for e in events] == [
        ("machine_unavailable", "3"), ("machine_unavailable", "1"), ("machine_available", "1"), ("machine_available", "3")]
    assert all(e.timestamp != int(e.timestamp) for e in events)     # off whole seconds (see write_events)


@pytest.mark.parametrize("bad, message", [
    (dict(nb_pcs=0), "nb_pcs: 0 is not a positive integer"),
    (dict(nb_pcs=5, nb_clusters=6), "nb_clusters: 6 rooms need at least as many PCs"),
])
def test_bad_pool_parameters_are_named(bad, message):
    with pytest.raises(PoolError, match=message):
        generate_pool(**bad)


def test_bad_generator_parameters_are_named():
    with pytest.raises(PoolError, match="days: -1"):
        generate_logins(generate_pool(4, 2), -1)
    with pytest.raises(PoolError, match=r"miscreants: 2 is not a share in \[0, 1\]"):
        generate_jobs(1, 4, miscreants=2)


FTA_HEAD = "event_id\tnode_id\tevent_type\tevent_start_time\tevent_end_time\n"


def test_availability_trace_reads_fta_intervals(tmp_path):
    path = tmp_path / "event_trace.tab"
    path.write_text(FTA_HEAD + "1\tn7\t0\t1000\t1600\n2\tn7\t1\t1600\t5000\n3\tn2\t0\t1300\t1400\n")
    assert read_availability_trace(path, 4) == [Login(0.0, 0, 600.0), Login(300.0, 1, 400.0)]


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("node_id\tevent_type\n", "header lacks column.s. event_start_time, event_end_time"),
    (FTA_HEAD + "1\tn1\t0\tsoon\t5\n", "line 2: event_type must be an integer and the times numbers"),
    (FTA_HEAD + "1\tn1\t0\t10\n", "line 2: 4 fields, the header has 5"),
    (FTA_HEAD + "1\tn1\t3\t10\t20\n", "line 2: event_type 3 is neither 0"),
    (FTA_HEAD + "1\tn1\t0\t30\t20\n", "line 2: event_end_time 20 is before event_start_time 30"),
    (FTA_HEAD + "1\tn1\t0\t10\t50\n2\tn1\t0\t40\t60\n", "line 3: node 0's unavailability overlaps"),
    (FTA_HEAD + "1\tn1\t0\t10\t50\n2\tn2\t0\t10\t50\n3\tn3\t0\t10\t50\n", "line 4: more than 2 nodes"),
])
def test_bad_availability_traces_are_named(tmp_path, text, message):
    path = tmp_path / "t.tab"
    path.write_text(text)
    with pytest.raises(PoolError, match=f"availability trace {path}.*{message}"):
        read_availability_trace(path, 2)


def test_missing_availability_trace_is_named(tmp_path):
    with pytest.raises(PoolError, match="availability trace .*nope.tab: cannot read"):
        read_availability_trace(tmp_path / "nope.tab", 2)


# --- the pool's mechanics on the emulator ----------------------------------------------------
def test_a_login_evicts_the_job_which_restarts_from_scratch(tmp_path):
    inputs = one_pc(tmp_path, [(0.0, 1000.0)], [(500.0, 900.0)])
    login, logout = (e.timestamp for e in load_events(inputs["events"], nb_hosts=1))
    s, fig = play(inputs)
    first, copy = s.jobs["w0!0"], s.jobs["w0!0#1"]
    assert first.final_state == "COMPLETED_KILLED" and first.finish_time == pytest.approx(login)
    assert copy.final_state == "COMPLETED_SUCCESSFULLY"
    # back in the queue at once; it runs at its first negotiation cycle (300 s) after the logout
    assert logout <= copy.start_time < logout + 300 and (copy.start_time - copy.subtime) % 300 == pytest.approx(0, abs=1e-3)
    assert copy.finish_time - copy.start_time == pytest.approx(1000)
    assert fig["evictions"] == fig["resubmitted"] == 1 and fig["completed"] == 1
    assert fig["wasted_mwh"] * 3.6e9 == pytest.approx(login * 57)
    assert fig["good_mwh"] * 3.6e9 == pytest.approx(1000 * 57)
    assert fig["overhead_min"] * 60 == pytest.approx(copy.start_time)


def test_the_3am_reboot_evicts_running_jobs(tmp_path):
    s, fig = play(one_pc(tmp_path, [(2 * HOUR, 2 * HOUR)]))
    assert next_reboot(2 * HOUR) == 3 * HOUR and next_reboot(3 * HOUR) == DAY + 3 * HOUR
    assert s.jobs["w0!0"].final_state == "COMPLETED_KILLED" and s.jobs["w0!0"].finish_time == 3 * HOUR
    assert fig["reboot_evictions"] == 1 and s.jobs["w0!0#1"].finish_time == pytest.approx(5 * HOUR)


def test_idle_pcs_sleep_and_wake_for_a_job(tmp_path):
    # open room: asleep after 1 h idle, so a job at 2 h waits 30 s for the PC to wake; one at 30 min does not
    s, _ = play(one_pc(tmp_path, [(30 * 60.0, 60.0), (4 * HOUR, 60.0)], opens=0, closes=24))
    assert s.jobs["w0!0"].start_time == 30 * 60
    assert s.jobs["w0!1"].start_time == pytest.approx(4 * HOUR + 30)
    # closed room: asleep after 15 min
    s, _ = play(one_pc(tmp_path, [(10 * 60.0, 60.0), (40 * 60.0, 60.0)], opens=9, closes=17))
    assert s.jobs["w0!1"].start_time == pytest.approx(40 * 60 + 30)



def test_each_pc_sleeps_by_its_own_rooms_hours(tmp_path):
    # one PC always open, one in a room open 9-17 (hosts in name order): at 00:40 only the second has slept
    write_pool_platform([Cluster("a_open", 1, "normal", 57.0, 40.0, 2.0, 0, 24, True, 1.0),
                         Cluster("b_day", 1, "normal", 57.0, 40.0, 2.0, 9, 17, True, 1.0)], tmp_path / "p.xml")
    wl = {"nb_res": 2, "jobs": [{"id": str(i), "subtime": 40 * 60.0, "res": 1, "profile": "p"} for i in range(2)],
          "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 60.0, "com": 0}}}
    (tmp_path / "w.json").write_text(json.dumps(wl))
    write_events([Login(40 * DAY, 0, 40 * DAY + 600)], tmp_path / "e.jsonl")
    env = make({"platform": tmp_path / "p.xml", "workloads": tmp_path / "w.json", "events": tmp_path / "e.jsonl"},
               level="computer")
    obs, info = env.reset(seed=0)
    done, placed = False, []
    while not done:                                 # each job on the first PC that can take it
        placed.append(info["job"])                  # (which job: the key of a learner's per-job budget)
        obs, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert placed == ["w0!0", "w0!1"] and info["job"] is None
    jobs = env.scheduler.jobs
    assert list(jobs["w0!0"].alloc) == [0] and jobs["w0!0"].start_time == 40 * 60
    assert list(jobs["w0!1"].alloc) == [1] and jobs["w0!1"].start_time == pytest.approx(40 * 60 + 30)

def test_a_miscreant_runs_until_its_owner_kills_it(tmp_path):
    s, fig = play(one_pc(tmp_path, [(4 * HOUR, 1e9, 10 * HOUR)]))
    assert s.jobs["w0!0"].finish_time == 10 * HOUR and s.jobs["w0!0"].final_state == "COMPLETED_KILLED"
    assert fig["owner_kills"] == 1 and fig["completed"] == 0 and fig["resubmitted"] == 0
    # (from the end of the PC's 30 s wake-up: it slept since 1 h)
    assert fig["miscreant_mwh"] == fig["wasted_mwh"] == pytest.approx((6 * HOUR - 30) * 57 / 3.6e9)


def test_a_job_longer_than_a_day_is_given_up_after_the_owners_patience(tmp_path):
    s, fig = play(one_pc(tmp_path, [(2 * HOUR, 40 * HOUR)]), patience=3 * DAY)
    assert fig["reboot_evictions"] == 3 and fig["completed"] == 0 and fig["owner_kills"] == 1
    last = s.jobs["w0!0#3"]
    assert last.final_state == "COMPLETED_KILLED" and last.finish_time == pytest.approx(2 * HOUR + 3 * DAY)


# --- the environment ---------------------------------------------------------------------------
@pytest.mark.parametrize("level", LEVELS)
def test_check_env(small, level):
    check_env(make(small, level=level), skip_render_check=True)


def test_spaces_follow_the_level(small):
    assert make(small, level="computer").action_space == gym.spaces.Discrete(21)
    assert make(small, level="cluster").action_space == gym.spaces.Discrete(4)
    assert make(small, level="system").action_space == gym.spaces.Discrete(2)
    assert make(small, level="cluster-week").observation_space == gym.spaces.MultiDiscrete([168, 25, 2])


def test_max_time_truncates_at_the_first_decision_from_then(small):
    """The scheduler's MDP horizon: the episode stops at the first step that reaches max_time."""
    env = make(small, level="cluster", max_time=2 * DAY)
    _, info = env.reset(seed=0)
    times, done = [info["time"]], False
    while not done:
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        times.append(info["time"])
        done = terminated or truncated
    assert truncated and not terminated
    assert times[-1] >= 2 * DAY > times[-2]


def test_a_refused_action_is_named_and_the_episode_goes_on(small):
    def first_steps(refuse):
        env = make(small, level="cluster")
        obs, _ = env.reset(seed=4)
        out = []
        for a in (0, 3, 1, 2, 3, 0):
            if refuse:
                with pytest.raises(ActionError, match=r"action 4 is outside Discrete\(4\): choose 0..3"):
                    env.step(4)
            obs, r, *_ = env.step(a)
            out.append((tuple(obs), r))
        return out

    assert first_steps(True) == first_steps(False)


def test_an_episode_is_reproducible_and_masks_full_choices(small):
    def episode():
        env = make(small, level="computer")
        obs, info = env.reset(seed=4)
        rng, trace = np.random.default_rng(4), []
        done = False
        while not done:
            mask = info["action_mask"]
            assert mask[-1] and env.scheduler.takers() != 0
            action = int(rng.choice(np.flatnonzero(mask)))
            trace.append((tuple(obs), action))
            obs, r, term, trunc, info = env.step(action)
            done = term or trunc
        return trace, {k: info[k] for k in ("good_mwh", "wasted_mwh", "overhead_min", "evictions")}
    a, b = episode(), episode()
    assert a == b and a[1]["evictions"] > 0 and len(a[0]) > 200


def test_bad_environment_arguments_are_named(small, tmp_path):
    with pytest.raises(EnvError, match="level: 'room' is not one of computer, cluster, cluster-week, system"):
        make(small, level="room")
    with pytest.raises(EnvError, match=r"sigma: 2 is not a number in \[0, 1\]"):
        make(small, sigma=2)
    with pytest.raises(EnvError, match="events: .*nope.jsonl is not a file"):
        make({**small, "events": tmp_path / "nope.jsonl"})
    plain = tmp_path / "plain.xml"
    plain.write_text(small["platform"].read_text().replace('id="cluster"', 'id="room"'))
    with pytest.raises(EnvError, match="is not a volunteer pool"):
        make({**small, "platform": plain})
