"""Power management composable with any queue-based policy: ``timeout`` and ``oracle``.

Usage: ``--scheduler timeout --config '{"base": "easy", "timeout": 5}'`` (any
registered QueuePolicy works as ``base``: fcfs, easy, conservative, filler, saf,
sjf; the base's own options go in the same object).  The scheduler that runs is
the base class with a power mixin in front of it (named e.g. ``easy+timeout``),
so the base decides *which* jobs start *where* exactly as it would alone; the
mixin only decides *when hosts are on*:

- A base decision to start a job on hosts that are asleep (or still busy or
  switching) becomes a pending launch: the sleeping hosts are switched on and
  the job is executed as soon as all its hosts are idle.  Host selection prefers
  hosts that are on.
- ``timeout`` (option ``"timeout": T``, default 5, in the platform's time unit):
  a node is switched off once it has been idle (no job, nothing pending) for T;
  T = 0 switches idle nodes off at once.  Wake-ups only happen because queued
  work needs the hosts.
- ``"cores_per_node": k`` (default 1): hosts ``[i*k, (i+1)*k)`` form a node that is
  switched off and on as a whole (Grid'5000 Taurus: 12); the selection options
  use the same grouping.
- ``oracle`` (off-reservation oracle, an upper bound for learned policies): it knows
  each job's real runtime -- from its profile when Batsim forwards profiles on
  submission (``delay``; ``parallel_homogeneous`` with option ``"host_speed"``,
  flops per time unit), or from option ``"workload"`` (the Batsim workload file)
  -- and plans reservations with it instead of the walltime.  Idle nodes are
  switched off at once, except those the plan uses within ``"keep_on"`` time
  units (default 0).  A queued job may start only on hosts that are on as long
  as that start (exactly known) leaves its waiting time within ``"threshold"``
  (default 0): sleeping nodes stay off while no queued job's waiting time would
  exceed the threshold.  With FCFS/filler bases, which plan nothing, the job
  waits for on hosts until its waiting time reaches the threshold.
"""
import warnings
from typing import TYPE_CHECKING, Any, Mapping, Optional

from procset import ProcSet

from ..scheduler import HostState, Job, Scheduler
from ..scheduler.registry import available as registered
from ..scheduler.view import procset_of_mask
from ..models.document import WorkloadError, read_workload_file
from .base import QueuePolicy
from .options import PolicyOptionError, number_option
from .selection import preferring

AWAKE = (HostState.IDLE, HostState.COMPUTING, HostState.SWITCHING_ON, HostState.CHANGING_PSTATE)

if TYPE_CHECKING:   # (a mixin always stands in front of a QueuePolicy: type-checked as one)
    _MixinBase = QueuePolicy
else:
    _MixinBase = object


