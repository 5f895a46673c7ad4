"""Wasted energy and node switches of the power policies on Grid'5000 Taurus weekly workloads.

    python scripts/energy_policies_study.py [WEEK.json ...] [--weeks N] [--processes P] [--per-week]

Runs easy+timeout T=5, 1, 0 and easy+oracle on each week (emulator, energy on,
outputs in a temporary folder) and prints, as means per week, the wasted energy
(idle and switching node-time x watts, batsched_py.metrics), the number of node
switches the policy asked for, the off-cycles in the outputs and the mean
waiting time; then the weeks that contradict the expected trends
(wasted: T(5) > T(1) > T(0) > oracle; switches: T(5) <= T(1) <= T(0)).
Time unit: minutes, so energy is in watt-minutes.  Simulations run in
``--processes`` worker processes (default 2).
"""
import argparse
import os
import sys
import tempfile
from pathlib import Path

# The workplace's shared data sits beside the repository (../shared); BATSCHED_PY_SHARED overrides it.
DATA = Path(os.environ.get("BATSCHED_PY_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "data" / "gridgym"
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
METRICS = ("wasted", "switches", "cycles", "wait")


def all_weeks() -> list[Path]:
    return sorted(WEEKS.glob("*2016-*.json"))


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


def _run_pair(pair: tuple[Path, str]) -> tuple[Path, str, dict]:
    week, name = pair
    return week, name, run(week, name)


def study(weeks: list[Path], processes: int = 2) -> dict[Path, dict[str, dict]]:
    """week -> policy -> run() results, every (week, policy) simulated once, in ``processes``
    worker processes (1: in this process)."""
    pairs = [(week, name) for week in weeks for name in POLICIES]
    results: dict[Path, dict[str, dict]] = {week: {} for week in weeks}
    if processes <= 1 or len(pairs) <= 1:
        done = map(_run_pair, pairs)
        for week, name, r in done:
            results[week][name] = r
        return results
    import multiprocessing
    # heaviest weeks first keeps both workers busy until the end
    pairs.sort(key=lambda pair: -pair[0].stat().st_size)
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    with multiprocessing.get_context(method).Pool(processes) as pool:
        for week, name, r in pool.imap_unordered(_run_pair, pairs):
            results[week][name] = r
    return results


def means(results: dict[Path, dict[str, dict]]) -> dict[str, dict[str, float]]:
    n = max(len(results), 1)
    return {name: {k: sum(r[name][k] for r in results.values()) / n for k in METRICS} for name in POLICIES}


def contradictions(results: dict[Path, dict[str, dict]]) -> list[str]:
    """One line per week that breaks an expected trend, naming it."""
    out = []
    for week, r in sorted(results.items()):
        w = {k: r[k]["wasted"] for k in POLICIES}
        s = {k: r[k]["switches"] for k in POLICIES}
        broken = []
        if not w["T(5)"] > w["T(1)"] > w["T(0)"]:
            broken.append("wasted T(5) > T(1) > T(0)")
        if not w["oracle"] < w["T(0)"]:
            broken.append("wasted oracle < T(0)")
        if not s["T(5)"] <= s["T(1)"] <= s["T(0)"]:
            broken.append("switches T(5) <= T(1) <= T(0)")
        if broken:
            out.append(f"{week.stem}: breaks {'; '.join(broken)}: wasted "
                       + ", ".join(f"{k}={v:.0f}" for k, v in w.items())
                       + "; switches " + ", ".join(f"{k}={v}" for k, v in s.items()))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("weeks", nargs="*", type=Path)
    parser.add_argument("--weeks", dest="count", type=int, default=0, help="first N weeks of 2016")
    parser.add_argument("--processes", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--per-week", action="store_true", help="print every week's figures")
    args = parser.parse_args(argv)
    weeks = args.weeks or all_weeks()[: args.count or None]
    results = study(weeks, args.processes)
    print(f"{len(weeks)} week(s); means per week")
    for name, t in means(results).items():
        print(f"{name:7s} wasted={t['wasted']:12.1f} W.min  switches={t['switches']:8.1f}  "
              f"off-cycles={t['cycles']:8.1f}  mean wait={t['wait']:7.2f} min")
    if args.per_week:
        for week, r in sorted(results.items()):
            print(week.stem, "  ".join(f"{k}: w={v['wasted']:.0f} s={v['switches']} wait={v['wait']:.1f}"
                                       for k, v in r.items()))
    broken = contradictions(results)
    print(f"{len(broken)} week(s) against a trend" + (":" if broken else ""))
    for line in broken:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
