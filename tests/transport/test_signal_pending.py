"""A signal whose handler is pending while the main thread sleeps in a blocking call is served
within a wait slice, not at the end of the timeout.

That is the state a signal sent just before the thread enters the call leaves (nothing to
interrupt yet): ``emulate`` waiting for a silent scheduler ignored a SIGTERM for the rest of its
60 s on a busy machine.  Here a second thread takes the signal (pthread_kill to itself), so its
C-level handler runs there and the main thread's call is not interrupted: the same state, every time."""
from __future__ import annotations

import signal
import threading
import time

import pytest
import zmq

from batsched_py.scheduler import create
from batsched_py.interrupts import WAIT_SLICE
from batsched_py.transport.req import ReqEndpoint
from batsched_py.transport.zmq_server import serve


class Stop(Exception):
    pass


def _stop(signum, frame):
    raise Stop()


def _waits_until_stopped(wait) -> float:
    """Seconds from the signal (taken by another thread) to ``wait`` raising its handler's exception."""
    sent = []

    def send():
        time.sleep(0.3)     # (the main thread is asleep in its call by then)
        sent.append(time.monotonic())
        signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)
    previous = signal.signal(signal.SIGUSR1, _stop)
    sender = threading.Thread(target=send)
    try:
        sender.start()
        with pytest.raises(Stop):
            wait()
        return time.monotonic() - sent[0]
    finally:
        sender.join()
        signal.signal(signal.SIGUSR1, previous)


def test_the_req_side_waiting_for_a_silent_scheduler(free_tcp_endpoint):
    rep = zmq.Context.instance().socket(zmq.REP)
    rep.setsockopt(zmq.LINGER, 0)
    rep.bind(free_tcp_endpoint)
    req = ReqEndpoint(free_tcp_endpoint, timeout=60)
    try:
        assert _waits_until_stopped(lambda: req.request(b"{}")) < WAIT_SLICE + 5      # (not 60 s)
    finally:
        req.close()
        rep.close(0)


@pytest.mark.parametrize("transport", ["zmtp", "libzmq"])
def test_serve_waiting_for_batsim(free_tcp_endpoint, transport):
    scheduler = create("fcfs")
    assert _waits_until_stopped(lambda: serve(scheduler, free_tcp_endpoint, timeout=60,
                                              transport=transport)) < WAIT_SLICE + 5