class PowerMixin(_MixinBase):
    """Pending launches, node grouping, switching off idle nodes after a timeout."""
    POWER_OPTIONS = frozenset({"base", "timeout", "cores_per_node"})
    needs_energy = True     # switching hosts needs Batsim's -E (read by compare's checks)
    POWER_DEFAULTS: dict[str, Any] = {"base": "easy", "timeout": 5}

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        super().__init__(options)
        self.timeout = number_option(self.options, "timeout", 5)
        self.cores = self.options.get("cores_per_node", 1)
        self.pending: dict[str, tuple[Job, int, Optional[Mapping[str, str]]]] = {}   # hosts: bitmask
        self.launched_at: dict[str, float] = {}    # pending job id -> when the base started it
        self.idle_since: dict[int, float] = {}
        self.calls: set[float] = set()
        self.switches = 0   # node switch requests (off and on), for studies

    def on_simulation_begins(self, event) -> None:
        super().on_simulation_begins(event)
        require_sleep_states(self)
        n = len(self.platform)
        #: bitmask of each node's hosts
        self.node_masks = [((1 << (min(lo + self.cores, n) - lo)) - 1) << lo for lo in range(0, n, self.cores)]

    @property
    def nodes(self) -> list[ProcSet]:
        return [procset_of_mask(m) for m in self.node_masks]

    def on_requested_call(self) -> None:
        self.calls.discard(self.now)
        super().on_requested_call()

    # --- the hooks of QueuePolicy ---------------------------------------------------------
    def launch(self, job, hosts, mapping=None) -> None:
        self.pending[job.id] = (job, hosts, mapping)
        self.launched_at[job.id] = self.decision_time

    def awake_mask(self) -> int:
        return self.platform.mask_in(*AWAKE)

    def awake(self) -> ProcSet:
        return procset_of_mask(self.awake_mask())

    def selector(self):
        return preferring(self.select, self.awake_mask())

    def schedule(self) -> None:
        super().schedule()
        self._flush()
        self._power_down()

    # --- internals ------------------------------------------------------------------------
    def _flush(self) -> None:
        """Execute pending launches whose hosts are all idle; wake the sleeping hosts of the others."""
        if not self.pending:
            return
        wake = 0
        platform = self.platform
        for job_id, (job, hosts, mapping) in list(self.pending.items()):
            if not hosts & ~platform.free_mask:
                del self.pending[job_id]
                self._execute(job, procset_of_mask(hosts), hosts, mapping)
                if self.launched_at.pop(job_id) < self.decision_time:
                    shift_reservation(self, job, hosts)
            else:
                wake |= hosts & platform.mask_in(HostState.SLEEPING)
        self._switch(wake, on=True)

    def _switch(self, hosts: int, on: bool) -> None:
        """One SET_RESOURCE_STATE for the whole nodes of ``hosts`` (their hosts in the right state)."""
        if not hosts:
            return
        platform = self.platform
        # hosts in the right state and not switching already (target_pstate is None)
        ready = platform.mask_in(HostState.SLEEPING if on else HostState.IDLE)
        nodes = set()
        group = 0
        cores = self.cores
        h = hosts
        while h:
            node = ((h & -h).bit_length() - 1) // cores
            node_mask = self.node_masks[node]
            h &= ~node_mask
            take = node_mask & ready
            if take:
                group |= take
                nodes.add(node)
        if group:
            if on:   # back to the first compute pstate (switch_on's default)
                self.switch_on(procset_of_mask(group))
            else:
                self.switch_off(procset_of_mask(group))
            self.switches += len(nodes)

    def keep_on(self) -> int:
        """Idle hosts to keep on whatever their idle time (none for a plain timeout)."""
        return 0

    def _power_down(self) -> None:
        platform = self.platform
        keep = self.keep_on() | (platform.all_mask & ~self.available_mask)
        # idle, available and not switching: IDLE state and free (free excludes unavailable hosts)
        idle_hosts = platform.mask_in(HostState.IDLE) & platform.free_mask
        next_call = None
        off = 0
        now = self.now
        timeout = self.timeout
        idle_since = self.idle_since
        for i, node in enumerate(self.node_masks):
            if node & keep or node & ~idle_hosts:
                if idle_since:
                    idle_since.pop(i, None)
                continue
            since = idle_since.setdefault(i, now)
            if now - since >= timeout:
                off |= node
                del idle_since[i]
            else:
                due = since + timeout
                next_call = due if next_call is None else min(next_call, due)
        self._switch(off, on=False)
        if next_call is not None:
            self._remind(next_call)

    def _remind(self, at: float) -> None:
        """A REQUESTED_CALL at ``at`` (one per time)."""
        if at > self.decision_time and at not in self.calls:
            self.calls.add(at)
            self.call_me_later(at)


