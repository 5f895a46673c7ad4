"""Run a campaign's missing runs on an executor, storing each finished run at once."""
from __future__ import annotations

import shutil
import sys
from contextlib import closing
from dataclasses import dataclass, field
from typing import Optional, TextIO

from ..interrupts import signals_interrupt
from .executor import Executor, Task, progress
from .simulation import check_inputs, simulate_to_files, with_inputs, write_files
from .spec import Campaign, CampaignError, CampaignRun
from .store import ResultStore, progress_counts


@dataclass
class CampaignReport:
    done: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)         # key -> error
    interrupted: list[str] = field(default_factory=list)
    skipped: int = 0                                             # already done before


def digests(campaign: Campaign) -> dict[str, str]:
    file_hashes: dict[str, str] = {}
    return {run.key: run.digest(file_hashes) for run in campaign.runs}


def campaign_status(campaign: Campaign) -> dict[str, list[str]]:
    if not campaign.database.is_file():
        return {"done": [], "failed": [], "interrupted": [], "missing": [r.key for r in campaign.runs]}
    store = ResultStore(campaign.database)
    try:
        return progress_counts(campaign, store.rows(), digests(campaign))
    finally:
        store.close()


def run_campaign(campaign: Campaign, executor: Executor, show_progress: bool = True,
                 log: Optional[TextIO] = None) -> CampaignReport:
    """Run every run not done yet (or whose inputs changed).  On Ctrl-C or SIGTERM the runs not
    finished are marked ``interrupted`` and ``KeyboardInterrupt`` propagates with the report
    attached as ``exc.report``."""
    log = log or sys.stderr
    for run in campaign.runs:
        problem = check_inputs(run.spec, f"campaign file {campaign.path}: run {run.key}")
        if problem:
            raise CampaignError(problem)
    sums = digests(campaign)
    store = ResultStore(campaign.database)
    report = CampaignReport()
    try:
        states = progress_counts(campaign, store.rows(), sums)
        done_before = set(states["done"])
        todo = [r for r in campaign.runs if r.key not in done_before]
        report.skipped = len(campaign.runs) - len(todo)
        by_key = {r.key: r for r in todo}
        print(f"campaign {campaign.path.name}: {len(todo)} run{'s' if len(todo) != 1 else ''} to do "
              f"({report.skipped} already done) "
              f"on {executor.describe()}", file=log)
        bar = progress(len(todo), "runs", show_progress)
        tasks = [Task(r.key, simulate_to_files, (with_inputs(r.spec) if executor.ships_inputs else r.spec,))
                 for r in todo]
        try:
            with signals_interrupt(), closing(executor.run(tasks)) as outcomes:
                for outcome in outcomes:
                    run = by_key.pop(outcome.name)
                    if outcome.ok:
                        _store_files(campaign, run, outcome.value)
                        store.record(run, "done", sums[run.key], metrics=outcome.value.metrics,
                                     wall_s=outcome.value.simulation_s, attempts=outcome.attempts)
                        report.done.append(run.key)
                    else:
                        store.record(run, "failed", sums[run.key], wall_s=outcome.wall_s,
                                     attempts=outcome.attempts, error=outcome.error)
                        report.failed[run.key] = outcome.error or ""
                    if bar is not None:
                        bar.update()
                    elif show_progress:     # off a terminal (a batch job's log): a line per run
                        print(f"  {'done' if outcome.ok else 'failed'} ({len(report.done) + len(report.failed)}/"
                              f"{len(todo)}): {run.key}", file=log)
        except KeyboardInterrupt as exc:
            for key, run in by_key.items():
                store.record(run, "interrupted", sums[key], error="interrupted before it finished")
                report.interrupted.append(key)
            exc.report = report  # type: ignore[attr-defined]
            raise
        finally:
            if bar is not None:
                bar.close()
    finally:
        store.close()
    return report


def _store_files(campaign: Campaign, run: CampaignRun, result) -> None:
    """The run's CSVs into its folder, whole or not at all: written beside it, then renamed."""
    final = campaign.run_dir(run)
    partial = final.with_name(final.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    write_files(result, partial / "out")
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
