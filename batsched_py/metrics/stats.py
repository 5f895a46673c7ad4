"""Aggregation helpers: mean, percentiles and max that ignore NaN (rejected jobs)."""
from __future__ import annotations

import numpy as np

PERCENTILES = (50, 90, 99)


def describe(values: np.ndarray, name: str) -> dict[str, float]:
    """{name_mean, name_p50, name_p90, name_p99, name_max}; zeros when empty.

    Zero (not NaN) for an empty set mirrors Batsim's _schedule.csv, which
    reports 0 means when no job finished.
    """
    data = values[~np.isnan(values)]
    if data.size == 0:
        return {f"{name}_{k}": 0.0 for k in ("mean", *(f"p{p}" for p in PERCENTILES), "max")}
    out = {f"{name}_mean": float(np.mean(data))}
    out.update({f"{name}_p{p}": float(np.percentile(data, p)) for p in PERCENTILES})
    out[f"{name}_max"] = float(np.max(data))
    return out
