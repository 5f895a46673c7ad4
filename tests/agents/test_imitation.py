"""Behaviour cloning before PPO (``train --imitate``, with a DAgger round): the cloned agent acts like
its teacher, far better than chance, for both environments; a bad teacher is named."""
import json

import numpy as np
import pytest

from batsched_py.agents.common.imitation import ImitationError, demonstrations
from batsched_py.agents.common.saved import load_agent
from batsched_py.agents.common.training import TrainConfig, TrainError, train
from batsched_py.agents.deepscheduling.baselines import BASELINES as SCHEDULING_BASELINES
from batsched_py.agents.deepshutdown.baselines import BASELINES as SHUTDOWN_BASELINES

from helpers.rl import PLATFORM, TRAIN

DAYS = sorted(TRAIN.glob("*.json"))[:2]


def play(kind, policy, day, seed=0):
    """(episode reward, the policy's actions) on ``day``."""
    import gymnasium as gym
    import batsched_py.envs  # noqa: F401
    env = gym.make(f"batsched_py/{kind.capitalize()}-v0", platform=str(PLATFORM), workloads=[day]).unwrapped
    obs, _ = env.reset(seed=seed)
    if hasattr(policy, "bind"):
        policy.bind(env.scheduler)
    total, actions, done = 0.0, [], False
    while not done:
        action = int(policy(obs))
        actions.append(action)
        obs, r, term, trunc, _ = env.step(action)
        total += r
        done = term or trunc
    env.close()
    return total, actions


def cloned(kind, teacher, out, epochs, rounds=2):
    config = TrainConfig(kind, PLATFORM, DAYS, out, total_steps=64, actors=1, seed=0, progress=False,
                         vec_env="dummy", imitate=teacher, imitate_episodes=2, imitate_epochs=epochs, imitate_rounds=rounds,
                         hyperparameters={"n_steps": 64, "batch_size": 64, "learning_rate": 1e-6})
    return train(config, ["train", kind, "--imitate", teacher])


def test_a_cloned_shutdown_agent_acts_like_its_teacher(tiny_model):
    """The clone of conftest.py's tiny_model (T0 on DAYS, 20 epochs, 2 rounds), as train saved it
    before PPO: the training that test_agents.py deploys, so the cloning runs once."""
    record = json.loads((tiny_model.parent / "model.json").read_text())["imitation"]
    # two days played by T0, then one DAgger round: one day played by the clone, labelled by T0
    assert record["teacher"] == "T0" and record["rounds"] == 2 and record["episodes"] == 3
    assert record["steps"] == 3 * 1440 and len(record["clone_mean_episode_reward"]) == 1
    assert record["epochs"] == 20
    path = tiny_model.parent / "imitation.zip"          # (the clone before PPO, its record beside it)
    assert json.loads(path.with_suffix(".json").read_text())["env_kwargs"] == {}
    teacher_reward, teacher_actions = play("shutdown", SHUTDOWN_BASELINES["T0"](), DAYS[0])
    agent_reward, agent_actions = play("shutdown", load_agent(str(path), "shutdown"), DAYS[0])
    rng = np.random.default_rng(0)
    random_reward, _ = play("shutdown", lambda obs: rng.integers(15), DAYS[0])
    agreement = np.mean(np.array(agent_actions) == np.array(teacher_actions))
    assert agreement > 0.5 and record["accuracy"] > 0.5, (agreement, record)
    # (chance agrees on 1 action in 15; a random policy loses several times T0's reward)
    assert agent_reward > random_reward + 0.5 * (teacher_reward - random_reward), (agent_reward, teacher_reward,
                                                                                   random_reward)


def test_a_cloned_scheduling_agent_reads_dict_observations(tmp_path):
    path = cloned("scheduling", "SAF", tmp_path, epochs=8)
    record = json.loads((tmp_path / "model.json").read_text())["imitation"]
    assert record["teacher"] == "SAF" and record["accuracy"] > 0.5, record
    _, teacher_actions = play("scheduling", SCHEDULING_BASELINES["SAF"](), DAYS[0])
    _, agent_actions = play("scheduling", load_agent(str(path), "scheduling"), DAYS[0])
    n = min(len(teacher_actions), len(agent_actions))
    assert np.mean(np.array(agent_actions[:n]) == np.array(teacher_actions[:n])) > 0.5


def test_the_teacher_takes_its_arguments(tmp_path):
    """--imitate-options reach the teacher: on a day where OR* on the walltimes switches a node more
    than OR* (it cannot see a job end early), the demonstrations are the walltime rule's."""
    doc = {"nb_res": 168, "jobs": [{"id": "0", "subtime": 0, "res": 12, "walltime": 100, "profile": "p0"},
                                   {"id": "1", "subtime": 5, "res": 12, "walltime": 40, "profile": "p1"}],
           "profiles": {"p0": {"type": "delay", "delay": 10}, "p1": {"type": "delay", "delay": 20}}}
    day = tmp_path / "day.json"
    day.write_text(json.dumps(doc))
    options = {"max_stretch": 0.25, "real_runtimes": False}
    config = TrainConfig("shutdown", PLATFORM, [day], tmp_path / "out", total_steps=64, actors=1, seed=0,
                         progress=False, vec_env="dummy", imitate="OR*", imitate_options=options, imitate_episodes=1,
                         imitate_epochs=1, imitate_rounds=1, normalize_reward=False,
                         hyperparameters={"n_steps": 64, "batch_size": 64, "learning_rate": 1e-6})
    train(config, ["train", "shutdown", "--imitate", "OR*"])
    record = json.loads((tmp_path / "out" / "model.json").read_text())["imitation"]
    walls, _ = play("shutdown", SHUTDOWN_BASELINES["OR*"](**options), day)
    real, _ = play("shutdown", SHUTDOWN_BASELINES["OR*"](), day)
    assert record["teacher_options"] == options and walls != pytest.approx(real, abs=1e-3)
    assert record["teacher_mean_episode_reward"] == pytest.approx(walls, abs=1e-3)


