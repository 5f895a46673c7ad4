"""Where many independent runs execute: this machine's cores or a Ray cluster, behind one interface.

A task is a name, a plain picklable function and its arguments.  ``Executor.run(tasks)`` yields
one ``Outcome`` per task as each finishes, so the caller can store every result at once.  The
guarantees are the same on both executors:

- a task whose worker process dies is retried up to ``max_retries`` times, then reported by name;
- a task that raises is reported (one line) and the others go on;
- on Ctrl-C or SIGTERM no task starts any more, running ones are stopped, the outcomes already
  yielded stay with the caller, and ``KeyboardInterrupt`` reaches it.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from dataclasses import dataclass
from multiprocessing import connection
from pathlib import Path
from typing import Any, Callable, Generator, Optional, Sequence
from ..errors import BatschedError
from ..interrupts import WAIT_SLICE


__all__ = ["Task", "Outcome", "Executor", "ExecutorError", "LocalExecutor", "RayExecutor", "make_executor",
           "describe_error"]


class ExecutorError(BatschedError, RuntimeError):
    """Ray missing or unreachable: one line naming the address."""


@dataclass(frozen=True)
class Task:
    name: str
    fn: Callable[..., Any]
    args: tuple = ()


@dataclass
class Outcome:
    name: str
    value: Any = None
    error: Optional[str] = None     # one line; None when the task returned
    attempts: int = 1
    wall_s: float = 0.0             # from hand-over to result as the caller saw it (on Ray, queueing included)

    @property
    def ok(self) -> bool:
        return self.error is None


def describe_error(exc: BaseException) -> str:
    """``Type: message`` on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _check_names(tasks: Sequence[Task]) -> None:
    names = [t.name for t in tasks]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"task names must be unique; repeated: {', '.join(dup)}")


class Executor:
    """Runs tasks; see the module's text for the guarantees."""
    max_retries: int = 2
    # True where workers may not see the caller's files: simulations then carry their inputs.
    ships_inputs: bool = False

    def run(self, tasks: Sequence[Task]) -> Generator[Outcome, None, None]:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LocalExecutor(Executor):
    """``jobs`` worker processes on this machine (default: the number of cores), one task at a
    time each, so the executor knows which task a dead worker held and nothing waits queued in
    a worker when the campaign stops.

    A fresh process answers its first task in about 0.03 s where a local Ray instance takes 6 s on
    the 2-core development VM, so this is the default for campaigns that fit on one machine."""

    def __init__(self, jobs: int = 0, max_retries: int = 2):
        self.jobs = jobs or os.cpu_count() or 1
        self.max_retries = max_retries
        methods = multiprocessing.get_all_start_methods()
        self._context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")

    def describe(self) -> str:
        return f"{self.jobs} local process{'es' if self.jobs != 1 else ''}"

    def run(self, tasks: Sequence[Task]) -> Generator[Outcome, None, None]:
        _check_names(tasks)
        queue = list(reversed(tasks))           # popped from the end: submission order
        attempts = {t.name: 0 for t in tasks}
        busy: dict[Any, tuple[_Worker, Task, float]] = {}   # result connection -> ...
        idle: list[_Worker] = []
        try:
            while queue or busy:
                while queue and len(busy) < self.jobs:
                    task = queue.pop()
                    attempts[task.name] += 1
                    try:
                        worker = self._hand(task, idle)
                    except Exception as exc:    # a function or arguments that cannot be pickled
                        yield Outcome(task.name, error=f"it cannot be sent to a worker ({describe_error(exc)})")
                        continue
                    busy[worker.conn] = (worker, task, time.perf_counter())
                ready = connection.wait(list(busy) + [w.process.sentinel for w, _, _ in busy.values()],
                                        timeout=WAIT_SLICE)
                for conn in [c for c in list(busy) if c in ready or busy[c][0].process.sentinel in ready]:
                    worker, task, started = busy.pop(conn)
                    try:
                        ok, value = conn.recv()
                    except (EOFError, OSError):     # the worker died with the task
                        worker.stop()
                        if attempts[task.name] > self.max_retries:
                            yield Outcome(task.name, error=f"its worker process died {attempts[task.name]} times "
                                                           f"({worker.exit_reason()})", attempts=attempts[task.name])
                        else:
                            queue.append(task)
                        continue
                    idle.append(worker)
                    wall = time.perf_counter() - started
                    yield Outcome(task.name, value if ok else None, None if ok else value,
                                  attempts=attempts[task.name], wall_s=wall)
        finally:
            # Ctrl-C, SIGTERM, an error or an early close: running tasks are stopped, none starts.
            for worker in idle + [w for w, _, _ in busy.values()]:
                worker.stop()


    def _hand(self, task: Task, idle: list["_Worker"]) -> "_Worker":
        """An idle worker, or a new one, now running ``task``."""
        worker = idle.pop() if idle else _Worker(self._context)
        try:
            worker.conn.send((task.fn, task.args))
        except OSError:             # that idle worker died meanwhile: a fresh one takes the task
            worker.stop()
            worker = _Worker(self._context)
            worker.conn.send((task.fn, task.args))
        except Exception:
            idle.append(worker)
            raise
        return worker


