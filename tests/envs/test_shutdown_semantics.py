"""Shutdown-v0 as the DeepShutdown authors defined it (GridGym's OffReservationEnv): no job on a
reserved node, the reservation as a cap, days that start with every node off, decisions after the
events of their minute, the authors' reward, Timeout and oracle; and their own per-day figures."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import batsched_py.envs  # noqa: F401
from batsched_py.agents.deepshutdown.baselines import BASELINES as SHUTDOWN
from batsched_py.agents.deepshutdown.mdp import feature_count
from batsched_py.policies.agent.easy_plan import plan_order
from batsched_py.policies.agent.nodes import NodeState
from helpers import SHARED
from helpers.rl import baseline_action

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = ROOT / "platforms/taurus_deepshutdown.xml"
DAYS = sorted((ROOT / "workloads/deepshutdown").glob("*/*.json"))
LYON = SHARED / "data/deepshutdown"


def make(day, **kw):
    return gym.make("batsched_py/Shutdown-v0", platform=str(PLATFORM), workloads=[str(day)], **kw).unwrapped


def reserved_hosts(s) -> int:
    m = 0
    for i in s.reserved:
        m |= s.masks[i]
    return m


def play(env, act, check=None):
    obs, info = env.reset(seed=0)
    total, done = 0.0, False
    while not done:
        obs, r, term, trunc, info = env.step(act(env, obs))
        total += r
        done = term or trunc
        if check is not None:
            check(env)
    return total, info


def policy(name):
    return baseline_action("shutdown", name)


@pytest.mark.parametrize("day", DAYS, ids=lambda d: d.name)
def test_no_job_ever_holds_a_reserved_nodes_host(day):
    """Random reservations all day: no started or waiting job holds a host of a reserved node (the
    stuck-job defect: EASY started the priority job on nodes the reservation had just taken)."""
    rng = np.random.default_rng(1)
    env = make(day)
    seen = []

    def check(env):
        s = env.scheduler
        held = s.held_mask
        assert not held & reserved_hosts(s), f"t={s.now}: a job holds hosts of reserved nodes {sorted(s.reserved)}"
        seen.append(bool(s.pending) or bool(s.jobs.running))
    play(env, lambda env, obs: int(rng.integers(env.action_space.n)), check)
    assert any(seen)


def test_the_day_starts_with_every_node_off_and_the_warm_up_is_not_counted():
    env = make(DAYS[0])
    obs, info = env.reset(seed=0)
    s = env.scheduler
    assert env.warmup == pytest.approx(3.0)            # the platform's switch-off time (1 flop at 1/3 flop/s)
    assert s.states() == [NodeState.OFF] * s.nb_nodes
    assert obs[-1][0] == 1.0                           # every node off, in the observation too
    assert env.meter.waste == 0.0 and s.switches == 0  # (switching every node off before the day is no waste)
    # the day's jobs come after the warm-up: shifted by its length
    first = min(j["subtime"] for j in json.loads(DAYS[0].read_text())["jobs"])
    env.step(0)
    assert all(j.subtime >= first + 3.0 for j in s.jobs.by_id.values())


def test_the_reservation_is_a_cap_released_nodes_stay_off_until_a_job_needs_them():
    """Release everything while nothing is queued: no node is switched on (GridGym's semantics; ours
    used to wake every released node, so action 0 cost 14 switches)."""
    env = make(DAYS[0])
    env.reset(seed=0)
    s = env.scheduler
    env.step(s.nb_nodes)
    assert len(s.reserved) == s.nb_nodes
    before = s.switches
    env.step(0)
    assert not s.reserved and s.switches == before
    assert s.states() == [NodeState.OFF] * s.nb_nodes


def _one_job_day(tmp_path, subtime=10, runtime=5, res=12):
    doc = {"nb_res": 168, "jobs": [{"id": "1", "subtime": subtime, "walltime": 60, "res": res, "profile": "p"}],
           "profiles": {"p": {"type": "parallel_homogeneous", "cpu": runtime * 1e6, "com": 0}}}
    path = tmp_path / "one.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_node_is_seen_idle_at_the_minute_its_job_ends(tmp_path):
    """T0 switches a node off at the decision of the minute its job ends (the decision comes after
    that minute's events): no idle time, one cycle on and off; the job waited for its node to wake."""
    env = make(_one_job_day(tmp_path))
    total, info = play(env, policy("T0"))
    assert info["time_idle"] == pytest.approx(0.0, abs=0.05)
    assert info["nb_switches"] == 2
    assert info["waiting_time"] == pytest.approx(1.0, abs=1e-3)       # switch-on time
    assert info["time_computing"] == pytest.approx(12 * 5, abs=1e-3)


def test_a_job_on_part_of_a_node_wakes_the_whole_node_and_t0_switches_it_off_after(tmp_path):
    """A node switches as a whole, as the authors' 12-core nodes do: an 18-host job wakes two whole
    nodes (the 6 cores it does not use idle while it runs, and count as waste), and once it ends T0
    switches both off.  (A job on part of a node used to wake only its hosts, and the node, half
    asleep and half idle, was then never switched off: 6 idle hosts for the rest of the day.)"""
    env = make(_one_job_day(tmp_path, runtime=30, res=18))
    _, info = play(env, policy("T0"))
    assert info["nb_switches"] == 4
    assert info["time_idle"] == pytest.approx(6 * 30, abs=0.5)
    assert all(state == NodeState.OFF for state in env.scheduler.states())


def test_timeouts_keep_a_node_idle_as_the_authors_count(tmp_path):
    """T10 switches a node off at the tenth decision that finds it idle: nine minutes of idle."""
    env = make(_one_job_day(tmp_path))
    _, info = play(env, policy("T10"))
    assert info["time_idle"] == pytest.approx(12 * 9, abs=0.1)


def _day(tmp_path, jobs):
    """Jobs (subtime, hosts, runtime), walltime 60 each, ids 0, 1, ..."""
    doc = {"nb_res": 168, "profiles": {f"p{i}": {"type": "parallel_homogeneous", "cpu": d * 1e6, "com": 0}
                                       for i, (_, _, d) in enumerate(jobs)},
           "jobs": [{"id": str(i), "subtime": t, "walltime": 60, "res": r, "profile": f"p{i}"}
                    for i, (t, r, _) in enumerate(jobs)]}
    path = tmp_path / "day.json"
    path.write_text(json.dumps(doc))
    return path


def _starts(env, act) -> list[float]:
    """Each job's start time (the day's first job first)."""
    play(env, act)
    return [job.start_time for job in env.scheduler.jobs.by_id.values()]


def qb(**options):
    def act(env, obs, p=SHUTDOWN["QB"](**options)):
        if p.scheduler is not env.scheduler:
            p.bind(env.scheduler)
        return p(obs)
    return act


def test_queue_batching_runs_the_queue_back_to_back_on_the_node_it_wakes(tmp_path):
    """QB (queue 3) beside a long job on node 0: three 5-minute node jobs submitted a minute apart
    wait until the third comes, then one node wakes (1 minute) and runs them one after the other;
    T0 wakes a node for each as it comes.  (Start times count from the day's origin, which the
    minutes of its warm-up shift: the long job's start, at once with its 1 minute of switching.)"""
    jobs = [(0, 12, 200), (10, 12, 5), (11, 12, 5), (12, 12, 5)]
    t0 = _starts(make(_day(tmp_path, jobs)), policy("T0"))
    origin = t0[0] - 1
    assert [t - origin for t in t0] == pytest.approx([1, 11, 12, 13], abs=0.01)
    starts = _starts(make(_day(tmp_path, jobs)), qb(queue=3, max_stretch=10))
    assert [t - origin for t in starts] == pytest.approx([1, 13, 18, 23], abs=0.01)


def test_queue_batching_starts_a_lone_job_when_its_stretch_reaches_the_bound(tmp_path):
    """Beside a long job, a job alone in the queue waits until its stretch (wait / walltime 60)
    reaches 0.5: 30 minutes, then its node's minute of switching on."""
    starts = _starts(make(_day(tmp_path, [(0, 12, 200), (10, 12, 5)])), qb(queue=3, max_stretch=0.5))
    assert starts[1] - (starts[0] - 1) == pytest.approx(10 + 30 + 1, abs=0.01)


def test_queue_batching_starts_a_lone_job_when_its_wait_reaches_the_bound(tmp_path):
    starts = _starts(make(_day(tmp_path, [(0, 12, 200), (10, 12, 5)])), qb(queue=3, max_stretch=10, max_wait=12))
    assert starts[1] - (starts[0] - 1) == pytest.approx(10 + 12 + 1, abs=0.01)


def test_queue_batching_starts_a_job_at_once_on_hosts_already_on(tmp_path):
    """A half-node job, the queue short, starts at once on the half of node 0 that a short job left
    idle, where T0 too starts it: no node more is woken for it."""
    env = make(_day(tmp_path, [(0, 6, 60), (0, 6, 5), (30, 6, 5)]))
    _, info = play(env, qb(queue=2, max_stretch=10))
    starts = [job.start_time for job in env.scheduler.jobs.by_id.values()]
    assert starts[2] - (starts[0] - 1) == pytest.approx(30, abs=0.01)
    assert info["nb_switches"] == 2           # (node 0 on, and off at the end)


def test_queue_batching_rejects_settings_that_mean_nothing():
    for options in ({"queue": 0}, {"max_stretch": 0}, {"max_wait": -1}):
        with pytest.raises(ValueError, match="QB: queue must be >= 1, max_stretch and max_wait > 0"):
            SHUTDOWN["QB"](**options)


def _two_job_day(tmp_path):
    """A job longer than the day from minute 1 on one node, then a one-node job at minute 5."""
    doc = {"nb_res": 168, "jobs": [{"id": "a", "subtime": 1, "walltime": 2000, "res": 12, "profile": "long"},
                                   {"id": "b", "subtime": 5, "walltime": 60, "res": 12, "profile": "short"}],
           "profiles": {"long": {"type": "parallel_homogeneous", "cpu": 1800e6, "com": 0},
                        "short": {"type": "parallel_homogeneous", "cpu": 5e6, "com": 0}}}
    path = tmp_path / "two.json"
    path.write_text(json.dumps(doc))
    return path


def keep_all_free_nodes_off(env, obs):
    """Reserve every node that job a leaves (from minute 3, once it runs)."""
    s = env.scheduler
    return 0 if s.now - s.day_start < 3 else s.nb_nodes - 1


def test_the_late_job_term_counts_only_the_jobs_the_reservation_blocks(tmp_path):
    """Every node but job a's reserved: job b is blocked (it would start on a reserved node), and once
    its stretch reaches tau (0.5 x 60 min) each step costs its hosts / platform hosts; with nothing
    reserved the term is 0 (b is never blocked)."""
    env = make(_two_job_day(tmp_path), energy_weight=0.0)
    env.reset(seed=0)
    rewards = []
    for _ in range(60):
        _, r, *_ = env.step(keep_all_free_nodes_off(env, None))
        rewards.append(r)
    late = [i for i, r in enumerate(rewards) if r < 0]
    assert late and all(r == pytest.approx(-12 / 168) for r in np.array(rewards)[late])
    assert late == list(range(late[0], 60)) and 34 <= late[0] <= 36      # from b's wait of 30 minutes
    env = make(_two_job_day(tmp_path), energy_weight=0.0)
    total, _ = play(env, lambda env, obs: 0)
    assert total == 0.0


def test_unfinished_jobs_count_in_every_per_job_figure(tmp_path):
    """A policy that keeps a job waiting all day does not score well: b counts with its wait so far
    (the whole day) in the waiting time, the stretch and the slowdown."""
    env = make(_two_job_day(tmp_path))
    _, info = play(env, keep_all_free_nodes_off)
    assert info["nb_jobs"] == 2
    b_wait = 1440 + 3 - (5 + 3)
    assert info["waiting_time"] > b_wait / 2 - 1
    assert info["slowdown"] > b_wait / 2


def test_the_priority_job_is_given_nodes_when_every_unreserved_node_is_free(tmp_path):
    """The authors' rule: a whole-platform job never waits for ever behind a reservation."""
    env = make(_one_job_day(tmp_path, res=168))
    total, info = play(env, lambda env, obs: env.scheduler.nb_nodes)
    job = next(iter(env.scheduler.jobs.by_id.values()))
    assert job.start_time is not None and job.start_time - job.subtime < 2.0


def test_the_observation_width_is_the_schedulers():
    env = make(DAYS[0])
    obs, _ = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape == (20, env.scheduler.nb_features)
    assert env.observation_space.contains(obs)


def test_release_features_show_when_each_node_frees_by_walltime(tmp_path):
    """A one-node job asking 60 min: with release_features (the default), its node's feature is the
    log-scaled time to its walltime end, every other node's 0; the row has a feature more per node and
    per queued job than without (the width the agents before it were trained on)."""
    env = make(_one_job_day(tmp_path, runtime=50))
    assert env.observation_space.shape == (20, feature_count(14, 10)) == (20, 14 * 2 + 10 * 5 + 11)
    assert make(DAYS[0], release_features=False).observation_space.shape == (20, feature_count(14, 10, False)) == (20, 65)
    obs, _ = env.reset(seed=0)
    for _ in range(30):
        obs, *_ = env.step(0)
    s = env.scheduler
    job = next(iter(s.jobs.by_id.values()))
    node = next(i for i, m in enumerate(s.masks) if m & s.alloc_masks[job.id])
    releases = obs[-1, 24:38]
    want = np.log1p(job.start_time + 60 - s.now) / np.log1p(1440)
    assert releases[node] == pytest.approx(want, abs=1e-6) and 0 < want < 1
    assert not np.delete(releases, node).any()


@pytest.mark.parametrize("day", DAYS[:2], ids=lambda d: d.name)
def test_the_stretch_at_release_feature_is_the_walltime_rules_test(day):
    """The walltime rule (OR* on walltimes, stretch < 0.25) lets a startable job wait exactly when
    the job's new feature (stretch at the next releases by walltime / tau) is below 0.25 / tau: what
    it decides is in what the agent sees."""
    env = make(day)
    rule = SHUTDOWN["OR*"](max_stretch=0.25, real_runtimes=False)
    obs, _ = env.reset(seed=0)
    rule.bind(env.scheduler)
    s, checked, done = env.scheduler, 0, False
    while not done:
        seen = s.features()
        releases = rule._next_releases()
        startable = {j.id for j in s.startable()}
        for k, job in enumerate(plan_order(s.queue, s.k)):
            if job.id in startable:
                feature = seen[10 + 2 * s.nb_nodes + 5 * k + 4]
                assert rule.can_wait(job, releases) == (feature * s.tau < 0.25 - 1e-6), (s.now, job.id, feature)
                checked += 1
        obs, _, term, trunc, _ = env.step(rule(obs))
        done = term or trunc
    assert checked > 0


# --- the authors' own figures (../shared) ----------------------------------------------------
needs_lyon = pytest.mark.skipif(not (LYON / "lyon_good/results/test/benchmark.csv").is_file(),
                                reason="the DeepShutdown data set (../shared/data/deepshutdown) is not here")


@needs_lyon
@pytest.mark.parametrize("week", [0, 14, 231, 288, 309])
def test_timeout_1_gives_the_authors_figures_on_their_test_days(week):
    """The authors' Timeout(1) on their lyon_good test days (benchmark.csv): the same energy waste
    (W·min) and node switches within 5% (days 0, 14, 231 and 288 to the W·min).  309 is the day whose
    waste our old environment made 8.9x theirs (a job stuck behind the reservation)."""
    bench = {(r["policy"], int(r["week"])): r for r in csv.DictReader((LYON / "lyon_good/results/test/benchmark.csv").open())}
    theirs = bench[("Timeout (1)", week)]
    env = make(LYON / f"lyon_good/workloads/test/train_{week}.json")
    _, info = play(env, policy("T1"))
    assert info["energy_waste"] == pytest.approx(float(theirs["energy_waste"]), rel=0.05)
    assert info["nb_switches"] == pytest.approx(float(theirs["nb_switches"]), rel=0.05)
    assert info["waiting_time"] == pytest.approx(float(theirs["mean_waiting_time"]), rel=0.15)


@needs_lyon
def test_the_return_ranks_the_oracle_first_then_t0_then_t5_and_so_does_the_waste():
    days = [LYON / "lyon_good/workloads/test/train_0.json", LYON / "lyon_good/workloads/test/train_10.json"]
    returns, waste = {}, {}
    for name in ("OR*", "T0", "T5"):
        returns[name] = waste[name] = 0.0
        for day in days:
            total, info = play(make(day), policy(name))
            returns[name] += total
            waste[name] += info["energy_waste"]
    assert returns["OR*"] > returns["T0"] > returns["T5"]
    assert waste["OR*"] < waste["T0"] < waste["T5"]


@needs_lyon
def test_the_whole_platform_job_of_lyon_3_test_151_is_not_stuck_behind_the_reservation():
    """The old environment's agent left a 168-host job pending on lyon_3 3_test_151 from t=492 to
    the day's end, holding idle hosts.  Reserving every node it may, all day: no job ever holds a
    reserved node's host, and that job starts once the nodes it needs are free."""
    day = LYON / "lyon_3/workloads/test/3_test_151.json"
    env = make(day)

    def check(env):
        s = env.scheduler
        assert not s.held_mask & reserved_hosts(s)
    play(env, lambda env, obs: env.scheduler.nb_nodes, check)
    whole = [j for j in env.scheduler.jobs.by_id.values() if j.res == 168]
    assert whole and all(j.start_time is not None for j in whole)


def test_advice_shows_what_the_baseline_would_do_now():
    """With advice QB (its arguments given), each observation's present row ends its node features
    with a one-hot of QB's action in that very state: along a day QB plays, the one-hot is QB's
    action at every step; the row is G + 1 wider; a bad baseline name or argument is refused."""
    qb = {"max_stretch": 10, "max_wait": 20}
    env = make(DAYS[0], advice="QB", advice_options=qb)
    assert env.observation_space.shape == (20, feature_count(14, 10, True, True)) == (20, 89 + 15)
    start = 5 + 5 + 14 + 14     # (after the counts and scalars, idle ages and release features)
    teacher = SHUTDOWN["QB"](**qb)
    seen = []

    def act(env, obs):
        if teacher.scheduler is not env.scheduler:
            teacher.bind(env.scheduler)
        a = teacher.act()
        seen.append((int(np.argmax(obs[-1, start:start + 15])), float(obs[-1, start:start + 15].sum()), a))
        return a
    play(env, act)
    assert len(seen) == 1440
    assert all(total == 1.0 and shown == a for shown, total, a in seen)
    assert len({a for _, _, a in seen}) > 3          # (the day moves QB's action about)
    with pytest.raises(ValueError, match="option advice: 'QC' is not a baseline"):
        make(DAYS[0], advice="QC")
    with pytest.raises(ValueError, match="option advice_options: QB refuses"):
        make(DAYS[0], advice="QB", advice_options={"queue": 0})



def test_the_shield_keeps_the_agent_to_its_advice_once_a_job_has_waited_shield_wait():
    """With advice QB and shield_wait 20, a policy that always keeps every node off is held to QB's
    action at each decision where a queued job has waited 20 minutes or more, and only there;
    without the shield it is not, and its jobs wait longer.  A shield without advice, or with a wait
    that is not positive, is refused with one line."""
    qb = {"max_stretch": 10, "max_wait": 20}
    start = 5 + 5 + 14 + 14      # (the advice's one-hot in the present row: see the advice test)

    def run(**shield):
        env = make(DAYS[0], advice="QB", advice_options=qb, **shield)
        obs, info = env.reset(seed=0)
        late, early, done = [], [], False
        while not done:
            s = env.scheduler
            waited = any(s.now - job.subtime >= 20 - 1e-6 for job in s.queue)
            advice = int(np.argmax(obs[-1, start:start + 15]))
            obs, r, term, trunc, info = env.step(14)
            (late if waited else early).append((advice, len(s.reserved)))
            done = term or trunc
        return late, early, info

    late, early, shielded = run(shield_wait=20)
    assert late and all(kept <= advice for advice, kept in late)
    assert any(advice < 14 for advice, _ in late)
    assert all(kept == 14 for _, kept in early[:60])          # (the day's start: nothing waits, all kept off)
    late, _, bare = run()
    assert any(kept > advice for advice, kept in late)
    assert shielded["waiting_time"] < bare["waiting_time"]
    with pytest.raises(ValueError, match="option shield_wait: a shield keeps the agent to its advice, and no advice"):
        make(DAYS[0], shield_wait=20)
    with pytest.raises(ValueError, match="option shield_wait: 0 is not a finite positive number"):
        make(DAYS[0], advice="QB", shield_wait=0)
