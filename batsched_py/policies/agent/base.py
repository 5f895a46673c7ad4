"""Agent decision points inside a Scheduler.

An :class:`AgentMixin` stands in front of an ordinary policy (its ``schedule()`` runs between
decision points, e.g. SAF-ordered EASY) and adds the points where an agent decides:

- ``decision_due()``: whether the agent decides now (every ``dt`` of simulated time, reached
  through CALL_ME_LATER, or at every scheduling opportunity with time frozen);
- ``observe()`` / ``act(action)``: what the agent sees, and applying its choice as decisions.

The same class serves two drivers.  Standing alone (``run``, ``serve``, ``compare``) it has a
``policy`` (a callable obs -> action) and asks it at every decision point inside ``schedule()``.
Inside an environment it has none: ``schedule()`` returns with ``awaiting`` set, and the
environment hands the observation to the learning agent and calls ``act()`` with its answer
before the reply goes back to Batsim.  So an agent sees the same observations, and its actions
mean the same decisions, in training and in deployment, on the emulator and on real Batsim.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

import numpy as np

from ...scheduler import DecisionError
from ..options import PolicyOptionError

Policy = Callable[[Any], Any]


@dataclass(frozen=True)
class MDP:
    """What the agent of a decision-point scheduler sees and chooses, and when its episode ends, for
    its options and a platform: the one definition its environment builds the spaces and the
    episode's truncation from (the environment adds the reward)."""

    #: observe()'s shape (values in [0, high]); a dict observation: each part's shape
    shape: "tuple[int, ...] | Mapping[str, tuple[int, ...]]"
    #: Discrete(actions); a tuple: MultiDiscrete(actions)
    actions: "int | tuple[int, ...]"
    #: an observation of integers instead, each below its level: MultiDiscrete(levels)
    levels: tuple[int, ...] = ()
    #: the observation's upper bound
    high: float = 1.0
    #: the simulated time at which an episode is truncated (None: it runs until the workload ends)
    horizon: Optional[float] = None
    #: the number of decisions after which an episode is truncated (None: no such limit); a count,
    #: not a time, where the paper's episode is one (DeepShutdown's day of 1,440 decisions)
    max_steps: Optional[int] = None


class ActionError(DecisionError):
    """An action outside the environment's action space (names the action and the space)."""


class AgentMixin:
    """Decision points for an agent; put it before a policy class in the bases."""

    #: the agent's policy when it runs as a plain scheduler (None inside an environment)
    policy: Optional[Policy] = None
    #: set by schedule(): the agent must act before the reply goes back
    awaiting = False
    #: never a base of timeout or oracle (see policies.power.combine)
    power_base = False

    def schedule(self) -> None:
        super().schedule()          # type: ignore[misc]  # (the policy behind the mixin has one)
        self.awaiting = self.decision_due()
        if self.policy is not None:
            while self.awaiting:
                self.act(self.policy_action())

    def act(self, action: Any) -> None:
        """Apply the agent's ``action`` at the current decision point; ``awaiting`` says whether
        the agent decides again before time moves on (time frozen)."""
        if not self.awaiting:
            raise ActionError("act() outside a decision point: the agent was not asked")
        self.awaiting = False
        try:
            self.apply(action)
        except ActionError:
            # apply() checks the action before it changes anything: a refused action leaves the
            # decision point open, so the agent may act again (the episode is not lost)
            self.awaiting = True
            raise
        self.awaiting = self.decision_due_again()

    def policy_action(self) -> Any:
        """The action of ``policy`` when the scheduler runs alone (schedulers may guard it)."""
        return self.policy(self.observe())            # type: ignore[misc]

    # --- what an agent scheduler defines -----------------------------------------------
    def decision_due(self) -> bool:
        raise NotImplementedError

    def decision_due_again(self) -> bool:
        """After an action, whether the agent decides again at the same time (default: no)."""
        return False

    def observe(self) -> Any:
        raise NotImplementedError

    def mdp(self, nb_hosts: int) -> MDP:
        """The observation and action spaces on a platform of ``nb_hosts`` compute hosts."""
        raise NotImplementedError

    def apply(self, action: Any) -> None:
        """The decisions of ``action``; an action outside the space raises ActionError before
        anything changes."""
        raise NotImplementedError


def max_time_option(options: Mapping[str, Any]) -> Optional[float]:
    """Option ``max_time``: how much simulated time an environment's episode lasts before it is
    truncated (the MDP's horizon, counted from the scheduler's start of day where it has one; a run
    outside an environment ignores it); None (the default): until the workload ends."""
    value = options.get("max_time")
    if value is None:
        return None
    # (inf is accepted: no horizon, as the environments always took it)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise PolicyOptionError(f"option max_time: {value!r} is not a positive number")
    return float(value)


def action_int(action: Any, n: int) -> int:
    """``action`` as an int in 0..n (a numpy scalar or 0-d/1-element array is fine)."""
    if type(action) is int or isinstance(action, np.integer):
        k = int(action)
        if not 0 <= k <= n:
            raise ActionError(f"action {k} is outside Discrete({n + 1}): choose 0..{n}")
        return k
    try:
        value = np.asarray(action).reshape(())
        if not np.issubdtype(value.dtype, np.integer):
            if not (np.issubdtype(value.dtype, np.floating) and float(value).is_integer()):
                raise TypeError
        k = int(value)
    except (TypeError, ValueError):
        raise ActionError(f"action {action!r} is not an integer in Discrete({n + 1})") from None
    if not 0 <= k <= n:
        raise ActionError(f"action {k} is outside Discrete({n + 1}): choose 0..{n}")
    return k


class Bound:
    """A rule-based policy in an agent's action space (a paper's baselines): it reads the scheduler
    it is bound to, as a rule-based scheduler reads its view, and answers with an action."""
    scheduler: Any = None

    def bind(self, scheduler: Any) -> None:
        self.scheduler = scheduler

    def __call__(self, obs: Any) -> int:
        if self.scheduler is None:
            raise RuntimeError(f"{type(self).__name__} reads the scheduler: bind(scheduler) it first")
        return self.act()

    def act(self) -> int:
        raise NotImplementedError
