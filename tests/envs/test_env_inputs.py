"""The environments refuse what they would otherwise take silently or fail on deep inside: a bad
day among the workloads (named at construction, file and job, not in the episode that draws it),
a node larger than the platform, Elastic-v0's impossible pools, negative skips and jobs without
the VO field; and ``action_masks()`` before ``reset()`` is a named error, not an AttributeError."""
import gymnasium as gym
import pytest

import batsched_py.envs  # noqa: F401
from batsched_py.envs import EnvError

from helpers.rl import ELASTIC_PLATFORM, ELASTIC_WORKLOAD, PLATFORM, tiny_day


@pytest.mark.parametrize("changes,words", [
    ({"subtime": "NaN"}, ["bad.json", "'w0!0'", "subtime", "finite"]),
    ({"res": 1000}, ["bad.json", "'w0!0'", "1000 hosts", "168"]),
    ({"res": 0}, ["bad.json", "res"]),
    ({"walltime": "long"}, ["bad.json", "walltime"]),
    ({"profile": "nowhere"}, ["bad.json", "nowhere"]),
], ids=["nan-subtime", "larger-than-platform", "no-hosts", "text-walltime", "unknown-profile"])
@pytest.mark.parametrize("name", ["Shutdown", "Scheduling"])
def test_a_bad_day_among_the_workloads_is_named_at_construction(tmp_path, name, changes, words):
    good = tiny_day(tmp_path / "good.json")
    bad = tiny_day(tmp_path / "bad.json", **changes)
    with pytest.raises(EnvError) as err:
        gym.make(f"batsched_py/{name}-v0", platform=str(PLATFORM), workloads=[str(good), str(bad)])
    message = str(err.value)
    assert "\n" not in message and all(w in message for w in words), message


def test_a_day_that_is_not_json_is_named(tmp_path):
    (tmp_path / "cut.json").write_text('{"jobs": [')
    with pytest.raises(EnvError, match=r"workloads: .*cut\.json.*invalid JSON"):
        gym.make("batsched_py/Shutdown-v0", platform=str(PLATFORM), workloads=[str(tmp_path)])


@pytest.mark.parametrize("name", ["Shutdown", "Scheduling"])
@pytest.mark.parametrize("cores,words", [(1000, ["cores_per_node", "1000", "168"]),
                                         (True, ["cores_per_node", "True"]), (2.5, ["cores_per_node", "2.5"])],
                         ids=["larger-than-platform", "bool", "float"])
def test_a_node_must_fit_the_platform(tmp_path, name, cores, words):
    with pytest.raises(EnvError) as err:
        gym.make(f"batsched_py/{name}-v0", platform=str(PLATFORM), workloads=[str(tiny_day(tmp_path / "d.json"))],
                 cores_per_node=cores)
    assert all(w in str(err.value) for w in words), err.value


def test_action_masks_before_reset_is_a_named_error_and_valid_after(tmp_path):
    env = gym.make("batsched_py/Scheduling-v0", platform=str(PLATFORM),
                   workloads=[str(tiny_day(tmp_path / "d.json"))]).unwrapped
    with pytest.raises(EnvError, match=r"action_masks\(\) before reset\(\)"):
        env.action_masks()
    env.reset(seed=0)
    mask = env.action_masks()
    assert mask.shape == (env.action_space.n,) and mask[0]


def elastic(**kw):
    kw.setdefault("workloads", [str(ELASTIC_WORKLOAD)])
    return gym.make("batsched_py/Elastic-v0", platform=str(ELASTIC_PLATFORM), **kw)


@pytest.mark.parametrize("kw,words", [
    ({"pool": 20, "min_pool": 30}, ["min_pool", "30", "pool (20)"]),
    ({"skip": -1}, ["skip", "-1"]),
    ({"skip": 2.5}, ["skip", "2.5"]),
    ({"pool": 500}, ["pool", "500", "140"]),
    ({"mode": "elastic", "min_pool": 500, "pool": 600}, ["min_pool", "500", "140"]),
    ({"vo_field": ["group"]}, ["vo_field"]),
], ids=["min-over-pool", "negative-skip", "float-skip", "pool-over-platform", "min-over-platform", "vo-field-list"])
def test_elastic_refuses_impossible_pools_and_skips(kw, words):
    with pytest.raises(EnvError) as err:
        elastic(**kw)
    assert all(w in str(err.value) for w in words), err.value


def test_elastic_refuses_jobs_without_the_vo_field(tmp_path):
    import json
    doc = json.loads(ELASTIC_WORKLOAD.read_text())
    doc["jobs"][3].pop("group")
    path = tmp_path / "novo.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(EnvError) as err:
        elastic(workloads=[str(path)])
    assert all(w in str(err.value) for w in ("novo.json", "1 job(s)", "'group'", repr(doc["jobs"][3]["id"]))), err.value
    with pytest.raises(EnvError, match="no field 'virtual_org'"):
        elastic(vo_field="virtual_org")
