"""The PPO agents: a short training learns, saved agents load, act and deploy as schedulers (in
process and served over ZeroMQ to a Batsim process), evaluation writes its files, and bad model
files are named."""
import csv
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from batsched_py.agents.common.saved import load_agent
from batsched_py.agents.common.training import TrainConfig, train
from batsched_py.policies.options import PolicyOptionError
from batsched_py.runner import run_simulation
from batsched_py.scheduler import create

from helpers.rl import DAY, PLATFORM, TRAIN

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
TWO_DAYS = sorted(TRAIN.glob("*.json"))[:2]


def episode_reward(policy, day, seed=0):
    import gymnasium as gym
    import batsched_py.envs  # noqa: F401
    env = gym.make("batsched_py/Shutdown-v0", platform=str(PLATFORM), workloads=[day]).unwrapped
    obs, _ = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        obs, r, term, trunc, _ = env.step(policy(obs))
        total += r
        done = term or trunc
    env.close()
    return total


# tiny_model (conftest.py): T0 cloned on TWO_DAYS, then 2,000 PPO steps, made once for the session

def test_a_short_training_beats_random(tiny_model):
    agent = load_agent(str(tiny_model), "shutdown")
    rng = np.random.default_rng(0)
    random_rewards = [episode_reward(lambda obs: rng.integers(15), TWO_DAYS[0], seed) for seed in range(2)]
    trained = episode_reward(agent, TWO_DAYS[0])
    assert trained > max(random_rewards), (trained, random_rewards)


def test_training_writes_its_record_checkpoints_and_resumes(tiny_model, tmp_path):
    record = json.loads((tiny_model.parent / "model.json").read_text())
    assert record["steps"] == 2000 and record["seed"] == 0 and record["algorithm"] == "PPO"
    assert record["wall_time_s"] > 0 and "CPUs" in record["machine"] and record["training_days"] == 2
    assert sorted(p.name for p in (tiny_model.parent / "checkpoints").glob("*.zip")) == ["model_1000_steps.zip",
                                                                                          "model_2000_steps.zip"]
    assert any((tiny_model.parent / "tensorboard").rglob("events.out.tfevents.*"))
    out = tmp_path / "train"            # (a copy: the other tests share the training's own folder)
    shutil.copytree(tiny_model.parent, out)
    config = TrainConfig("shutdown", PLATFORM, TWO_DAYS, out, total_steps=3000, actors=2, seed=0, progress=False,
                         checkpoint_every=1000, vec_env="dummy", resume=True,
                         hyperparameters={"n_steps": 500, "minibatches": 4, "learning_rate": 1e-4})
    train(config, ["train", "--resume"])
    record = json.loads((out / "model.json").read_text())
    assert record["steps"] >= 3000 and record["resumed_from"].endswith("model_2000_steps.zip")


@pytest.mark.parametrize("name,kind", [("deepshutdown-taurus", "shutdown"), ("deepscheduling-taurus", "scheduling")])
def test_the_shipped_models_load_act_and_say_how_they_were_made(name, kind, tmp_path):
    model = MODELS / f"{name}.zip"
    record = json.loads((MODELS / f"{name}.json").read_text())
    for key in ("command", "seed", "steps", "wall_time_s", "machine"):
        assert key in record
    scheduler = f"deep{kind}"
    deployed = create(scheduler, {"model": str(model)})      # (what its record says it was trained with)
    assert all(deployed.options[k] == v for k, v in record.get("env_kwargs", {}).items() if k in deployed.TRAINED_OPTIONS)
    if kind == "shutdown":
        assert deployed.shield_wait == record["env_kwargs"]["shield_wait"] == 20
    prefix = run_simulation(PLATFORM, [DAY], scheduler, {"model": str(model)}, export=str(tmp_path / "out"), energy=True)
    with open(f"{prefix}_jobs.csv") as f:
        jobs = list(csv.DictReader(f))
    assert len(jobs) == 23 and all(j["final_state"] in ("COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED")
                                   for j in jobs)


