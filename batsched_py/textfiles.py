"""The one wording of the faults of text input (files and messages): bytes that are not UTF-8,
damaged gzip data under a ``.gz`` file, JSON that Python's reader refuses, and a file that cannot
be opened; and text files written whole or not at all."""
import errno
import gzip
import os
import sys
import zlib
from pathlib import Path

from .errors import BatschedError

#: What reading a damaged gzip file raises: cut short (EOFError), bad header, bad deflate data.
GZIP_FAULTS = (EOFError, gzip.BadGzipFile, zlib.error)


def not_utf8(exc: UnicodeDecodeError) -> str:
    """What is wrong with bytes that are not UTF-8, for an error message."""
    return f"not UTF-8 text ({exc.reason} at byte {exc.start})"


def damaged_gzip(exc: BaseException) -> str:
    """What is wrong with a damaged gzip file (one of GZIP_FAULTS), for an error message."""
    return f"damaged gzip data ({exc})"


def json_fault(exc: ValueError | RecursionError) -> str:
    """What ``json.loads`` refused: bad JSON or an integer of over 4300 digits (ValueError), or
    nesting deeper than Python's recursion allows."""
    if isinstance(exc, RecursionError):
        return f"JSON nested too deep for Python's parser (about {sys.getrecursionlimit()} levels at most)"
    return f"invalid JSON ({exc})"


def os_error(exc: OSError) -> str:
    """``PATH: reason`` for a file that cannot be opened or written, not Python's ``[Errno 2] ...``."""
    if exc.filename is None or exc.strerror is None:
        return str(exc)
    return f"{exc.filename}: {exc.strerror[0].lower() + exc.strerror[1:]}"


def write_whole(path: Path, text: str) -> None:
    """Write ``path`` (and its folder) whole or not at all: an interrupted writer leaves no
    truncated file, since the text goes to PATH.part, renamed when complete."""
    if path.is_dir():          # (else the error would name PATH.part, a file the user never gave)
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    try:
        part.write_text(text)
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)


class OverwriteError(BatschedError, ValueError):
    """An output path that names one of the command's inputs."""


def refuse_overwriting(output: "str | Path", source: "str | Path", what: str = "output",
                       kind: str = "input") -> None:
    """An output that is an input (``kind``: 'input trace', 'output', ...) would replace it."""
    out, src = Path(output), Path(source)
    if out.resolve() == src.resolve() or (out.exists() and src.exists() and out.samefile(src)):
        raise OverwriteError(f"{what} {out} is the {kind} {src}: writing it would overwrite the "
                             f"{kind.split()[-1]}; name another file")
