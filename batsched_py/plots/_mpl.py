"""Lazy matplotlib access: it is an optional extra (``pip install batsched-py[plot]``)."""
from __future__ import annotations

from pathlib import Path


def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend, or a clear error."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'batsched-py[plot]' "
                          "(or pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, out: str | Path, formats: tuple[str, ...] = ("png", "pdf")) -> list[Path]:
    """Save ``fig`` as OUT.png and OUT.pdf (suffix of ``out`` ignored); close it."""
    plt = pyplot()
    base = Path(out)
    base = base.with_suffix("") if base.suffix in (".png", ".pdf") else base
    base.parent.mkdir(parents=True, exist_ok=True)
    paths = [base.with_name(f"{base.name}.{fmt}") for fmt in formats]
    fig.tight_layout()
    for path in paths:
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return paths
