import pytest

pytest.importorskip("stable_baselines3", reason="the agents need the rl extra: pip install 'batsched_py[rl]'")


@pytest.fixture
def days(tmp_path):
    """A folder of two tiny training days (see helpers.rl.tiny_day)."""
    from helpers.rl import tiny_day
    folder = tmp_path / "days"
    folder.mkdir()
    tiny_day(folder / "a.json")
    tiny_day(folder / "b.json", jobs=((5, 24, 20), (50, 48, 30)))
    return folder
