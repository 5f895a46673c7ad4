"""PPO guided by a teacher (batsched_py.agents.common.guided, scripts/guided_shutdown.py): the labels
are the teacher's actions on the agent's own states, the critic reads real runtimes the actor never
sees, a guided model starts as its base and deploys as a plain agent, and the BC term teaches a
fresh agent on a tiny budget where plain PPO does not."""
import json
import shlex
import signal
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

import batsched_py.envs  # noqa: F401
from batsched_py.agents.common.guided import GuidanceError, Guidance, deployable, guided_model
from batsched_py.agents.common.loading import trained_with
from batsched_py.agents.common.saved import load_agent
from batsched_py.agents.deepshutdown.baselines import OffReservationOracle, Timeout
from batsched_py.agents.deepshutdown.config import TRAINED_OPTIONS, policy_kwargs
from batsched_py.agents.deepshutdown.privileged import RealRuntimes

from helpers.rl import PLATFORM, ROOT, TRAIN, tiny_day

SCRIPT = ROOT / "scripts" / "guided_shutdown.py"
CHOOSER = ROOT / "scripts" / "choose_checkpoint.py"
DAYS = sorted(TRAIN.glob("*.json"))
BASE = ROOT / "models" / "deepshutdown-taurus.zip"
BASE_ENV = trained_with(str(BASE), TRAINED_OPTIONS)    # (what the shipped model sees, from its record)


def could_start(scheduler):
    return bool(scheduler.startable())


def guided_env(days, teacher=lambda: OffReservationOracle(max_stretch=0.25), decisive=could_start, **env_kwargs):
    env = gym.make("batsched_py/Shutdown-v0", platform=str(PLATFORM), workloads=[str(d) for d in days], **env_kwargs)
    return Guidance(env, teacher, RealRuntimes.of(env), decisive)


def test_labels_are_the_teachers_actions_on_the_agents_own_states():
    env = guided_env(DAYS[:1])
    obs, _ = env.reset(seed=0)
    scheduler = env.unwrapped.scheduler
    rng = np.random.default_rng(0)
    checked = differ = decisive = 0
    done = False
    while not done:
        oracle = OffReservationOracle(max_stretch=0.25)
        oracle.bind(scheduler)          # (stateless: a fresh one reads the same state)
        assert int(obs["teacher"][0]) == oracle(obs["window"])
        assert obs["decisive"][0] == float(bool(scheduler.startable()))
        decisive += int(obs["decisive"][0])
        assert obs["privileged"].shape == (15 + 10,) and obs["privileged"].min() >= 0 and obs["privileged"].max() <= 1
        action = int(rng.integers(15))   # (the agent's own states: not the teacher's)
        differ += action != int(obs["teacher"][0])
        obs, _, term, trunc, _ = env.step(action)
        checked += 1
        done = term or trunc
    assert checked == 1440 and differ > 1000 and 0 < decisive < checked
    env.close()


def test_the_critic_reads_each_nodes_real_release_time_and_the_queued_jobs_real_runtimes(tmp_path):
    # a job of 12 hosts (one node) that runs 30 minutes (walltime 60), then one of every host that
    # waits for it and will run 20 minutes of its walltime of 40
    day = tiny_day(tmp_path / "day.json", jobs=((0, 12, 30), (0, 168, 20)))
    env = guided_env([day], teacher=lambda: Timeout(0))
    obs, _ = env.reset(seed=0)
    seen = []
    for _ in range(60):
        obs, *_ = env.step(0)
        s = env.unwrapped.scheduler
        if s.jobs.running and s.queue:
            job = next(iter(s.jobs.running.values()))
            seen.append((obs["privileged"][:14], (job.start_time + 30 - s.now) / 60, obs["privileged"][14]))
    assert len(seen) > 10
    for nodes, expected, queued in seen:
        assert nodes.max() == pytest.approx(expected, abs=1e-6) and np.count_nonzero(nodes) == 1
        assert queued == pytest.approx(0.5)
    env.close()


def vec(days, actors=1, decisive=could_start, **env_kwargs):
    return VecNormalize(DummyVecEnv([lambda: guided_env(days, decisive=decisive, **env_kwargs) for _ in range(actors)]),
                        norm_obs=False, norm_reward=True)