class _Worker:
    def __init__(self, context):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve_tasks, args=(child,), daemon=True)
        self.process.start()
        child.close()

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout=5)
            if self.process.is_alive():
                self.process.kill()
        self.process.join()
        self.conn.close()

    def exit_reason(self) -> str:
        code = self.process.exitcode
        if code is not None and code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"


def _serve_tasks(conn) -> None:
    # Ctrl-C reaches the whole process group: workers leave the decision to the caller, which
    # stops them, so no worker turns its run into a half-written result on its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)   # not the caller's handler, inherited by fork
    while True:
        try:
            fn, args = conn.recv()
        except EOFError:
            return
        try:
            reply = (True, fn(*args))
        except BaseException as exc:
            reply = (False, describe_error(exc))
        try:
            conn.send(reply)
        except Exception as exc:   # an unpicklable result
            conn.send((False, f"its result cannot be sent back ({describe_error(exc)})"))


class RayExecutor(Executor):
    """Tasks as Ray remote functions: on a local Ray instance started here (``address=None``),
    on the cluster this machine belongs to (``"auto"``), or through Ray Client
    (``"ray://HOST:10001"``).  Values and results travel with the tasks; on a cluster, so do the
    simulations' input files (``ships_inputs``), so the nodes need no shared disk."""

    def __init__(self, address: Optional[str] = None, max_retries: int = 2, num_cpus: float = 1,
                 init_options: Optional[dict] = None):
        try:
            import ray
        except ImportError:
            raise ExecutorError("running on Ray needs Ray: pip install 'batsched_py[ray]'") from None
        self._ray = ray
        self.address = address
        self.ships_inputs = address is not None
        self.max_retries = max_retries
        self.num_cpus = num_cpus
        self._started = False
        if not ray.is_initialized():
            options = dict(init_options or {})
            if address is None:
                options.setdefault("include_dashboard", False)
                # Local workers import this very copy of batsched_py, not another installed one.
                package_root = str(Path(__file__).resolve().parents[2])
                env = options.setdefault("runtime_env", {}).setdefault("env_vars", {})
                env.setdefault("PYTHONPATH", os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
            try:
                ray.init(address=address, log_to_driver=False, **options)
            except Exception as exc:
                raise ExecutorError(f"--address {address or 'local'}: cannot connect to Ray "
                                   f"({describe_error(exc)})") from None
            self._started = True

    def describe(self) -> str:
        cpus = self._ray.cluster_resources().get("CPU", 0)
        return f"Ray ({self.address or 'local'}, {cpus:g} CPUs)"

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False

    def run(self, tasks: Sequence[Task]) -> Generator[Outcome, None, None]:
        _check_names(tasks)
        ray = self._ray
        remote = ray.remote(_call).options(max_retries=self.max_retries, retry_exceptions=False,
                                           num_cpus=self.num_cpus)
        refs: dict[Any, tuple[Task, float]] = {}
        try:
            for task in tasks:
                refs[remote.remote(task.fn, task.args)] = (task, time.perf_counter())
            pending = list(refs)
            while pending:
                done, pending = ray.wait(pending, num_returns=1, timeout=0.5)
                for ref in done:
                    task, started = refs.pop(ref)
                    try:
                        value = ray.get(ref)
                    except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as exc:
                        yield Outcome(task.name, error=f"its worker died {self.max_retries + 1} times "
                                                       f"({describe_error(exc)[:300]})",
                                      attempts=self.max_retries + 1)
                        continue
                    except ray.exceptions.RayTaskError as exc:
                        cause = exc.cause if getattr(exc, "cause", None) is not None else exc
                        yield Outcome(task.name, error=describe_error(cause), wall_s=time.perf_counter() - started)
                        continue
                    except ray.exceptions.RayError as exc:
                        yield Outcome(task.name, error=describe_error(exc), wall_s=time.perf_counter() - started)
                        continue
                    yield Outcome(task.name, value, wall_s=time.perf_counter() - started)
        finally:
            # Queued tasks are dropped and running ones stopped (their workers killed).
            for ref in refs:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # already finished or its worker already gone
                    pass


def _call(fn: Callable[..., Any], args: tuple) -> Any:
    return fn(*args)


def make_executor(address: Optional[str] = None, jobs: int = 0, max_retries: int = 2) -> Executor:
    """``address`` None: this machine's processes; ``local``: a local Ray instance; ``auto`` or
    ``ray://HOST:PORT``: an existing Ray cluster."""
    if address is None:
        return LocalExecutor(jobs, max_retries=max_retries)
    return RayExecutor(None if address == "local" else address, max_retries=max_retries)


def progress(total: int, desc: str, enabled: bool = True):
    """A tqdm bar on stderr when tqdm is installed and stderr is a terminal; else None."""
    if not enabled or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, unit="run", file=sys.stderr)
