import pytest

pytest.importorskip("stable_baselines3", reason="the agents need the rl extra: pip install 'batsched_py[rl]'")

from batsched_py.agents.common.training import TrainConfig, train  # noqa: E402  (after the skip: the rl extra)

from helpers.rl import PLATFORM, TRAIN  # noqa: E402

TWO_DAYS = sorted(TRAIN.glob("*.json"))[:2]


@pytest.fixture
def days(tmp_path):
    """A folder of two tiny training days (see helpers.rl.tiny_day)."""
    from helpers.rl import tiny_day
    folder = tmp_path / "days"
    folder.mkdir()
    tiny_day(folder / "a.json")
    tiny_day(folder / "b.json", jobs=((5, 24, 20), (50, 48, 30)))
    return folder


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """A DeepShutdown agent cloned from T0 on two training days (two days played by T0, then one DAgger
    round), then 2,000 PPO steps (two rollouts, small batches, a checkpoint after each): OUT/model.zip,
    beside it model.json, imitation.zip (the clone before PPO), checkpoints/ and tensorboard/.  Made once
    for the session: test_agents.py deploys, evaluates and resumes it, test_imitation.py compares its
    clone with T0.  (PPO alone from a random network needs far more than a test's budget to beat a
    random policy: with the authors' reward, reserving every node looks cheap until the blocked jobs'
    stretch counts, minutes later.  The cloning is what costs: about 40 s on 2 cores.)"""
    out = tmp_path_factory.mktemp("train")
    config = TrainConfig("shutdown", PLATFORM, TWO_DAYS, out, total_steps=2000, actors=2, seed=0, progress=False,
                         checkpoint_every=1000, vec_env="dummy", imitate="T0", imitate_episodes=2,
                         imitate_epochs=20, imitate_rounds=2,
                         hyperparameters={"n_steps": 500, "minibatches": 4, "learning_rate": 1e-4})
    return train(config, ["train", "shutdown", "(test)"])
