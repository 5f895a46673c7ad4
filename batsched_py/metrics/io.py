"""Read Batsim output CSV files (``PREFIX_jobs.csv`` and friends).

A *source* is either an output prefix (``f"{prefix}_jobs.csv"`` exists, as
written by ``batsim -e PREFIX`` or the emulator) or a directory holding
``out_jobs.csv`` (the golden recordings layout). Gzipped files (``.csv.gz``)
are accepted too. Only the csv module and numpy are used.
"""
from __future__ import annotations

import csv
import gzip
from pathlib import Path
from typing import IO, Any

import numpy as np
from procset import ProcSet

from ..textfiles import GZIP_FAULTS, damaged_gzip, not_utf8
from ..errors import BatschedError


class MetricsInputError(BatschedError, ValueError):
    """Unreadable Batsim output; the message names the file (and line/column)."""


def output_path(source: str | Path, kind: str) -> Path | None:
    """Path of the ``kind`` output (jobs, schedule, ...) of a source, None if absent."""
    source = Path(source)
    stems = [source / f"out_{kind}.csv"] if source.is_dir() else [Path(f"{source}_{kind}.csv")]
    for stem in stems:
        for candidate in (stem, Path(f"{stem}.gz")):
            if candidate.exists():
                return candidate
    return None


def require_path(source: str | Path, kind: str) -> Path:
    path = output_path(source, kind)
    if path is None:
        where = Path(source) / f"out_{kind}.csv" if Path(source).is_dir() else f"{source}_{kind}.csv"
        raise MetricsInputError(f"{where}: file not found")
    return path


def read_columns(path: str | Path, required: list[str]) -> dict[str, list[str]]:
    """Read a CSV into {column: values}; checks header and row lengths."""
    path = Path(path)
    opener: Any = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", newline="") as stream:
            return _read_columns(stream, path, required)
    except UnicodeDecodeError:
        # (the text reader decodes by chunks, so its position is within a chunk: find the byte)
        with opener(path, "rb") as raw:
            try:
                raw.read().decode("utf-8")
            except UnicodeDecodeError as exc:
                raise MetricsInputError(f"{path}: {not_utf8(exc)}") from None
        raise
    except GZIP_FAULTS as exc:
        raise MetricsInputError(f"{path}: {damaged_gzip(exc)}") from None


def _read_columns(stream: IO[str], path: Path, required: list[str]) -> dict[str, list[str]]:
    reader = csv.reader(stream)
    header = next(reader, None)
    if header is None:
        raise MetricsInputError(f"{path}: empty file, expected a header")
    missing = [c for c in required if c not in header]
    if missing:
        raise MetricsInputError(f"{path}: missing column(s) {', '.join(missing)}")
    columns: dict[str, list[str]] = {name: [] for name in header}
    for row in reader:
        if not row:
            continue
        if len(row) != len(header):
            raise MetricsInputError(f"{path}:{reader.line_num}: {len(row)} fields, "
                                    f"header has {len(header)}")
        for name, value in zip(header, row):
            columns[name].append(value)
    return columns


def floats(columns: dict[str, list[str]], name: str, path: str | Path, required: bool = False) -> np.ndarray:
    """Numeric column; empty cells and NA (Batsim's "no value") become NaN, unless ``required``;
    other text, NaN and infinities (which no Batsim output holds) are errors."""
    out = np.empty(len(columns[name]))
    for i, value in enumerate(columns[name]):
        if value in ("", "NA") and not required:
            out[i] = np.nan
            continue
        try:
            out[i] = float(value)
        except ValueError:
            what = "empty" if value in ("", "NA") else f"not a number: {value!r}"
            raise MetricsInputError(f"{path}:{i + 2}: column {name}: {what}") from None
        if not np.isfinite(out[i]):
            raise MetricsInputError(f"{path}:{i + 2}: column {name}: {value!r} is not a finite number")
    return out


def host_set(value: str, path: str | Path, index: int, name: str) -> ProcSet:
    """The host set in row ``index`` of column ``name`` (``0-3 7``; empty: no host)."""
    try:
        return ProcSet.from_str(value) if value else ProcSet()
    except ValueError:
        raise MetricsInputError(f"{path}:{index + 2}: column {name}: not a host set: {value!r}") from None
