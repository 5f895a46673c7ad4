"""One simulation from inputs to Batsim output files, whatever the backend, plus its summary."""
import sys
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .emulator import simulate
from .emulator.options import FLAG_OPTIONS
from .emulator.outputs import mark_incomplete, remove_previous_outputs
from .interrupts import interruption
from .launcher import launch
from .metrics import compare_table
from .metrics.energy import energy_unit, to_kwh
from .scheduler import Scheduler, create

BACKENDS = ("emulator", "batsim", "docker")


def run_simulation(platform: Path, workloads: Sequence[Path], scheduler: "str | Scheduler",
                   options: Optional[Mapping[str, Any]] = None, *, export: str = "out/out", energy: bool = False,
                   events: Sequence[Path] = (), mmax: int = 0, backend: str = "emulator",
                   timeout: float = 600.0, progress: bool = False) -> Path:
    """Run ``scheduler`` (a policy, or a registered name and its ``options``) on the inputs and
    return the output prefix (``PREFIX_jobs.csv`` exists after)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    policy = scheduler if isinstance(scheduler, Scheduler) else create(scheduler, options)
    try:
        Path(export).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OSError(f"output prefix {export}: cannot create {Path(export).parent} ({exc.strerror or exc})") from None
    if backend == "emulator":
        simulate(platform, list(workloads), policy, output_prefix=export, energy=energy,
                 events=list(events), mmax=mmax, progress=progress,
                 **{FLAG_OPTIONS[f]: True for f in policy.batsim_flags})
        return Path(export)
    remove_previous_outputs(export)   # real Batsim leaves an earlier run's files it does not write
    try:
        return Path(launch(backend, policy, Path(platform), list(map(Path, workloads)), export=export,
                           energy=energy, events=list(events), mmax=mmax, timeout=timeout,
                           extra_args=list(policy.batsim_flags)))
    except KeyboardInterrupt as exc:     # Batsim was stopped: whatever it wrote is partial
        mark_incomplete(export, f"simulation stopped: {interruption(exc)}")
        raise
    except Exception as exc:
        mark_incomplete(export, f"simulation stopped: {exc}")
        raise


# (key, label, format); {t} and {e} in labels are the time and energy units.
SUMMARY_FIELDS = (
    ("nb_jobs", "jobs", "{:.0f}"),
    ("nb_jobs_success", "succeeded", "{:.0f}"),
    ("nb_jobs_killed", "killed (walltime reached, or failed)", "{:.0f}"),
    ("nb_jobs_rejected", "rejected", "{:.0f}"),
    ("makespan", "makespan ({t})", "{:.1f}"),
    ("waiting_time_mean", "mean waiting time ({t})", "{:.1f}"),
    ("slowdown_mean", "mean slowdown", "{:.3f}"),
    ("bounded_slowdown_mean", "mean bounded slowdown (10 {t})", "{:.3f}"),
    ("utilisation", "utilisation", "{:.3f}"),
    ("energy_total", "energy ({e})", "{:.6g}"),
    ("energy_wasted", "wasted energy, idle + switching ({e})", "{:.6g}"),
)


def print_summary(prefix: Path, name: str, platform: Optional[Path] = None, energy: bool = False,
                  file=None, time_unit: str = "s") -> dict[str, Any]:
    file = file or sys.stdout  # looked up at call time, so redirections apply
    units = {"t": time_unit, "e": energy_unit(time_unit)}
    row = compare_table({name: Path(prefix)}, platform if energy else None)[0]
    print(f"{name}: outputs in {prefix}_*.csv", file=file)
    for key, label, fmt in SUMMARY_FIELDS:
        if key not in row or row[key] in (None, ""):
            continue
        if key.startswith("energy_") and not energy:
            continue
        text = fmt.format(float(row[key]))
        kwh = to_kwh(float(row[key]), time_unit) if key.startswith("energy_") else None
        if kwh is not None and (units["e"] != "J" or kwh >= 1):   # (readable beside big joules)
            text += f" (= {kwh:.4g} kWh)"
        print(f"  {label.format(**units):<40} {text}", file=file)
    return row
