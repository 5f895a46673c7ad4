"""Evaluate policies (trained agents and baselines) on every day of workload folders, through the
environments, in parallel processes: ``days.csv`` (a row per policy, day and repetition),
``summary.csv`` (a row per policy: mean/std/min/max of each figure), a terminal table, figures.

A policy is ``[LABEL=]NAME[:OPTIONS]``: NAME is a baseline of the environment (T0, T1, T5, OR*, QB /
FF, EASY, SAF), a trained agent (a ``.zip``), or ``module:callable``; OPTIONS a JSON object
(``{"deterministic": false}`` samples a trained agent's actions: repeat it with ``--repeat``;
``{"env": {...}}`` gives a trained agent environment arguments of its own, over its record's and
``--env-args``, e.g. a shield).
"""
from __future__ import annotations

import csv
import json
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

import gymnasium as gym
import numpy as np

from ... import envs  # noqa: F401  (registers the environments)
from ...campaigns.executor import Task, make_executor
from ...errors import BatschedError
from ...interrupts import interruption, signals_interrupt
from .loading import load_policy, trained_with
from .papers import BaselineOptionsError, UnknownAgentError, baseline_maker, paper
from .saved import load_agent

# (reward: the episode's return, the environment's own objective)
FIGURES = ("energy_waste", "nb_switches", "delay", "stretch", "slowdown", "waiting_time", "reward")
UNITS = {"energy_waste": "W·{t}", "nb_switches": "node switches", "delay": "{t}", "stretch": "",
         "slowdown": "", "waiting_time": "{t}", "reward": ""}
DAY_FIELDS = ("policy", "group", "split", "day", "repeat", "steps", "nb_jobs", *FIGURES, "wall_time_s")


class EvaluateError(BatschedError, ValueError):
    """A bad evaluation argument, named."""


@dataclass
class PolicySpec:
    label: str
    name: str
    options: dict = field(default_factory=dict)

    @property
    def stochastic(self) -> bool:
        return self.name.endswith(".zip") and not self.options.get("deterministic", True)


def parse_policies(text: str) -> list[PolicySpec]:
    """Comma-separated ``[LABEL=]NAME[:OPTIONS]`` (commas inside OPTIONS' braces do not split)."""
    items, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    items.append(current)
    specs = []
    for item in (i.strip() for i in items):
        if not item:
            raise EvaluateError(f"--policies {text!r}: an empty policy name")
        label, sep, rest = item.rpartition("=") if "=" in item.split("{", 1)[0] else ("", "", item)
        if sep and not label.strip():
            raise EvaluateError(f"--policies {text!r}: {item!r} has an empty label before '='")
        name, options = rest, {}
        if "{" in rest:
            name, _, raw = rest.partition(":{")
            try:
                options = json.loads("{" + raw)
            except json.JSONDecodeError as exc:
                raise EvaluateError(f"--policies: options of {name!r} are not a JSON object: {exc}") from None
        _check_options(name, options)
        label = label or (Path(name).stem if name.endswith(".zip") else name)
        specs.append(PolicySpec(label, name, options))
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise EvaluateError(f"--policies: two policies have the same label ({', '.join(labels)}); name them LABEL=NAME")
    return specs


def _check_options(name: str, options: Any) -> None:
    """A trained agent's options are ``deterministic`` and ``env`` (its own environment arguments); a
    baseline's are its arguments (checked when it is built, :func:`_policy`); a ``module:callable``
    takes none."""
    if not isinstance(options, dict):
        raise EvaluateError(f"--policies: options of {name!r} are not a JSON object: {options!r}")
    if not name.endswith(".zip") and ":" not in name:
        return
    known = {"deterministic", "env"} if name.endswith(".zip") else set()
    unknown = sorted(set(options) - known)
    if unknown:
        raise EvaluateError(f"--policies: {name!r} takes no option {', '.join(map(repr, unknown))} "
                            f"({'its options are deterministic and env' if known else 'a module:callable takes none'})")
    if not isinstance(options.get("deterministic", True), bool):
        raise EvaluateError(f"--policies: {name!r}: deterministic must be true or false, not "
                            f"{options['deterministic']!r}")
    if not isinstance(options.get("env", {}), dict):
        raise EvaluateError(f"--policies: {name!r}: env must be an object of environment arguments, not "
                            f"{options['env']!r}")


