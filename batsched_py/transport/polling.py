"""Receiving by polling for a bounded time before sleeping: round trips shorter than a wake-up.

Batsim and a scheduler answer each other within tens of microseconds, while waking a thread
asleep in ``recv`` can cost 100 us or more on a small VM whose CPUs are idle (measured by
scripts/bench_serve.py), more than a policy's own work per message.  Polling burns CPU, so it
is opt-in and bounded: with as many simulations as cores it can slow them all (two on two
vCPUs took 0.73x to 1.39x the sleeping time across batches, ``bench_serve.py --parallel``).
The poll loop yields the CPU between attempts, so that two polling peers on a small machine
(``serve`` and ``emulate``) leave room to ZeroMQ's I/O threads (without it: 4x slower).
"""
import os
import time
from typing import Optional

import zmq

#: Default polling budget (seconds) after each message sent: none, always sleep in recv.
DEFAULT_BUSY_WAIT = 0.0


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