def test_a_served_agent_decides_as_in_process(tiny_model, tmp_path, batsim_process):
    """The same agent through ``serve`` (ZeroMQ, a Batsim process: batsched-py emulate, then a real
    Batsim 4.2.1 where there is one) and in process gives the same schedule, pstate changes included."""
    outputs = {}
    for backend in ("emulator", "batsim"):
        prefix = run_simulation(PLATFORM, [DAY], "deepshutdown", {"model": str(tiny_model)},
                                export=str(tmp_path / backend), energy=True, backend=backend)
        outputs[backend] = [Path(f"{prefix}_{kind}.csv").read_text() for kind in ("jobs", "pstate_changes")]
    assert outputs["emulator"] == outputs["batsim"]


def test_evaluate_writes_days_and_summary(tiny_model, tmp_path):
    from batsched_py.cli import main
    out = tmp_path / "eval"
    assert main(["evaluate", "--env", "shutdown", "--policies", f"T5,OR*,agent={tiny_model}", "-p", str(PLATFORM),
                 "-w", *map(str, TWO_DAYS), "-o", str(out), "-j", "2"]) == 0
    with open(out / "days.csv") as f:
        days = list(csv.DictReader(f))
    assert [(d["policy"], d["day"]) for d in days] == [(p, d.name) for p in ("T5", "OR*", "agent") for d in TWO_DAYS]
    with open(out / "summary.csv") as f:
        summary = list(csv.DictReader(f))
    assert [s["policy"] for s in summary] == ["T5", "OR*", "agent"]
    for figure in ("energy_waste", "nb_switches", "delay", "stretch", "slowdown", "waiting_time", "reward"):
        for stat in ("mean", "std", "min", "max"):
            assert f"{figure}_{stat}" in summary[0]
    assert float(summary[0]["energy_waste_mean"]) > 0
    assert not (out / "_INCOMPLETE").exists()
    assert (out / "cumulative_energy_waste.png").is_file()


def test_bad_model_files_are_named(tmp_path, tiny_model):
    text = tmp_path / "notes.zip"
    text.write_text("not a zip")
    with pytest.raises(PolicyOptionError, match=r"notes.zip: not a saved agent \(a zip written by batsched-py train\)"):
        load_agent(str(text), "shutdown")
    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as z:
        z.writestr("hello.txt", "hi")
    with pytest.raises(PolicyOptionError, match=r"foreign.zip: not a saved agent \(no 'data' entry"):
        load_agent(str(foreign), "shutdown")
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(tiny_model) as src, zipfile.ZipFile(broken, "w") as z:
        z.writestr("data", src.read("data"))       # the settings without the weights
    with pytest.raises(PolicyOptionError, match="broken.zip: cannot be loaded"):
        load_agent(str(broken), "shutdown")
    with pytest.raises(PolicyOptionError, match="missing.zip: no such file"):
        create("deepshutdown", {"model": str(tmp_path / "missing.zip")})
    with pytest.raises(PolicyOptionError, match="deepshutdown needs option model"):
        create("deepshutdown", {})
    with pytest.raises(PolicyOptionError, match="trained on Box observations; the scheduling environment's are Dict"):
        create("deepscheduling", {"model": str(tiny_model)})


def test_mismatched_observations_are_named(tiny_model, tmp_path):
    with pytest.raises(PolicyOptionError, match=r"trained on observations \(20, 89\), the scheduler gives \(10, 89\)"):
        run_simulation(PLATFORM, [DAY], "deepshutdown", {"model": str(tiny_model), "history": 10},
                       export=str(tmp_path / "o"), energy=True)


