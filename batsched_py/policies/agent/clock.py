"""When agents decide: on a grid of decision points just after each multiple of ``dt``.

Batsim may deliver the REQUESTED_CALL of minute t before the job completions or submissions of
minute t, in separate messages.  So a decision point comes ``LAG`` (x dt) after its instant, and the
points are ``dt (1 + DRIFT)`` apart: a job started at a decision point ends a whole number of minutes
later, a little before the decision point of that minute, never with it.  A decision at minute t
thus sees every event of minute t (a node whose job ends at t is idle, a job submitted at t queued).

Batsim never wakes a scheduler sooner than ``WAKE`` after it asks: a decision point asked for by an
event that came less than that before it comes late.  The events that decisions cause (a job's end,
a switch's) come ``m DRIFT dt`` before decision point m after theirs; so a policy that asks for
decision points only as it needs them asks for ``Grid.ahead`` of them in advance after a point where
it decided something.
"""
from __future__ import annotations

import math

EPS = 1e-6      # Batsim's clock drifts off round values by much less than this
LAG = 1e-4      # (x dt) how long after each multiple of dt a decision comes: after that instant's events
# (x dt) how much longer than dt the decision period is: a job started at a decision point ends a
# whole number of minutes later, a little before the decision point of that minute, never with it
DRIFT = 1e-6
WAKE = 1e-5     # Batsim's waiter never sleeps less than this (time units; the emulator's MIN_WAIT)


class Grid:
    """The decision points ``origin + LAG dt + k dt (1 + DRIFT)``, k = 0, 1, ... (each computed from k,
    so that a time asked for is the very float a REQUESTED_CALL brings back)."""

    def __init__(self, origin: float, dt: float):
        self.first = origin + LAG * dt
        self.period = dt * (1 + DRIFT)
        #: after a point where decisions were made, how many to ask for in advance (see the module)
        self.ahead = math.ceil(WAKE / (DRIFT * dt))

    def at(self, k: int) -> float:
        return self.first + k * self.period

    def index(self, t: float) -> "int | None":
        """k if ``t`` is decision point k (within EPS), else None."""
        k = round((t - self.first) / self.period)
        return k if k >= 0 and abs(t - self.at(k)) <= EPS else None

    def after(self, t: float) -> int:
        """The index of the first decision point at or after ``t`` (within EPS)."""
        return max(0, math.ceil((t - EPS - self.first) / self.period))
