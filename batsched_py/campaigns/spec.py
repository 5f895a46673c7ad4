"""Campaign files: platforms x workloads x policies x seeds x repetitions, read from TOML or YAML.

```toml
output = "out/taurus"            # relative paths are relative to this file's folder
energy = true
seeds = [0, 1]                   # optional: each run passes its seed as the policy option "seed"
repetitions = 1                  # optional: identical runs, numbered rep0, rep1, ...
mmax = 0                         # optional: Batsim's --mmax

[platforms]
taurus = "../platforms/taurus_168.xml"

[workloads]                      # named sets; entries are files, folders (their *.json) or globs
weeks = ["../workloads/taurus_2016-03-27.json", "/data/lyon_2016/*.json"]

[policies.easy]
scheduler = "easy"

[policies.oracle]
scheduler = "oracle"
options = { base = "easy", host_speed = 1e6, workload = "{workload}" }   # {workload}: the run's workload file
```
"""
from __future__ import annotations

import glob
import hashlib
import json
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any, Optional

from ..errors import InputError
from ..models.errors import EmulatorError
from ..models.platform import PlatformError, load_platform
from ..models.workload import load_workload
from ..scheduler.creation import create_scheduler, json_object
from .simulation import SimulationSpec, input_files

TOP_KEYS = {"output", "energy", "seeds", "repetitions", "mmax", "platforms", "workloads", "policies"}
POLICY_KEYS = {"scheduler", "options"}
WORKLOAD_PLACEHOLDER = "{workload}"


class CampaignError(InputError):
    """A bad campaign file: one line naming the file and the entry."""


@dataclass(frozen=True)
class CampaignRun:
    key: str                  # platform/workload set/workload/policy[/seedS][/repR]: unique, a folder path
    platform: str
    workload_set: str
    workload: str
    policy: str
    seed: Optional[int]
    repetition: int
    spec: SimulationSpec

    def digest(self, file_hashes: Optional[dict[str, str]] = None) -> str:
        """Everything a run's outputs depend on: a finished run whose digest changed runs again.
        ``file_hashes`` caches each input file's hash across the runs that share it."""
        cache = {} if file_hashes is None else file_hashes
        h = hashlib.sha256()
        for path in input_files(self.spec):
            if path not in cache:
                cache[path] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            h.update(cache[path].encode())
        h.update(json.dumps([self.spec.scheduler, self.spec.options, self.spec.energy, self.spec.mmax],
                            sort_keys=True).encode())
        return h.hexdigest()


@dataclass(frozen=True)
class Campaign:
    path: Path
    output: Path
    runs: list[CampaignRun]

    @property
    def database(self) -> Path:
        return self.output / "results.sqlite"

    def run_dir(self, run: CampaignRun) -> Path:
        return self.output / "runs" / run.key


