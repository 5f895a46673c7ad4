"""Host selection: which ``n`` hosts of an available set a job gets (option ``"allocation"``).

A selector is called as ``selector(available, n)`` and returns a ProcSet of
``n`` hosts taken from ``available``, or None when it cannot fit the job
(only ``contiguous`` can refuse a set that has ``n`` hosts).

- ``lowest`` (default): the ``n`` lowest ids, like batsched's ``basic`` selector.
- ``contiguous`` (or option ``"contiguous": true``): the lowest ``n`` consecutive ids.
- ``round_robin``: node by node from the node after the one used last (next fit),
  so consecutive jobs land on different nodes.
- ``consolidation``: the nodes with the fewest available cores first (the node that
  ends up most utilised), ties broken by lowest node id.
- ``random``: ``n`` hosts drawn uniformly (option ``"seed"``, default 0).

Nodes are groups of ``"cores_per_node"`` consecutive host ids (default 1: a host
is a node), e.g. 12 on Grid'5000 Taurus where a Batsim host models one core.
"""
import random
from typing import Any, Callable, Mapping, Optional

from procset import ProcSet

Selector = Callable[[ProcSet, int], Optional[ProcSet]]


class SelectionError(ValueError):
    """Bad allocation options."""


def lowest(available: ProcSet, n: int) -> Optional[ProcSet]:
    """The ``n`` lowest ids of ``available`` (None if it has fewer)."""
    if n > len(available):
        return None
    picked = []
    for iv in available.intervals():
        take = min(n, iv.sup - iv.inf + 1)
        picked.append((iv.inf, iv.inf + take - 1))
        n -= take
        if n == 0:
            break
    return ProcSet(*picked)


def contiguous(available: ProcSet, n: int) -> Optional[ProcSet]:
    """The first run of ``n`` consecutive ids in ``available`` (None if there is none)."""
    for iv in available.intervals():
        if iv.sup - iv.inf + 1 >= n:
            return ProcSet((iv.inf, iv.inf + n - 1))
    return None


class NodeSelector:
    """Base of the node-aware selectors: hosts grouped ``cores_per_node`` at a time."""

    def __init__(self, cores_per_node: int):
        self.cores = cores_per_node

    def node_cores(self, available: ProcSet) -> dict[int, list[int]]:
        """Available cores per node, nodes in id order."""
        nodes: dict[int, list[int]] = {}
        for h in available:
            nodes.setdefault(h // self.cores, []).append(h)
        return nodes


class RoundRobin(NodeSelector):
    def __init__(self, cores_per_node: int):
        super().__init__(cores_per_node)
        self.next_node = 0

    def __call__(self, available: ProcSet, n: int) -> Optional[ProcSet]:
        if n > len(available):
            return None
        nodes = self.node_cores(available)
        order = sorted(nodes, key=lambda node: (node < self.next_node, node))
        picked: list[int] = []
        for node in order:
            take = nodes[node][:n - len(picked)]
            picked += take
            if len(picked) == n:
                self.next_node = node + 1
                break
        return ProcSet(*picked)


class Consolidation(NodeSelector):
    def __call__(self, available: ProcSet, n: int) -> Optional[ProcSet]:
        if n > len(available):
            return None
        nodes = self.node_cores(available)
        picked: list[int] = []
        for node in sorted(nodes, key=lambda node: (len(nodes[node]), node)):
            picked += nodes[node][:n - len(picked)]
            if len(picked) == n:
                break
        return ProcSet(*picked)


class RandomSelector:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def __call__(self, available: ProcSet, n: int) -> Optional[ProcSet]:
        if n > len(available):
            return None
        return ProcSet(*self.rng.sample(list(available), n))


ALLOCATIONS = ("lowest", "contiguous", "round_robin", "consolidation", "random")


def make_selector(options: Mapping[str, Any]) -> Selector:
    """The selector the options ask for (see the module docstring)."""
    name = options.get("allocation", "contiguous" if options.get("contiguous") else "lowest")
    cores = options.get("cores_per_node", 1)
    if not isinstance(cores, int) or cores < 1:
        raise SelectionError(f"option cores_per_node: {cores!r} is not a positive integer")
    if name == "lowest":
        return lowest
    if name == "contiguous":
        return contiguous
    if name == "round_robin":
        return RoundRobin(cores)
    if name == "consolidation":
        return Consolidation(cores)
    if name == "random":
        return RandomSelector(options.get("seed", 0))
    raise SelectionError(f"option allocation: unknown {name!r}; known: {', '.join(ALLOCATIONS)}")


def preferring(select: Selector, preferred: ProcSet) -> Selector:
    """``select`` restricted to ``preferred`` hosts when they suffice, else topped up from the rest.

    Power management uses it to put jobs on hosts that are already on."""
    def pick(available: ProcSet, n: int) -> Optional[ProcSet]:
        inside = available & preferred
        if len(inside) >= n:
            return select(inside, n)
        rest = select(available - inside, n - len(inside))
        return None if rest is None else inside | rest
    return pick
