"""One simulation as an executor task: inputs in, Batsim's output files and a metrics summary out.

The task writes into a private temporary folder and sends the files' bytes back, so the caller
stores them wherever it likes, whether the task ran in this process, in a local worker or on a
Ray node that shares no disk with the caller.  For such a node, ``with_inputs`` puts the input
files' bytes into the task too.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional

# Imported here, not in the task: forked workers then start with the emulator already loaded.
from ..metrics import compare_table
from ..runner import run_simulation

# Columns of Batsim's schedule.csv that hold wall-clock seconds, not simulated ones: the only
# bytes that differ between two runs of the same inputs.
WALL_CLOCK_COLUMNS = ("scheduling_time", "simulation_time")


@dataclass(frozen=True)
class SimulationSpec:
    platform: str
    workloads: tuple[str, ...]
    scheduler: str
    options: dict[str, Any] = field(default_factory=dict)
    energy: bool = False
    events: tuple[str, ...] = ()
    mmax: int = 0
    shipped: tuple[tuple[str, bytes], ...] = ()     # (path, content) of inputs sent with the task


@dataclass
class SimulationFiles:
    files: dict[str, bytes]          # suffix ("jobs.csv", ...) -> content
    metrics: dict[str, Any]          # one compare_table row, without its "run" key
    simulation_s: float              # wall time of the simulation itself


def input_files(spec: SimulationSpec) -> list[str]:
    """Every file the run reads: platform, workloads, events, and the files options name (an agent's model)."""
    inputs = (spec.platform, *spec.workloads, *spec.events)
    named = [v for v in spec.options.values() if isinstance(v, str) and v not in inputs and v and Path(v).is_file()]
    return list(dict.fromkeys((*inputs, *named)))


def with_inputs(spec: SimulationSpec) -> SimulationSpec:
    """``spec`` carrying the bytes of the files it reads, for workers that cannot read the caller's paths."""
    paths = input_files(spec)
    return replace(spec, shipped=tuple((p, Path(p).read_bytes()) for p in paths))


def _unpacked(spec: SimulationSpec, folder: Path) -> SimulationSpec:
    """The shipped inputs written into ``folder``, and ``spec`` naming them there (option values
    that name an input too, such as the oracle's ``workload``)."""
    if not spec.shipped:
        return spec
    folder.mkdir()
    local: dict[str, str] = {}
    for i, (path, content) in enumerate(spec.shipped):
        local[path] = str(folder / f"{i}_{Path(path).name}")
        Path(local[path]).write_bytes(content)
    options = {k: local.get(v, v) if isinstance(v, str) else v for k, v in spec.options.items()}
    return replace(spec, platform=local[spec.platform], workloads=tuple(local[w] for w in spec.workloads),
                   events=tuple(local[e] for e in spec.events), options=options, shipped=())


def simulate_to_files(spec: SimulationSpec) -> SimulationFiles:
    with tempfile.TemporaryDirectory(prefix="batsched-run-") as tmp:
        spec = _unpacked(spec, Path(tmp) / "inputs")
        prefix = Path(tmp) / "outputs" / "out"
        started = time.perf_counter()
        run_simulation(Path(spec.platform), [Path(w) for w in spec.workloads], spec.scheduler, spec.options,
                       export=str(prefix), energy=spec.energy, events=[Path(e) for e in spec.events],
                       mmax=spec.mmax)
        elapsed = time.perf_counter() - started
        row = compare_table({"run": prefix}, spec.platform if spec.energy else None)[0]
        row.pop("run")
        files = {path.name[len("out_"):]: path.read_bytes() for path in sorted(prefix.parent.iterdir())}
    return SimulationFiles(files, row, elapsed)


def write_files(result: SimulationFiles, prefix: Path) -> None:
    """``PREFIX_jobs.csv``, ... as the run wrote them."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    for suffix, content in result.files.items():
        Path(f"{prefix}_{suffix}").write_bytes(content)


def without_wall_clock(name: str, content: bytes) -> bytes:
    """``content`` with the wall-clock columns of a schedule.csv emptied, for byte comparisons."""
    if not name.endswith("schedule.csv"):
        return content
    header, *rows = content.decode().splitlines()
    columns = header.split(",")
    drop = [columns.index(c) for c in WALL_CLOCK_COLUMNS if c in columns]
    out = [header]
    for row in rows:
        cells = row.split(",")
        for i in drop:
            cells[i] = ""
        out.append(",".join(cells))
    return ("\n".join(out) + "\n").encode()


def check_inputs(spec: SimulationSpec, where: str) -> Optional[str]:
    """One line naming the first missing input of ``spec``, or None."""
    for kind, paths in (("platform", (spec.platform,)), ("workload", spec.workloads), ("events", spec.events)):
        for path in paths:
            if not Path(path).is_file():
                return f"{where}: {kind} {path} does not exist"
    return None
