"""Plots of Batsim outputs (matplotlib is optional and imported lazily)."""
from __future__ import annotations

from pathlib import Path


def comparison_plots(results: dict[str, Path], outdir: str | Path,
                     platform: str | Path | None = None, time_unit: str = "s") -> list[Path]:
    """Bar charts and CDFs for several runs (see plots.compare)."""
    from .compare import comparison_plots as _impl
    return _impl(results, outdir, platform, time_unit)


__all__ = ["comparison_plots"]