def test_a_model_brings_the_observation_options_it_was_trained_with(tiny_model, tmp_path, capsys):
    """The scheduler takes the environment's options from the record beside the model (model.json's
    env_kwargs) where not given: a model trained with history 10 deploys without repeating it, in a
    scheduler and in evaluate (where an agent's own env option wins over its record); given options win; options the scheduler does not take (the reward's weights) are left out; a broken
    record is named."""
    model = tmp_path / "m.zip"
    shutil.copy(tiny_model, model)
    with pytest.raises(PolicyOptionError, match=r"trained on observations \(20, 89\), the scheduler gives \(10, 89\)"):
        run_simulation(PLATFORM, [DAY], "deepshutdown", {"model": str(model), "history": 10},
                       export=str(tmp_path / "o"), energy=True)      # (no record: the options given are used)
    model.with_suffix(".json").write_text(json.dumps({"env_kwargs": {"history": 10, "energy_weight": 2.0}}))
    scheduler = create("deepshutdown", {"model": str(model)})
    assert scheduler.history == 10 and "energy_weight" not in scheduler.options
    assert create("deepshutdown", {"model": str(model), "history": 20}).history == 20
    from batsched_py.cli import main
    args = ["evaluate", "--env", "shutdown", "--policies", f"agent={model}", "-p", str(PLATFORM), "-w", str(DAY),
            "-j", "1", "--no-figures"]
    assert main([*args, "-o", str(tmp_path / "e1")]) == 2       # (evaluate too reads the record)
    err = capsys.readouterr().err       # (said once, before any day is played)
    assert "the scheduler gives (10, 89)" in err and err.count("trained on observations") == 1
    assert not (tmp_path / "e1" / "days.csv").exists()
    assert main([*args, "-o", str(tmp_path / "e2"), "--env-args", '{"history": 20}']) == 0
    # (an agent's own env option, beside others that keep the record's)
    own = ["evaluate", "--env", "shutdown", "-p", str(PLATFORM), "-w", str(DAY), "-j", "1", "--no-figures"]
    assert main([*own, "--policies", f'a20={model}:{{"env": {{"history": 20}}}}', "-o", str(tmp_path / "e3")]) == 0
    assert main([*own, "--policies", f'a20={model}:{{"env": {{"history": 20}}}},a10={model}',
                 "-o", str(tmp_path / "e4")]) == 2
    assert "trained on observations" in capsys.readouterr().err
    assert main([*own, "--policies", f'a={model}:{{"env": {{"history": 20, "shield_wait": 20}}}}',
                 "-o", str(tmp_path / "e5")]) == 2
    assert "option shield_wait: a shield keeps the agent to its advice" in capsys.readouterr().err
    model.with_suffix(".json").write_text("{not json")
    with pytest.raises(PolicyOptionError, match=r"m.zip: its record .*m.json is not readable JSON"):
        create("deepshutdown", {"model": str(model)})


def test_agents_and_baselines_side_by_side_in_compare(tiny_model, tmp_path):
    from batsched_py.cli import main
    out = tmp_path / "cmp"
    spec = (f'T5:shutdown-agent={{"policy": "T5"}},agent:deepshutdown={{"model": "{tiny_model}"}},'
            'saf:scheduling-agent={"policy": "SAF"}')
    assert main(["compare", "-p", str(PLATFORM), "-w", str(DAY), "--schedulers", spec, "-E", "-o", str(out),
                 "--no-plots"]) == 0
    with open(out / "comparison.csv") as f:
        rows = {r["run"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"T5", "agent", "saf"}
    assert all(int(r["nb_jobs"]) == 23 for r in rows.values())


def test_training_on_ray_actors(tmp_path):
    """The actors of a training as Ray actors (a local Ray on loopback, 2 CPUs): 4 actors share them."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    try:
        config = TrainConfig("shutdown", PLATFORM, TWO_DAYS, tmp_path, total_steps=800, actors=4, seed=0,
                             progress=False, checkpoint_every=10_000, vec_env="ray",
                             hyperparameters={"n_steps": 100, "minibatches": 4})
        path = train(config, ["train", "--vec-env", "ray"])
    finally:
        ray.shutdown()
    assert json.loads((path.parent / "model.json").read_text())["steps"] >= 800
    assert load_agent(str(path), "shutdown")(np.zeros((20, 89), np.float32)) in range(15)
