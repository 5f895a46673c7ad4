"""Built-in policies; each is registered by name in the ``batsched_py.schedulers`` entry-point group
(setup.cfg), which :mod:`batsched_py.scheduler.registry` reads.

Shared pieces: queue_order.py (queue orders), selection.py (host selection),
profile.py (reservation profile), base.py (QueuePolicy).  Policies: fcfs.py,
filler.py, backfilling.py (easy, conservative, saf, sjf), power.py (timeout,
oracle: power management over any of them).  agent/: the decision points of agents.
"""
