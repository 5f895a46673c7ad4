"""Users and HTC jobs of a volunteer pool (platforms/volunteer.py): interactive logins as Batsim external
events, a real availability trace read into the same events, and HTC jobs with miscreants.

Login model (the Newcastle login trace is not public; this is our documented stand-in).  Time 0 is
a Monday 00:00 in the first week of January.  In each hour a room is open, its logins are Poisson
with mean ``rate * nb_pcs * popularity * HOUR[h] * day * season``: ``HOUR`` peaks at 1 around
11:00-15:00 and is 0.1 at night; ``day`` is 1 on weekdays and ``WEEKEND`` (0.3) on Saturdays and
Sundays; ``season`` is 1 in term (``TERM_WEEKS``: weeks 2-11, 16-24 and 39-50, a UK university year)
and ``VACATION`` (0.25) outside; ``popularity`` is the room's (lognormal, mean 1).  A login takes a
random PC of the room that nobody uses (none free: the user leaves) for an exponential time of mean
``session`` (50 min, at least 5 min), cut at closing time.  Each login is ``machine_unavailable``
on that PC and its end ``machine_available``, so the same file drives a real Batsim (``--events``).

Availability trace: a Failure Trace Archive ``event_trace`` table (tab or whitespace separated, a
header naming at least ``node_id``, ``event_type``, ``event_start_time``, ``event_end_time``; FTA
event type 0 is "unavailable", 1 "available"; times in seconds).  Its nodes map to the pool's PCs in
order of first appearance and its times start at the earliest event.

HTC jobs: Poisson submissions (``jobs_per_hour``, weekdays busier, daytime busier), lognormal runtimes
(median ``median_runtime``, capped at 12 h: a job over a day could never end between two 3am reboots), one PC each.  A share ``miscreants`` of them never
end (a year of work) until their owner kills them ``kill_after`` seconds after submission (job field
``kill_at``).  A trace converted by ``swf2json`` works as well (single-PC jobs).
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, NamedTuple

import numpy as np

from ..platforms.volunteer import Cluster, PoolError

HOUR = np.array([.1, .1, .1, .1, .1, .1, .15, .3, .6, .8, .9, 1, 1, 1, 1, .95, .85, .7, .5, .4, .35, .3, .2, .15])
WEEKEND, VACATION = 0.3, 0.25
TERM_WEEKS = frozenset([*range(2, 12), *range(16, 25), *range(39, 51)])
DAY, WEEK = 86400.0, 7 * 86400.0
FTA_COLUMNS = ("node_id", "event_type", "event_start_time", "event_end_time")
YEAR_OF_WORK = 365 * DAY


class Login(NamedTuple):
    start: float
    host: int
    end: float


def in_term(t: float) -> bool:
    return int(t // WEEK) % 52 in TERM_WEEKS


def login_rate(cluster: Cluster, t: float, rate: float) -> float:
    """Mean logins per hour in ``cluster`` in the hour starting at ``t`` (0 when closed)."""
    hour, weekday = int(t // 3600) % 24, int(t // DAY) % 7
    if not cluster.is_open(hour, weekday):
        return 0.0
    return (rate * cluster.nb_pcs * cluster.popularity * HOUR[hour] * (WEEKEND if weekday >= 5 else 1.0)
            * (1.0 if in_term(t) else VACATION))


def _check(name: str, value, low: float = 0.0, strict: bool = True) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not (value > low if strict else value >= low):
        raise PoolError(f"{name}: {value!r} is not a number {'>' if strict else '>='} {low:g}")


def generate_logins(clusters: list[Cluster], days: float, *, rate: float = 0.4, session: float = 3000.0,
                    seed: int = 0) -> list[Login]:
    """Logins over ``days`` days, by start time (hosts numbered room after room)."""
    _check("days", days)
    _check("rate", rate, strict=False)
    _check("session", session)
    rng = np.random.default_rng(seed)
    logins: list[Login] = []
    first = 0
    for c in clusters:
        busy_until = np.zeros(c.nb_pcs)
        for h in range(int(math.ceil(days * 24))):
            t0 = h * 3600.0
            lam = login_rate(c, t0, rate)
            if lam <= 0:
                continue
            closing = (h - h % 24) * 3600.0 + c.closes * 3600.0
            for t in np.sort(t0 + rng.random(rng.poisson(lam)) * 3600.0):
                free = np.flatnonzero(busy_until <= t)
                if not len(free):
                    continue
                pc = int(rng.choice(free))
                end = min(t + max(300.0, rng.exponential(session)), closing, days * DAY)
                if end - t < 60:
                    continue
                busy_until[pc] = end
                logins.append(Login(float(t), first + pc, float(end)))
        first += c.nb_pcs
    logins.sort()
    return logins


def write_events(logins: Iterable[Login], path: "str | Path", seed: int = 0) -> Path:
    """Batsim ``--events`` file: machine_unavailable at each login, machine_available at its end.

    Each time gets a random fraction of a second: Batsim aborts on an EXECUTE_JOB on a PC that a
    login took at that very time (the scheduler, answering a request of the same time, had not heard
    of it yet), and whole-second logins meet whole-second job submissions and traces."""
    rng = np.random.default_rng(seed)
    events = []
    for lg in logins:
        events.append((lg.start + rng.random(), 1, lg.host))
        events.append((lg.end + rng.random(), 0, lg.host))
    events.sort()
    path = Path(path)
    with path.open("w") as out:
        for t, kind, host in events:
            out.write(json.dumps({"timestamp": t, "type": "machine_unavailable" if kind else "machine_available",
                                  "resources": str(host)}) + "\n")
    return path


def read_availability_trace(path: "str | Path", nb_hosts: int) -> list[Login]:
    """The unavailability intervals of an FTA ``event_trace`` table, as logins on hosts 0.."""
    where = f"availability trace {path}"
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise PoolError(f"{where}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise PoolError(f"{where}: not a text file (not UTF-8)") from None
    rows = [(n, line.split()) for n, line in enumerate(lines, 1) if line.strip() and not line.startswith("#")]
    if not rows:
        raise PoolError(f"{where}: empty (expected a header naming {', '.join(FTA_COLUMNS)})")
    header = rows[0][1]
    missing = [c for c in FTA_COLUMNS if c not in header]
    if missing:
        raise PoolError(f"{where}, line {rows[0][0]}: header lacks column(s) {', '.join(missing)} "
                        f"(an FTA event_trace table names {', '.join(FTA_COLUMNS)})")
    col = {c: header.index(c) for c in FTA_COLUMNS}
    nodes: dict[str, int] = {}
    raw: list[tuple[float, int, float, int]] = []
    for n, fields in rows[1:]:
        if len(fields) < len(header):
            raise PoolError(f"{where}, line {n}: {len(fields)} fields, the header has {len(header)}")
        try:
            kind = int(fields[col["event_type"]])
            start, end = float(fields[col["event_start_time"]]), float(fields[col["event_end_time"]])
        except ValueError:
            raise PoolError(f"{where}, line {n}: event_type must be an integer and the times numbers") from None
        if kind not in (0, 1):
            raise PoolError(f"{where}, line {n}: event_type {kind} is neither 0 (unavailable) nor 1 (available)")
        if not (math.isfinite(start) and math.isfinite(end)) or end < start:
            raise PoolError(f"{where}, line {n}: event_end_time {end:g} is before event_start_time {start:g}")
        node = nodes.setdefault(fields[col["node_id"]], len(nodes))
        if node >= nb_hosts:
            raise PoolError(f"{where}, line {n}: more than {nb_hosts} nodes, the pool has {nb_hosts} PCs")
        if kind == 0 and end > start:
            raw.append((start, node, end, n))
    origin = min((r[0] for r in raw), default=0.0)
    last_end: dict[int, float] = {}
    logins = []
    for start, node, end, n in sorted(raw):
        if start < last_end.get(node, -math.inf):
            raise PoolError(f"{where}, line {n}: node {node}'s unavailability overlaps its previous one")
        last_end[node] = end
        logins.append(Login(start - origin, node, end - origin))
    return logins


def generate_jobs(days: float, nb_pcs: int, *, jobs_per_hour: float = 20.0, median_runtime: float = 1200.0,
                  miscreants: float = 0.005, kill_after: float = 3 * DAY, seed: int = 0) -> dict:
    """A Batsim workload of HTC jobs over ``days`` days (see the module's docstring)."""
    _check("days", days)
    _check("jobs_per_hour", jobs_per_hour)
    _check("median_runtime", median_runtime)
    _check("kill_after", kill_after)
    if isinstance(miscreants, bool) or not isinstance(miscreants, (int, float)) or not 0 <= miscreants <= 1:
        raise PoolError(f"miscreants: {miscreants!r} is not a share in [0, 1]")
    rng = np.random.default_rng(seed)
    jobs: list[dict[str, Any]] = []
    profiles: dict[str, Any] = {}
    for h in range(int(math.ceil(days * 24))):
        weekday = int(h // 24) % 7
        lam = jobs_per_hour * (0.5 + HOUR[h % 24]) / 1.5 * (0.5 if weekday >= 5 else 1.0)
        for t in np.sort(h * 3600.0 + rng.random(rng.poisson(lam)) * 3600.0):
            i = len(jobs)
            job = {"id": str(i), "subtime": float(t), "res": 1, "profile": f"p{i}"}
            if rng.random() < miscreants:
                runtime = YEAR_OF_WORK
                job["kill_at"] = float(t) + kill_after
            else:
                runtime = round(float(min(DAY / 2, max(60.0, rng.lognormal(math.log(median_runtime), 1.0)))), 1)
            jobs.append(job)
            profiles[f"p{i}"] = {"type": "parallel_homogeneous", "cpu": runtime, "com": 0}
    return {"nb_res": nb_pcs, "jobs": jobs, "profiles": profiles}


__all__ = ["Login", "HOUR", "TERM_WEEKS", "in_term", "login_rate", "generate_logins", "write_events",
           "read_availability_trace", "generate_jobs"]
