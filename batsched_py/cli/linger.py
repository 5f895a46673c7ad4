"""``python -m batsched_py.cli.linger [--linger S] serve ...``: the scheduler service of docker-compose.

Runs ``batsched-py serve ...`` unchanged, then, on success, stays alive up to ``--linger`` seconds
(until SIGTERM). Why: Batsim writes its output files *after* its last exchange with the scheduler,
and ``docker compose up --abort-on-container-exit`` stops every service as soon as one exits; a
scheduler that exited first could get Batsim killed before it wrote its outputs. Lingering lets
Batsim finish and exit first; compose then stops the scheduler. On failure the exit is immediate
(non-zero, with batsched-py's one-line error), so compose stops Batsim at once instead of leaving
it waiting for a reply that will never come.
"""
from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import Optional, Sequence

from ..argtypes import non_negative
from . import main as batsched_main


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m batsched_py.cli.linger",
        description="Run a batsched-py command; on success stay alive up to --linger seconds or until SIGTERM.")
    parser.add_argument("--linger", type=non_negative, default=120.0,
                        help="seconds to stay alive after success (default %(default)s)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="batsched-py arguments, e.g. serve ...")
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("missing the batsched-py command (e.g. serve --scheduler easy ...)")

    code = batsched_main(args.command)
    if code != 0:
        return code
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    deadline = time.monotonic() + args.linger
    try:
        while time.monotonic() < deadline:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
