"""The thermal-aware allocation agent: predictor training, DQN learning, deployment as a scheduler."""
import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import batsched_py.envs  # noqa: F401
from batsched_py.agents.allocation.cluster import greedy, room
from batsched_py.agents.allocation.dqn import EPSILON, make_dqn, valid_actions
from batsched_py.agents.allocation.saved import greedy_action
from batsched_py.agents.allocation.cluster_jobs import Jobs
from batsched_py.agents.allocation.gmm import fit_mixture
from batsched_py.agents.allocation.predictor import KINDS, evaluate, evaluate_clustered, read_predictor, \
    record_telemetry, save_predictor, train_clustered, train_predictor
from batsched_py.emulator import simulate
from batsched_py.models.thermal import ThermalParams
from batsched_py.policies.options import PolicyOptionError
from batsched_py.scheduler import DecisionError, registry


TABLE_4_1 = {f"{q}_{m}" for q, unit in (("temperature", "C"), ("power", "W"))
             for m in (f"MAE_{unit}", f"RMSE_{unit}", "accuracy_pct")}


def busy_jobs(n=600, seed=0, days=1.0):
    rng = np.random.default_rng(seed)
    return Jobs(np.sort(rng.uniform(0, days * 86400, n)), rng.integers(1, 7, n), rng.uniform(600, 3000, n))


@pytest.mark.parametrize("kind", KINDS)
def test_predictor_training_lowers_the_loss(kind, tmp_path):
    telemetry = record_telemetry(busy_jobs(300, days=0.5), 4)
    assert telemetry.shape[1:] == (4, 5) and telemetry[:, :, 0].max() > 0
    saved, losses = train_predictor(telemetry, kind, l=3, hidden=8, epochs=4, batch=16)
    assert losses[-1] < 0.5 * losses[0]
    save_predictor(saved, tmp_path / "p.pt")
    net, back = read_predictor(tmp_path / "p.pt", 24)
    table = evaluate(net, back, telemetry, 180.0)
    assert set(table) == TABLE_4_1


def test_the_mixture_finds_three_regimes_and_the_clustered_predictor_trains_and_is_evaluated():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 8.0]])
    truth = rng.integers(3, size=600)
    points = centres[truth] + rng.normal(0, 0.5, (600, 2))
    mixture = fit_mixture(points, 3, seed=0)
    found = mixture.assign(points)
    # the same partition up to the components' order
    assert len({(t, f) for t, f in zip(truth, found)}) == 3
    assert np.allclose(np.sort(mixture.weights), np.sort(np.bincount(truth) / 600), atol=0.01)
    with pytest.raises(ValueError, match="3 components need at least 3 distinct points"):
        fit_mixture(np.zeros((10, 2)), 3)
    telemetry = record_telemetry(busy_jobs(300, days=0.5), 4)
    mixture, parts = train_clustered(telemetry, 2, l=3, hidden=8, epochs=2, batch=16)
    assert len(parts) == 2 and mixture.means.shape == (2, 4)
    table = evaluate_clustered(mixture, parts, telemetry, 180.0)
    assert set(table) == TABLE_4_1 and np.isfinite(list(table.values())).all()


def play(env, choose):
    obs, _ = env.reset(options={"start": 0})
    total, done = 0.0, False
    while not done:
        obs, reward, done, _, _ = env.step(choose(obs))
        total += reward
    return total


def test_a_short_dqn_run_beats_random_and_round_robin():
    import torch
    torch.set_num_threads(1)
    env = gym.make("batsched_py/Allocation-v0", jobs=busy_jobs(), nb_processors=4, episode_days=1)
    model = make_dqn(env, seed=0)
    assert model.exploration_schedule(1.0) == EPSILON[0]
    model.learn(2500)
    assert model.exploration_rate == pytest.approx(max(EPSILON[2], EPSILON[0] * EPSILON[1] ** 2500), rel=0.01)
    e = env.unwrapped
    e.action_space.seed(0)
    random = play(e, lambda obs: e.action_space.sample())
    learnt = play(e, lambda obs: greedy_action(model, obs))
    consolidation = play(e, lambda obs: greedy(e.agent, e.agent.head_cores()))
    # rewards are against round robin (which earns 0): the DQN beats it, and comes near greedy
    # consolidation (0.90-0.99 of it for seeds 0-2; random earns 0.2 of it)
    assert learnt > random + 200 and learnt > 0.8 * consolidation, (learnt, random, consolidation)