def dedupe(days: Sequence[Path], against: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """``days`` less those whose jobs and profiles equal a day of ``against`` (a held-out day that is
    also a training day is no held-out day): (kept, dropped)."""
    def key(path: Path) -> Optional[str]:
        try:
            doc = json.loads(path.read_text())
            return json.dumps([doc.get("jobs"), doc.get("profiles")], sort_keys=True)
        except (OSError, ValueError):
            return None          # (an unreadable day is named when it is played)
    seen = {key(p) for p in against}
    seen.discard(None)
    kept: list[Path] = []
    dropped: list[Path] = []
    for day in days:
        (dropped if key(day) in seen else kept).append(day)
    return kept, dropped


def day_group(path: Path) -> tuple[str, str]:
    """(group, split) of a day file: ``lyon_2/workloads/test/x.json`` -> ("lyon_2", "test")."""
    parts = path.resolve().parts
    split = parts[-2] if parts[-2] in ("train", "test") else ""
    group = parts[-4] if split and len(parts) >= 4 and parts[-3] == "workloads" else path.parent.name
    return group, split


def _policy(spec: PolicySpec, env_kind: str):
    if spec.name.endswith(".zip"):
        return load_agent(spec.name, env_kind, deterministic=spec.options.get("deterministic", True))
    baselines = paper(env_kind).BASELINES
    if spec.options:
        if spec.name not in baselines:
            raise EvaluateError(f"--policies: {spec.name!r} takes no options: only a baseline of {env_kind} "
                                f"({', '.join(baselines)}) or a MODEL.zip does")
        try:
            return baseline_maker(paper(env_kind), spec.name, spec.options)()
        except BaselineOptionsError as exc:
            raise EvaluateError(f"--policies: {spec.name} does not take {json.dumps(spec.options)} ({exc})") from None
    return load_policy(spec.name, env_kind, baselines)


def run_days(env_kind: str, platform: str, env_kwargs: dict, spec: PolicySpec, days: Sequence[str],
             repeats: Sequence[int]) -> list[dict[str, Any]]:
    """One worker's share: ``spec`` on ``days`` (each repetition seeded by its number)."""
    import torch    # (optional: the rl extra)
    torch.set_num_threads(1)
    policy = _policy(spec, env_kind)
    env_kwargs = _agent_env(env_kind, spec, env_kwargs)
    env: Any = gym.make(paper(env_kind).ENV, platform=platform, workloads=list(days), **env_kwargs).unwrapped
    rows = []
    for day in days:
        for r in repeats:
            t0 = time.perf_counter()
            if spec.stochastic:
                torch.manual_seed(r)
                np.random.seed(r)
            obs, info = env.reset(seed=r, options={"workload": day})
            if hasattr(policy, "bind"):
                policy.bind(env.scheduler)
            steps, done, total = 0, False, 0.0
            while not done:
                obs, reward, term, trunc, info = env.step(policy(obs))
                steps += 1
                total += reward
                done = term or trunc
            info["reward"] = total
            group, split = day_group(Path(day))
            rows.append({"policy": spec.label, "group": group, "split": split, "day": Path(day).name, "repeat": r,
                         "steps": steps, "nb_jobs": int(info.get("nb_jobs", 0)),
                         **{k: info.get(k, float("nan")) for k in FIGURES},
                         "wall_time_s": round(time.perf_counter() - t0, 3)})
    env.close()
    return rows


def summarise(rows: Iterable[dict[str, Any]], labels: Sequence[str]) -> list[dict[str, Any]]:
    by: dict[str, list[dict]] = {label: [] for label in labels}
    for row in rows:
        by[row["policy"]].append(row)
    out = []
    for label, rs in by.items():
        summary: dict[str, Any] = {"policy": label, "days": len({(r["group"], r["split"], r["day"]) for r in rs}),
                                   "runs": len(rs)}
        for k in FIGURES:
            xs = [float(r[k]) for r in rs if not math.isnan(float(r[k]))]
            summary.update({f"{k}_mean": statistics.fmean(xs) if xs else float("nan"),
                            f"{k}_std": statistics.pstdev(xs) if len(xs) > 1 else 0.0,
                            f"{k}_min": min(xs) if xs else float("nan"), f"{k}_max": max(xs) if xs else float("nan")})
        out.append(summary)
    return out


def evaluate(env_kind: str, platform: Path, days: Sequence[Path], specs: Sequence[PolicySpec], out: Path, *,
             repeat: int = 1, jobs: Optional[int] = None, env_kwargs: Optional[dict] = None, chunk: int = 8,
             progress: bool = True, address: Optional[str] = None) -> list[dict[str, Any]]:
    """Every policy on every day, ``chunk`` days a task, on the campaigns' executor (local worker
    processes, or Ray at ``address``: the day files must then be readable on every node)."""
    try:
        paper(env_kind)
    except UnknownAgentError as exc:
        raise EvaluateError(f"--env {exc}") from None
    if jobs is not None and jobs < 0:
        raise EvaluateError(f"jobs {jobs}: not a number of processes")
    _check_env(env_kind, platform, days, env_kwargs or {})
    for spec in specs:          # fail before any run: every policy loads, every agent fits its environment
        if spec.name.endswith(".zip"):
            _check_agent(env_kind, platform, days, env_kwargs or {}, spec)
        else:
            _policy(spec, env_kind)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EvaluateError(f"--out {out}: {exc.strerror}") from None
    tasks = []
    for spec in specs:
        repeats = list(range(repeat if spec.stochastic else 1))
        for i in range(0, len(days), chunk):
            tasks.append(Task(f"{spec.label} days {i}-{min(i + chunk, len(days)) - 1}", run_days,
                              (env_kind, str(platform), env_kwargs or {}, spec,
                               [str(d) for d in days[i:i + chunk]], repeats)))
    rows: list[dict] = []
    marker = out / "_INCOMPLETE"
    marker.write_text("evaluation running or interrupted: days.csv holds the finished days only\n")
    total = sum(len(t.args[4]) * len(t.args[5]) for t in tasks)
    bar = _bar(total, progress)
    failed = []
    # (Ctrl-C or SIGTERM: no task starts any more, running ones stop, finished days stay in days.csv)
    with open(out / "days.csv", "w", newline="") as f, signals_interrupt(), \
            make_executor(address, jobs or os.cpu_count() or 1) as executor:
        writer = csv.DictWriter(f, DAY_FIELDS)
        writer.writeheader()
        try:
            for outcome in executor.run(tasks):
                if not outcome.ok:
                    failed.append(f"{outcome.name}: {outcome.error}")
                    continue
                rows += outcome.value
                writer.writerows(outcome.value)
                f.flush()
                bar(len(outcome.value))
        except KeyboardInterrupt as exc:
            marker.write_text(f"evaluation {interruption(exc)}: days.csv holds the finished days only\n")
            raise
        finally:
            bar(None)
    if failed:
        marker.write_text(f"evaluation failed: {'; '.join(failed)}: days.csv holds the finished days only\n")
        raise EvaluateError("; ".join(failed) + f" (finished days are in {out / 'days.csv'})")
    order = {s.label: i for i, s in enumerate(specs)}
    day_order = {(day_group(d), d.name): i for i, d in enumerate(days)}
    rows.sort(key=lambda r: (order[r["policy"]], day_order.get(((r["group"], r["split"]), r["day"]), 0), r["repeat"]))
    with open(out / "days.csv", "w", newline="") as f:        # (in policy and day order)
        writer = csv.DictWriter(f, DAY_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    summary = summarise(rows, [s.label for s in specs])
    with open(out / "summary.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, list(summary[0]))
        writer.writeheader()
        writer.writerows(summary)
    marker.unlink()
    return summary


def _agent_env(env_kind: str, spec: PolicySpec, env_kwargs: dict) -> dict:
    """The environment arguments ``spec`` plays with: a saved agent's also hold the options it was
    trained with (its record), unless ``env_kwargs`` (--env-args) or its own ``env`` option say otherwise."""
    if not spec.name.endswith(".zip"):
        return env_kwargs
    return trained_with(spec.name, paper(env_kind).TRAINED_OPTIONS, {**env_kwargs, **spec.options.get("env", {})})


def _check_agent(env_kind: str, platform: Path, days: Sequence[Path], env_kwargs: dict, spec: PolicySpec) -> None:
    """The saved agent ``spec`` loads and its observations are those of its environment (on the
    first day): one message here, not one per task."""
    agent = load_agent(spec.name, env_kind)
    if not days:
        return
    try:
        env: Any = gym.make(paper(env_kind).ENV, platform=str(platform), workloads=[str(days[0])],
                            **_agent_env(env_kind, spec, env_kwargs)).unwrapped
    except TypeError as exc:
        raise EvaluateError(f"--policies: {spec.label}'s environment: {exc}") from None
    try:
        env.reset(seed=0)
        agent.bind(env.scheduler)
    finally:
        env.close()


def _check_env(env_kind: str, platform: Path, days: Sequence[Path], env_kwargs: dict) -> None:
    """One environment made here, reading every day: a bad day or environment argument is named
    before any worker starts (not once per task, in each worker)."""
    try:
        gym.make(paper(env_kind).ENV, platform=str(platform), workloads=[str(d) for d in days], **env_kwargs).close()
    except TypeError as exc:
        raise EvaluateError(f"--env-args {json.dumps(env_kwargs)}: {exc}") from None


def _bar(total: int, enabled: bool):
    """Days done: a tqdm bar on a terminal, else a plain line each tenth of them (a log file
    gets no \\r)."""
    if not enabled:
        return lambda n: None
    if not sys.stderr.isatty():
        return _lines(total)
    try:
        from tqdm import tqdm    # (optional: the progress extra)
        bar = tqdm(total=total, unit="day", desc="evaluate", file=sys.stderr)

        def update(n):
            if n is None:
                bar.close()
            else:
                bar.update(n)
        return update
    except ImportError:
        return lambda n: None


def _lines(total: int):
    done, shown = 0, -1

    def update(n):
        nonlocal done, shown
        if n is None:
            return
        done += n
        tenth = 10 * done // max(total, 1)
        if tenth > shown:
            shown = tenth
            print(f"evaluate: {done}/{total} days ({100 * done / max(total, 1):.0f}%)", file=sys.stderr, flush=True)
    return update


def table(summary: Sequence[dict[str, Any]], time_unit: str = "min") -> str:
    """The terminal table: mean (std) of each figure per policy, with units."""
    heads = ["policy"] + [f"{k} ({UNITS[k].format(t=time_unit)})" if UNITS[k] else k for k in FIGURES]
    lines = [heads]
    for s in summary:
        lines.append([s["policy"]] + [f"{s[k + '_mean']:.4g} ({s[k + '_std']:.2g})" for k in FIGURES])
    widths = [max(len(row[i]) for row in lines) for i in range(len(heads))]
    text = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in lines]
    return "\n".join([text[0], "  ".join("-" * w for w in widths), *text[1:]]) + "\n(mean (std) over days)"
