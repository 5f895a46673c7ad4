"""What placement alone can save under the thermal model, per cluster size (Yi; issue 18).

On the held-out days of ``thermal_allocation_study.py`` (the last ``--test-days`` of the first
``--days`` of LPC-EGEE), for each number of 24-core processors: round robin's mean power (W) and
processor temperature (C) and waiting time (s), then the power saving (%) and temperature
reduction (C) against it of greedy consolidation (with the agent's overheating fallback), greedy
with cool room (the fullest processor that takes the job without settling above 85 C), first fit
(coolest rack first) and every instant packed as with free migration (a bound under linear
leakage). No training: it answers whether a target is within reach of any allocator.

    python scripts/thermal_placement_bounds.py --processors 3,4,5,6,8,10,12,16
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

from thermal_allocation_seeds import baselines  # noqa: E402
from thermal_allocation_study import TRACE, add_trace_arguments, packed  # noqa: E402

from batsched_py.agents.allocation.cluster import Cluster  # noqa: E402
from batsched_py.agents.allocation.cluster_jobs import load_jobs  # noqa: E402
from batsched_py.models.thermal import ThermalParams  # noqa: E402
from batsched_py.agents.allocation.env import cluster_figures  # noqa: E402


def run(jobs, n: int, params: ThermalParams, rule) -> Cluster:
    cluster = Cluster(jobs, n, params)
    cluster.run(rule)
    cluster.model.advance(cluster.now)
    return cluster


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_trace_arguments(ap)
    ap.add_argument("--processors", default="3,4,5,6,8,10,12,16",
                    help="cluster sizes, comma-separated (default %(default)s)")
    args = ap.parse_args(argv)
    try:
        sizes = [int(s) for s in args.processors.split(",")]
    except ValueError:
        print(f"thermal_placement_bounds: error: --processors {args.processors!r}: expected integers such as 4,8",
              file=sys.stderr)
        return 2
    trace = Path(args.shared) / TRACE
    if not trace.is_file():
        print(f"thermal_placement_bounds: error: {trace} not found (--shared)", file=sys.stderr)
        return 2
    jobs = load_jobs(trace, 24, days=args.days)
    held = jobs.window((args.days - args.test_days) * 86400, args.test_days * 86400)
    params = ThermalParams()
    lines = []
    for n in tqdm(sizes, desc="cluster sizes", unit="size"):
        # through Allocation-v0, as the agent: the overheating fallback applies
        figures = baselines(held, args.test_days, n, 0.5)
        first = run(held, n, params, lambda cluster, cores: int(np.flatnonzero(cluster.fits(cores))[0]))
        ff = cluster_figures(first, "x")
        figures["first fit"] = ff["x_power_W"], ff["x_temperature_C"]
        # one-core jobs in FCFS order wait the same whatever the placement: first fit's waits are everyone's
        figures["packed (bound)"] = packed(held, first.wait, n, params)
        p0, t0 = figures.pop("round_robin")
        lines.append(f"{n:3d} processors: round robin {p0:.1f} W {t0:.2f} C, waiting {np.nanmean(first.wait):.0f} s | "
                     + " | ".join(f"{name} {100 * (p0 - p) / p0:.2f}% {t0 - t:.2f} C"
                                  for name, (p, t) in figures.items()))
    print(f"held-out {args.test_days:g} days; saving / reduction against round robin:")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
