"""Wasted energy and node switches of the power policies on Grid'5000 Taurus weekly workloads.

    python scripts/energy_policies_study.py [WEEK.json ...] [--weeks N]

Runs easy+timeout T=5, 1, 0 and easy+oracle on each week (emulator, energy on,
outputs in a temporary folder) and prints wasted energy (idle and switching
node-time x watts, batsched_py.metrics) and the number of node switches.
Time unit: minutes, so energy is in watt-minutes.
"""
import argparse
import sys
import tempfile
from pathlib import Path

DATA = Path("/work/shared/data/gridgym")
PLATFORM = DATA / "taurus_168_batsim4.xml"
WEEKS = DATA / "others" / "workloads" / "lyon_2016"
CORES = 12          # one Batsim host per core, 12 cores per Taurus node
HOST_SPEED = 1e6    # flops per minute in the compute pstate: parallel_homogeneous cpu -> runtime

POLICIES = {
    "T(5)": ("timeout", {"base": "easy", "timeout": 5, "cores_per_node": CORES}),
    "T(1)": ("timeout", {"base": "easy", "timeout": 1, "cores_per_node": CORES}),
    "T(0)": ("timeout", {"base": "easy", "timeout": 0, "cores_per_node": CORES}),
    "oracle": ("oracle", {"base": "easy", "cores_per_node": CORES, "threshold": 5, "keep_on": 5,
                          "host_speed": HOST_SPEED}),
}


def run(week: Path, name: str, platform: Path = PLATFORM) -> dict:
    """One simulation; returns wasted energy, switches (from the policy) and mean waiting time."""
    from batsched_py.emulator import simulate
    from batsched_py.metrics.energy import machine_metrics
    from batsched_py.scheduler import create
    kind, options = POLICIES[name]
    options = dict(options, **({"workload": str(week)} if kind == "oracle" else {}))
    scheduler = create(kind, options)
    with tempfile.TemporaryDirectory() as tmp:
        result = simulate(platform, [week], scheduler, output_prefix=Path(tmp) / "out", energy=True)
        metrics = machine_metrics(Path(tmp) / "out", result.end_time, platform)
    waits = [j.starting_time - j.submission_time for j in result.jobs.values() if j.starting_time >= 0]
    return {"wasted": metrics["energy_wasted"], "switches": scheduler.switches,
            "cycles": metrics["onoff_cycles_total"], "wait": sum(waits) / max(len(waits), 1)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("weeks", nargs="*", type=Path)
    parser.add_argument("--weeks", dest="count", type=int, default=0, help="first N weeks of 2016")
    args = parser.parse_args(argv)
    weeks = args.weeks or sorted(WEEKS.glob("*2016-*.json"))[: args.count or None]
    totals = {name: {"wasted": 0.0, "switches": 0, "cycles": 0, "wait": 0.0} for name in POLICIES}
    for week in weeks:
        for name in POLICIES:
            r = run(week, name)
            for k in r:
                totals[name][k] += r[k]
    print(f"{len(weeks)} week(s); means per week")
    for name, t in totals.items():
        n = max(len(weeks), 1)
        print(f"{name:7s} wasted={t['wasted'] / n:12.1f} W.min  switches={t['switches'] / n:8.1f}  "
              f"off-cycles={t['cycles'] / n:8.1f}  mean wait={t['wait'] / n:7.2f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
