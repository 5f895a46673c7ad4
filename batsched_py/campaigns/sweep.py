"""A small hyperparameter sweep over plain Ray tasks: every combination of a grid of settings is
handed to a picklable ``train(settings) -> dict`` function; the results come back as a table."""
from __future__ import annotations

import itertools
from contextlib import closing
from typing import Any, Callable, Mapping, Optional, Sequence

from ..interrupts import signals_interrupt
from .executor import Executor, RayExecutor, Task


def grid(settings: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """``{"lr": [1e-3, 1e-4], "gamma": [0.99]}`` -> every combination, in the grid's order."""
    for name, values in settings.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
            raise ValueError(f"sweep grid: {name} must be a non-empty list of values, not {values!r}")
    names = list(settings)
    return [dict(zip(names, combo)) for combo in itertools.product(*(settings[n] for n in names))]


def run_sweep(train: Callable[[dict[str, Any]], Mapping[str, Any]], settings: Mapping[str, Sequence[Any]],
              executor: Optional[Executor] = None, address: Optional[str] = None) -> list[dict[str, Any]]:
    """One row per combination, in the grid's order: its settings, what ``train`` returned, plus
    ``status`` (done or failed), ``error`` and ``wall_s``.  Runs on ``executor``, else on Ray at
    ``address`` (None: a local Ray instance, or the one already started).  On Ctrl-C or SIGTERM the
    ``KeyboardInterrupt`` carries the rows finished so far as ``exc.rows``."""
    combos = grid(settings)
    own = executor is None
    executor = executor or RayExecutor(address)
    rows: dict[str, dict[str, Any]] = {}
    try:
        tasks = [Task(str(i), train, (combo,)) for i, combo in enumerate(combos)]
        with signals_interrupt(), closing(executor.run(tasks)) as outcomes:
            for outcome in outcomes:
                combo = combos[int(outcome.name)]
                result = dict(outcome.value) if outcome.ok else {}
                rows[outcome.name] = {**combo, **result, "status": "done" if outcome.ok else "failed",
                                      "error": outcome.error or "", "wall_s": round(outcome.wall_s, 3)}
    except KeyboardInterrupt as exc:
        exc.rows = _in_grid_order(rows, combos)  # type: ignore[attr-defined]
        raise
    finally:
        if own:
            executor.close()
    return _in_grid_order(rows, combos)


def _in_grid_order(rows: dict[str, dict[str, Any]], combos: list) -> list[dict[str, Any]]:
    return [rows[str(i)] for i in range(len(combos)) if str(i) in rows]

