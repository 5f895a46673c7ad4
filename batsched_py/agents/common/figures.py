"""The papers' figures from ``days.csv`` (matplotlib; skipped with a note when it is missing):
cumulative daily energy waste over the days in order, train then test (DeepShutdown Fig. 6);
per-group bars of energy waste and waiting time; mean slowdown against the day's mean
inter-arrival time."""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Optional, Sequence


def draw(rows: Sequence[dict[str, Any]], days: Sequence[Path], out: Path, time_unit: str = "min") -> list[Path]:
    try:
        import matplotlib    # (optional: the plot extra)
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt    # (optional: the plot extra)
    except ImportError:
        print("evaluate: matplotlib is not installed: no figures (pip install 'batsched_py[plot]')")
        return []
    styles = ["-", "--", "-.", ":"]
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    order = {p.name: i for i, p in enumerate(days)}
    written = []

    # 1. cumulative energy waste over the days (mean over repetitions), in kW·time unit
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for k, policy in enumerate(policies):
        per_day: dict[str, list[float]] = defaultdict(list)
        for r in rows:
            if r["policy"] == policy:
                per_day[r["day"]].append(float(r["energy_waste"]))
        ordered = sorted(per_day, key=lambda d: order.get(d, 0))
        total, ys = 0.0, []
        for d in ordered:
            total += sum(per_day[d]) / len(per_day[d]) / 1000
            ys.append(total)
        ax.plot(range(1, len(ys) + 1), ys, styles[k % 4], label=policy)
    splits = [r["split"] for r in rows if r["policy"] == policies[0] and r["repeat"] in (0, "0")]
    if "test" in splits and "train" in splits:
        ax.axvline(splits.index("test") + 0.5, color="grey", lw=0.8)
        ax.text(splits.index("test") + 1, ax.get_ylim()[1] * 0.95, "test days", color="grey")
    ax.set_xlabel("day")
    ax.set_ylabel(f"cumulative energy waste (kW·{time_unit})")
    ax.legend()
    written.append(_save(fig, out / "cumulative_energy_waste.png"))

    # 2. per-group bars
    groups = sorted({r["group"] for r in rows})
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    width = 0.8 / max(1, len(policies))
    for k, policy in enumerate(policies):
        for ax, key, scale in ((axes[0], "energy_waste", 1000), (axes[1], "waiting_time", 1)):
            means = []
            for g in groups:
                xs = [float(r[key]) for r in rows if r["policy"] == policy and r["group"] == g]
                means.append(sum(xs) / len(xs) / scale if xs else 0)
            ax.bar([i + k * width for i in range(len(groups))], means, width, label=policy,
                   hatch=["", "//", "..", "xx"][k % 4])
    axes[0].set_ylabel(f"mean daily energy waste (kW·{time_unit})")
    axes[1].set_ylabel(f"mean waiting time ({time_unit})")
    for ax in axes:
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))], groups, rotation=20)
    axes[0].legend()
    written.append(_save(fig, out / "groups.png"))

    # 3. slowdown against inter-arrival time
    gaps = {p.name: _mean_interarrival(p) for p in days}
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for k, policy in enumerate(policies):
        pts = [(gap, float(r["slowdown"])) for r in rows
               if r["policy"] == policy and (gap := gaps.get(r["day"])) is not None]
        ax.scatter([x for x, _ in pts], [y for _, y in pts], s=10, marker="ox^s"[k % 4], label=policy, alpha=0.7)
    ax.set_xlabel(f"mean inter-arrival time of the day ({time_unit})")
    ax.set_ylabel("mean slowdown")
    ax.set_yscale("log")
    ax.legend()
    written.append(_save(fig, out / "slowdown_vs_interarrival.png"))
    return written


def _mean_interarrival(path: Path) -> Optional[float]:
    try:
        times = sorted(float(j["subtime"]) for j in json.loads(path.read_text())["jobs"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (times[-1] - times[0]) / (len(times) - 1) if len(times) > 1 else None


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt    # (optional: the plot extra)
    plt.close(fig)
    return path