@pytest.mark.parametrize("J", [1, 2])
def test_the_mask_keeps_exactly_the_placements_with_room(J):
    # (room: free cores that do not overheat; the 27 C rack's processor cannot be filled)
    import torch
    env = gym.make("batsched_py/Allocation-v0", jobs=busy_jobs(400, days=0.5), nb_processors=3, J=J).unwrapped
    model = make_dqn(env, seed=0)
    model.exploration_rate = 0.5
    obs, _ = env.reset(options={"start": 0})
    done, checked = False, 0
    while not done:
        free, heads = room(env.agent.model, env.max_temperature), [env.agent.head_cores(k) for k in range(J)]
        fits = free >= heads[0]
        if J == 1:
            want = fits
        else:       # the second fits after the first, or fits nowhere (it waits)
            after = [free - heads[0] * (np.arange(3) == a) for a in range(3)]
            want = np.array([[fits[a] and (heads[1] == 0 or not (after[a] >= heads[1]).any() or after[a][b] >= heads[1])
                              for b in range(3)] for a in range(3)]).ravel()
        want |= not want.any()          # (nowhere without overheating: any choice, the fallback decides)
        assert (valid_actions(torch.as_tensor(obs), int(env.action_space.n))[0].numpy() == want).all()
        checked += not want.all()
        action, _ = model.predict(obs, deterministic=False)      # exploring or not: never a full processor
        assert want[int(action)] and want[greedy_action(model, obs)]
        obs, _, done, _, _ = env.step(action)
    assert checked > 20         # (the trace does fill processors)


def workload(path, sizes, every=60):
    path.write_text(json.dumps({"nb_res": 96, "profiles": {"d": {"type": "delay", "delay": 3000}},
                                "jobs": [{"id": str(i), "subtime": every * i, "res": r, "profile": "d"}
                                         for i, r in enumerate(sizes)]}))
    return path


@pytest.fixture
def platform96(tmp_path):
    from batsched_py.platforms.generate import plain_cluster, platform_xml
    path = tmp_path / "p96.xml"
    path.write_text(platform_xml(plain_cluster(96, 1e9), energy=False))
    return path


