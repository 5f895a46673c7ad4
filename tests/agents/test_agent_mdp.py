"""The decision-point schedulers' MDP: where an environment's episode ends, as each paper defines it
(a number of decisions for DeepShutdown's day, a simulated time for the others), and option max_time."""
import pytest

from batsched_py.agents.allocation.mdp import AllocationScheduler
from batsched_py.agents.deepscheduling.mdp import SchedulingScheduler
from batsched_py.agents.deepshutdown.mdp import ShutdownScheduler
from batsched_py.agents.elastic.mdp import ElasticScheduler
from batsched_py.agents.volunteer.mdp import VolunteerScheduler
from batsched_py.policies.options import PolicyOptionError


def test_a_deepshutdown_day_is_a_count_of_decisions():
    # (a count: day / dt summed as times would drift from 143 at dt 0.7)
    assert ShutdownScheduler({"dt": 0.7, "day": 100.0}).mdp(168).max_steps == 143
    mdp = ShutdownScheduler().mdp(168)
    assert (mdp.max_steps, mdp.horizon) == (1440, None)


def test_max_time_is_the_horizon_from_the_start_of_the_day():
    assert SchedulingScheduler({"day_start": 3.0, "max_time": 300}).mdp(168).horizon == 303.0
    assert SchedulingScheduler().mdp(168).horizon is None
    assert ElasticScheduler({"max_time": 5000}).mdp(140).horizon == 5000.0
    assert VolunteerScheduler({"level": "system", "max_time": 86400}).mdp(20).horizon == 86400.0
    assert VolunteerScheduler({"level": "system"}).mdp(20).horizon is None


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), "1", True])
@pytest.mark.parametrize("make", [SchedulingScheduler, ElasticScheduler, VolunteerScheduler])
def test_a_bad_max_time_is_named(make, value):
    with pytest.raises(PolicyOptionError, match=f"^option max_time: {value!r} is not a positive number$"):
        make({"max_time": value})


def test_spaces_without_a_platform_in_hand():
    """VolunteerPool-v0 gives the rooms it read; Allocation-v0 the platform of its processors."""
    assert VolunteerScheduler({"level": "cluster"}).mdp(20, 3).actions == 4
    assert VolunteerScheduler({"level": "computer"}).mdp(20).actions == 21
    assert VolunteerScheduler({"level": "cluster-week"}).mdp(20, 3).levels == (168, 25, 2)
    with pytest.raises(ValueError, match="^level cluster: the actions are the platform's rooms"):
        VolunteerScheduler({"level": "cluster"}).mdp(20)
    mdp = AllocationScheduler({"cores_per_node": 24, "J": 2}).mdp(4 * 24)
    assert (mdp.shape, mdp.actions, mdp.high) == ((4 * 4 + 2,), 16, 2.0)