class OracleMixin(PowerMixin):
    """Timeout 0 plus exact knowledge of runtimes: plan with them, keep planned nodes on, and keep
    sleeping nodes off while queued jobs can wait for hosts that are on (within ``threshold``)."""
    POWER_OPTIONS = PowerMixin.POWER_OPTIONS | {"threshold", "workload", "host_speed", "keep_on"}
    POWER_DEFAULTS = {"base": "easy", "timeout": 0, "threshold": 0, "keep_on": 0, "workload": None,
                      "host_speed": None}

    def __init__(self, options=None):
        options = dict(options or {})
        options.setdefault("timeout", 0)
        super().__init__(options)
        self.threshold = number_option(self.options, "threshold", 0)
        self.keep_horizon = number_option(self.options, "keep_on", 0)
        self.host_speed = (number_option(self.options, "host_speed", 1, positive=True)
                           if "host_speed" in self.options else None)
        self.runtimes: dict[str, float] = {}
        self.said_walltimes = False
        if "workload" in self.options:
            path = self.options["workload"]
            if not isinstance(path, str) or not path:
                raise PolicyOptionError(f"option workload: {path!r} is not a file name")
            self.runtimes = read_runtimes(path, self.host_speed)

    def runtime(self, job: Job) -> Optional[float]:
        real = real_runtime(self.runtimes, job.id)
        if real is not None:
            return real
        if job.profile is not None:
            return profile_runtime(job.profile, self.host_speed)
        return None

    def planned_duration(self, job: Job) -> float:
        real = self.runtime(job)
        if real is None:
            if not self.said_walltimes:         # (once: an oracle that knows nothing is only EASY with timeout 0)
                self.said_walltimes = True
                warnings.warn(f"oracle: job {job.id}: its real runtime is unknown (give option workload, the Batsim "
                              "workload file, or Batsim's --forward-profiles-on-submission with delay profiles): "
                              "it and any other such job are planned with their walltimes", stacklevel=2)
            return super().planned_duration(job)
        return real if job.walltime is None else min(real, job.walltime)

    def present_hosts(self, job: Job) -> Optional[int]:
        if self.now - job.subtime >= self.threshold:
            return None
        self._remind(job.subtime + self.threshold)
        return self.awake_mask()

    def start_deadline(self, job: Job) -> float:
        return job.subtime + self.threshold

    def keep_on(self) -> int:
        profile = getattr(self, "profile", None)
        if profile is None or self.keep_horizon <= 0:
            return 0
        return profile.hosts_needed_before(self.now + self.keep_horizon)

    def on_requested_call(self) -> None:
        super().on_requested_call()
        self.replan = True   # a waiting job may just have reached its threshold


def require_sleep_states(scheduler: Scheduler) -> None:
    """Refuse, naming one, hosts that cannot sleep: a policy that switches hosts off needs them all."""
    mute = [r.name for r in scheduler.platform if r.power is None or not r.power.sleep]
    if mute:
        raise PolicyOptionError(f"{type(scheduler).__name__} needs hosts with sleep pstates (wattage_per_state and "
                                f"sleep_pstates properties); {len(mute)} host(s) have none, e.g. {mute[0]}")


def shift_reservation(policy: QueuePolicy, job: Job, hosts: int) -> None:
    """A launch waited for its hosts: move the job's reservation (if the policy plans with a
    profile) to start now, so that it never ends before the job can, and have the policy
    re-place the queued jobs' reservations, which may now overlap it, at the next message."""
    profile = getattr(policy, "profile", None)
    if profile is None or not profile.remove(job.id):
        return
    for queued in policy.queue:
        profile.remove(queued.id)
    profile.update_first_slice(policy.decision_time)
    profile.insert(job.id, job.res, policy.planned_duration(job),
                   lambda avail, n: hosts if avail & hosts == hosts else None)
    policy.replan = True


def profile_runtime(profile: Mapping[str, Any], host_speed: Optional[float]) -> Optional[float]:
    """Real runtime of a Batsim profile when it can be known without simulating (else None)."""
    kind = profile.get("type")
    if kind == "delay":
        return float(profile["delay"])
    if kind == "parallel_homogeneous" and host_speed:
        return float(profile["cpu"]) / float(host_speed)
    return None