def test_a_guided_model_starts_as_its_base_and_deploys_its_trained_actor(tmp_path):
    base_path = BASE
    venv = vec(DAYS[:1], **BASE_ENV)
    model = guided_model(PPO.load(str(base_path), device="cpu"), venv, bc_weight=1.0, n_steps=64, batch_size=64,
                         learning_rate=1e-3)
    base = PPO.load(str(base_path), device="cpu")
    obs = venv.reset()
    both = {k: torch.as_tensor(v) for k, v in obs.items()}
    window = torch.as_tensor(obs["window"])
    with torch.no_grad():
        assert torch.allclose(model.policy.get_distribution(both).distribution.probs,
                              base.policy.get_distribution(window).distribution.probs, atol=1e-6)
        assert torch.allclose(model.policy.predict_values(both), base.policy.predict_values(window), atol=1e-5)
    model.learn(128)
    assert model.logger.name_to_value["teacher/weight"] == 1.0
    stale = PPO.load(str(base_path), device="cpu")
    stale.policy.predict_values(window).sum().backward()     # (Adam moments of another training)
    stale.policy.optimizer.step()
    assert stale.policy.optimizer.state_dict()["state"]
    plain = deployable(model, stale)
    with torch.no_grad():
        trained = model.policy.get_distribution(both).distribution.probs
        assert torch.allclose(plain.policy.get_distribution(window).distribution.probs, trained, atol=1e-6)
        assert not torch.allclose(model.policy.get_distribution(both).distribution.logits,
                                  base.policy.get_distribution(window).distribution.logits, atol=1e-4)
    plain.save(str(tmp_path / "plain.zip"))
    agent = load_agent(str(tmp_path / "plain.zip"), "shutdown")
    assert agent(obs["window"][0]) in range(15)
    # (a fresh optimiser: the base's Adam moments belong to another actor)
    assert PPO.load(str(tmp_path / "plain.zip"), device="cpu").policy.optimizer.state_dict()["state"] == {}
    venv.close()


def test_a_base_that_does_not_fit_is_named():
    venv = vec(DAYS[:1])
    fresh = PPO("MlpPolicy", gym.make("CartPole-v1"), device="cpu")
    with pytest.raises(GuidanceError, match="does not fit the environment"):
        guided_model(fresh, venv, bc_weight=1.0)
    with pytest.raises(GuidanceError, match="must not be negative"):
        guided_model(fresh, venv, bc_weight=-1.0)
    with pytest.raises(GuidanceError, match="bc_decisive 0.5"):
        guided_model(fresh, venv, bc_weight=1.0, bc_decisive=0.5)
    from sb3_contrib import MaskablePPO
    with pytest.raises(GuidanceError, match="MaskablePPO agent"):
        guided_model(MaskablePPO("MlpPolicy", gym.make("CartPole-v1"), device="cpu"), venv, bc_weight=1.0)
    venv.close()


def test_decisive_states_weigh_more_in_the_teacher_term():
    base_path = BASE
    day = DAYS[2:3]         # (its first job that could start comes at minute 71, inside the rollout)
    probe = {k: torch.as_tensor(v[None]) for k, v in guided_env(day, **BASE_ENV).reset(seed=3)[0].items()}

    def trained(decisive, weight):
        venv = vec(day, decisive=decisive, **BASE_ENV)
        venv.seed(0)
        model = guided_model(PPO.load(str(base_path), device="cpu"), venv, bc_weight=1.0, bc_decisive=weight,
                             n_steps=256, batch_size=64, n_epochs=1, learning_rate=1e-3, seed=0)
        model.learn(256)
        logged = dict(model.logger.name_to_value)
        venv.close()
        with torch.no_grad():
            return model.policy.get_distribution(probe).distribution.logits, logged

    plain, plain_log = trained(None, 1.0)
    every, _ = trained(lambda s: True, 10.0)      # (all decisive: the weighted mean is the plain one)
    some, some_log = trained(could_start, 10.0)
    assert torch.allclose(plain, every, atol=1e-6)
    assert not torch.allclose(plain, some, atol=1e-4)
    assert "teacher/decisive_share" not in plain_log
    assert 0 < some_log["teacher/decisive_share"] < 1 and 0 <= some_log["teacher/decisive_agreement"] <= 1


def play(agent, day):
    """(agreement with OR* (stretch < 0.25) on the agent's own states, episode reward) on ``day``."""
    env = gym.make("batsched_py/Shutdown-v0", platform=str(PLATFORM), workloads=[str(day)]).unwrapped
    obs, _ = env.reset(seed=0)
    teacher = OffReservationOracle(max_stretch=0.25)
    teacher.bind(env.scheduler)
    same, total, done = [], 0.0, False
    while not done:
        action = int(agent(obs))
        same.append(action == teacher(obs))
        obs, reward, term, trunc, _ = env.step(action)
        total += reward
        done = term or trunc
    env.close()
    return float(np.mean(same)), total


