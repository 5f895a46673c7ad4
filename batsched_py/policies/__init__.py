"""Built-in policies; importing this package registers them by name.

Shared pieces: queue_order.py (queue orders), selection.py (host selection),
profile.py (reservation profile), base.py (QueuePolicy).  Policies: fcfs.py,
filler.py, backfilling.py (easy, conservative, saf, sjf), power.py (timeout,
oracle: power management over any of them).
"""
from . import agent, backfilling, fcfs, filler, power  # noqa: F401
