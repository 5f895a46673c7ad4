"""Per-host machine state, pstate, switching, unavailability and energy (Batsim 4.2.1).

The engine owns time and messages; it tells :class:`Machines` what happens
(``job_started``, ``job_ended``, ``request_state``, ``switch_done``,
``set_unavailable``/``set_available``) always with non-decreasing ``t``.
Machines keeps the state of every compute host and records, through the
:class:`~batsched_py.emulator.outputs.OutputWriters` it was given, exactly the
rows Batsim writes: one ``machine_states`` row per call of job_started / request_state
(sleep/wake) (both written by write_held_rows with -E) / job_ended / switch_done
(availability changes write no row), one ``pstate_changes`` row (+ one ``p`` energy row) per pstate
change group, one ``s``/``e`` energy row per job start/end.

Energy (only with ``energy_enabled``) follows SimGrid's host energy model
(see :mod:`.energy`): a delay phase is idle power, a computing phase draws
``epsilon + load*(all_cores-epsilon)``. Switching off/on computes 1 flop at
the virtual pstate, so it draws that pstate's ``all_cores`` for 1/speed s.
Like SimGrid's plugin, energy is updated lazily (see the energy section):
the engine reports CPU action ends with :meth:`action_ended`.  Cost: every
energy row reads every host, O(hosts) (energy runs only).

Sleep/wake, Batsim style: ``request_state(t, hosts, sleep_pstate)`` puts the
hosts in ``switching_off`` (pstate row ``-2``) until ``t + 1/speed(off
pstate)``; ``request_state(t, hosts, compute_pstate)`` on sleeping hosts
puts them in ``switching_on`` (pstate row ``-1``) until ``t + 1/speed(on
pstate)``; a compute->compute pstate change is immediate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence
from enum import Enum
import numpy as np
from procset import ProcSet

from ..compiled import mypyc_attr
from ..models.energy import power
from ..models.platform import Platform

__all__ = ["MachineState", "MachineStats", "Machines", "SWITCHING_ON_PSTATE",
           "SWITCHING_OFF_PSTATE"]

SWITCHING_ON_PSTATE = -1   # what pstate_changes.csv shows while waking up
SWITCHING_OFF_PSTATE = -2  # ... and while falling asleep


class MachineState(str, Enum):
    """Batsim's machine states, valued as Batsim names them in its protocol/outputs."""

    SLEEPING = "sleeping"
    SWITCHING_ON = "switching_on"
    SWITCHING_OFF = "switching_off"
    IDLE = "idle"
    COMPUTING = "computing"
    UNAVAILABLE = "unavailable"


_STATES = list(MachineState)
_S = {s: i for i, s in enumerate(_STATES)}
SLEEPING, SW_ON, SW_OFF, IDLE, COMPUTING, UNAVAILABLE = range(6)
_OFF, _ON, _IMMEDIATE = range(3)    # how a host goes to a requested pstate (Machines._switch_plan)


def _total(energies: list[float]) -> np.longdouble:
    """Batsim's total energy: the hosts' (double) energies added one after the other in long
    double.  Its energy rows print it, and their epower divides its increase by the time's."""
    return np.cumsum(np.array(energies, dtype=np.longdouble))[-1]


def _read_order(host_sets: list, n: int):
    """The hosts of ``host_sets`` (None: all ``n`` hosts), one set after the other."""
    for hosts in host_sets:
        for a, b in ([(0, n - 1)] if hosts is None else _ranges(hosts)):
            yield from range(a, b + 1)


def _ranges(hosts) -> list:
    """Host ids of a ProcSet (or any iterable of ints) as (first, last) pairs, ascending for a
    ProcSet. A ProcSet's own intervals are used as they are (no per-host iteration)."""
    if isinstance(hosts, ProcSet):
        return hosts._itvs           # procset's representation: sorted, disjoint (first, last)
    return [(h, h) for h in hosts]


@dataclass(frozen=True, slots=True)
class MachineStats:
    """Machine-side figures of ``PREFIX_schedule.csv``.

    time_*: host-seconds spent in each state, counted (as Batsim does) only
    when a host leaves the state. consumed_joules: total energy (0 without -E).
    """

    consumed_joules: float
    nb_computing_machines: int
    nb_grouped_switches: int
    nb_machine_switches: int
    time_computing: float
    time_idle: float
    time_sleeping: float
    time_switching_off: float
    time_switching_on: float
    time_unavailable: float