def test_the_teacher_term_teaches_a_fresh_agent_on_a_tiny_budget(tmp_path):
    fresh_env = gym.make("batsched_py/Shutdown-v0", platform=str(PLATFORM), workloads=[str(DAYS[0])])
    PPO("MlpPolicy", fresh_env, policy_kwargs=policy_kwargs(False), seed=0, device="cpu").save(tmp_path / "fresh.zip")
    figures = {}
    for weight in (0.0, 1.0):
        venv = vec(DAYS[:2], actors=2)
        model = guided_model(PPO.load(tmp_path / "fresh.zip", device="cpu"), venv, bc_weight=weight, bc_epochs=10,
                             n_steps=288, batch_size=144, n_epochs=1, learning_rate=3e-3, seed=0)
        model.learn(8 * 576)
        deployable(model, PPO.load(tmp_path / "fresh.zip", device="cpu")).save(tmp_path / f"taught{weight}.zip")
        venv.close()
        figures[weight] = play(load_agent(str(tmp_path / f"taught{weight}.zip"), "shutdown"), DAYS[0])
    rng = np.random.default_rng(0)
    chance, _ = play(lambda obs: int(rng.integers(15)), DAYS[0])
    _, start_reward = play(load_agent(str(tmp_path / "fresh.zip"), "shutdown"), DAYS[0])
    (plain, plain_reward), (taught, taught_reward) = figures[0.0], figures[1.0]
    # (4,608 steps: the BC term makes the agent take the teacher's action on half its own states,
    # chance on 1 in 13; PPO alone, from the same start, learns no such thing so fast)
    assert taught > 0.4 and taught > plain + 0.25 and taught > chance + 0.25, figures
    # (its reward, against the network it started from and PPO alone; not against uniformly random
    # actions: on this day they keep about as many nodes on as T0 does and score near it, which the
    # few wrong actions of an agent half taught outweigh)
    assert taught_reward > start_reward and taught_reward > plain_reward, (figures, start_reward)


def run(*args, **kwargs):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, **kwargs)


def test_bad_arguments_are_one_line(tmp_path):
    model = BASE
    for args, expected in [((tmp_path / "none.zip",), "none.zip: no such file"),
                           ((model, "--teacher-options", '{"stretch": 1}'), "OR* does not take them"),
                           ((model, "--exclude-days", tmp_path / "none.json"), "--exclude-days"),
                           ((model, "--steps", 0), "must be positive"),
                           ((model, "--env", '{"release_features": false}'), "trained on observations (20, 104)"),
                           ((model, "--env", '{"bogus": 1}'), "bogus")]:
        r = run(*args, "-o", tmp_path / "out", "-w", TRAIN)
        assert r.returncode == 2 and expected in r.stderr and "Traceback" not in r.stderr, r.stderr[-1500:]


def test_the_script_keeps_whole_checkpoints_and_leaves_out_the_validation_days(tmp_path):
    rounds = tmp_path / "rounds.json"
    rounds.write_text(json.dumps({"validation": [DAYS[0].name, DAYS[1].name]}))
    out = tmp_path / "run"
    args = [BASE, "-o", out, "-w", TRAIN, "--exclude-days", rounds,
            "--steps", 256, "--n-steps", 64, "--actors", 2, "--subprocess", "--checkpoint-every", 128,
            "--teacher", "OR*", "--teacher-options", '{"max_stretch": 0.25, "real_runtimes": false}', "--bc-decisive", 5]
    r = run(*args)
    assert r.returncode == 0, r.stderr[-3000:]
    record = json.loads((out / "guided.json").read_text())
    assert shlex.split(record["command"])[2:] == [str(a) for a in args]      # (a command to paste again)
    assert record["teacher_options"] == {"max_stretch": 0.25, "real_runtimes": False} and record["bc_decisive"] == 5
    assert record["status"] == "finished" and record["excluded_days"] == 2
    assert record["training_days"] == len(DAYS) - 2
    assert [c["name"] for c in record["checkpoints"]] == ["step_128.zip", "final.zip"]
    assert all(0 <= c["teacher_agreement"] <= 1 for c in record["checkpoints"])
    for c in record["checkpoints"]:
        saved = load_agent(str(out / c["name"]), "shutdown")
        assert saved(np.zeros(saved.model.observation_space.shape, np.float32)) in range(15)
        # (its record beside it: the observation it learned on, the shipped model's, from its own record)
        assert json.loads((out / c["name"]).with_suffix(".json").read_text())["env_kwargs"] == record["env_kwargs"]
    assert record["env_kwargs"] == BASE_ENV and BASE_ENV["advice"] == "QB"


