"""Batsim 4.2.1's output files (``-e PREFIX``).

- ``PREFIX_jobs.csv``: one row per finished or rejected job, in the order
  they finished/were rejected; numbers ``%.6f``; rejected jobs keep only
  their static fields; ``requested_time`` -1 without walltime; stretch =
  turnaround / execution time; ``consumed_energy`` -1 without -E; metadata
  always double-quoted (inner quotes doubled).
- ``PREFIX_schedule.csv``: one row of aggregated figures (see :meth:`close`).
- ``PREFIX_machine_states.csv``: counts per state after each job start/end
  or sleep/wake step (several rows may share a time); time printed like
  C++ ``ostream`` (``%g``); no unavailable column in 4.2.1.  Not written with
  Batsim's --disable-machine-state-tracing.
- with -E, ``PREFIX_consumed_energy.csv`` (time, total J, event type
  ``s`` job start / ``e`` job end / ``p`` pstate change, ``wattmin`` = the
  sum of the hosts' wattmin (epsilon) at their current pstate, ``epower`` =
  mean power since the previous row -- the first since (0 s, 0 J) -- or NA
  when no time elapsed) and ``PREFIX_pstate_changes.csv`` (time
  ``%g``, host interval set, new pstate; -1 = switching on, -2 =
  switching off; initial rows at time 0 grouped by pstate).

Incomplete runs: ``PREFIX_INCOMPLETE`` exists from the start of a run until it
closes complete, so outputs cut short by anything (SIGKILL included) are marked.
``close(..., complete=False, error=msg)`` still writes every file with what is
known and leaves the marker holding the error, so a failed run leaves evidence
instead of nothing.  A run removes the output files an earlier run left at its
prefix (a stale consumed_energy.csv would otherwise pass for this run's).

Memory: nothing is kept per job.  jobs.csv rows are written as jobs finish and
schedule.csv's figures are running sums/maxima (added in the same order as a
sum over the finished jobs would); machine_states rows are buffered as text
and written in blocks.
"""

from __future__ import annotations

import math
import os
from typing import Optional

import numpy as np
from procset import ProcSet

from ..protocol.intervals import format_intervals
from .machines import MachineStats

__all__ = ["OutputWriters", "BATSIM_VERSION", "JOBS_COLUMNS",
           "SCHEDULE_COLUMNS", "OUTPUT_SUFFIXES", "TIME_UNIT_SUFFIX", "mark_incomplete", "remove_previous_outputs"]

BATSIM_VERSION = "4.2.1"
JOBS_COLUMNS = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,"
                "requested_time,success,final_state,starting_time,execution_time,finish_time,"
                "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,"
                "metadata")
SCHEDULE_COLUMNS = ("batsim_version,consumed_joules,makespan,max_slowdown,max_turnaround_time,"
                    "max_waiting_time,mean_slowdown,mean_turnaround_time,mean_waiting_time,"
                    "nb_computing_machines,nb_grouped_switches,nb_jobs,nb_jobs_finished,"
                    "nb_jobs_killed,nb_jobs_rejected,nb_jobs_success,nb_machine_switches,"
                    "scheduling_time,simulation_time,success_rate,time_computing,time_idle,"
                    "time_sleeping,time_switching_off,time_switching_on,time_unavailable")
SUCCESS = "COMPLETED_SUCCESSFULLY"
REJECTED = "REJECTED"
NULL_TIME_RUNTIME = 1e-5  # what Batsim writes as the runtime of a job that ran in no time
# the time unit that `run` and `compare` record beside a run's outputs, for metrics and plots
TIME_UNIT_SUFFIX = "_time_unit.json"
# every file a run writes at its prefix (Batsim's, the emulator's marker, and the time unit)
OUTPUT_SUFFIXES = ("_jobs.csv", "_schedule.csv", "_machine_states.csv", "_consumed_energy.csv",
                   "_pstate_changes.csv", "_thermal.csv", "_INCOMPLETE", TIME_UNIT_SUFFIX)


def mark_incomplete(prefix: str, reason: str) -> None:
    """Write ``PREFIX_INCOMPLETE`` saying why the outputs at ``prefix`` are not a whole run."""
    with open(prefix + "_INCOMPLETE", "w") as f:
        f.write(reason + "\n")


def remove_previous_outputs(prefix: str) -> None:
    """Remove the files of an earlier run at ``prefix``: a run need not write all of them."""
    for suffix in OUTPUT_SUFFIXES:
        try:
            os.remove(prefix + suffix)
        except FileNotFoundError:
            pass


# A jobs.csv row; with whole seconds (the usual: traces count in seconds), "%d.000000" prints the
# times as "%.6f" does in half the time.  (Only -0.0 prints otherwise, "0.000000": see _no_minus_zero.)
_JOB_ROW = "%s,%s,%s,%.6f,%s,%.6f,%d,%s,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%s,%s,%s\n"
_JOB_ROW_WHOLE = ("%s,%s,%s,%d.000000,%s,%d.000000,%d,%s,%d.000000,%d.000000,%d.000000,%d.000000,"
                  "%d.000000,%.6f,%s,%s,%s\n")