@mypyc_attr(allow_interpreted_subclasses=True)    # (tests spy on it through a subclass)
class Machines:
    """State of every compute host of ``platform``; writes rows through ``writers``.

    writers: an OutputWriters (or None: nothing recorded). Machine-state rows go to its
    ``state_rows`` (flushed by ``flush_states``); ``pstate_change`` and ``energy_row`` are called.
    energy_enabled: Batsim's -E; without it no energy is integrated, job
    energy is -1 and no pstate/energy rows are written.
    """

    def __init__(self, platform: Platform, writers=None, energy_enabled: bool = False,
                 start_time: float = 0.0):
        self.platform = platform
        self.hosts = platform.hosts
        self.writers = writers
        self.energy_enabled = energy_enabled
        n = len(self.hosts)
        self._state = [IDLE] * n
        self._pstate = [h.default_pstate for h in self.hosts]
        self._target = [-1] * n            # pstate a switching host will end in (-1: not switching)
        self._jobs = [0] * n               # number of jobs running on the host
        self._load = [0.0] * n             # SimGrid cpu load, in cores (see _set_load)
        self._since = [start_time] * n     # when the host entered its state
        self._counts = [0] * 6
        self._counts[IDLE] = n
        self._time_in = [0.0] * 6
        self._nb_grouped_switches = 0
        self._nb_machine_switches = 0
        self._job_start_energy: dict[str, np.longdouble] = {}
        self._reached: set[int] = set()    # switched (switch_reached), switch_done to come
        self._running: dict[str, ProcSet] = {}  # job id -> its hosts (named by check_execute)
        # Hosts that may be idle or computing in a pstate that is not a computation one (a
        # platform starting its hosts asleep, a host made available while asleep or switching):
        # EXECUTE_JOB checks their pstate host by host (a superset: the others need no look).
        self._odd_pstate: set[int] = {h for h, host in enumerate(self.hosts)
                                      if energy_enabled and not host.is_compute_pstate(self._pstate[h])}
        self._set_checks: dict[tuple[int, int, int], str | None] = {}          # see check_set_state
        self._switch_plans: dict[tuple[int, int, int], tuple[int, float, int]] = {}  # see request_state
        self._watts_of: dict[tuple[int, int, float], float] = {}                # see _set_load
        # the optional processor power/temperature model (thermal.ThermalModel), told of job starts/ends
        self.thermal: Any = None
        # Rows of this round's job actors and server, written once the round's woken actors
        # ran (write_held_rows): (t, energy read at a job start, None) or (t, None, hosts of a
        # sleep/wake request)
        self.held: list[tuple] = []
        self._held_job = ""          # the job whose start rows are held, if any
        # energy, SimGrid style (see "energy" below): per host, the energy at its last update,
        # when that was, and SimGrid's pstate (the virtual one while switching)
        self._host_energy = [0.0] * n
        self._host_t = [start_time] * n
        self._sg_pstate = list(self._pstate)
        # what an update would charge per second now: power(SimGrid pstate, load), kept current
        self._watts = [power(h.pstates[p], 0.0) for h, p in zip(self.hosts, self._pstate)]
        self._speeds = [[ps.speed for ps in h.pstates] for h in self.hosts]     # flop/s per pstate
        # SimGrid's plugin attaches to a host in pstate 0 and learns its real pstate at its first
        # update: until the first read, hosts draw pstate 0's idle power (see _leave_creation_power).
        self._creation_power = energy_enabled and any(p != 0 for p in self._pstate)
        # Hosts a job start updated at once for its rows' energies (with the load before it), which
        # its actor's reads update in the round's later sub-rounds: not up to date for the round's
        # read_energy (cleared by it).
        self._early: set[int] = set()
        self._energy_first_submission: float | None = None
        self._energy_last_completion = 0.0
        # machine_states rows, formatted here and written by the writers in blocks
        self._rows: list[str] | None = writers.state_rows if writers is not None else None
        self._row_t: float | None = None   # the time of the last row, formatted
        self._row_time = ""
        self._counts_text: dict[tuple, str] = {}
        if writers is not None and energy_enabled:
            by_pstate: dict[int, list[int]] = {}
            for i, p in enumerate(self._pstate):
                by_pstate.setdefault(p, []).append(i)
            for p in sorted(by_pstate):
                writers.pstate_change(start_time, ProcSet(*by_pstate[p]), p)

    # ------------------------------------------------------------------ queries

    def state(self, host: int) -> MachineState:
        return _STATES[self._state[host]]

    def pstate(self, host: int) -> int:
        """Current pstate (the virtual one while switching)."""
        return self._pstate[host]

    def counts(self) -> dict[MachineState, int]:
        """Number of hosts in each state (O(1))."""
        return {s: self._counts[i] for i, s in enumerate(_STATES)}

    def hosts_in(self, state: MachineState) -> ProcSet:
        """Hosts currently in ``state`` (O(hosts): not for per-event use)."""
        code = _S[state]
        return ProcSet(*(i for i, s in enumerate(self._state) if s == code))

    def check_hosts(self, hosts: ProcSet) -> str | None:
        """Batsim's error if ``hosts`` names a machine that does not exist (or none), else None."""
        if not hosts:
            return "the number of allocated resources should be strictly positive (got 0)"
        lo, hi = (hosts.min, hosts.max) if isinstance(hosts, ProcSet) else (min(hosts), max(hosts))
        if lo < 0 or hi >= len(self.hosts):
            bad = lo if lo < 0 else next(h for h in hosts if h >= len(self.hosts))
            return f"Cannot get machine {bad}: it does not exist"
        return None

    def check_execute(self, hosts: ProcSet, allow_sharing: bool = False, job_id: str = "?") -> str | None:
        """Batsim's reason to abort on EXECUTE_JOB(job_id, hosts) now (server_on_execute_job), else
        None.  Its order: without sharing, every machine must run no job; then each machine must be
        idle or computing and, with -E, in a computation pstate."""
        err = self.check_hosts(hosts)
        if err:
            return err
        state, jobs = self._state, self._jobs
        where = f"Job '{job_id}': Invalid job allocation ('{hosts}'): machine"
        if not allow_sharing:
            for h in hosts:
                if jobs[h]:
                    running = ", ".join(j for j, alloc in self._running.items() if h in alloc)
                    return (f"Job '{job_id}': Invalid allocation ('{hosts}'): machine {h} "
                            f"(hostname='{self.hosts[h].name}') is currently computing jobs (these ones: "
                            f"{{{running}}}) whereas time-sharing on compute machines is disabled (rerun "
                            "with --help to display the available options).")
        for h in hosts:
            if state[h] != IDLE and state[h] != COMPUTING:
                return (f"{where} {h} (hostname='{self.hosts[h].name}') cannot compute jobs now (the machine "
                        f"is not computing nor idle, its state is '{_STATES[state[h]].value}')")
            if self.energy_enabled and not self.hosts[h].is_compute_pstate(self._pstate[h]):
                return (f"{where} {h} (hostname='{self.hosts[h].name}') is not in a computation pstate "
                        f"(ps={self._pstate[h]})")
        return None

    def check_set_state(self, hosts: ProcSet, pstate: int) -> str | None:
        """Batsim's reason to abort on SET_RESOURCE_STATE(hosts, pstate) now, else None.

        Batsim looks at each machine's pstate, not at its state (server_on_pstate_modification):
        from a computation pstate any computation pstate is immediate and a sleep pstate starts a
        switch off, whose actor aborts if a job runs there; from a sleep pstate only a computation
        pstate may be asked.  Where Batsim only logs an error and never answers the request (a
        virtual pstate asked, a machine already switching), the emulator refuses it."""
        err = self.check_hosts(hosts)
        if err:
            return err
        # The verdict depends on the host, the pstates and whether jobs run there only: each one
        # worked out once per run (SET_RESOURCE_STATE names the same hosts again and again).
        checks, current, jobs = self._set_checks, self._pstate, self._jobs
        for h in hosts:
            key = (h, pstate, current[h])
            if key not in checks:
                checks[key] = self._check_set_state(h, pstate, current[h])
            err = checks[key]
            if err:
                return err
        for h in hosts:
            # (the check of the switch-off actor, which runs once the server went through them all)
            if jobs[h] and self.hosts[h].is_sleep_pstate(pstate) and self.hosts[h].is_compute_pstate(current[h]):
                return f"jobs are running on machine {h}"
        return None

    def _check_set_state(self, h: int, pstate: int, current: int) -> str | None:
        host = self.hosts[h]
        name = host.name
        if not 0 <= pstate < len(host.pstates):
            return (f"machine {h} ('{name}') has no pstate {pstate} (it has {len(host.pstates)}): "
                    "Batsim 4.2.1 aborts in SimGrid's set_pstate or reads out of its pstate list")
        never = (": Batsim 4.2.1 logs this error, leaves the machine as it is and never answers the "
                 "request; the emulator refuses it")
        if host.is_compute_pstate(current):
            if host.is_virtual_pstate(pstate):
                return (f"Switching from a communication pstate to an invalid pstate on machine {h} ('{name}') : "
                        f"{current} -> {pstate}" + never)
            return None
        if host.is_sleep_pstate(current):
            if not host.is_compute_pstate(pstate):
                return (f"Switching from a sleep pstate to a non-computation pstate on machine {h} ('{name}') : "
                        f"{current} -> {pstate}, which is forbidden")
            return None
        return f"Machine {h} ('{name}') has an invalid pstate : {current}" + never

    # ------------------------------------------------------------------ energy
    # SimGrid 3.32's host energy plugin is lazy: a host's energy is brought up to date only when
    # it is read (Batsim reads every host for each consumed_energy.csv row, the job's hosts for a
    # job's energy, every host for QUERY consumed_energy), when its pstate changes, and when a
    # CPU action on it ends or is cancelled (a parallel task: all its hosts; a sleep -- delay
    # task, wait_for timeout -- the host of the sleeping actor, the job's first host).  The whole
    # interval since the previous update is charged at the power of the update time: the
    # pstate the host had then and its load *now*.  So a delay followed by a computation is
    # charged as computing from the last update before the computation ends (what Batsim prints
    # for composed profiles), and a computation's load still counts when its own end updates.

    def _update(self, h: int, t: float) -> float:
        """SimGrid's HostEnergy::update() of host ``h`` at ``t``; returns its energy (J)."""
        last = self._host_t[h]
        if last < t:
            self._host_energy[h] = self._host_energy[h] + self._watts[h] * (t - last)
            self._host_t[h] = t
        return self._host_energy[h]

    def _peek(self, h: int, t: float) -> float:
        """Host ``h``'s energy at ``t`` as _update would make it, the host left as it is."""
        last = self._host_t[h]
        return self._host_energy[h] + self._watts[h] * (t - last) if last < t else self._host_energy[h]

    def _leave_creation_power(self, t: float) -> None:
        """The first energy read, at ``t``: every host, not updated since the start, is charged
        pstate 0's idle power up to ``t`` (the plugin's pstate until then), and its current power
        after, whatever reads it first.  Only the energy is adjusted: the hosts stay stale, as
        they are for the reads' simcalls."""
        self._creation_power = False
        for h, host in enumerate(self.hosts):
            self._host_energy[h] += (power(host.pstates[0], 0.0) - self._watts[h]) * (t - self._host_t[h])

    def _set_load(self, h: int, load: float) -> None:
        """``load``: the host's load in cores (1.0: a job's task computing on it).  SimGrid's
        energy plugin divides it by the host's core count: a 12-core host running one task draws
        epsilon + (all_cores - epsilon) / 12."""
        self._load[h] = load
        key = (h, self._sg_pstate[h], load)
        watts = self._watts_of.get(key)
        self._watts[h] = watts if watts is not None else self._watts_at(key)

    def _watts_at(self, key: tuple[int, int, float]) -> float:
        """The power of host ``key[0]`` at SimGrid pstate ``key[1]`` with load ``key[2]`` (cores),
        worked out once per run."""
        h, pstate, load = key
        host = self.hosts[h]
        watts = self._watts_of[key] = power(host.pstates[pstate], min(load / host.core_count, 1.0))
        return watts

    def hosts_energy(self, t: float, hosts) -> np.longdouble:
        """Energy (J) of ``hosts`` read at ``t`` (each one updated), summed as Batsim sums a job's
        hosts: in long double (see _total)."""
        if self._creation_power:
            self._leave_creation_power(t)
        update = self._update
        return _total([update(h, t) for a, b in _ranges(hosts) for h in range(a, b + 1)])

    def read_energy(self, t: float, readers: list, touched: dict[int, int]) -> list[int]:
        """The energy reads of one SimGrid scheduling round at ``t``.  Each reader is an actor
        (start sub-round, [host sets, None: every host]) reading ``sg_host_get_consumed_energy``
        host after host: a host not updated at ``t`` costs it a simcall, i.e. a sub-round, and is
        updated once the sub-round ends, for the readers of later sub-rounds (concurrent readers
        pay for the same host).  ``touched`` maps the hosts so updated in this round to their
        sub-round.  Returns each reader's sub-round after its reads."""
        if self._creation_power:
            self._leave_creation_power(t)
        if len(readers) == 1:
            return [self._read_alone(t, readers[0][0], readers[0][1], touched)]
        walks = [_read_order(hosts, len(self._host_t)) for _, hosts in readers]
        subs = [sub for sub, _ in readers]
        pending = list(range(len(readers)))
        k = min(subs, default=0)
        while pending:
            waiting = []
            for i in pending:
                if subs[i] != k:
                    waiting.append(i)
                    continue
                for h in walks[i]:
                    if self._pays(h, t, k, touched):
                        subs[i] = k + 1
                        waiting.append(i)
                        break
            pending = waiting
            k += 1
        self._early.clear()
        return subs

    def _read_alone(self, t: float, k: int, host_sets: list, touched: dict[int, int]) -> int:
        """read_energy of a round's only reader, starting in sub-round ``k``: no lockstep to keep,
        so its walk runs straight through (each host it pays for is one more sub-round), and a
        read of every host with nothing updated yet in the round is one pass over the stale ones."""
        last, n, early = self._host_t, len(self._host_t), self._early
        if len(host_sets) == 1 and host_sets[0] is None and not touched and not early:
            stale = [h for h in range(n) if last[h] < t]
            energy, watts = self._host_energy, self._watts
            for h in stale:
                energy[h] = energy[h] + watts[h] * (t - last[h])
                last[h] = t
            touched.update(zip(stale, range(k, k + len(stale))))
            return k + len(stale)
        for h in _read_order(host_sets, n):
            if self._pays(h, t, k, touched):
                k += 1
        early.clear()
        return k

    def _pays(self, h: int, t: float, k: int, touched: dict[int, int]) -> bool:
        """Whether a reader in sub-round ``k`` pays a simcall for host ``h``: a host not up to date
        at ``t`` (updated now), or one another reader updates in this same sub-round."""
        done = touched.get(h)
        if done is None:
            if self._host_t[h] >= t and h not in self._early:
                return False
            self._update(h, t)
        elif done < k:
            return False
        touched[h] = k
        return True

    def action_ended(self, t: float, hosts) -> None:
        """A CPU action on ``hosts`` ended or was cancelled at ``t``, its load still counted:
        SimGrid updates those hosts' energy (see above).  No-op without -E."""
        if self.energy_enabled:
            if self._creation_power:
                self._leave_creation_power(t)
            update = self._update
            for a, b in _ranges(hosts):
                for h in range(a, b + 1):
                    update(h, t)

    def consumed_energy(self, t: float) -> float:
        """Total energy (J) of all compute hosts from the start to ``t`` (0 without -E): every
        host read, as Batsim's total does (QUERY consumed_energy answers, energy rows)."""
        if not self.energy_enabled:
            return 0.0
        return float(self.total_energy(t))

    def total_energy(self, t: float) -> np.longdouble:
        """consumed_energy(t) as Batsim computes it, in long double (see _total)."""
        if self._creation_power:
            self._leave_creation_power(t)
        # _update of every host, inlined (every energy row does it: O(hosts) per row)
        energy, last, watts = self._host_energy, self._host_t, self._watts
        for h in range(len(energy)):
            if last[h] < t:
                energy[h] = energy[h] + watts[h] * (t - last[h])
                last[h] = t
        return _total(energy)

    def job_submitted(self, t: float) -> None:
        """A job is submitted at ``t``. Batsim's ``consumed_joules`` counts the
        energy from the first submission to the last job completion."""
        if self._energy_first_submission is None:
            self._energy_first_submission = self.consumed_energy(t)

    def wattmin(self, reaching: Sequence[int] = ()) -> float:
        """Batsim's ``wattmin`` column: the sum over hosts of SimGrid's wattmin (epsilon) at the
        host's current SimGrid pstate; ``reaching``: hosts whose switch actor, woken in this
        round, is about to set its target pstate (counted at it if still switching)."""
        hosts, pstate = self.hosts, self._sg_pstate
        if reaching:
            pstate = list(pstate)
            for h in reaching:
                if self._target[h] >= 0:
                    pstate[h] = self._target[h]
        return sum(hosts[h].pstates[pstate[h]].epsilon for h in range(len(hosts)))

    def _energy_row(self, t: float, kind: str) -> None:
        if self.writers is not None:
            self.writers.energy_row(t, self.total_energy(t), kind, self.wattmin())

    # ------------------------------------------------------------------ state changes

    def _move(self, hosts, new: int, t: float) -> None:
        counts, state, since, time_in = self._counts, self._state, self._since, self._time_in
        for h in hosts:
            old = state[h]
            if old != new:
                time_in[old] += t - since[h]
                since[h] = t
                counts[old] -= 1
                counts[new] += 1
                state[h] = new

    def _states_row(self, t: float) -> None:
        rows = self._rows
        if rows is not None:
            c = self._counts
            if t != self._row_t:      # "%g" costs more than the rest: rows often share a time
                self._row_t, self._row_time = t, "%g," % t
            # The counts' text, formatted once per distinct counts (a few hundred per run).
            key = (c[SLEEPING], c[SW_ON], c[SW_OFF], c[IDLE], c[COMPUTING])
            text = self._counts_text.get(key)
            if text is None:
                text = self._counts_text[key] = "%d,%d,%d,%d,%d\n" % key
            rows.append(self._row_time + text)
            if len(rows) >= 4096:
                self.writers.flush_states()

    def check_start(self, job_id: str, hosts: ProcSet) -> str | None:
        """:meth:`check_execute` without sharing, in one pass over a ProcSet's intervals in the
        usual case (every host idle, none in an odd pstate)."""
        if isinstance(hosts, ProcSet) and (itvs := hosts._itvs) and itvs[0][0] >= 0 \
                and itvs[-1][1] < len(self._state):
            state = self._state
            for a, b in itvs:
                if state[a:b + 1].count(IDLE) != b + 1 - a:
                    break
            else:
                odd = self._odd_pstate
                if not odd or not any(h in hosts for h in odd):
                    return None
        return self.check_execute(hosts, job_id=job_id)

    def job_started(self, t: float, job_id: str, hosts: ProcSet, load: float = 1.0) -> None:
        """A job starts on ``hosts`` at ``t``.

        load: SimGrid cpu load fraction per host during its first phase (0 for
        a delay profile, 1 for a cpu-bound parallel task); change it later with
        :meth:`job_load_changed`. Writes the ``s`` energy row (power before
        the start) and one machine_states row.
        """
        energy = self.energy_enabled
        if energy:
            # Its actor reads energies before its load changes, but sets its hosts' state and
            # writes its rows after its reads' simcalls, once same-round switch actors set their
            # pstate and state and woken job actors wrote their end rows: the counts and rows
            # wait for write_held_rows.  Its reads (see read_energy) update the hosts in its
            # sub-rounds: hosts updated here for its energies are _early until then.
            last = self._host_t
            self._early.update([h for h in range(len(last)) if last[h] < t])
            self._job_start_energy[job_id] = self.hosts_energy(t, hosts)
        if self.thermal is not None:
            self.thermal.hosts_changed(t, _ranges(hosts), 1)
        self._running[job_id] = hosts
        jobs, state, since = self._jobs, self._state, self._since
        # _move(idle hosts, COMPUTING, t) inlined: the same additions in the same (host) order.
        idle_time = self._time_in[IDLE]
        moved = 0
        for a, b in _ranges(hosts):
            for h in range(a, b + 1):
                jobs[h] += 1
                if state[h] == IDLE:
                    idle_time += t - since[h]
                    since[h] = t
                    state[h] = COMPUTING
                    moved += 1
        self._time_in[IDLE] = idle_time
        if energy:
            self.held.append((t, self.total_energy(t), None, moved))
            self._held_job = job_id
            if load:
                self.job_load_changed(t, job_id, hosts, load)
            return
        c = self._counts
        c[IDLE] -= moved
        c[COMPUTING] += moved
        self._states_row(t)

    def write_held_rows(self) -> None:
        """The held rows of this round (see ``held``): energy row (a job start's ``s`` with the
        energy read at the start; a sleep/wake request's ``p``) and machine_states row, with the
        wattmin and counts of now, after same-round switch actors set their pstate and state."""
        for t, energy, switching, moved in self.held:
            if switching is None:
                c = self._counts
                c[IDLE] -= moved
                c[COMPUTING] += moved
                if self.writers is not None:
                    self.writers.energy_row(t, energy, "s", self.wattmin())
                self._states_row(t)
            else:
                switched, immediate, hosts, pstate = switching
                self._energy_row(t, "p")
                if immediate:       # set by the server host after host, before its states row
                    self._switch_power(t, immediate)
                    if not switched:     # the request is done: its pstate row and energy row
                        self._pstate_row(t, hosts, pstate)
                self._states_row(t)
                # the request's switch actors, created after these rows, set the virtual pstate
                self._switch_power(t, switched)
        self.held.clear()
        self._held_job = ""

    def job_load_changed(self, t: float, job_id: str, hosts: ProcSet, load: float) -> None:
        """The job running on ``hosts`` enters a phase with cpu load ``load`` at ``t``."""
        if not self.energy_enabled:
            return
        for a, b in _ranges(hosts):
            for h in range(a, b + 1):
                self._set_load(h, load)

    def job_computes(self, t: float, job_id: str, hosts: ProcSet, flops: float | Sequence[float],
                     rate: float) -> None:
        """The job running on ``hosts`` starts a parallel task at ``t``: ``flops`` on each host (one
        amount, or one per host rank), all done at ``rate`` (fraction of the task per second).
        SimGrid's energy plugin takes a host's load as the flop/s used there (flops x rate, its
        CPU constraint's usage) over its speed: for 12,530 flops at 1/12,530 per second on a
        1 flop/s host, 0.9999999999999999, and the host draws epsilon + that x slope."""
        if not self.energy_enabled:
            return
        speeds, pstate = self._speeds, self._sg_pstate
        ranks: Optional[Sequence[float]] = None
        if isinstance(flops, (int, float)):
            amount = float(flops)
        else:
            ranks, amount = flops, 0.0
        rank = 0
        for a, b in _ranges(hosts):
            for h in range(a, b + 1):
                if ranks is not None:
                    amount, rank = ranks[rank], rank + 1
                self._set_load(h, amount * rate / speeds[h][pstate[h]] if amount > 0 else 0.0)

    def job_ended(self, t: float, job_id: str, hosts: ProcSet, update: bool = True,
                  reaching: Sequence[int] = ()) -> float | np.longdouble:
        """The job on ``hosts`` ends (any final state) at ``t``.

        Returns its consumed energy in J (energy drawn by its hosts between
        its start and end), -1.0 without -E. Writes the ``e`` energy row
        (power after the end) and one machine_states row.  update=False: the
        job's actor ends it: the energies are read without updating the hosts (the
        engine counts its reads' simcalls with read_energy, which updates them) and
        the engine sets the hosts' load (job_load_changed).  The ``e`` row's total is Batsim's
        energy at the last job completion (schedule.csv's consumed_joules).  The actor writes
        that row after its reads' simcalls, once the switch actors woken in the same round set
        their pstate (their first simcall): ``reaching``, their hosts.
        """
        if self.thermal is not None:
            self.thermal.hosts_changed(t, _ranges(hosts), -1)
        self._running.pop(job_id, None)
        jobs, state, since = self._jobs, self._state, self._since
        energy: float | np.longdouble = -1.0
        if self.energy_enabled:
            if job_id == self._held_job:     # it ends as it starts: its actor's start rows first
                self.write_held_rows()
            if self._creation_power:
                self._leave_creation_power(t)
            read = self._update if update else self._peek
            # Batsim: the long double sum of its hosts' energies now, minus the one at its start.
            energy = _total([read(h, t) for a, b in _ranges(hosts) for h in range(a, b + 1)]) \
                - self._job_start_energy.pop(job_id, 0.0)
            if update:
                for a, b in _ranges(hosts):
                    for h in range(a, b + 1):
                        if jobs[h] <= 1:
                            self._set_load(h, 0.0)
        # _move(freed hosts, IDLE, t) inlined: the same additions in the same (host) order.
        computing_time = self._time_in[COMPUTING]
        freed = 0
        for a, b in _ranges(hosts):
            for h in range(a, b + 1):
                jobs[h] -= 1
                if not jobs[h] and state[h] == COMPUTING:
                    computing_time += t - since[h]
                    since[h] = t
                    state[h] = IDLE
                    freed += 1
        self._time_in[COMPUTING] = computing_time
        c = self._counts
        c[COMPUTING] -= freed
        c[IDLE] += freed
        if self.energy_enabled:
            if update:
                total = self.total_energy(t)
            else:
                total = _total([self._peek(h, t) for h in range(len(state))])
            self._energy_last_completion = float(total)
            if self.writers is not None:
                self.writers.energy_row(t, total, "e", self.wattmin(reaching))
        self._states_row(t)
        return energy

    def request_state(self, t: float, hosts: ProcSet, pstate: int) -> dict[int, float]:
        """Apply SET_RESOURCE_STATE(hosts, pstate) received at ``t`` (validate first
        with :meth:`check_set_state`).

        Returns ``{host: completion time}``. Compute->compute changes complete
        at ``t`` immediately; sleeping/waking hosts complete later and the
        engine must call :meth:`switch_done` at that time (Batsim then sends
        one RESOURCE_STATE_CHANGED for the whole request once all are done).

        As Batsim's server: the host's pstate decides (a host made available while asleep is idle
        in its sleep pstate: it switches on), the state it is in does not (an unavailable host
        switches too, and ends idle or sleeping); the request's rows are one pstate_changes row
        for all its hosts (-1 or -2 after the first host's target), an energy row and a
        machine_states row, and, once all its hosts are done, the target pstate's rows.
        """
        self._nb_grouped_switches += 1
        self._nb_machine_switches += len(hosts)
        done: dict[int, float] = {}
        immediate: list[int] = []
        off: list[int] = []
        on: list[int] = []
        groups = (off, on, immediate)
        plans, target, current, odd = self._switch_plans, self._target, self._pstate, self._odd_pstate
        for h in hosts:
            key = (h, pstate, current[h])
            plan = plans.get(key)
            if plan is None:
                plan = plans[key] = self._switch_plan(*key)
            kind, duration, virtual = plan
            groups[kind].append(h)
            done[h] = t + duration
            if kind != _IMMEDIATE:
                target[h] = pstate
                odd.add(h)
            else:
                odd.discard(h)
            current[h] = virtual
        if off:
            self._move(off, SW_OFF, t)
        if on:
            self._move(on, SW_ON, t)
        if not self.energy_enabled:
            self._states_row(t)
            return done
        if self.writers is not None:
            first = hosts.min if isinstance(hosts, ProcSet) else min(hosts)
            transition = SWITCHING_OFF_PSTATE if self.hosts[first].is_sleep_pstate(pstate) else SWITCHING_ON_PSTATE
            self.writers.pstate_change(t, hosts if isinstance(hosts, ProcSet) else ProcSet(*hosts), transition)
        # The server writes its rows after its energy reads' simcalls: held (write_held_rows).
        self.held.append((t, None, (off + on, immediate, hosts, pstate), 0))
        return done

    def _switch_plan(self, h: int, pstate: int, current: int) -> tuple[int, float, int]:
        """How host ``h`` goes from pstate ``current`` to ``pstate`` (check_set_state accepted
        it): (_OFF, _ON or _IMMEDIATE, seconds it takes, the pstate it is in meanwhile), the same
        all run."""
        host = self.hosts[h]
        if host.is_sleep_pstate(current):
            spec = host.sleep_spec(current)
            assert spec is not None      # (is_sleep_pstate: it has one)
            return _ON, host.switch_on_time(spec), spec.on_pstate
        if host.is_sleep_pstate(pstate):
            spec = host.sleep_spec(pstate)
            assert spec is not None
            return _OFF, host.switch_off_time(spec), spec.off_pstate
        return _IMMEDIATE, 0.0, pstate

    def switch_reached(self, t: float, hosts: list[int]) -> None:
        """The switch actors of ``hosts`` finished their 1 flop at ``t``, one after the other: as
        Batsim's, each sets its target pstate (energy updated first) and the machine state at once,
        before the server hears of it (switch_done, which writes the rows).  The state is set
        whatever it is now: a host made unavailable while switching is idle or sleeping again."""
        state, pstate, target = self._state, self._pstate, self._target
        counts, since, time_in, odd = self._counts, self._since, self._time_in, self._odd_pstate
        reached: list[int] = []
        for h in hosts:
            goal = target[h]
            if goal < 0:
                continue
            target[h] = -1
            pstate[h] = goal
            reached.append(h)
            old = state[h]
            if self.hosts[h].is_sleep_pstate(goal):
                new = SLEEPING
            else:
                new = IDLE
                odd.discard(h)
            # _move((h,), new, t) inlined: the same additions in the same (host) order
            time_in[old] += t - since[h]
            since[h] = t
            counts[old] -= 1
            counts[new] += 1
            state[h] = new
        # (each host's energy depends on its own figures only: updated after the states, the same)
        self._switch_power(t, reached)
        self._reached.update(reached)

    def switch_done(self, t: float, hosts: ProcSet | list[int] | int, request: ProcSet | None = None,
                    pstate: int | None = None) -> None:
        """The server heard that the switches of ``hosts`` are done at ``t``, completing their
        request ``request`` (default: ``hosts``) to ``pstate`` (default: the hosts' target): its
        pstate_changes row (all its hosts), energy row and machine_states row.  Hosts whose
        switch_reached was not called reach their target now."""
        if isinstance(hosts, int):
            hosts = (hosts,)
        group = [h for h in hosts if self._target[h] >= 0 or h in self._reached]
        if not group:
            return
        if pstate is None:
            pstate = self._target[group[0]] if self._target[group[0]] >= 0 else self._pstate[group[0]]
        self.switch_reached(t, [h for h in group if h not in self._reached])
        self._reached.difference_update(group)
        self._pstate_row(t, request if request is not None else ProcSet(*group), pstate)
        self._states_row(t)

    def _switch_power(self, t: float, hosts) -> None:
        """SimGrid's pstate of ``hosts`` becomes the one set here: energy updated first."""
        if not self.energy_enabled:
            return
        energy, last, watts = self._host_energy, self._host_t, self._watts
        sg_pstate, pstate, load, watts_of = self._sg_pstate, self._pstate, self._load, self._watts_of
        for h in hosts:
            # _update(h, t) then _set_load(h, load[h]) at the new pstate, inlined (hosts by the dozen)
            if last[h] < t:
                energy[h] = energy[h] + watts[h] * (t - last[h])
                last[h] = t
            key = (h, pstate[h], load[h])
            sg_pstate[h] = key[1]
            w = watts_of.get(key)
            watts[h] = w if w is not None else self._watts_at(key)

    def _pstate_row(self, t: float, hosts, pstate: int) -> None:
        if self.writers is not None and self.energy_enabled:
            self.writers.pstate_change(t, ProcSet(*hosts), pstate)
            self._energy_row(t, "p")

    def set_unavailable(self, t: float, hosts: ProcSet) -> str | None:
        """External event machine_unavailable: hosts become ``unavailable`` whatever they do (no
        row).  Batsim's reason to abort if one already is, else None."""
        err = self.check_hosts(hosts)
        if err:
            return err
        for h in hosts:
            if self._state[h] == UNAVAILABLE:
                return (f"The making of machine {h} ('{self.hosts[h].name}') unavailable was requested but this "
                        "machine was already in UNAVAILABLE state.")
            self._move((h,), UNAVAILABLE, t)
        return None

    def set_available(self, t: float, hosts: ProcSet) -> str | None:
        """External event machine_available: hosts go back to computing if jobs run there, else
        to idle -- in whatever pstate they are, a sleep one included, as Batsim does (no row).
        Batsim's reason to abort if one is not unavailable (a switch that ended meanwhile made
        it idle or sleeping), else None."""
        err = self.check_hosts(hosts)
        if err:
            return err
        for h in hosts:
            if self._state[h] != UNAVAILABLE:
                return (f"The making of machine {h} ('{self.hosts[h].name}') available was requested but this "
                        f"machine was not in UNAVAILABLE state (current state: {_STATES[self._state[h]].value}).")
            if self.energy_enabled and not self.hosts[h].is_compute_pstate(self._pstate[h]):
                self._odd_pstate.add(h)
            self._move((h,), COMPUTING if self._jobs[h] else IDLE, t)
        return None

    def stats(self, t: float) -> MachineStats:
        """Figures for PREFIX_schedule.csv at end time ``t``."""
        ti = self._time_in
        joules = 0.0
        if self.energy_enabled and self._energy_first_submission is not None:
            joules = self._energy_last_completion - self._energy_first_submission
        return MachineStats(
            consumed_joules=joules,
            nb_computing_machines=len(self.hosts),
            nb_grouped_switches=self._nb_grouped_switches,
            nb_machine_switches=self._nb_machine_switches,
            time_computing=ti[COMPUTING], time_idle=ti[IDLE], time_sleeping=ti[SLEEPING],
            time_switching_off=ti[SW_OFF], time_switching_on=ti[SW_ON],
            time_unavailable=ti[UNAVAILABLE])