def read_runtimes(path: str, host_speed: Optional[float]) -> dict[str, float]:
    """Job name (without workload prefix) -> real runtime, from a Batsim workload file."""
    where = f"option workload: {path}"
    try:
        _, profiles, jobs = read_workload_file(path)
    except WorkloadError as exc:
        raise PolicyOptionError(f"{where}: {exc}") from None
    out = {}
    blind = ""          # (the first job whose runtime the profiles do not give)
    for i, job in enumerate(jobs):
        if not isinstance(job, dict) or "id" not in job:
            raise PolicyOptionError(f"{where}: jobs[{i}] is not a job object with an 'id'")
        name = job.get("profile")
        profile = profiles.get(name) if isinstance(name, str) else None
        try:
            runtime = profile_runtime(profile, host_speed) if isinstance(profile, dict) else None
        except (KeyError, TypeError, ValueError):
            raise PolicyOptionError(f"{where}: job {job['id']!r}: profile {job.get('profile')!r} gives no runtime "
                                    "(a delay profile needs a numeric 'delay', a parallel_homogeneous one "
                                    "a numeric 'cpu')") from None
        if runtime is not None:
            out[str(job["id"])] = runtime
        elif not blind:
            blind = f"job {job['id']!r}: profile {name!r} ({_profile_kind(profile)})"
    if blind:
        raise PolicyOptionError(f"{where}: {len(jobs) - len(out)} of {len(jobs)} jobs' profiles give no runtime, e.g. "
                                f"{blind}: a runtime is known from a delay profile, or a parallel_homogeneous one "
                                "with option host_speed (flops per time unit)")
    return out


def real_runtime(runtimes: dict[str, float], job_id: str) -> Optional[float]:
    """The runtime :func:`read_runtimes` gave for job ``job_id`` (named there without the
    workload's ``prefix!``); None when unknown."""
    return runtimes.get(job_id.split("!", 1)[-1])


def day_workload(scheduler: Any) -> Optional[str]:
    """The workload file of the day ``scheduler`` runs: its option ``workload``, or the file an
    environment simulates (``workload_path``); None when it names none."""
    path = scheduler.options.get("workload") or getattr(scheduler, "workload_path", None)
    return str(path) if path else None


def day_runtimes(scheduler: Any) -> dict[str, float]:
    """Job name -> real runtime for the day ``scheduler`` runs (:func:`day_workload`; empty when
    it names no file), as an oracle that knows the runtimes reads them."""
    path = day_workload(scheduler)
    return read_runtimes(path, float(scheduler.options.get("host_speed", 1e6))) if path else {}


def _profile_kind(profile: Any) -> str:
    if not isinstance(profile, dict):
        return "no such profile"
    return f"type {profile.get('type')!r}"


_COMBINED: dict[tuple[type, str], type] = {}


def combine(mixin: type[PowerMixin], base: str) -> type[QueuePolicy]:
    """The class ``base`` policy + power ``mixin`` (created once per pair)."""
    if not isinstance(base, str):
        raise PolicyOptionError(f"option base: {base!r} is not a policy name")
    key = (mixin, base)
    if key not in _COMBINED:
        classes = registered()
        bases = sorted(n for n, c in classes.items() if issubclass(c, QueuePolicy) and c.power_base
                       and not issubclass(c, PowerMixin))
        base_cls = classes.get(base)
        if base not in bases or base_cls is None or not issubclass(base_cls, QueuePolicy):   # (for mypy)
            raise PolicyOptionError(f"option base: {base!r} is not a queue-based policy; choose from {bases}")
        name = f"{base}+{'oracle' if mixin is OracleMixin else 'timeout'}"
        _COMBINED[key] = type(name, (mixin, base_cls), {
            "OPTIONS": base_cls.OPTIONS | mixin.POWER_OPTIONS,
            "description": f"{base_cls.description}, with {name.split('+')[1]} power management"})
    return _COMBINED[key]


class _PowerEntry(Scheduler):
    mixin: type[PowerMixin] = PowerMixin

    @classmethod
    def option_defaults(cls) -> dict[str, Any]:
        """The default base's options, then the power management's."""
        return {**combine(cls.mixin, "easy").option_defaults(), **cls.mixin.POWER_DEFAULTS}

    def __new__(cls, options=None):
        return combine(cls.mixin, (options or {}).get("base", "easy"))(options)


class Timeout(_PowerEntry):
    description = "switch nodes off after 'timeout' idle time units over a 'base' policy (default easy)"
    mixin = PowerMixin


class Oracle(_PowerEntry):
    description = "off-reservation oracle: knows real runtimes, keeps nodes off while waits stay under 'threshold'"
    mixin = OracleMixin