def _no_minus_zero(*values: float) -> bool:
    return all(value or math.copysign(1.0, value) > 0 for value in values)


def _csv_quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def fixed6(value) -> str:
    """``value`` with 6 decimals, as Batsim prints its (long double) energies: a long double is
    rounded from its own digits, not through a double, whose rounding can move the last one."""
    if isinstance(value, np.longdouble):
        return np.format_float_positional(value, precision=6, unique=False, fractional=True, trim="k")
    return "%.6f" % value


class OutputWriters:
    """Writers of every Batsim output file for one run, prefix ``prefix``.

    Files are opened at construction (the directory is created). Rows come
    from :class:`~.machines.Machines` (states, pstates, energy) and from the
    engine (:meth:`job_row`); :meth:`close` writes schedule.csv and closes
    everything.
    """

    def __init__(self, prefix: str, *, energy: bool = False, machine_states: bool = True):
        self.prefix = str(prefix)
        self.energy = energy
        d = os.path.dirname(self.prefix)
        if d:
            os.makedirs(d, exist_ok=True)
        remove_previous_outputs(self.prefix)
        # (removed when the run closes complete)
        mark_incomplete(self.prefix, "simulation running, or stopped before it could close its outputs (killed)")
        # (None: Batsim's --disable-machine-state-tracing, rows are dropped)
        self._states = self._open("_machine_states.csv",
                                  "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,"
                                  "nb_computing") if machine_states else None
        self._energy = self._pstates = None
        if energy:
            self._energy = self._open("_consumed_energy.csv",
                                      "time,energy,event_type,wattmin,epower")
            self._pstates = self._open("_pstate_changes.csv", "time,machine_id,new_pstate")
        # Batsim's energy tracer starts from (time 0, 0 J): a first row after time 0 has an epower
        self._last_energy: tuple[float, np.longdouble] = (0.0, np.longdouble(0.0))
        self._jobs_file = self._open("_jobs.csv", JOBS_COLUMNS)
        # schedule.csv figures over the jobs written so far
        self._nb_rows = self._nb_rejected = self._nb_success = 0
        self._makespan: Optional[float] = None    # until the first job finishes
        self._max_slowdown = self._max_turnaround = self._max_waiting = 0.0
        self._sum_slowdown = self._sum_turnaround = self._sum_waiting = 0.0
        # machine_states rows, appended by Machines (already formatted), written in blocks
        self.state_rows: list[str] = []
        self.closed = False
        self._hosts_texts: dict[tuple, str] = {}

    def _hosts(self, hosts) -> str:
        """Batsim's interval set text of ``hosts`` (e.g. "0-3 7"), once per distinct allocation
        (allocations repeat a lot)."""
        if hosts.__class__ is not ProcSet:
            return str(hosts)
        key = tuple(hosts._itvs)
        text = self._hosts_texts.get(key)
        if text is None:
            text = self._hosts_texts[key] = format_intervals(hosts)
        return text

    def _open(self, suffix: str, header: str):
        f = open(self.prefix + suffix, "w", buffering=1 << 16)
        f.write(header + "\n")
        return f

    # ------------------------------------------------------------ rows from Machines

    def flush_states(self) -> None:
        if self._states is not None:
            self._states.writelines(self.state_rows)
        self.state_rows.clear()

    def pstate_change(self, t: float, hosts: ProcSet, pstate: int) -> None:
        if self._pstates is not None:
            self._pstates.write(f"{t:g},{hosts},{pstate}\n")

    def energy_row(self, t: float, energy, kind: str, wattmin: float) -> None:
        """One consumed_energy.csv row; ``energy``: the total in long double (a float works too),
        printed, and its increase over the time's (epower) computed, in long double as Batsim."""
        if self._energy is None:
            return
        energy = np.longdouble(energy)
        last = self._last_energy
        if not t > last[0]:
            epower = "NA"
        else:
            epower = "%f" % float((energy - last[1]) / (np.longdouble(t) - np.longdouble(last[0])))
        self._last_energy = (t, energy)
        self._energy.write("%f,%s,%s,%f,%s\n" % (t, fixed6(energy), kind, wattmin, epower))

    # ------------------------------------------------------------ rows from the engine

    def job_row(self, job_id: str, workload_name: str, profile: str, submission_time: float,
                requested_number_of_resources: int, requested_time: float, final_state: str,
                starting_time: float, finish_time: float, allocated_resources, consumed_energy: float,
                metadata: str) -> None:
        """One jobs.csv row, written now.

        job_id: the id inside its workload (``"3"`` for ``w0!3``); times in simulated seconds;
        requested_time -1 when the job has no walltime; final_state: COMPLETED_SUCCESSFULLY,
        COMPLETED_FAILED, COMPLETED_WALLTIME_REACHED, COMPLETED_KILLED or REJECTED (then the
        start/finish/allocation fields are ignored); consumed_energy: J, -1 without -E;
        metadata: the job's metadata string ("" if none).
        """
        quoted = '""' if not metadata else _csv_quote(metadata)
        self._nb_rows += 1
        if final_state == REJECTED:
            self._nb_rejected += 1
            self._jobs_file.write("%s,%s,%s,%.6f,%s,%.6f,0,REJECTED,,,,,,,,,%s\n" % (
                job_id, workload_name, profile, submission_time, requested_number_of_resources,
                requested_time, quoted))
            return
        execution = finish_time - starting_time
        if execution == 0.0:
            # Batsim: "Job computed in null time. Putting epsilon instead." It writes that
            # runtime, and start + runtime as the finish time (a job killed as it starts, a
            # zero delay), in this file and in schedule.csv's figures.
            execution = NULL_TIME_RUNTIME
            finish_time = starting_time + execution
        waiting = starting_time - submission_time
        turnaround = finish_time - submission_time
        stretch = turnaround / execution
        success = final_state == SUCCESS
        # (execution, waiting and turnaround, differences of whole seconds, are whole; stretch is not)
        whole = (submission_time.is_integer() and starting_time.is_integer() and finish_time.is_integer()
                 and requested_time.is_integer()
                 and (submission_time and starting_time and finish_time and requested_time
                      or _no_minus_zero(submission_time, starting_time, finish_time, requested_time)))
        self._jobs_file.write((_JOB_ROW_WHOLE if whole else _JOB_ROW) % (
            job_id, workload_name, profile, submission_time, requested_number_of_resources, requested_time,
            success, final_state, starting_time, execution, finish_time, waiting, turnaround, stretch,
            self._hosts(allocated_resources), fixed6(consumed_energy), quoted))
        # Batsim's figures (see _schedule_line), accumulated in finishing order.
        self._nb_success += success
        slowdown = stretch
        self._sum_slowdown += slowdown
        self._sum_turnaround += turnaround
        self._sum_waiting += waiting
        if self._makespan is None:
            self._makespan, self._max_slowdown = finish_time, slowdown
            self._max_turnaround, self._max_waiting = turnaround, waiting
        else:
            if finish_time > self._makespan:
                self._makespan = finish_time
            if slowdown > self._max_slowdown:
                self._max_slowdown = slowdown
            if turnaround > self._max_turnaround:
                self._max_turnaround = turnaround
            if waiting > self._max_waiting:
                self._max_waiting = waiting

    # ------------------------------------------------------------ closing

    def close(self, end_time: float, stats: MachineStats, *, nb_jobs: int | None = None,
              scheduling_time: float = 0.0, simulation_time: float = 0.0,
              complete: bool = True, error: str | None = None) -> None:
        """Write jobs.csv + schedule.csv and close every file (idempotent).

        end_time: simulated time the run stopped (unused by Batsim's figures,
        kept for incomplete runs). stats: ``Machines.stats(end_time)``.
        nb_jobs: jobs submitted (default: rows recorded; pass the number of
        submitted jobs so unfinished ones count). scheduling_time: wall-clock
        s spent in the scheduler; simulation_time: wall-clock s of the run.
        complete=False: also write ``PREFIX_INCOMPLETE`` containing ``error``.
        """
        if self.closed:
            return
        self.closed = True
        self.flush_states()
        for f in (self._states, self._energy, self._pstates, self._jobs_file):
            if f is not None:
                f.close()
        with open(self.prefix + "_schedule.csv", "w") as f:
            f.write(SCHEDULE_COLUMNS + "\n")
            f.write(self._schedule_line(stats, nb_jobs, scheduling_time, simulation_time) + "\n")
        if complete:
            os.remove(self.prefix + "_INCOMPLETE")
        else:
            mark_incomplete(self.prefix, f"simulation stopped at t={end_time:f}: {error or 'unknown error'}")

    def _schedule_line(self, s: MachineStats, nb_jobs: int | None, scheduling_time: float,
                       simulation_time: float) -> str:
        n = self._nb_rows - self._nb_rejected
        nb_jobs = self._nb_rows if nb_jobs is None else nb_jobs
        # Batsim divides the sums by every job, rejected ones included.
        vals = [
            s.consumed_joules,
            self._makespan or 0.0, self._max_slowdown, self._max_turnaround, self._max_waiting,
            self._sum_slowdown / nb_jobs if nb_jobs else 0.0, self._sum_turnaround / nb_jobs if nb_jobs else 0.0,
            self._sum_waiting / nb_jobs if nb_jobs else 0.0,
        ]
        ints = [s.nb_computing_machines, s.nb_grouped_switches, nb_jobs, n, n - self._nb_success,
                self._nb_rejected, self._nb_success, s.nb_machine_switches]
        tail = [scheduling_time, simulation_time, self._nb_success / nb_jobs if nb_jobs else 0.0,
                s.time_computing, s.time_idle, s.time_sleeping, s.time_switching_off,
                s.time_switching_on, s.time_unavailable]
        return ",".join([BATSIM_VERSION] + ["%f" % v for v in vals] + [str(i) for i in ints]
                        + ["%f" % v for v in tail])
