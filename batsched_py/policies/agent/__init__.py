"""What every paper's decision points share (base.py): the agent decision point inside a
scheduler (:class:`AgentMixin`), the :class:`MDP` it declares, the baselines' base class
(:class:`Bound`); and the domain models more than one paper needs: the decision points' minute
grid (clock.py), node states and switching (nodes.py), EASY's plan (easy_plan.py).

Each paper's own decision points, baselines and environment live with its agent, in
``batsched_py.agents.<paper>`` (``mdp.py``, ``baselines.py``, ``env.py``)."""
from .base import MDP, ActionError, AgentMixin, Bound

__all__ = ["ActionError", "AgentMixin", "Bound", "MDP"]
