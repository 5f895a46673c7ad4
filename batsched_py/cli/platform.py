"""``batsched-py platform``: generate cluster platforms, upgrade Batsim 3 ones."""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ..argtypes import non_negative, non_negative_list, positive, positive_count, positive_list
from ..errors import BatschedError
from ..interrupts import exit_status, interruption, signals_interrupt
from ..textfiles import os_error, refuse_overwriting, write_whole

from ..models.errors import NetworkNotModelledWarning
from ..models.platform import NoMasterHost, PlatformError as Refused, load_platform
from ..platforms.generate import energy_cluster, plain_cluster, platform_xml, taurus_cluster
from ..models.platform import PlatformError, parse_xml
from ..platforms.upgrade import asleep_warning, hosts_starting_asleep, upgrade_platform_file


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="batsched-py platform",
                                description="Generate Batsim 4 / SimGrid 3.32 cluster platforms "
                                            "or upgrade Batsim 3 platforms.")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("taurus", help="Grid'5000 Taurus energy cluster (95/190 W, 9 W asleep, "
                                      "off 3 units at 101 W, on 1 unit at 125 W, 1 Mflop/s)")
    t.add_argument("output", help="XML file to write")
    t.add_argument("-n", "--nodes", type=positive_count, default=16, help="number of compute hosts (16)")
    t.add_argument("--off-time", type=positive, default=3, help="time units to switch off (3)")
    t.add_argument("--on-time", type=positive, default=1, help="time units to switch on (1)")
    g = sub.add_parser("cluster", help="homogeneous cluster, optionally with an energy model")
    g.add_argument("output", help="XML file to write")
    g.add_argument("-n", "--nodes", type=positive_count, required=True, help="number of compute hosts")
    g.add_argument("--cores", type=positive_count, default=1, help="cores per host (1)")
    g.add_argument("--speeds", type=positive_list, default=[1e9],
                   help="comma-separated flop/s of the computing pstates, fastest first (1e9)")
    g.add_argument("--no-energy", action="store_true", help="no energy properties")
    g.add_argument("--idle", type=non_negative_list, default=[95.0], help="idle watts per computing pstate (95)")
    g.add_argument("--compute", type=non_negative_list, default=[190.0], help="all-cores watts per computing pstate (190)")
    g.add_argument("--sleep", type=non_negative, default=9.0, help="watts asleep (9)")
    g.add_argument("--off-time", type=positive, default=6.1, help="seconds to switch off (6.1)")
    g.add_argument("--off-watts", type=non_negative, default=101.0, help="watts while switching off (101)")
    g.add_argument("--on-time", type=positive, default=151.5, help="seconds to switch on (151.5)")
    g.add_argument("--on-watts", type=non_negative, default=125.0, help="watts while switching on (125)")
    u = sub.add_parser("upgrade", help="Batsim 3 platform -> Batsim 4 (watt_per_state -> wattage_per_state ...)")
    u.add_argument("input", help="Batsim 3 platform XML")
    u.add_argument("output", help="Batsim 4 platform XML to write")
    u.add_argument("--awake", action="store_true",
                   help="start hosts declared in a sleep or switching pstate in their first computation pstate "
                        "(Batsim 4.2.1 with -E aborts at the first job on a sleeping host)")
    c = sub.add_parser("check", help="read a platform as Batsim 4.2.1 does and refuse what it would abort on")
    c.add_argument("platform", help="platform XML")
    c.add_argument("-E", "--energy", action="store_true", help="as Batsim with -E (energy model, sleep pstates)")
    c.add_argument("--mmax", type=int, default=0, help="use at most this many compute hosts, as Batsim's --mmax")
    return p


def _per_pstate(values: list[float], n: int, name: str) -> list[float]:
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise ValueError(f"--{name}: {len(values)} values for {n} speed(s): give 1 value, or one per speed")
    return values


def check_like_batsim(path: str, energy: bool, mmax: int = 0, written: bool = True) -> int:
    """Load the platform with the emulator's reader, which refuses what Batsim 4.2.1's own platform
    reader refuses (roles, speeds, pstates, routes; with ``energy``, -E's checks, hosts starting
    asleep included: Batsim aborts at the first job on them); returns its number of compute hosts."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NetworkNotModelledWarning)
        try:
            return load_platform(path, energy=energy, mmax=mmax).nb_hosts
        except NoMasterHost:      # fine: Batsim's -m/--master-host names the master then
            print(f"note: {path} has no host named master_host nor one with role=master: run Batsim with "
                  "-m HOST", file=sys.stderr)
            return 0
        except Refused as exc:
            raise PlatformError(f"{path}{' was written but' if written else ':'} Batsim 4.2.1 would refuse "
                                f"it: {exc}") from None


#: The cluster options that only shape the energy model (``--no-energy`` has none).
ENERGY_OPTIONS = ("idle", "compute", "sleep", "off_time", "off_watts", "on_time", "on_watts")


def _ignored_by_no_energy(args: argparse.Namespace) -> list[str]:
    defaults = _parser().parse_args(["cluster", "-n", "1", "defaults.xml"])
    return [f"--{name.replace('_', '-')}" for name in ENERGY_OPTIONS
            if getattr(args, name) != getattr(defaults, name)]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        with signals_interrupt():
            return _run(args)
    except KeyboardInterrupt as exc:
        print(f"platform: {interruption(exc)} (outputs are written whole or not at all)", file=sys.stderr)
        return exit_status(exc)


def _run(args: argparse.Namespace) -> int:
    try:
        if args.command == "cluster" and args.no_energy and _ignored_by_no_energy(args):
            raise ValueError(f"--no-energy: {', '.join(_ignored_by_no_energy(args))} would be ignored")
        if args.command == "upgrade":
            refuse_overwriting(args.output, args.input, "output", "Batsim 3 input")
            for change in upgrade_platform_file(args.input, args.output, awake=args.awake):
                print(change)
            check_like_batsim(args.output, energy=False)
            asleep = hosts_starting_asleep(parse_xml(args.output))
            if asleep:
                print(asleep_warning(asleep), file=sys.stderr)
            return 0
        if args.command == "check":
            n = check_like_batsim(args.platform, energy=args.energy, mmax=args.mmax, written=False)
            if args.mmax > n > 0:       # (Batsim ignores it: a mistake, refused as `run` does)
                raise ValueError(f"--mmax {args.mmax}: the platform {args.platform} has only {n} compute hosts")
            print(f"{args.platform}: ok: {n} compute hosts, as Batsim 4.2.1{' with -E' if args.energy else ''} "
                  "reads it")
            return 0
        if args.command == "taurus":
            spec = taurus_cluster(args.nodes, args.off_time, args.on_time)
        elif args.no_energy:
            spec = plain_cluster(args.nodes, args.speeds[0], args.cores)
        else:
            n = len(args.speeds)
            spec = energy_cluster(args.nodes, args.speeds, _per_pstate(args.idle, n, "idle"),
                                  _per_pstate(args.compute, n, "compute"), args.sleep,
                                  args.off_time, args.off_watts, args.on_time, args.on_watts,
                                  cores=args.cores)
        write_whole(Path(args.output), platform_xml(spec))
        check_like_batsim(args.output, energy=args.command == "taurus" or not args.no_energy)
    except (BatschedError, ValueError, OSError) as exc:
        print(f"platform: error: {os_error(exc) if isinstance(exc, OSError) else exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