def read_document(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CampaignError(f"campaign file {path}: cannot read it ({exc.strerror or exc})") from None
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise CampaignError(f"campaign file {path}: reading YAML needs pyyaml (pip install pyyaml), "
                                "or write it as TOML") from None
        try:
            data = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise CampaignError(f"campaign file {path}: invalid YAML ({' '.join(str(exc).split())})") from None
    else:
        import tomllib
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise CampaignError(f"campaign file {path}: invalid TOML ({exc})") from None
    if not isinstance(data, dict):
        raise CampaignError(f"campaign file {path}: the top level must be a table of settings")
    return data


def load_campaign(path: Path, check_policies: bool = True) -> Campaign:
    path = Path(path)
    data = read_document(path)
    where = f"campaign file {path}"
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise CampaignError(f"{where}: unknown setting {unknown[0]!r}; known: {', '.join(sorted(TOP_KEYS))}")
    base = path.resolve().parent
    output = _resolve(base, _typed(data, "output", str, where, None))
    energy = _typed(data, "energy", bool, where, False)
    mmax = _typed(data, "mmax", int, where, 0)
    if mmax < 0:
        raise CampaignError(f"{where}: mmax must be at least 0 (0: every host), not {mmax}")
    repetitions = _typed(data, "repetitions", int, where, 1)
    if repetitions < 1:
        raise CampaignError(f"{where}: repetitions must be at least 1, not {repetitions}")
    seeds = data.get("seeds")
    if seeds is not None and (not isinstance(seeds, list) or not seeds
                              or not all(isinstance(s, int) and not isinstance(s, bool) and -2**63 <= s < 2**63
                                         for s in seeds)):   # (what TOML and the results table hold)
        raise CampaignError(f"{where}: seeds must be a non-empty list of 64-bit integers")
    platforms = {name: _resolve(base, value) for name, value in _names(data, "platforms", where, str).items()}
    for name, platform in platforms.items():
        if not platform.is_file():
            raise CampaignError(f"{where}: platforms.{name}: {platform} does not exist")
    workload_sets = {name: _expand(base, value, f"{where}: workloads.{name}")
                     for name, value in _names(data, "workloads", where, (str, list)).items()}
    policies = {name: _policy(value, f"{where}: policies.{name}")
                for name, value in _names(data, "policies", where, dict).items()}
    for name, (_, options) in policies.items():
        if seeds is not None and "seed" in options:
            raise CampaignError(f"{where}: policies.{name}: options.seed and seeds both set the policy's seed; "
                                "keep one")
    runs = []
    for (pname, platform), (wset, workloads), (policy, (scheduler, options)), seed, rep in product(
            platforms.items(), workload_sets.items(), policies.items(), seeds or [None], range(repetitions)):
        for workload in workloads:
            opts = _substitute(options, str(workload))
            if seed is not None:
                opts["seed"] = seed
            key = "/".join([pname, wset, _stem(workload, workloads), policy]
                           + ([f"seed{seed}"] if seed is not None else []) + ([f"rep{rep}"] if repetitions > 1 else []))
            spec = SimulationSpec(str(platform), (str(workload),), scheduler, opts, energy, (), mmax)
            runs.append(CampaignRun(key, pname, wset, str(workload), policy, seed, rep, spec))
    keys = [run.key for run in runs]
    if len(set(keys)) != len(keys):
        key = next(k for k in keys if keys.count(k) > 1)
        raise CampaignError(f"{where}: run {key} appears twice (a repeated seed, or two workloads named alike)")
    if check_policies:
        _check_policies(runs, where)
        _check_workloads(runs, where, mmax, energy)
    return Campaign(path, output, runs)


def _typed(data: dict, key: str, kind, where: str, default):
    if key not in data:
        if default is None:
            raise CampaignError(f"{where}: missing setting {key!r}")
        return default
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise CampaignError(f"{where}: {key} must be {kind.__name__}, not {value!r}")
    return value


def _names(data: dict, key: str, where: str, kinds) -> dict[str, Any]:
    table = data.get(key)
    if not isinstance(table, dict) or not table:
        raise CampaignError(f"{where}: [{key}] must be a table naming at least one entry")
    for name, value in table.items():
        if name in ("", ".", "..") or "/" in name:   # it names a folder of each run's path
            raise CampaignError(f"{where}: {key}: {name!r} cannot name a run's folder (empty, '.', '..' or with '/')")
        if not isinstance(value, kinds):
            raise CampaignError(f"{where}: {key}.{name}: bad entry {value!r}")
    return table


def _resolve(base: Path, text: str) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path


def _expand(base: Path, entries, where: str) -> list[Path]:
    """Files, folders (their ``*.json``) and globs, in sorted order within each entry."""
    out: list[Path] = []
    if not entries:       # (a set without runs: the campaign would do nothing, and say it is done)
        raise CampaignError(f"{where}: {entries!r} names no workload file; name at least one")
    for entry in [entries] if isinstance(entries, str) else entries:
        if not isinstance(entry, str) or not entry.strip():
            raise CampaignError(f"{where}: {entry!r} is not a path")
        path = _resolve(base, entry)
        if any(c in entry for c in "*?["):
            found = sorted(Path(p) for p in glob.glob(str(path)) if Path(p).is_file())
        elif path.is_dir():
            found = sorted(path.glob("*.json"))
        else:
            found = [path] if path.is_file() else []
        if not found:
            raise CampaignError(f"{where}: {entry} matches no workload file")
        out += [p for p in found if p not in out]
    return out


def _stem(workload: Path, workloads: list[Path]) -> str:
    stems = [w.stem for w in workloads]
    return workload.stem if stems.count(workload.stem) == 1 else str(workload).strip("/").replace("/", "_")


def _policy(value: dict, where: str) -> tuple[str, dict[str, Any]]:
    unknown = sorted(set(value) - POLICY_KEYS)
    if unknown:
        raise CampaignError(f"{where}: unknown key {unknown[0]!r}; known: scheduler, options")
    scheduler = value.get("scheduler")
    if not isinstance(scheduler, str):
        raise CampaignError(f"{where}: scheduler must name a policy (see list-schedulers)")
    options = value.get("options", {})
    if isinstance(options, str):   # a JSON object, as `run --config` takes
        options = json_object(options, f"{where}: options")
    if not isinstance(options, dict):
        raise CampaignError(f"{where}: options must be a table or a JSON object")

    def refuse(value):
        raise CampaignError(f"{where}: options: {value} is not a JSON value")
    json.dumps(options, default=refuse)   # as `run --config` takes them, and as the results table stores them
    return scheduler, options


def _substitute(options: dict[str, Any], workload: str) -> dict[str, Any]:
    return {k: workload if v == WORKLOAD_PLACEHOLDER else v for k, v in options.items()}


def _check_policies(runs: list[CampaignRun], where: str) -> None:
    """Each policy built once with its first run's options: a bad name or option fails before any run."""
    seen = set()
    for run in runs:
        if run.policy in seen:
            continue
        seen.add(run.policy)
        try:
            create_scheduler(run.spec.scheduler, run.spec.options)
        except Exception as exc:
            raise CampaignError(f"{where}: policies.{run.policy}: {exc}") from None


def _check_workloads(runs: list[CampaignRun], where: str, mmax: int, energy: bool) -> None:
    """Every workload read once per platform as the emulator will (invalid JSON, a NaN subtime, a job
    larger than the platform...): a bad one is named before any run starts, not in one run's failure."""
    hosts: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    for run in runs:
        platform, workload = run.spec.platform, run.workload
        if (platform, workload) in seen:
            continue
        seen.add((platform, workload))
        if platform not in hosts:
            try:
                hosts[platform] = load_platform(platform, mmax=mmax, energy=energy).nb_hosts
            except (EmulatorError, PlatformError) as exc:
                raise CampaignError(f"{where}: platforms.{run.platform}: {exc}") from None
        try:
            load_workload(workload, "w0", nb_hosts=hosts[platform])
        except EmulatorError as exc:
            raise CampaignError(f"{where}: workloads.{run.workload_set}: {exc}") from None
