"""``batsched-py emulate``: Batsim 4.2.1's command line, served by the emulator over ZeroMQ."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Optional, Sequence

from ..argtypes import count, non_negative
from ..interrupts import exit_status, interruption, signals_interrupt
from ..emulator.options import EngineOptions
from ..transport.backend import Exchange
from ..models.errors import EmulatorError
from ..emulator.peer import ZmqPeer
from ..emulator.simulate import SimulationResult, run_engine
from ..models.thermal import LEAKAGE_MODELS, ThermalParams
from .common import KNOWN_ERRORS

__all__ = ["main", "emulate", "build_parser", "batsim_args_to_kwargs"]

# Batsim flags the emulator refuses, with the reason.
_UNSUPPORTED = {
    "-W": "workflows", "--workflow": "workflows", "--WS": "workflows", "--workflow-start": "workflows",
    "--enable-compute-sharing": "compute sharing", "--disable-storage-sharing": "storage sharing",
    "-r": "extra host roles", "--add-role-to-hosts": "extra host roles",
    "--enable-redis": "Redis", "--redis-hostname": "Redis", "--redis-port": "Redis", "--redis-prefix": "Redis",
    "--simgrid-config": "SimGrid options", "--sg-cfg": "SimGrid options",
    "--sg-log": "SimGrid logging", "--dump-execution-context": "execution context dumps",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise EmulatorError(message)


def build_parser() -> argparse.ArgumentParser:
    refused = ", ".join(sorted({flag for flag in _UNSUPPORTED if flag.startswith("--")}))
    ap = _Parser(prog="batsched-py emulate",
                 description="Pure-Python Batsim 4.2.1 (the REQ side): takes Batsim's options, connects to "
                             "a scheduler, simulates, and writes Batsim's output files.",
                 epilog=f"Batsim options the emulator refuses (use real Batsim): {refused}.")
    ap.add_argument("-p", "--platform", required=True, help="SimGrid platform XML")
    ap.add_argument("-w", "--workload", action="append", default=[],
                    help="Batsim workload JSON (repeat for several workloads)")
    ap.add_argument("-e", "--export", default="out",
                    help="output prefix: writes PREFIX_jobs.csv, PREFIX_schedule.csv, ... (default %(default)s)")
    ap.add_argument("-E", "--energy", action="store_true",
                    help="energy model on (hosts need wattage_per_state); adds the energy outputs")
    ap.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000",
                    help="the scheduler's ZeroMQ endpoint to connect to (default %(default)s)")
    ap.add_argument("--events", action="append", default=[],
                    help="external events file, one JSON object per line (repeatable)")
    ap.add_argument("-m", "--master-host", default="master_host",
                    help="name of the host Batsim's server runs on (default %(default)s)")
    ap.add_argument("--mmax", type=count, default=0,
                    help="use at most this many compute hosts (default 0: all)")
    ap.add_argument("--mmax-workload", action="store_true",
                    help="use as many compute hosts as the largest nb_res of the workloads")
    ap.add_argument("--sched-cfg", default="", help="text passed to the scheduler in SIMULATION_BEGINS' config")
    ap.add_argument("--enable-profile-reuse", action="store_true",
                    help="the scheduler may register jobs that reuse a profile")
    ap.add_argument("--forward-profiles-on-submission", action="store_true",
                    help="JOB_SUBMITTED carries the job's profile")
    ap.add_argument("--enable-dynamic-jobs", action="store_true",
                    help="the scheduler may register jobs (REGISTER_JOB, REGISTER_PROFILE)")
    ap.add_argument("--acknowledge-dynamic-jobs", action="store_true",
                    help="registered jobs are acknowledged with JOB_SUBMITTED (needs --enable-dynamic-jobs)")
    ap.add_argument("--forward-unknown-events", action="store_true",
                    help="events of unknown types in --events files are forwarded to the scheduler as NOTIFY")
    ap.add_argument("-v", "--verbosity", default="information", choices=("quiet", "network-only", "information", "debug"),
                    help="Batsim's log level (accepted for compatibility: the emulator prints errors and one "
                         "closing line)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no closing line")
    ap.add_argument("-t", "--disable-schedule-tracing", action="store_true",
                    help="accepted for compatibility: the emulator writes no Pajé schedule trace")
    ap.add_argument("-T", "--disable-machine-state-tracing", action="store_true",
                    help="do not write PREFIX_machine_states.csv")
    ap.add_argument("--timeout", type=non_negative, default=60.0, help="seconds to wait for each reply (0: wait for ever; default %(default)g; emulator only)")
    ap.add_argument("--busy-wait", type=non_negative, default=0.0, metavar="MICROSECONDS",
                    help="poll this long for each reply before sleeping: shorter round trips on an idle "
                         "machine for at most this much CPU per message (default %(default)g: always sleep; "
                         "emulator only)")
    ap.add_argument("--progress", action="store_true", help="progress bar on stderr (emulator only)")
    ap.add_argument("--thermal", type=count, default=0, metavar="CORES",
                    help="processor power/temperature model on, processors of CORES consecutive hosts: writes "
                         "PREFIX_thermal.csv every 10 minutes (emulator only; see models/thermal.py)")
    ap.add_argument("--thermal-leakage", choices=LEAKAGE_MODELS, default=None,
                    help="the thermal model's leakage (default linear; needs --thermal)")
    return ap


def _parse(args: Sequence[str]) -> argparse.Namespace:
    for a in args:
        flag = a.split("=", 1)[0]
        if flag in _UNSUPPORTED:
            raise EmulatorError(f"Batsim option {flag} ({_UNSUPPORTED[flag]}) is not supported by "
                                "the emulator; use real Batsim")
    ns = build_parser().parse_args(list(args))
    if not ns.workload:
        raise EmulatorError("at least one -w/--workload is needed (workflows are not supported)")
    if ns.acknowledge_dynamic_jobs and not ns.enable_dynamic_jobs:
        raise EmulatorError("--acknowledge-dynamic-jobs needs --enable-dynamic-jobs")
    if ns.thermal_leakage and not ns.thermal:
        raise EmulatorError("--thermal-leakage needs --thermal")
    return ns


def batsim_args_to_kwargs(args: Sequence[str]) -> dict[str, Any]:
    """Batsim-style argv -> keyword arguments of :func:`run_engine` (minus ``exchange``)."""
    ns = _parse(args)
    options = EngineOptions(forward_profiles=ns.forward_profiles_on_submission,
                            dynamic_jobs=ns.enable_dynamic_jobs, ack_dynamic_jobs=ns.acknowledge_dynamic_jobs,
                            profile_reuse=ns.enable_profile_reuse, sched_config=ns.sched_cfg,
                            forward_unknown_events=ns.forward_unknown_events)
    return dict(platform=ns.platform, workloads=ns.workload, output_prefix=ns.export, energy=ns.energy,
                events=ns.events, mmax=ns.mmax, mmax_workload=ns.mmax_workload, master_host=ns.master_host,
                progress=ns.progress, options=options, machine_states=not ns.disable_machine_state_tracing,
                thermal=ThermalParams(cores=ns.thermal, leakage_model=ns.thermal_leakage or "linear")
                if ns.thermal else None)


def emulate(args: Sequence[str], exchange: Exchange) -> SimulationResult:
    """Run the emulator with Batsim-style ``args`` against ``exchange``."""
    return run_engine(exchange=exchange, **batsim_args_to_kwargs(args))


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in args):
        build_parser().print_help()
        return 0
    try:
        ns = _parse(args)
        with ZmqPeer(ns.socket_endpoint, ns.timeout, ns.busy_wait / 1e6) as peer, signals_interrupt():
            result = emulate(args, peer)
    except KNOWN_ERRORS as exc:
        print(f"batsched-py emulate: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"batsched-py emulate: {interruption(exc)}; the outputs are marked PREFIX_INCOMPLETE", file=sys.stderr)
        return exit_status(exc)
    if not ns.quiet:
        print(f"simulation finished at t={result.end_time:g}: {len(result.jobs)} jobs, "
              f"{result.messages} messages", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
