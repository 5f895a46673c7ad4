"""Reader for the Standard Workload Format (SWF) of the Parallel Workloads Archive.

SWF (Feitelson, Tsafrir, Krakov, JPDC 2014; cs.huji.ac.il/labs/parallel/workload)
is a text format: header lines start with ``;`` and hold ``Key: value`` pairs,
every other non-blank line holds 18 whitespace-separated numeric fields, with
-1 meaning "unknown". Files may be gzip-compressed, as the archive ships them.
"""
from __future__ import annotations

import gzip
import math
import re
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ..textfiles import GZIP_FAULTS, damaged_gzip
from .progress import progress
from ..errors import BatschedError

N_FIELDS = 18

# Field indices (0-based) of the 18 SWF columns.
JOB_ID, SUBMIT, WAIT, RUNTIME, ALLOC_PROCS, AVG_CPU, USED_MEM, REQ_PROCS, \
    REQ_TIME, REQ_MEM, STATUS, USER, GROUP, APP, QUEUE, PARTITION, \
    PRECEDING_JOB, THINK_TIME = range(N_FIELDS)

#: The fields read as integers (the format's other integer fields are not read).
_INTEGER_FIELDS = {JOB_ID: "job number", ALLOC_PROCS: "allocated processors", REQ_PROCS: "requested processors",
                   STATUS: "status", USER: "user"}

_HEADER_RE = re.compile(r"^;\s*([A-Za-z][A-Za-z0-9_ ]*?)\s*:\s*(.*?)\s*$")


class SwfError(BatschedError, ValueError):
    """A malformed SWF input; the message names the file and line."""


@dataclass(frozen=True)
class SwfJob:
    """One SWF record; times in seconds, -1 for unknown values."""

    line: int
    job_id: int
    submit: float
    wait: float
    runtime: float
    alloc_procs: int
    req_procs: int
    req_time: float
    status: int
    user: int
    group: int = -1
    queue: int = -1

    @property
    def procs(self) -> int:
        """Processors the job needs: requested if known, else allocated.

        Requested counts are what a scheduler sees at submission time, so they
        are preferred; many logs only record the allocation (-1 requested).
        """
        return self.req_procs if self.req_procs > 0 else self.alloc_procs


@dataclass
class SwfTrace:
    """Header key/values, the parsed jobs and the malformed lines skipped."""

    path: str
    header: dict[str, str] = field(default_factory=dict)
    jobs: list[SwfJob] = field(default_factory=list)
    malformed: list[tuple[int, str]] = field(default_factory=list)

    def header_int(self, key: str) -> int | None:
        """Integer header value (e.g. MaxProcs), None if absent or unparsable."""
        value = self.header.get(key, "").split()
        try:
            return int(float(value[0])) if value else None
        except ValueError:
            return None

    @property
    def machine_size(self) -> int | None:
        """Processor count of the logged machine (MaxProcs, else MaxNodes)."""
        procs = self.header_int("MaxProcs")
        return procs if procs and procs > 0 else self.header_int("MaxNodes")


def open_text(path: str | Path) -> IO[str]:
    """Open a plain or gzip-compressed text file (detected by magic bytes)."""
    if _is_gzip(path):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def _is_gzip(path: str | Path) -> bool:
    with open(path, "rb") as raw:
        return raw.read(2) == b"\x1f\x8b"


def _raise_if_damaged(path: str | Path, lineno: int) -> None:
    """Damaged deflate data garbles the lines after it before gzip's CRC, at the end, is checked:
    a malformed line of such a file names the damage, not only the line."""
    if not _is_gzip(path):
        return
    try:
        with gzip.open(path, "rb") as stream:
            while stream.read(1 << 20):
                pass
    except GZIP_FAULTS as exc:
        raise SwfError(f"{path}: {damaged_gzip(exc)}; line {lineno} is malformed, probably garbled by it") from None


def _parse_fields(tokens: list[str], path: str, lineno: int) -> SwfJob:
    if len(tokens) != N_FIELDS:
        raise SwfError(f"{path}:{lineno}: expected {N_FIELDS} fields, got {len(tokens)}")
    try:
        values = [float(t) for t in tokens]
    except ValueError as exc:
        raise SwfError(f"{path}:{lineno}: non-numeric field ({exc})") from None
    if not all(math.isfinite(v) for v in values):
        raise SwfError(f"{path}:{lineno}: non-finite field")
    for index in _INTEGER_FIELDS:
        if not values[index].is_integer():
            raise SwfError(f"{path}:{lineno}: field {index + 1} ({_INTEGER_FIELDS[index]}) must be an integer, "
                           f"got {tokens[index]}")
    return SwfJob(line=lineno, job_id=int(values[JOB_ID]), submit=values[SUBMIT],
                  wait=values[WAIT], runtime=values[RUNTIME],
                  alloc_procs=int(values[ALLOC_PROCS]), req_procs=int(values[REQ_PROCS]),
                  req_time=values[REQ_TIME], status=int(values[STATUS]),
                  user=int(values[USER]), group=int(values[GROUP]), queue=int(values[QUEUE]))


def read_swf(path: str | Path, *, skip_malformed: bool = False,
             max_lines: int | None = None, show_progress: bool = False) -> SwfTrace:
    """Parse an SWF file.

    Malformed job lines raise :class:`SwfError` naming the file and line, unless
    ``skip_malformed`` is set, in which case they are recorded in
    ``trace.malformed`` and skipped. ``max_lines`` stops after that many input
    lines (header included), for quick tests on huge traces.
    """
    trace = SwfTrace(path=str(path))
    try:
        _read_lines(trace, path, skip_malformed, max_lines, show_progress)
    except GZIP_FAULTS as exc:
        raise SwfError(f"{path}: {damaged_gzip(exc)}") from None
    return trace


def _read_lines(trace: SwfTrace, path: str | Path, skip_malformed: bool, max_lines: int | None,
                show_progress: bool) -> None:
    # (closing: a malformed line ends the progress bar, clearing its line, before the error is shown)
    with open_text(path) as stream, closing(progress(stream, f"reading {Path(path).name}",
                                                     enabled=show_progress)) as lines:
        for lineno, line in enumerate(lines, 1):
            if max_lines is not None and lineno > max_lines:
                break
            text = line.strip()
            if not text:
                continue
            if text.startswith(";"):
                match = _HEADER_RE.match(text)
                if match and match.group(1) not in trace.header:
                    trace.header[match.group(1)] = match.group(2)
                continue
            try:
                trace.jobs.append(_parse_fields(text.split(), str(path), lineno))
            except SwfError as exc:
                if not skip_malformed:
                    _raise_if_damaged(path, lineno)
                    raise
                trace.malformed.append((lineno, str(exc)))


