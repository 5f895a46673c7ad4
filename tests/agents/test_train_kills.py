"""`batsched-py train` killed at any instant (SIGTERM or SIGINT, once or several times in a row,
while starting, learning or writing a checkpoint) ends with the signal's status, its marker, whole
checkpoints only and no traceback; `--resume` then goes on from the newest one.  An actor whose
episode fails ends the training in one line naming the day, not a traceback or a broken pipe."""
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from batsched_py.agents.common.checkpoints import latest_checkpoint, stats_of, zip_fault
from batsched_py.cli.agents import train_main
from batsched_py.interrupts import Interrupted, signals_deferred, signals_interrupt

from helpers.rl import PLATFORM

ROOT = Path(__file__).resolve().parents[2]

# the command line, with a checkpoint write that signals its own process half-way (SLOW_SAVE set)
LAUNCH = """
import os, signal, sys, time
if os.environ.get("SLOW_SAVE"):
    from stable_baselines3.common.base_class import BaseAlgorithm
    save = BaseAlgorithm.save
    def slow_save(self, path, *args, **kwargs):
        if "checkpoints" in str(path):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.3)
        save(self, path, *args, **kwargs)
    BaseAlgorithm.save = slow_save
from batsched_py.cli import command
command()
"""


def _argv(out, days, vec, *extra):
    return ["train", "shutdown", "-p", str(PLATFORM), "-w", str(days), "-o", str(out), "--actors", "2",
            "--vec-env", vec, "--no-progress", "--hyper", '{"n_steps": 16, "n_epochs": 1}',
            "--checkpoint-every", "32", *extra]


def _start(argv, **env):
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    environ.update(env)
    return subprocess.Popen([sys.executable, "-c", LAUNCH, *argv], env=environ, stderr=subprocess.PIPE, text=True)


def _checkpoints(out):
    return sorted((out / "checkpoints").glob("model_*_steps.zip")) if (out / "checkpoints").is_dir() else []


def _stopped_cleanly(proc, sig, out):
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig.value, err
    assert "Traceback" not in err and f"interrupted by {sig.name}" in err, err
    assert f"interrupted by {sig.name}" in (out / "_INCOMPLETE").read_text()
    assert not (out / "model.json").exists()
    for path in _checkpoints(out):
        assert zip_fault(path) is None, path
        assert stats_of(path).is_file(), path
    assert not list(out.rglob("*.part")), list(out.rglob("*.part"))


def _resumes(out, days):
    """--resume from the newest checkpoint, 32 steps more, succeeds."""
    newest = latest_checkpoint(out / "checkpoints")
    done = int(newest.name.split("_")[1]) if newest else 0
    argv = _argv(out, days, "dummy", "--resume", "--total-steps", str(done + 32))[1:]
    assert train_main(argv) == 0
    record = json.loads((out / "model.json").read_text())
    assert record["steps"] == done + 32
    assert record["resumed_from"] == (str(newest) if newest else None)
    assert not (out / "_INCOMPLETE").exists()


def test_a_signal_during_a_checkpoint_write_waits_until_it_is_whole(tmp_path, days):
    out = tmp_path / "out"
    proc = _start(_argv(out, days, "dummy", "--total-steps", "1000000"), SLOW_SAVE="1")
    _stopped_cleanly(proc, signal.SIGTERM, out)
    assert [p.name for p in _checkpoints(out)] == ["model_32_steps.zip"]
    _resumes(out, days)


def test_kills_at_random_instants_each_followed_by_resume(tmp_path, days):
    rng = random.Random(33)
    out = tmp_path / "out"
    for round_ in range(3):
        sig = rng.choice([signal.SIGTERM, signal.SIGINT])
        vec = rng.choice(["subprocess", "dummy"])
        before = len(_checkpoints(out))
        proc = _start(_argv(out, days, vec, "--total-steps", "1000000", *(["--resume"] if round_ else [])))
        if round_ == 0:              # (while starting: the actors, the first rollout)
            deadline = time.monotonic() + 120
            while not out.exists():
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no output folder in 120 s"
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 1.0))
        else:                        # (while learning and writing checkpoints: one every rollout)
            deadline = time.monotonic() + 120
            while len(_checkpoints(out)) <= before:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no new checkpoint in 120 s"
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.3))
        for _ in range(rng.randint(1, 3)):          # (a batch system may repeat its signal)
            proc.send_signal(sig)
            time.sleep(rng.uniform(0.0, 0.02))
        _stopped_cleanly(proc, sig, out)
    _resumes(out, days)


def test_signals_wait_for_a_deferred_block_then_interrupt():
    written = []
    with pytest.raises(Interrupted) as stopped:
        with signals_interrupt():
            with signals_deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)              # (the handler has run: it only noted the signal)
                os.kill(os.getpid(), signal.SIGINT)
                written.append("whole")
            written.append("after")           # (never: the first signal is raised as the block ends)
    assert written == ["whole"] and stopped.value.signal == "SIGTERM"


def test_a_repeated_signal_while_stopping_is_ignored_until_the_outermost_block_closes():
    """A batch system repeats its SIGTERM: once one is raised, a repeat (here during the cleanup, under
    the outer block's handler) lets the cleanup finish; the outermost block then gives its caller's
    handlers back, and a later signal stops a later block again."""
    before = signal.getsignal(signal.SIGTERM)
    cleaned = []
    with pytest.raises(Interrupted) as stopped:
        with signals_interrupt():
            try:
                with signals_interrupt():
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(5)                 # (never: the handler raises)
            finally:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)                  # (the handler has run: it ignored the repeat)
                cleaned.append("whole")
    assert cleaned == ["whole"] and stopped.value.signal == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is before
    with pytest.raises(Interrupted) as again:
        with signals_interrupt():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
    assert again.value.signal == "SIGINT"


# in every process of the training (actor subprocesses included): a step that fails
FAILING_STEP = """
from batsched_py.agents.deepshutdown.env import ShutdownEnv
def step(self, action):
    raise RuntimeError("a bug in the step")
ShutdownEnv.step = step
"""


def test_an_actor_subprocess_that_fails_is_one_line_naming_its_day(tmp_path, days):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(FAILING_STEP)
    out = tmp_path / "out"
    proc = _start(_argv(out, days, "subprocess", "--total-steps", "64"),
                  PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert "Traceback" not in err and "EOFError" not in err and "BrokenPipe" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"batsched-py train: an episode on {days}") and "RuntimeError: a bug in the step" in last, err
    assert (out / "_INCOMPLETE").read_text().startswith("training failed: an episode on")


def test_an_actor_in_process_that_fails_is_one_line_naming_its_day(tmp_path, days, capsys, monkeypatch):
    from batsched_py.agents.deepshutdown.env import ShutdownEnv

    def step(self, action):
        raise RuntimeError("a bug in the step")
    monkeypatch.setattr(ShutdownEnv, "step", step)
    assert train_main(_argv(tmp_path / "out", days, "dummy", "--total-steps", "64")[1:]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith(f"batsched-py train: an episode on {days}")
