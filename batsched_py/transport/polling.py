"""Receiving by polling for a bounded time before sleeping: round trips shorter than a wake-up.

Batsim and a scheduler answer each other within tens of microseconds, while waking a thread
asleep in ``recv`` costs 20 to 100 us or more on a small VM (measured by scripts/bench_serve.py),
more than a policy's own work per message.  So ``serve`` polls for ``SERVE_BUSY_WAIT`` after
each reply before it sleeps: long enough to catch a Batsim that answers quickly, short enough
that a Batsim computing for longer costs at most that much CPU per message.  The poll loop
yields the CPU between attempts, so that it gives way to whatever else is runnable on its core
(two polling peers on two cores otherwise starve ZeroMQ's I/O threads: 4x slower).
``bench_serve.py --parallel`` measures what polling costs or gains when simulations share the
cores.  The emulator's Batsim side sleeps at once by default (``PEER_BUSY_WAIT``), as Batsim
does.  (Both budgets are in the package's ``__init__``.)
"""
import os
import time
from typing import Optional

import zmq


def recv_polling(sock: zmq.Socket, seconds: float) -> Optional[bytes]:
    """The next message if one arrives within ``seconds`` of polling (never sleeping), else None."""
    if seconds <= 0:
        return None
    give_up = time.perf_counter() + seconds
    while True:
        try:
            return sock.recv(zmq.NOBLOCK)
        except zmq.Again:
            if time.perf_counter() >= give_up:
                return None
            os.sched_yield()