def test_bad_imitation_arguments_are_named(tmp_path):
    with pytest.raises(TrainError, match="--imitate 'T9'.*T0, T1, T5, T10, OR"):
        cloned("shutdown", "T9", tmp_path, epochs=1)
    with pytest.raises(TrainError, match="--imitate-rounds 0: not a positive integer"):
        cloned("shutdown", "T0", tmp_path, epochs=1, rounds=0)
    with pytest.raises(TrainError, match="--imitate-epochs 0: not a positive integer"):
        cloned("shutdown", "T0", tmp_path, epochs=0)
    with pytest.raises(ImitationError, match="imitation episodes: 0"):
        demonstrations(lambda: None, SHUTDOWN_BASELINES["T0"], DAYS, episodes=0, gamma=0.99)


def test_masked_demonstrations_record_the_valid_actions_and_the_teacher_keeps_to_them():
    import gymnasium as gym
    import batsched_py.envs  # noqa: F401

    def make_env():
        return gym.make("batsched_py/Scheduling-v0", platform=str(PLATFORM), workloads=[str(d) for d in DAYS])
    demos = demonstrations(make_env, SCHEDULING_BASELINES["SAF"], DAYS, episodes=2, gamma=0.97, masking=True)
    assert demos.masks is not None and demos.masks.shape == (len(demos), make_env().action_space.n)
    assert demos.masks[np.arange(len(demos)), demos.actions].all()      # (SAF never picks a job that does not fit)
    assert not demos.masks.all()                                         # (and the masks do rule actions out)
    unmasked = demonstrations(make_env, SCHEDULING_BASELINES["SAF"], DAYS, episodes=2, gamma=0.97)
    assert unmasked.masks is None and np.array_equal(unmasked.actions, demos.actions)


def test_the_pointer_head_scores_each_queued_job_by_its_own_row():
    """With the queue summary held and the position feature's weight at 0, permuting the queue's rows
    permutes the jobs' logits the same way; the waiting logit does not move."""
    import gymnasium as gym
    import torch
    import batsched_py.envs  # noqa: F401
    from batsched_py.agents.deepscheduling.pointer import PointerPolicy

    env = gym.make("batsched_py/Scheduling-v0", platform=str(PLATFORM), workloads=[str(DAYS[0])])
    policy = PointerPolicy(env.observation_space, env.action_space, lambda _: 1e-3, units=16)
    head = policy.mlp_extractor
    torch.manual_seed(0)
    with torch.no_grad():
        for p in head.parameters():
            torch.nn.init.normal_(p)
        head.score[0].weight[:, head.width] = 0
        obs = {k: torch.as_tensor(v[None]) for k, v in env.observation_space.sample().items()}
        rows = obs["queue"].shape[1]
        perm = torch.randperm(rows)
        summary = policy.pi_features_extractor(obs)[:, :head.summary]
        logits = head.forward_actor(torch.cat([summary, obs["queue"].flatten(1)], dim=1))
        permuted = head.forward_actor(torch.cat([summary, obs["queue"][:, perm].flatten(1)], dim=1))
    assert logits.shape == (1, rows + 1) and logits[0, 1:].std() > 0.1
    assert torch.allclose(permuted[0, 0], logits[0, 0])
    assert torch.allclose(permuted[0, 1:], logits[0, 1:][perm], atol=1e-5)


def test_a_masked_pointer_clone_of_saf_plays_like_saf(tmp_path):
    from sb3_contrib import MaskablePPO
    from batsched_py.agents.deepscheduling.pointer import PointerPolicy

    config = TrainConfig("scheduling", PLATFORM, DAYS, tmp_path, total_steps=64, actors=1, seed=0, progress=False,
                         vec_env="dummy", masking=True, imitate="SAF", imitate_episodes=2, imitate_epochs=30,
                         imitate_rounds=2, hyperparameters={"n_steps": 64, "batch_size": 64, "learning_rate": 1e-6})
    path = train(config, ["train", "scheduling", "--masking", "--imitate", "SAF"])
    assert isinstance(MaskablePPO.load(path, device="cpu").policy, PointerPolicy)
    record = json.loads((tmp_path / "model.json").read_text())
    assert record["algorithm"] == "MaskablePPO" and record["imitation"]["accuracy"] > 0.9, record["imitation"]
    teacher_reward, teacher_actions = play("scheduling", SCHEDULING_BASELINES["SAF"](), DAYS[0])
    agent_reward, agent_actions = play("scheduling", load_agent(str(path), "scheduling"), DAYS[0])
    assert agent_actions == teacher_actions and agent_reward == pytest.approx(teacher_reward)
