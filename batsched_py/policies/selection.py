"""Host selection: which ``n`` hosts of an available set a job gets (option ``"allocation"``).

A selector is called as ``selector(available, n)`` and returns ``n`` hosts taken
from ``available``, or None when it cannot fit the job (only ``contiguous`` can
refuse a set that has ``n`` hosts).  Host sets are int bitmasks (bit h set: host
h is in the set; ``scheduler.view.mask_of`` / ``procset_of_mask`` convert).

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

from ..scheduler.view import bits_of, lowest_bits
from .options import PolicyOptionError, flag_option

#: ``selector(available, n)``: host sets are int bitmasks (bit h: host h), see scheduler.view
Selector = Callable[[int, int], Optional[int]]


class SelectionError(PolicyOptionError):
    """Bad allocation options."""


def lowest(available: int, n: int) -> Optional[int]:
    """The ``n`` lowest ids of ``available`` (None if it has fewer)."""
    if n > available.bit_count():
        return None
    if n <= 0:
        return 0
    return lowest_bits(available, n)


def contiguous(available: int, n: int) -> Optional[int]:
    """The first run of ``n`` consecutive ids in ``available`` (None if there is none)."""
    if n > available.bit_count():
        return None
    starts, have = available, 1             # bit i of starts: ids i .. i+have-1 all available
    while have < n:
        step = min(have, n - have)
        starts &= starts >> step
        have += step
    if not starts:
        return None
    return ((1 << n) - 1) << ((starts & -starts).bit_length() - 1)


# selectors whose answer depends on their arguments only (policies may skip calls whose result
# they do not use, and call them in any order)
for _select in (lowest, contiguous):
    setattr(_select, "stateless", True)


class NodeSelector:
    """Base of the node-aware selectors: hosts grouped ``cores_per_node`` at a time."""
    stateless = False

    def __init__(self, cores_per_node: int):
        self.cores = cores_per_node

    def node_cores(self, available: int) -> dict[int, list[int]]:
        """Available cores per node, nodes in id order."""
        nodes: dict[int, list[int]] = {}
        for h in bits_of(available):
            nodes.setdefault(h // self.cores, []).append(h)
        return nodes


def _mask(ids) -> int:
    m = 0
    for h in ids:
        m |= 1 << h
    return m


class RoundRobin(NodeSelector):
    def __init__(self, cores_per_node: int):
        super().__init__(cores_per_node)
        self.next_node = 0

    def __call__(self, available: int, n: int) -> Optional[int]:
        if n > available.bit_count():
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
        return _mask(picked)


class Consolidation(NodeSelector):
    stateless = True

    def __call__(self, available: int, n: int) -> Optional[int]:
        if n > available.bit_count():
            return None
        nodes = self.node_cores(available)
        picked: list[int] = []
        for node in sorted(nodes, key=lambda node: (len(nodes[node]), node)):
            picked += nodes[node][:n - len(picked)]
            if len(picked) == n:
                break
        return _mask(picked)


class RandomSelector:
    stateless = False

    def __init__(self, seed: int | str):
        self.rng = random.Random(seed)

    def __call__(self, available: int, n: int) -> Optional[int]:
        if n > available.bit_count():
            return None
        return _mask(self.rng.sample(bits_of(available), n))


ALLOCATIONS = ("lowest", "contiguous", "round_robin", "consolidation", "random")


def make_selector(options: Mapping[str, Any]) -> Selector:
    """The selector the options ask for (see the module docstring)."""
    name = options.get("allocation", "contiguous" if flag_option(options, "contiguous", False) else "lowest")
    cores = options.get("cores_per_node", 1)
    if cores.__class__ is not int or cores < 1:
        raise SelectionError(f"option cores_per_node: {cores!r} is not a positive integer")
    # (checked whatever the allocation: a bad seed beside another allocation is a mistake too)
    seed = options.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, (int, str)):
        raise SelectionError(f"option seed: {seed!r} is not an integer or a string")
    if name == "lowest":
        return lowest
    if name == "contiguous":
        return contiguous
    if name == "round_robin":
        return RoundRobin(cores)
    if name == "consolidation":
        return Consolidation(cores)
    if name == "random":
        return RandomSelector(seed)
    raise SelectionError(f"option allocation: unknown {name!r}; known: {', '.join(ALLOCATIONS)}")


def is_stateless(select: Selector) -> bool:
    return getattr(select, "stateless", False)


def preferring(select: Selector, preferred: int) -> Selector:
    """``select`` restricted to ``preferred`` hosts when they suffice, else topped up from the rest.

    Power management uses it to put jobs on hosts that are already on."""
    composable = select is not contiguous    # (preferred hosts + others is not a run of ids)

    def pick(available: int, n: int) -> Optional[int]:
        inside = available & preferred
        count = inside.bit_count()
        if count >= n:
            hosts = select(inside, n)
            if hosts is not None:
                return hosts
        elif composable:
            rest = select(available & ~inside, n - count)
            if rest is not None:
                return inside | rest
        # a selector that can refuse (contiguous): anywhere rather than nowhere
        return select(available, n) if count < available.bit_count() else None
    setattr(pick, "stateless", is_stateless(select))
    return pick
