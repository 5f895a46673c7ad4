"""The papers that ``train`` and ``evaluate`` know, by agent name (``shutdown``, ``scheduling``):
each lists its settings module in setup.cfg's ``batsched_py.agents`` entry points, and this
package names none.  A settings module holds ENV (the Gymnasium id), HYPERPARAMETERS (PPO's),
BASELINES (name -> a rule-based policy in the environment's action space), TRAINED_OPTIONS (the
environment arguments that shape what the agent sees or does: a saved agent brings its own), ``policy`` and
``policy_kwargs`` (the SB3 policy, given whether actions are masked)."""
from __future__ import annotations

from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, Callable

from ...errors import BatschedError

PAPER_GROUP = "batsched_py.agents"


class UnknownAgentError(BatschedError, ValueError):
    """No paper lists this agent name."""


class BaselineOptionsError(BatschedError, ValueError):
    """A paper's baseline refused its arguments (one it does not take, or a value it rejects)."""


def baseline_maker(settings: ModuleType, name: str, options: dict[str, Any]) -> Callable[[], Any]:
    """Fresh instances of the baseline ``name`` of a paper's ``settings`` with ``options`` (one a
    day: a baseline may keep state), checked by making one now."""
    make = settings.BASELINES[name]
    try:
        make(**options)
    except (TypeError, ValueError) as exc:
        raise BaselineOptionsError(str(exc)) from None
    return lambda: make(**options)


def paper(agent: str) -> ModuleType:
    """The settings module of ``agent``'s paper."""
    papers = {ep.name: ep for ep in entry_points(group=PAPER_GROUP)}
    if agent not in papers:
        known = " or ".join(papers) or f"none (the {PAPER_GROUP} entry points come from pip install -e .)"
        raise UnknownAgentError(f"{agent!r}: choose {known}")
    return papers[agent].load()
