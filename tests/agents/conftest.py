import pytest

pytest.importorskip("stable_baselines3", reason="the agents need the rl extra: pip install 'batsched_py[rl]'")