def test_an_interrupted_run_says_where_it_stopped_and_keeps_its_checkpoints(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, str(SCRIPT), str(BASE),
                             "-o", str(out), "-w", str(TRAIN), "--steps", "1000000", "--n-steps", "64", "--actors",
                             "2", "--subprocess", "--checkpoint-every", "128"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while not (out / "step_128.zip").exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert (out / "step_128.zip").exists(), proc.communicate(timeout=60)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)             # a second Ctrl-C while it stops: ignored, no traceback
    _, err = proc.communicate(timeout=60)       # (promptly: no hang on actors mid-step)
    assert proc.returncode == 130 and "Traceback" not in err, err[-2000:]
    record = json.loads((out / "guided.json").read_text())
    assert record["status"].startswith("interrupted by SIGINT at step ")
    assert not list(out.glob("*.part"))
    for c in record["checkpoints"]:
        load_agent(str(out / c["name"]), "shutdown")


def choose(tmp_path, rows, *args):
    summary = tmp_path / "summary.csv"
    summary.write_text("policy,energy_waste_mean,waiting_time_mean\n" + "".join(f"{p},{w},{t}\n" for p, w, t in rows))
    return subprocess.run([sys.executable, str(CHOOSER), str(summary), *args], capture_output=True, text=True,
                          timeout=60)


def test_the_checkpoint_chosen_wastes_least_within_the_budget(tmp_path):
    rows = [("T5", 400.0, 10.0), ("start", 300.0, 20.0), ("a-1", 250.0, 16.0), ("a-2", 200.0, 15.0),
            ("b-1", 150.0, 15.1)]
    r = choose(tmp_path, rows, "--budget", "waiting_time:1.5:T5", "--exclude", "start")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["chosen"] == "a-2" and result["budgets"] == [{"budget": "waiting_time <= 1.5 x T5", "limit": 15.0}]
    assert [c["label"] for c in result["candidates"]] == ["a-1", "a-2", "b-1"]
    # two budgets: within both, and neither baseline is a candidate
    rows = [("T0", 220.0, 12.0), *rows, ("c-1", 215.0, 14.0)]
    r = choose(tmp_path, rows, "--budget", "waiting_time:1.5:T5", "--budget", "energy_waste:1:T0")
    result = json.loads(r.stdout)
    assert r.returncode == 0 and result["chosen"] == "a-2"
    assert {c["label"]: c["within"] for c in result["candidates"]} == {
        "start": False, "a-1": False, "a-2": True, "b-1": False, "c-1": True}
    r = choose(tmp_path, rows, "--budget", "waiting_time:1.5:T5", "--budget", "energy_waste:0.9:T0")
    assert r.returncode == 1 and "energy_waste <= 0.9 x T0: 198.000" in r.stderr
    r = choose(tmp_path, rows, "--budget", "waiting_time:1.0:T5")
    assert r.returncode == 1 and json.loads(r.stdout)["chosen"] is None and "no candidate within" in r.stderr
    r = choose(tmp_path, rows, "--budget", "waiting_time:1.5:T10")
    assert r.returncode == 2 and "'T10' is not in the summary" in r.stderr and "Traceback" not in r.stderr


def test_the_campaign_script_trains_two_runs_and_chooses_on_the_validation_days(tmp_path):
    out = tmp_path / "campaign"
    done = subprocess.run(["bash", str(ROOT / "scripts" / "guided_runs.sh"), str(out), str(TRAIN),
                           str(ROOT / "workloads" / "deepshutdown" / "test" / "2_test_102.json"), "15", "1", "cpu",
                           "1440", f"again={ROOT / 'models' / 'deepshutdown-taurus.zip'}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    record = (out / "chosen.json").read_text()
    assert done.returncode in (0, 1), done.stderr[-2000:] + (out / "val.log").read_text()[-2000:]
    chosen = json.loads(record)
    labels = [c["label"] for c in chosen["candidates"]]
    assert labels[:2] == ["start", "again"] and {"a-step_1440", "b-step_1440"} <= set(labels), labels
    assert chosen["budgets"][0]["budget"] == "waiting_time <= 1.5 x T5" and chosen["chosen"] in labels + [None]
    for run in ("a", "b"):
        assert json.loads((out / run / "guided.json").read_text())["status"].startswith("interrupted by SIGINT")
