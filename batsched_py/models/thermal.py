"""Processor power and temperature (off by default; Batsim has no temperature).

A *processor* is ``cores`` consecutive compute hosts (the project's convention: one Batsim host
per core, see policies/agent/nodes.py).  Its utilisation ``u`` is the fraction of its hosts
computing.  Per processor, with temperature ``T`` in degrees C and power ``P`` in W:

    P(u, T) = idle + (busy - idle) * (2u - u^r) + L(T)
    tau dT/dt = inlet + resistance * P(u, T) - T

with the leakage above its reference-temperature value ``L(T)`` either

- ``leakage_model="linear"`` (default): ``L(T) = k (T - reference)``.  The model is then linear,
  so between two events (``u`` constant) it has a closed form (:meth:`ThermalParams.steady_state`,
  :meth:`ThermalParams.time_constant`): ``T`` relaxes exponentially to
  ``T_ss = (inlet + R (P(u, ref) - k ref)) / (1 - R k)`` with time constant ``tau / (1 - R k)``;
  it is stable only when ``R k < 1`` (checked);
- ``leakage_model="exponential"``: ``L(T) = k S (exp(b (T - reference)) - 1) / (exp(b S) - 1)``,
  ``b`` = ``leakage_growth`` (1/K), ``S`` = :data:`LEAKAGE_SPAN` = 50 K: the same leakage as the
  linear model at the reference and at reference + 50 K (75 C, the calibration point below), more
  above, less between; ``b -> 0`` gives the linear model.  No closed form: between events the
  temperature is integrated (:meth:`ThermalParams.evolve`) by exponential Rosenbrock-Euler steps
  (exact for the linearised model, second order) of at most ``tau / 20``, the last one to the end
  of the interval once every processor's drive ``tau dT/dt`` is under 0.01 K; the steady
  state is the stable root of ``T = inlet + R P(u, T)`` (Newton from below).  The model refuses
  parameters under which a fully loaded processor of the warmest rack has no steady state
  (thermal runaway: ``R L'(T) >= 1`` before the balance is reached).

Default values and their sources (a 24-core processor, the thesis' NSCC ASPIRE-1 node of two
12-core Xeon E5-2690 v3, treated as one package as the thesis does):

- idle 60 W, busy 180 W at ``reference`` 25 C, concave in utilisation with ``r`` = 1.4: the empirical
  model of Fan, Weber and Barroso, "Power provisioning for a warehouse-sized computer", ISCA 2007
  (their calibrated r = 1.4; idle ~ 1/3 of peak); typical server sockets draw 50-60 W idle and
  150-200 W loaded (SPECpower_ssj2008 published results).  Concavity is what makes placement
  matter: two half-loaded processors draw more than one full and one idle.
- leakage 0.4 W/K: leakage is close to linear in temperature over the operating range (under
  1% error), Liu, Dick, Shang and Yang, "Accurate temperature-dependent integrated circuit
  leakage power estimation is easy", DATE 2007; 0.4 W/K puts leakage at ~ 20 W (~ 10-15% of
  power) at 75 C, the share reported there for 65-90 nm parts.
- leakage_growth 0.036 /K (exponential model only; leakage x e every 28 K, x2 every 19 K):
  subthreshold leakage grows exponentially with temperature; 0.036 /K is the exponent of HotSpot's
  temperature-dependent leakage model, ``alpha * area * exp(0.036 (T - T_base))``
  (HotSpot, Skadron, Stan et al., University of Virginia: ``calc_leakage`` in temperature.c of
  github.com/uvahotspot/HotSpot, whose leakage-temperature loop also stops on thermal runaway).
- resistance 0.3 K/W: case-to-ambient thermal resistance of 1U/2U Xeon E5 heat sinks,
  0.2-0.4 C/W (Intel Xeon E5-2600 v3 Thermal/Mechanical Design Guide, Psi_ca targets).
- tau 300 s: heat sink time constants are minutes (HotSpot: Skadron et al., "Temperature-aware
  microarchitecture", ISCA 2003; sink capacitance ~ 1 kJ/K x 0.3 K/W).
- inlets 18-27 C, evenly spread over 16 racks: the ASHRAE TC 9.9 (2011) recommended inlet
  envelope; rack ``r`` of ``racks`` holds processors ``[r n / racks, (r+1) n / racks)``.

The model writes ``PREFIX_thermal.csv`` (time s, processor, rack, utilisation 0-1, temperature C,
power W; one row per processor every ``period`` s of simulated time, from time 0) when the
emulation is given ``thermal=ThermalParams(...)``; without it nothing changes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .errors import EmulatorError

__all__ = ["ThermalParams", "ThermalModel", "THERMAL_SUFFIX", "THERMAL_COLUMNS", "LEAKAGE_MODELS"]

THERMAL_SUFFIX = "_thermal.csv"
THERMAL_COLUMNS = "time,processor,rack,utilisation,temperature,power"
LEAKAGE_MODELS = ("linear", "exponential")
LEAKAGE_SPAN = 50.0      # K above the reference where the exponential leakage meets the linear one
_SETTLED = 0.01          # K: drive below which the exponential model jumps to the end of an interval


@dataclass(frozen=True)
class ThermalParams:
    """Physical parameters (see the module's docstring for the sources); units in the names."""

    cores: int = 24               # hosts (cores) per processor
    idle: float = 60.0            # W at u = 0 and T = reference
    busy: float = 180.0           # W at u = 1 and T = reference
    exponent: float = 1.4         # r of Fan et al.'s 2u - u^r
    leakage: float = 0.4          # W/K (the exponential model: mean slope over LEAKAGE_SPAN)
    reference: float = 25.0       # C
    resistance: float = 0.3       # K/W
    tau: float = 300.0            # s
    racks: int = 16
    inlet_min: float = 18.0       # C, coolest rack
    inlet_max: float = 27.0       # C, warmest rack
    period: float = 600.0         # s between rows of PREFIX_thermal.csv
    leakage_model: str = "linear"     # or "exponential"
    leakage_growth: float = 0.036     # 1/K, the exponential model's b (HotSpot's)

    def __post_init__(self):
        for name in ("cores", "racks"):
            if not (isinstance(getattr(self, name), int) and getattr(self, name) >= 1):
                raise EmulatorError(f"thermal model: {name} must be a positive integer, got {getattr(self, name)!r}")
        for name in ("tau", "period", "resistance"):
            if not getattr(self, name) > 0:
                raise EmulatorError(f"thermal model: {name} must be positive, got {getattr(self, name)!r}")
        if not self.leakage >= 0:
            raise EmulatorError(f"thermal model: leakage must be at least 0 W/K, got {self.leakage!r}")
        if self.leakage_model not in LEAKAGE_MODELS:
            raise EmulatorError(f"thermal model: leakage_model {self.leakage_model!r}: choose "
                                f"{' or '.join(LEAKAGE_MODELS)}")
        if not (isinstance(self.leakage_growth, (int, float)) and 0 < self.leakage_growth <= 1):
            raise EmulatorError(f"thermal model: leakage_growth must be in (0, 1] per K, got {self.leakage_growth!r}")
        if self.leakage_model == "linear":
            if self.resistance * self.leakage >= 1:
                raise EmulatorError(f"thermal model: resistance x leakage = {self.resistance * self.leakage:g} >= 1 "
                                    "makes temperature run away (thermal runaway); lower either")
            return
        if self.leakage > 0 and not np.isfinite(self.steady_state(1.0, self.inlet_max)):
            raise EmulatorError(
                f"thermal model: with exponential leakage ({self.leakage:g} W/K, growth {self.leakage_growth:g}/K) "
                f"and resistance {self.resistance:g} K/W a fully loaded processor at inlet {self.inlet_max:g} C "
                "has no steady state (thermal runaway); lower leakage, leakage_growth or resistance")

    def inlets(self, nb_processors: int) -> np.ndarray:
        """Inlet temperature (C) of each processor: its rack's."""
        return self.rack_inlets(nb_processors)[self.racks_of(nb_processors)]

    def rack_inlets(self, nb_processors: int) -> np.ndarray:
        return np.linspace(self.inlet_min, self.inlet_max, min(self.racks, nb_processors))

    def racks_of(self, nb_processors: int) -> np.ndarray:
        """Rack index of each processor (contiguous blocks)."""
        racks = min(self.racks, nb_processors)
        return np.arange(nb_processors) * racks // nb_processors

    def dynamic(self, utilisation) -> np.ndarray:
        """Watts above idle at ``utilisation`` (0-1), at the reference temperature."""
        u = np.asarray(utilisation, dtype=float)
        return (self.busy - self.idle) * (2 * u - u ** self.exponent)

    def leak(self, temperature) -> np.ndarray:
        """Leakage watts above the reference temperature's, at ``temperature`` (C)."""
        above = np.asarray(temperature, dtype=float) - self.reference
        if self.leakage_model == "linear":
            return self.leakage * above
        b = self.leakage_growth
        return self.leakage * LEAKAGE_SPAN * np.expm1(b * above) / np.expm1(b * LEAKAGE_SPAN)

    def leak_slope(self, temperature) -> np.ndarray:
        """dL/dT (W/K) at ``temperature`` (C)."""
        t = np.asarray(temperature, dtype=float)
        if self.leakage_model == "linear":
            return np.full_like(t, self.leakage)
        b = self.leakage_growth
        return self.leakage * LEAKAGE_SPAN * b * np.exp(b * (t - self.reference)) / np.expm1(b * LEAKAGE_SPAN)

    def _drive(self, utilisation, temperature, inlet) -> np.ndarray:
        """tau dT/dt (K): inlet + R P(u, T) - T."""
        return inlet + self.resistance * self.power(utilisation, temperature) - np.asarray(temperature, dtype=float)

    def steady_state(self, utilisation, inlet) -> np.ndarray:
        """Temperature (C) a processor settles at under constant ``utilisation`` and ``inlet``
        (inf where exponential leakage runs away)."""
        inlet = np.asarray(inlet, dtype=float)
        if self.leakage_model == "linear":
            drive = self.idle + self.dynamic(utilisation) - self.leakage * self.reference
            return (inlet + self.resistance * drive) / (1.0 - self.resistance * self.leakage)
        # The drive inlet + R P - T is convex in T: a root exists iff its minimum, at the knee where
        # R L'(T) = 1, is below zero (else runaway: inf); Newton from below rises to the stable root.
        u = np.broadcast_to(np.asarray(utilisation, dtype=float), np.broadcast(utilisation, inlet).shape)
        b, scale = self.leakage_growth, self.leakage * LEAKAGE_SPAN / np.expm1(self.leakage_growth * LEAKAGE_SPAN)
        knee = self.reference + np.log(1.0 / (self.resistance * scale * b)) / b if self.leakage > 0 else np.inf
        runaway = self._drive(u, knee, inlet) >= 0 if self.leakage > 0 else np.zeros(u.shape, bool)
        u = np.where(runaway, 0.0, u)
        t = inlet + self.resistance * (self.idle + self.dynamic(u) - scale)     # (L(-inf) = -scale)
        for _ in range(100):
            step = self._drive(u, t, inlet) / (1.0 - self.resistance * self.leak_slope(t))
            t = t + step
            if np.abs(step).max() < 1e-9:
                break
        return np.where(runaway, np.inf, t)

    def time_constant(self, temperature=None) -> float:
        """Seconds for a small deviation from steady state at ``temperature`` (C; any, for the
        linear model) to shrink by e: ``tau / (1 - R L'(T))`` (leakage slows cooling)."""
        t = self.reference if temperature is None else temperature
        return float(self.tau / (1.0 - self.resistance * self.leak_slope(t)))

    def power(self, utilisation, temperature) -> np.ndarray:
        """Watts drawn at ``utilisation`` (0-1) and ``temperature`` (C)."""
        return self.idle + self.dynamic(utilisation) + self.leak(temperature)

    def relax(self, temperature, utilisation, inlet, dt) -> np.ndarray:
        """Temperature after ``dt`` s at constant ``utilisation`` from ``temperature``."""
        return self.evolve(temperature, utilisation, inlet, dt)[0]

    def evolve(self, temperature, utilisation, inlet, dt) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(temperature C after ``dt`` s, joules drawn, degree-seconds C s spent) at constant
        ``utilisation`` from ``temperature``.  The joules follow from the temperature's path:
        ``integral P = (tau dT + integral T - inlet dt) / R`` (the ODE)."""
        t0, inlet = np.asarray(temperature, dtype=float), np.asarray(inlet, dtype=float)
        if self.leakage_model == "linear":
            target = self.steady_state(utilisation, inlet)
            tc = self.time_constant()
            fade = np.exp(-np.asarray(dt) / tc)
            t1 = target + (t0 - target) * fade
            degree_seconds = target * dt + (t0 - target) * tc * -np.expm1(-np.asarray(dt) / tc)
        else:
            t1, degree_seconds = self._integrate(t0, utilisation, inlet, float(dt))
        return t1, (self.tau * (t1 - t0) + degree_seconds - inlet * dt) / self.resistance, degree_seconds

    def _integrate(self, t, utilisation, inlet, dt):
        """Exponential Rosenbrock-Euler steps (the ODE linearised at each step's start, solved
        exactly) of at most tau / 20; once every drive is below _SETTLED K, one step to the end."""
        left, degree_seconds = dt, np.zeros(np.broadcast(t, utilisation, inlet).shape)
        while left > 0:
            drive = self._drive(utilisation, t, inlet)
            h = left if np.abs(drive).max() < _SETTLED else min(left, self.tau / 20)
            z = (self.resistance * self.leak_slope(t) - 1.0) * h / self.tau     # Jacobian x h (< 0)
            small = np.abs(z) < 1e-6
            zs = np.where(small, 1.0, z)
            phi1 = np.where(small, 1 + z / 2, np.expm1(zs) / zs)          # (e^z - 1) / z
            phi2 = np.where(small, 0.5 + z / 6, (np.expm1(zs) - zs) / zs ** 2)   # (e^z - 1 - z) / z^2
            degree_seconds = degree_seconds + t * h + drive / self.tau * h * h * phi2
            t = t + drive / self.tau * h * phi1
            left -= h
        return t, degree_seconds


def add_jobs(jobs: np.ndarray, busy: np.ndarray, intervals, delta: int, cores: int) -> list[tuple[int, int]]:
    """``delta`` jobs (+1 start, -1 end) on the hosts of ``intervals`` ((first, last) pairs): the
    jobs per host and the busy cores of each processor touched, updated in place.  Returns each
    touched processor with how many of its hosts the intervals cover."""
    touched = []
    for a, b in intervals:
        jobs[a:b + 1] += delta
        for proc in range(a // cores, b // cores + 1):
            busy[proc] = np.count_nonzero(jobs[proc * cores:(proc + 1) * cores])
            touched.append((proc, min(b, (proc + 1) * cores - 1) - max(a, proc * cores) + 1))
    return touched


class ThermalModel:
    """The processors of ``nb_hosts`` compute hosts, advanced event by event.

    The emulator's Machines calls :meth:`hosts_changed` when jobs start and end; rows every
    ``params.period`` s go to ``out`` (a text file, or None).  Processors start idle at their
    idle steady state."""

    def __init__(self, params: ThermalParams, nb_hosts: int, out=None):
        if nb_hosts % params.cores:
            raise EmulatorError(f"thermal model: the platform's {nb_hosts} compute hosts are not a whole number "
                                f"of {params.cores}-core processors")
        self.params = params
        n = self.nb_processors = nb_hosts // params.cores
        self.inlet = params.inlets(n)
        self.rack = params.racks_of(n)
        self._jobs = np.zeros(nb_hosts, dtype=np.int64)   # jobs running per host
        self.busy = np.zeros(n, dtype=np.int64)           # computing hosts per processor
        self.temperature = params.steady_state(0.0, self.inlet)
        self.energy = np.zeros(n)                          # J per processor since time 0
        self.degree_seconds = np.zeros(n)                  # C s per processor since time 0
        self.now = 0.0
        self._out = out
        self._next_row = 0.0
        if out is not None:
            out.write(THERMAL_COLUMNS + "\n")

    @property
    def utilisation(self) -> np.ndarray:
        return self.busy / self.params.cores

    @property
    def power(self) -> np.ndarray:
        """Watts each processor draws now."""
        return self.params.power(self.utilisation, self.temperature)

    def advance(self, t: float) -> None:
        """Move to time ``t`` (no utilisation change), writing the rows due on the way."""
        while self._out is not None and self._next_row <= t:
            self._step(self._next_row)
            self._write_rows()
            self._next_row += self.params.period
        self._step(t)

    def _step(self, t: float) -> None:
        dt = t - self.now
        if dt <= 0:
            return
        self.temperature, energy, degree_seconds = self.params.evolve(self.temperature, self.utilisation,
                                                                      self.inlet, dt)
        self.energy += energy
        self.degree_seconds += degree_seconds
        self.now = t

    def hosts_changed(self, t: float, intervals, delta: int) -> None:
        """``delta`` jobs start (+1) or end (-1) at ``t`` on the hosts of ``intervals``
        ((first, last) pairs)."""
        self.advance(t)
        add_jobs(self._jobs, self.busy, intervals, delta, self.params.cores)

    def _write_rows(self) -> None:
        t = self.now
        power = self.power
        u = self.utilisation
        self._out.write("".join(
            "%g,%d,%d,%g,%.4f,%.4f\n" % (t, i, self.rack[i], u[i], self.temperature[i], power[i])
            for i in range(self.nb_processors)))

    def close(self, t: Optional[float]) -> None:
        """Write the rows due up to ``t`` (the simulation's end)."""
        if t is not None:
            self.advance(t)
