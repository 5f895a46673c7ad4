"""SimGrid 3.32's clock, bit for bit: when sleeps and executions complete.

Batsim runs everything on SimGrid's ptask_L07 host model, where every activity is one action of
one model: a sleep (``sleep_for``, a ``wait_for`` timeout) has a *max duration*, an execution a
*remaining amount* (1.0 for a whole parallel task) and a *rate* (``speed / flops`` of its
bottleneck host).  Each scheduling step SimGrid:

- takes ``delta`` = the smallest of every sleep's max duration and every execution's
  ``remains / rate`` (0 when some zero-work activity, a message, is pending);
- moves the clock: ``now = now + delta`` (floating point: the clock drifts off round values);
- updates every action: ``max_duration -= delta`` and ``remains -= rate * delta``, a value below
  its precision (1e-9 s for durations, 1e-5 * 1e-9 for remains) snapping to 0 and ending it;
- wakes the actors of the ended actions in action-creation order.

Reproducing this arithmetic exactly matters: Batsim prints times with 6 decimals, the scheduler
answers with those rounded times, and whether a rounded decision time is above or below the
drifted clock decides whether Batsim sleeps a few 1e-10 s before applying it; likewise an
execution ending 1e-10 s after a sleep is a separate step (its remains are above 1e-14) while a
sleep ending up to 1e-9 s after an execution ends in the same step.  These are what make same-time
events reach the scheduler in one message or in several.

Cost: updating every action at every step is O(actions) per step.  Instead each action keeps the
value it had at some step and is brought up to date only when it may end soon (its approximate
end is near the earliest one): the catch-up replays the recorded deltas with the very same
operations, so the result is identical.
"""
from __future__ import annotations

import heapq
from typing import Any

import numpy as np

__all__ = ["Action", "Timeline", "SLEEP_PRECISION", "REMAINS_PRECISION"]

SLEEP_PRECISION = 1e-9            # SimGrid's surf/precision
REMAINS_PRECISION = 1e-5 * 1e-9   # maxmin/precision * surf/precision
# Approximate ends (clock at the last update + remaining time) drift from the exact ones by
# rounding errors, far below this window: every action ending within it is checked exactly.
_WINDOW = 1e-3
_NUMPY_SPAN = 48                  # catch-ups longer than this replay the deltas with numpy
_INF = float("inf")


class Action:
    """A sleep (rate 0, value = max duration) or an execution (value = remains)."""
    __slots__ = ("seq", "rate", "value", "step", "item", "alive")

    def __init__(self, seq: int, rate: float, value: float, step: int, item: Any):
        self.seq, self.rate, self.value, self.step, self.item, self.alive = seq, rate, value, step, item, True


class Timeline:
    """The clock and the pending actions; ``step()`` is one SimGrid solve."""

    def __init__(self) -> None:
        self.now = 0.0
        self._deltas: list[float] = []            # the non-zero deltas of every step so far
        self._arr = np.empty(1024)                 # the same, for numpy catch-ups
        self._heap: list = []                      # (approximate end, seq, action)
        self.soon: list[Action] = []               # ending at the next step whatever its delta
        self._seq = 0

    @property
    def last_seq(self) -> int:
        """The creation number of the last action created (the next one gets last_seq + 1)."""
        return self._seq

    def sleep(self, duration: float, item: Any) -> Action:
        """A sleep of ``duration`` > 0 seconds (SimGrid does nothing for <= 0: check first)."""
        self._seq += 1
        a = Action(self._seq, 0.0, duration, len(self._deltas), item)
        if duration < SLEEP_PRECISION:
            self.soon.append(a)
        else:
            heapq.heappush(self._heap, (self.now + duration, a.seq, a))
        return a

    def execute(self, rate: float, item: Any, remains: float = 1.0) -> Action:
        """An execution progressing at ``rate`` (fraction of ``remains`` per second)."""
        self._seq += 1
        a = Action(self._seq, rate, remains, len(self._deltas), item)
        if remains <= 0.0 or rate <= 0.0:
            a.value = 0.0
            self.soon.append(a)
        else:
            heapq.heappush(self._heap, (self.now + remains / rate, a.seq, a))
        return a

    def execute_alone(self, rate: float) -> bool:
        """``execute(rate, None)`` and the steps until it ends, done at once when nothing else can
        end before or with it (no action within the window of its end): the very arithmetic of
        step(), without an action on the heap.  False (nothing done) otherwise."""
        heap = self._heap
        while heap and not heap[0][2].alive:
            heapq.heappop(heap)
        delta = 1.0 / rate
        if self.soon or (heap and heap[0][0] <= self.now + delta + _WINDOW):
            return False
        self._seq += 1
        n = len(self._deltas)
        self.now = self.now + delta
        self._deltas.append(delta)
        if n >= len(self._arr):
            self._arr = np.resize(self._arr, 2 * len(self._arr))
        self._arr[n] = delta
        return True

    def take_soon(self) -> list[Action]:
        """Actions that end at the next step even if it does not move the clock (zero-work
        executions, sleeps shorter than the precision), in creation order; the caller handles
        them as ended now.  Every message Batsim's server receives is such a step."""
        soon = [a for a in self.soon if a.alive]
        self.soon = []
        for a in soon:
            a.alive = False
        return soon

    def _catch_up(self, a: Action) -> None:
        deltas = self._deltas
        n = len(deltas)
        i = a.step
        if n - i > _NUMPY_SPAN:
            # ufunc.accumulate applies the operation left to right: the same roundings as the loop.
            seq = self._arr[i:n] if a.rate == 0.0 else a.rate * self._arr[i:n]
            a.value = float(np.subtract.accumulate(np.concatenate(((a.value,), seq)))[-1])
        else:
            v, r = a.value, a.rate
            if r == 0.0:
                for d in deltas[i:n]:
                    v -= d
            else:
                for d in deltas[i:n]:
                    v -= r * d
            a.value = v
        a.step = n

    def step(self) -> list[Action] | None:
        """One solve: advance the clock to the next end; the ended actions in creation order,
        or None if nothing is pending."""
        if self.soon:
            cands = [a for a in self.soon if a.alive]
            self.soon = []
        else:
            cands = []
        heap = self._heap
        pop = heapq.heappop
        while heap and not heap[0][2].alive:
            pop(heap)
        if heap:
            end, _, a = pop(heap)
            cands.append(a)
            limit = end + _WINDOW
            while heap and heap[0][0] <= limit:
                a = pop(heap)[2]
                if a.alive:
                    cands.append(a)
        if not cands:
            return None
        n = len(self._deltas)
        delta = _INF
        for a in cands:
            if a.step != n:
                self._catch_up(a)
            v = a.value
            if a.rate != 0.0:
                v = v / a.rate if v > 0.0 else 0.0
            if v < delta:
                delta = v
        if delta > 0.0:
            self.now = self.now + delta
            self._deltas.append(delta)
            if n >= len(self._arr):
                self._arr = np.resize(self._arr, 2 * len(self._arr))
            self._arr[n] = delta
            n += 1
        done = []
        now = self.now
        push = heapq.heappush
        for a in cands:
            if a.rate == 0.0:
                v = a.value - delta
                if v < SLEEP_PRECISION:
                    a.alive = False
                    done.append(a)
                    continue
                end = now + v
            else:
                v = a.value - a.rate * delta
                if v < REMAINS_PRECISION:
                    a.alive = False
                    done.append(a)
                    continue
                end = now + v / a.rate
            a.value, a.step = v, n
            push(heap, (end, a.seq, a))
        if len(done) > 1:
            done.sort(key=_seq)
        return done


def _seq(a: Action) -> int:
    return a.seq
