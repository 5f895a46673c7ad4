"""Nodes: groups of ``cores_per_node`` consecutive hosts switched on and off as a whole.

Grid'5000 platforms model each core as a Batsim host (Taurus: 12 per node); DeepShutdown's agent
and the observations of both environments count nodes.  A node is off only when all its hosts are.
"""
from __future__ import annotations

from enum import IntEnum

from ...scheduler import HostState, Platform, Scheduler
from ...scheduler.view import procset_of_mask


class NodeState(IntEnum):
    OFF = 0
    SWITCHING_ON = 1
    SWITCHING_OFF = 2
    IDLE = 3
    COMPUTING = 4


def node_masks(nb_hosts: int, cores_per_node: int) -> list[int]:
    """The host bitmask of each node (the last one may be smaller)."""
    if cores_per_node < 1:
        raise ValueError(f"cores_per_node must be a positive integer, got {cores_per_node!r}")
    return [((1 << (min(lo + cores_per_node, nb_hosts) - lo)) - 1) << lo
            for lo in range(0, nb_hosts, cores_per_node)]


def node_states(platform: Platform, masks: list[int]) -> list[NodeState]:
    """Each node's state: computing if any host computes, else switching if any host switches,
    off if all sleep, else idle."""
    computing = platform.mask_in(HostState.COMPUTING)
    on = platform.mask_in(HostState.SWITCHING_ON)
    off = platform.mask_in(HostState.SWITCHING_OFF)
    sleeping = platform.mask_in(HostState.SLEEPING)
    out = []
    for m in masks:
        if m & computing:
            out.append(NodeState.COMPUTING)
        elif m & on:
            out.append(NodeState.SWITCHING_ON)
        elif m & off:
            out.append(NodeState.SWITCHING_OFF)
        elif m & sleeping == m:
            out.append(NodeState.OFF)
        else:
            out.append(NodeState.IDLE)
    return out


def switch_idle_nodes_off(scheduler: Scheduler, masks: list[int]) -> None:
    """Switch off every node whose hosts are all idle and free: the environments' days start with
    every node off, which Batsim 4.2.1 cannot declare (a host cannot start in a sleep pstate)."""
    idle = scheduler.platform.mask_in(HostState.IDLE) & scheduler.platform.free_mask
    off = 0
    for m in masks:
        if m & idle == m:
            off |= m
    if off:
        scheduler.switch_off(procset_of_mask(off))
