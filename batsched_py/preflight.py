"""What ``compare`` checks before its first run, so that a bad input fails in one line at once
instead of after minutes of runs: every policy against the platform and the workloads (each
handles the simulation's first message), ``mmax`` against the platform, the published outputs
it will read, and matplotlib.  Each check raises :class:`~batsched_py.errors.InputError`."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from .emulator import simulate
from .models.platform import load_platform
from .errors import BatschedError, InputError
from .metrics import compare_table
from .metrics.checks import run_problems
from .metrics.io import MetricsInputError
from .scheduler import Session
from .scheduler.creation import create_scheduler

#: Where the checks' notes go: one line each (the command line prints them on stderr).
Notify = Callable[[str], None]


class _FirstMessageHandled(BatschedError):
    """Stops a check's simulation once the policy has answered the first message (never escapes;
    one of the package's errors, so that the emulator passes it on as it is)."""


def check_mmax(mmax: int, platform: Path) -> None:
    """``mmax`` above the platform's compute hosts limits nothing (Batsim ignores it): a mistake."""
    if mmax:
        hosts = len(load_platform(platform).hosts)
        if mmax > hosts:
            raise InputError(f"--mmax {mmax}: the platform {platform} has only {hosts} compute hosts")


def check_policy(label: str, name: str, options: dict[str, Any], *, platform: Path, workloads: Sequence[Path],
                 energy: bool = False, events: Sequence[Path] = (), mmax: int = 0) -> None:
    """``name`` is created with ``options`` and answers SIMULATION_BEGINS (and the jobs submitted
    at time 0) on these inputs; an InputError naming the run (``label``) says why not."""
    try:
        policy = create_scheduler(name, options)
    except Exception as exc:
        raise InputError(f"--schedulers {label}: {exc}") from exc
    if getattr(policy, "needs_energy", False) and not energy:
        raise InputError(f"--schedulers {label}: {name} switches hosts on and off, which needs -E "
                         "(the energy model), as in Batsim")
    session = Session(policy)

    def first(message):
        session.handle(message)
        raise _FirstMessageHandled

    try:
        simulate(platform, list(workloads), first, energy=energy, events=list(events), mmax=mmax)
    except _FirstMessageHandled:
        return
    except Exception as exc:
        raise InputError(f"--schedulers {label} on -p {platform}, -w {' '.join(map(str, workloads))}: "
                         f"{exc}") from exc


def check_published(directories: Sequence[Path], platform: Optional[Path] = None,
                    notify: Optional[Notify] = None) -> None:
    """Each directory of published outputs holds readable, whole outputs (read with ``platform``'s
    energy model when given); a problem that does not stop the comparison goes to ``notify``."""
    for directory in directories:
        if not (directory / "out_jobs.csv").is_file():
            raise InputError(f"--include-published {directory}: no out_jobs.csv there")
        try:
            compare_table({directory.name: directory}, platform)
        except (MetricsInputError, ValueError, OSError) as exc:
            raise InputError(f"--include-published {directory}: {exc}") from None
        for problem in run_problems(directory):
            if notify:
                notify(f"compare: warning: --include-published {directory}: {problem}")


def plots_possible(notify: Optional[Notify] = None) -> bool:
    """Whether matplotlib is installed; when not, ``notify`` hears why there are no plots."""
    try:
        import matplotlib  # noqa: F401  (an optional extra: looked for only when plots are asked for)
    except ImportError:
        if notify:
            notify("compare: matplotlib is not installed, so no plots (pip install 'batsched_py[plot]'; "
                   "--no-plots silences this)")
        return False
    return True
