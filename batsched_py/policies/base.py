"""What every queue-based policy shares: its own queue, per-message news, options, and launching.

A policy built on :class:`QueuePolicy` implements :meth:`decide`, called once per
message, reading ``self.released`` (jobs submitted in this message, in event
order), ``self.ended`` (jobs that completed in this message) and ``self.queue``
(accepted jobs waiting, in queue order), and taking jobs out of the queue with
:meth:`start`.  Like batsched, it keeps its own notion of which hosts are taken
(``self.available``: hosts no started job of this policy holds).  Host sets are int bitmasks
inside policies (``available_mask``, selectors, the profile); ProcSets are built only for the
decisions sent and for the public ``available`` property.

Two hooks let power management (``power.py``) wrap any such policy without
touching it: :meth:`launch` (the base executes at once; a power wrapper may
first wake hosts up) and :meth:`present_hosts` (hosts a job may start on right
now; None means all available ones).
"""
from typing import Any, Mapping, Optional

from procset import ProcSet

from ..scheduler import Job, Scheduler
from ..scheduler.view import mask_of, procset_of_mask
from .options import PolicyOptionError, refuse_unknown  # noqa: F401  (PolicyOptionError: imported from here)
from .queue_order import order_key
from .selection import Selector, make_selector


class QueuePolicy(Scheduler):
    description = "abstract queue-based policy"
    #: options this policy understands (others are refused so typos do not go unnoticed)
    OPTIONS: frozenset[str] = frozenset({"queue_order", "allocation", "contiguous", "cores_per_node", "seed"})
    #: batsched's backfilling algorithms refuse jobs without walltime
    needs_walltime = False
    #: a queue order forced by a registered variant (``saf``, ``sjf``)
    default_queue_order = "fcfs"
    #: whether timeout and oracle may run over this policy (agent schedulers decide themselves: never)
    power_base = True

    @classmethod
    def option_defaults(cls) -> dict[str, Any]:
        """Every option of OPTIONS with its default (None: absent, unused), for list-schedulers."""
        return {"queue_order": cls.default_queue_order, "allocation": "lowest", "contiguous": False,
                "cores_per_node": 1, "seed": 0}

    def __init__(self, options: Optional[Mapping[str, Any]] = None):
        super().__init__(options)
        refuse_unknown(self.options, self.OPTIONS, type(self).__name__)
        self.queue_order = self.options.get("queue_order", self.default_queue_order)
        self.order = order_key(self.queue_order)
        self.select: Selector = make_selector(self.options)
        self.queue: list[Job] = []
        self.released: list[Job] = []
        self.alloc_masks: dict[str, int] = {}    # started job id -> bitmask of its hosts
        self.in_queue: set[str] = set()           # ids of the jobs in self.queue
        #: present_hosts() is not overridden: any available host, and no side effect to keep
        self.plain_present = type(self).present_hosts is QueuePolicy.present_hosts
        #: selector() is not overridden: it is always ``self.select``
        self.plain_selector = type(self).selector is QueuePolicy.selector
        self.stateless_selector = getattr(self.select, "stateless", False)
        #: none of the hooks is overridden: jobs are placed by walltime and executed at once
        cls = type(self)
        self.plain_hooks = (self.plain_present and self.plain_selector
                            and cls.planned_duration is QueuePolicy.planned_duration
                            and cls.launch is QueuePolicy.launch)
        self.ended: list[Job] = []
        self.available_mask = 0
        #: set by power wrappers: reconsider every queued job even if no job ended
        self.replan = False

    # --- event bookkeeping ------------------------------------------------------------
    @property
    def available(self) -> ProcSet:
        """Hosts no started job of this policy holds."""
        return procset_of_mask(self.available_mask)

    def on_simulation_begins(self, event) -> None:
        cores, hosts = self.options.get("cores_per_node", 1), len(self.platform.resources)
        if hosts % cores:      # (a last node of fewer hosts: nodes of unequal sizes, surely a mistake)
            raise PolicyOptionError(f"option cores_per_node: {cores} does not divide the platform's {hosts} "
                                    "hosts into whole nodes")
        self.available_mask = self.platform.all_mask

    def on_job_submitted(self, job: Job) -> None:
        self.released.append(job)

    def on_job_completed(self, job: Job) -> None:
        hosts = self.alloc_masks.pop(job.id, None)
        self.available_mask |= mask_of(job.alloc) if hosts is None else hosts
        self.ended.append(job)

    def schedule(self) -> None:
        self.decide()
        self.released.clear()
        self.ended.clear()
        self.replan = False

    # --- for subclasses ---------------------------------------------------------------
    def decide(self) -> None:
        raise NotImplementedError

    def admit(self, job: Job) -> bool:
        """Reject a job the platform can never run (or without walltime if required); else queue it."""
        if job.res > len(self.platform.resources) or (self.needs_walltime and job.walltime is None):
            self.reject(job)
            return False
        self.queue.append(job)
        self.in_queue.add(job.id)
        return True

    def sort_queue(self) -> None:
        if self.order is not None:
            self.queue.sort(key=self.order)

    def start(self, job: Job, hosts: int, mapping: Optional[Mapping[str, str]] = None,
              index: Optional[int] = None) -> None:
        """Take the job (at ``index`` in the queue, if known) out of the queue and run it on ``hosts``."""
        if index is None:
            self.queue.remove(job)
        else:
            del self.queue[index]
        self.in_queue.discard(job.id)
        self.available_mask &= ~hosts
        self.alloc_masks[job.id] = hosts
        if self.plain_hooks:
            self._execute(job, procset_of_mask(hosts), hosts, mapping)
        else:
            self.launch(job, hosts, mapping)

    # --- hooks for power management --------------------------------------------------------
    def launch(self, job: Job, hosts: int, mapping: Optional[Mapping[str, str]] = None) -> None:
        self._execute(job, procset_of_mask(hosts), hosts, mapping)

    def present_hosts(self, job: Job) -> Optional[int]:
        """Hosts ``job`` may start on now (None: any available host)."""
        return None

    def start_deadline(self, job: Job) -> float:
        """Latest start a restriction by present_hosts() may cost ``job`` before it is lifted."""
        return float("inf")

    def planned_duration(self, job: Job) -> float:
        """How long a reservation lasts: the walltime (an oracle knows better).  Policies that
        plan have ``needs_walltime``: admit() queues no job without one."""
        return job.walltime  # type: ignore[return-value]

    def selector(self) -> Selector:
        """The selector to use for the decisions of this message (power wrappers prefer awake hosts)."""
        return self.select

    def free_for(self, job: Job) -> int:
        present = self.present_hosts(job)
        return self.available_mask if present is None else self.available_mask & present
