"""SET_RESOURCE_STATE's switch actors: each host's 1-flop switch at its virtual pstate, its message
to the server, and the request's answer once its last host is done."""
from __future__ import annotations

from procset import ProcSet

from .. import protocol as p
from .submitters import Submitters
from .timeline import Action

__all__ = ["SwitchRequest", "Switches"]


class SwitchRequest:
    """One SET_RESOURCE_STATE request: answered once all its hosts are done (``done``: those
    whose switch actor's message the server received)."""
    __slots__ = ("hosts", "state", "remaining", "done")

    def __init__(self, hosts: ProcSet, state: str, remaining: int):
        self.hosts, self.state, self.remaining = hosts, state, remaining
        self.done: list[int] = []


class Switches(Submitters):
    """The engine's switch actors and the server's handling of their messages."""

    def _switch_ended(self, payload, _action: Action) -> None:
        """The switch actors of ``hosts`` (one action: see _set_state) end, one after the other."""
        req, hosts = payload
        self.machines.switch_reached(self.tl.now, hosts)
        if self._routed:          # each switch actor's message crosses its own route
            self._deferred.extend([2, (self._on_switch, [req, [host]])] for host in hosts)
            return
        if self._groups is None:
            self._groups = {}
        group = self._groups.get(id(req))
        if group is None:
            self._groups[id(req)] = group = [req, []]
            # A switch actor sets the final pstate (a simcall) before its put.
            self._deferred.append([2, (self._on_switch, group)])
        group[1].extend(hosts)

    def _on_switch(self, payload):
        req, hosts = payload
        self._switching -= len(hosts)
        req.remaining -= len(hosts)
        req.done.extend(hosts)
        if req.remaining == 0:
            # Batsim writes the request's rows once its last host is done.
            self.machines.switch_done(self.tl.now, sorted(req.done), req.hosts, int(req.state))
            # Its energy row: the server checks its mailbox after these reads' simcalls.
            self._check_read = self._read_energy(1, [None])
            self._out.append(p.ResourceStateChanged(self._stamp(), req.hosts, req.state))