def test_the_allocators_run_in_the_emulator_with_its_thermal_model(tmp_path, platform96):
    jobs = workload(tmp_path / "w.json", [1 + i % 3 for i in range(60)], every=300)   # ~20 of 96 cores busy
    power = {}
    for policy in ("round_robin", "greedy", "online_opt1"):
        result = simulate(platform96, [jobs], registry.create("thermal-allocation", {"policy": policy}),
                          output_prefix=tmp_path / policy, thermal=ThermalParams())
        assert all(j.final_state == "COMPLETED_SUCCESSFULLY" for j in result.jobs.values())
        for j in result.jobs.values():     # every job on one processor
            assert len({h // 24 for h in j.allocated_resources}) == 1
        rows = np.genfromtxt(tmp_path / f"{policy}_thermal.csv", delimiter=",", names=True)
        power[policy] = rows["power"][rows["time"] <= 18000].sum()     # (while every run is busy)
    assert power["greedy"] < power["round_robin"] and power["online_opt1"] < power["round_robin"], power


def test_a_saved_dqn_deploys_by_name_and_bad_models_and_jobs_are_refused(tmp_path, platform96):
    env = gym.make("batsched_py/Allocation-v0", jobs=busy_jobs(50), nb_processors=4)
    model = make_dqn(env, seed=0)
    model.learn(60)
    model.save(tmp_path / "dqn.zip")
    jobs = workload(tmp_path / "w.json", [2] * 20)
    result = simulate(platform96, [jobs], registry.create("dqn-allocation", {"model": str(tmp_path / "dqn.zip")}))
    assert len(result.jobs) == 20
    with pytest.raises(PolicyOptionError, match="no such file"):
        registry.create("dqn-allocation", {"model": str(tmp_path / "missing.zip")})
    with pytest.raises(Exception, match="trained for observations"):
        simulate(platform96, [jobs], registry.create("dqn-allocation", {"model": str(tmp_path / "dqn.zip"),
                                                                        "cores_per_node": 12}))
    big = workload(tmp_path / "big.json", [30])
    with pytest.raises(Exception, match="job w0!0 asks for 30 cores; a processor has 24"):
        simulate(platform96, [big], registry.create("thermal-allocation"))


def test_the_scheduler_observes_the_leakage_model_it_is_given(tmp_path, platform96):
    jobs = workload(tmp_path / "w.json", [24] * 4, every=60)
    temperature = {}
    for leakage in ("linear", "exponential"):
        scheduler = registry.create("thermal-allocation", {"policy": "greedy", "leakage_model": leakage})
        simulate(platform96, [jobs], scheduler)
        temperature[leakage] = scheduler.model.temperature.copy()
    # the same placements; the full processors end hotter under exponential leakage's observation
    assert temperature["exponential"].max() > temperature["linear"].max()
    with pytest.raises(PolicyOptionError, match="leakage_model 'cubic'.*options cores_per_node, leakage_model"):
        simulate(platform96, [jobs], registry.create("thermal-allocation", {"leakage_model": "cubic"}))


def test_the_study_refuses_a_bad_leakage_growth_in_one_line(tmp_path):
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(root / "scripts" / "thermal_allocation_study.py"), "--leakage",
                           "exponential", "--leakage-growth", "2", "--shared", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["thermal_allocation_study: error: thermal model: leakage_growth must "
                                                "be in (0, 1] per K, got 2.0 (--leakage, --leakage-growth)"]


def _synthetic_trace(shared: Path, n=500, days=6.0, seed=0) -> None:
    """A small SWF at the path the thermal scripts read LPC-EGEE from (one-core jobs)."""
    import gzip
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.uniform(0, days * 86400, n))
    path = shared / "data" / "swf" / "LPC-EGEE-2004-1.2-cln.swf.gz"
    path.parent.mkdir(parents=True)
    with gzip.open(path, "wt") as f:
        for i, (t, run) in enumerate(zip(submit, rng.uniform(600, 20000, n)), 1):
            f.write(f"{i} {t:.0f} 0 {run:.0f} 1 -1 -1 1 {2 * run:.0f} -1 1 1 1 -1 1 -1 -1 -1\n")


def test_the_seed_study_chooses_on_validation_and_reports_every_run(tmp_path):
    _synthetic_trace(tmp_path / "shared")
    root = Path(__file__).resolve().parents[2]
    script = [sys.executable, str(root / "scripts" / "thermal_allocation_seeds.py")]
    done = subprocess.run(script + ["--shared", str(tmp_path / "shared"), "--days", "6", "--test-days", "2",
                                    "--val-days", "2", "--processors", "2", "--seeds", "0-1", "--steps", "60",
                                    "--workers", "2", "--out", str(tmp_path / "runs" / "a"),
                                    "--models", str(tmp_path / "models")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    import csv
    with open(tmp_path / "runs" / "a" / "runs.csv", newline="") as f:
        runs = list(csv.DictReader(f))
    with open(tmp_path / "runs" / "a" / "references.csv", newline="") as f:
        refs = {(r["window"], r["allocator"]): r for r in csv.DictReader(f)}
    assert [r["seed"] for r in runs] == ["0", "1"] and sum(r["chosen_on_validation"] == "True" for r in runs) == 1
    for r in runs:   # every figure is against the references measured on the same window
        rr = float(refs[("held_out", "round_robin")]["power_W"])
        saving = 100 * (rr - float(r["held_out_power_W"])) / rr
        assert float(r["held_out_power_saving_vs_round_robin_pct"]) == pytest.approx(saving)
    chosen = max(runs, key=lambda r: float(r["validation_power_saving_vs_round_robin_pct"])
                 + 0.5 * float(r["validation_temperature_reduction_vs_round_robin_C"]))
    assert chosen["chosen_on_validation"] == "True"
    assert (tmp_path / "models" / "thermal-allocation-dqn-a0.5.zip").read_bytes() == \
        (tmp_path / "runs" / "a" / chosen["model"]).read_bytes()
    summary = subprocess.run(script + ["--summary", str(tmp_path / "runs")], capture_output=True, text=True,
                             timeout=120)
    assert summary.returncode == 0 and summary.stdout.splitlines()[1].split()[:2] == ["a", "2"]
    bad = subprocess.run(script + ["--seeds", "zero", "--shared", str(tmp_path / "shared")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "thermal_allocation_seeds: error: --seeds 'zero' / --steps '30000': expected integers such as 0-7 and "
        "30000,100000"]


def test_no_placement_beats_the_packing_bound(tmp_path):
    _synthetic_trace(tmp_path / "shared", n=800, days=4.0, seed=1)
    script = [sys.executable, str(Path(__file__).resolve().parents[2] / "scripts" / "thermal_placement_bounds.py"),
              "--shared", str(tmp_path / "shared")]
    done = subprocess.run(script + ["--days", "4", "--test-days", "2", "--processors", "2,3"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()[1:]
    assert [line.split()[0] for line in lines] == ["2", "3"]
    for line in lines:   # under linear leakage, packing at every instant bounds every allocator's saving
        cells = dict(cell.rsplit(" ", 3)[0:2] for cell in line.split(" | ")[1:])
        savings = {name: float(pct.rstrip("%")) for name, pct in cells.items()}
        assert savings["packed (bound)"] >= max(savings["greedy"], savings["greedy_cool_room"], savings["first fit"])
        assert savings["first fit"] > 0
    bad = subprocess.run(script + ["--processors", "eight"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip() == (
        "thermal_placement_bounds: error: --processors 'eight': expected integers such as 4,8")


@pytest.mark.parametrize("script,argv,option", [
    ("thermal_allocation_study.py", ["--days", "-5"], "--days"),                   # was an IndexError
    ("thermal_allocation_study.py", ["--processors", "0"], "--processors"),        # was a ZeroDivisionError
    ("thermal_allocation_study.py", ["--alphas", "x"], "--alphas"),                # was a ValueError after the telemetry
    ("thermal_allocation_seeds.py", ["--workers", "0"], "--workers"),
], ids=["days", "processors", "alphas", "workers"])
def test_the_thermal_scripts_refuse_bad_numbers_before_any_work(tmp_path, script, argv, option):
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(root / "scripts" / script), "--shared", str(tmp_path), *argv],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"argument {option}" in done.stderr.strip().splitlines()[-1], done.stderr
