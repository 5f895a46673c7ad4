"""`batsched-py train` and `evaluate` under bad inputs: each is refused before any actor or worker
starts, in one line naming the file (and job) or option and what is wrong, with exit status 2 and
no traceback; nothing is replaced silently (a batch size given is the batch size used); a used
output folder needs --resume or --overwrite; --resume passes over checkpoints cut short, empty or of
another training, saying so, and refuses in one line when none fits."""
import json
import shlex
import zipfile

import pytest

from batsched_py.cli.agents import evaluate_main, train_main

from helpers.rl import PLATFORM, tiny_day


def _train(out, days, *extra, agent="shutdown"):
    return [agent, "-p", str(PLATFORM), "-w", str(days), "-o", str(out), "--total-steps", "32", "--actors", "1",
            "--vec-env", "dummy", "--no-progress", "--hyper", '{"n_steps": 32}', *extra]


def _refused(main, argv, capsys, command, words):
    """``main(argv)`` ends with status 2 and a last line ``batsched-py COMMAND: ...`` holding every
    one of ``words``, without a traceback."""
    try:
        code = main(argv)
    except SystemExit as exc:        # (argparse)
        code = exc.code
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert "Traceback" not in err, err
    last = err.splitlines()[-1]
    assert last.startswith(f"batsched-py {command}: "), err
    assert all(w in last for w in words), last
    return last


# (a replacement of the first job of day c.json, and what the error names)
BAD_DAYS = [
    ({"subtime": "NaN"}, ["c.json", "'w0!0'", "subtime"]),
    ({"res": 500}, ["c.json", "'w0!0'", "500 hosts", "168"]),
    ({"walltime": "x"}, ["c.json", "walltime"]),
    ({"profile": "nowhere"}, ["c.json", "nowhere"]),
]


@pytest.mark.parametrize("changes,words", BAD_DAYS, ids=["nan-subtime", "too-large", "walltime", "profile"])
@pytest.mark.parametrize("vec", ["subprocess", "dummy"])
def test_a_bad_day_stops_train_before_its_actors_start(tmp_path, days, capsys, changes, words, vec):
    tiny_day(days / "c.json", **changes)
    argv = _train(tmp_path / "out", days, "--vec-env", vec, "--actors", "2")
    _refused(train_main, argv, capsys, "train", ["workloads:", *words])
    assert not (tmp_path / "out").exists()


def test_a_day_that_is_not_json_is_named(tmp_path, days, capsys):
    (days / "c.json").write_text('{"jobs": [')
    _refused(train_main, _train(tmp_path / "out", days), capsys, "train", ["c.json", "invalid JSON"])


@pytest.mark.parametrize("extra,words", [
    (["--seed", "-1"], ["--seed", "-1"]),
    (["--seed", str(2 ** 32)], ["--seed", str(2 ** 32), "from 0 to"]),
    (["--hyper", '{"gamma": 2}'], ["--hyper", "gamma 2", "(0, 1]"]),
    (["--hyper", '{"gamma": 0}'], ["--hyper", "gamma 0"]),
    (["--hyper", '{"gae_lambda": -0.5}'], ["gae_lambda -0.5"]),
    (["--hyper", '{"n_epochs": -1}'], ["--hyper", "n_epochs -1"]),
    (["--hyper", '{"n_epochs": 1.5}'], ["n_epochs 1.5"]),
    (["--hyper", '{"n_steps": 0}'], ["n_steps 0"]),
    (["--hyper", '{"learning_rate": "fast"}'], ["learning_rate 'fast'"]),
    (["--hyper", '{"learning_rate": -1e-3}'], ["learning_rate -0.001"]),
    (["--hyper", '{"clip_range": 0}'], ["clip_range 0"]),
    (["--hyper", '{"ent_coef": -1}'], ["ent_coef -1"]),
    (["--hyper", '{"batch_size": 1}'], ["batch_size 1"]),
    (["--hyper", '{"batch_size": true}'], ["batch_size True"]),
    (["--hyper", '{"n_steps": 16, "batch_size": 64}'], ["batch_size 64", "16 steps"]),
    (["--hyper", '{"n_steps": 16, "minibatches": 9}'], ["minibatches 9"]),
    (["--hyper", '{"n_steps": 16}'], ["minibatches 16", "the paper's", "batch_size"]),
    (["--hyper", '{"batch_size": 8, "minibatches": 2}'], ["batch_size or minibatches"]),
    (["--hyper", '{"gama": 0.9}'], ["--hyper", "'gama'"]),
    (["--hyper", "[1]"], ["--hyper", "JSON object"]),
    (["--imitate-days", "3"], ["--imitate-days", "--imitate"]),
    (["--imitate-rounds", "2", "--imitate-epochs", "2"], ["--imitate-epochs", "--imitate-rounds", "--imitate"]),
    (["--imitate", "EASY"], ["--imitate 'EASY'", "T0"]),
    (["--imitate-options", '{"max_stretch": 0.25}'], ["--imitate-options", "--imitate"]),
    (["--imitate", "T0", "--imitate-options", '{"max_stretch": 0.25}'], ["--imitate-options", "T0", "does not take"]),
    (["--imitate", "QB", "--imitate-options", '{"max_wait": 0}'], ["--imitate-options", "QB", "max_wait > 0"]),
    (["--ray-address", "auto"], ["--ray-address auto", "--vec-env ray"]),
    (["--env", '{"cores_per_node": 1000}'], ["--env", "cores_per_node", "1000", "168"]),
    (["--env", '{"tau": -1}'], ["--env", "tau"]),
    (["--env", '{"bogus": 1}'], ["--env", "bogus"]),
    (["--masking"], ["--masking", "scheduling"]),
    (["--total-steps", "0"], ["--total-steps"]),
    (["--resume", "--overwrite"], ["--resume", "--overwrite"]),
], ids=["seed-negative", "seed-huge", "gamma-2", "gamma-0", "lambda", "epochs-negative", "epochs-float", "steps-0",
        "lr-text", "lr-negative", "clip-0", "entropy-negative", "batch-1", "batch-bool", "batch-over-rollout",
        "minibatches-over-rollout", "paper-minibatches", "batch-and-minibatches", "hyper-unknown", "hyper-list", "imitate-days-alone",
        "imitate-rounds-alone", "imitate-other-env", "teacher-options-alone", "teacher-options-not-taken", "teacher-option-value", "ray-address-dummy", "cores-per-node", "env-tau", "env-key",
        "masking-shutdown", "no-steps", "resume-and-overwrite"])
def test_bad_training_options_are_refused_in_one_line_before_anything_starts(tmp_path, days, capsys, extra, words):
    argv = _train(tmp_path / "out", days)
    if "--hyper" in extra:          # (the option given last wins in argparse: drop the default)
        i = argv.index("--hyper")
        del argv[i:i + 2]
    _refused(train_main, [*argv, *extra], capsys, "train", words)
    assert not (tmp_path / "out" / "_INCOMPLETE").exists() and not (tmp_path / "out" / "checkpoints").exists()


def test_a_batch_size_given_is_the_batch_size_used(tmp_path, days):
    argv = _train(tmp_path / "out", days)
    argv[argv.index("--hyper") + 1] = '{"n_steps": 32, "batch_size": 8}'
    assert train_main(argv) == 0
    record = json.loads((tmp_path / "out" / "model.json").read_text())
    assert record["hyperparameters"]["batch_size"] == 8 and "minibatches" not in record["hyperparameters"]
    assert shlex.split(record["command"]) == ["batsched-py", "train", *map(str, argv)]     # (a command to paste again)


def test_progress_counts_the_steps_that_really_run(tmp_path, days, capsys):
    argv = [a for a in _train(tmp_path / "out", days, "--total-steps", "40") if a != "--no-progress"]
    assert train_main(argv) == 0
    err = capsys.readouterr().err
    assert "train: 64 steps to run, not 40: whole rollouts of n_steps 32 x 1 actors" in err and "\r" not in err, err
    assert json.loads((tmp_path / "out" / "model.json").read_text())["steps"] == 64


def test_a_used_output_folder_needs_resume_or_overwrite(tmp_path, days, capsys):
    out = tmp_path / "out"
    assert train_main(_train(out, days, "--checkpoint-every", "32")) == 0
    first = (out / "model.zip").read_bytes()
    _refused(train_main, _train(out, days), capsys, "train", [str(out), "holds a training", "--resume", "--overwrite"])
    assert (out / "model.zip").read_bytes() == first
    assert train_main(_train(out, days, "--overwrite", "--seed", "3", "--checkpoint-every", "1000")) == 0
    assert not (out / "checkpoints").exists() or not any((out / "checkpoints").iterdir())
    assert json.loads((out / "model.json").read_text())["seed"] == 3


def test_resume_passes_over_cut_and_empty_checkpoints_and_says_so(tmp_path, days, capsys):
    out = tmp_path / "out"
    assert train_main(_train(out, days, "--checkpoint-every", "32")) == 0
    checkpoints = out / "checkpoints"
    (checkpoints / "model_96_steps.zip").write_bytes(b"PK\x03\x04 cut short")
    zipfile.ZipFile(checkpoints / "model_64_steps.zip", "w").close()
    capsys.readouterr()
    assert train_main(_train(out, days, "--resume", "--total-steps", "64")) == 0
    err = capsys.readouterr().err
    assert "passed over model_96_steps.zip: cut short" in err and "passed over model_64_steps.zip: an empty zip" in err
    assert "Traceback" not in err, err
    record = json.loads((out / "model.json").read_text())
    assert record["resumed_from"].endswith("model_32_steps.zip") and record["steps"] == 64


def test_resume_from_another_agents_checkpoints_is_one_line(tmp_path, days, capsys):
    out = tmp_path / "out"
    assert train_main(_train(out, days, "--checkpoint-every", "32", agent="scheduling")) == 0
    _refused(train_main, _train(out, days, "--resume"), capsys, "train",
             ["--resume", "no checkpoint", "fits", "model_32_steps.zip", "Dict(queue, running, snapshots)",
              "--overwrite"])
    _refused(train_main, _train(out, days, "--resume", "--masking", agent="scheduling"), capsys, "train",
             ["a PPO checkpoint", "MaskablePPO"])


def test_resume_over_an_empty_zip_alone_is_one_line(tmp_path, days, capsys):
    checkpoints = tmp_path / "out" / "checkpoints"
    checkpoints.mkdir(parents=True)
    zipfile.ZipFile(checkpoints / "model_16_steps.zip", "w").close()
    _refused(train_main, _train(tmp_path / "out", days, "--resume"), capsys, "train", ["model_16_steps.zip",
                                                                                       "an empty zip"])


def _evaluate(out, days, *extra):
    return ["--env", "shutdown", "-p", str(PLATFORM), "-w", str(days), "-o", str(out), "--no-figures",
            "--policies", "T0", "-j", "1", *extra]


@pytest.mark.parametrize("changes,words", BAD_DAYS, ids=["nan-subtime", "too-large", "walltime", "profile"])
def test_a_bad_day_stops_evaluate_before_its_workers_start(tmp_path, days, capsys, changes, words):
    tiny_day(days / "c.json", **changes)
    _refused(evaluate_main, _evaluate(tmp_path / "out", days), capsys, "evaluate", words)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("extra,words", [
    (["--env-args", '{"bogus": 1}'], ["--env-args", "bogus"]),
    (["--env-args", '{"cores_per_node": 1000}'], ["cores_per_node", "1000"]),
    (["--repeat", "0"], ["--repeat"]),
], ids=["env-key", "cores-per-node", "repeat"])
def test_bad_evaluation_options_are_refused_before_workers_start(tmp_path, days, capsys, extra, words):
    _refused(evaluate_main, _evaluate(tmp_path / "out", days, *extra), capsys, "evaluate", words)
    assert not (tmp_path / "out").exists()


def test_evaluate_prints_plain_progress_lines_into_a_log(tmp_path, days, capsys):
    assert evaluate_main(_evaluate(tmp_path / "out", days)) == 0
    err = capsys.readouterr().err
    assert "evaluate: 2/2 days (100%)" in err and "\r" not in err, err


def test_the_papers_train_finds_are_the_entry_points_of_their_group(monkeypatch):
    """training.py names no paper: setup.cfg's batsched_py.agents group maps an agent to its settings."""
    from batsched_py.agents.common import papers, training
    assert training.paper_settings("shutdown")[0] == "batsched_py/Shutdown-v0"
    assert training.paper_settings("scheduling")[1]["n_steps"] == 360
    with pytest.raises(training.TrainError, match="agent 'elastic': choose (shutdown or scheduling|scheduling or "
                                                  "shutdown)$"):
        training.paper_settings("elastic")
    monkeypatch.setattr(papers, "entry_points", lambda group: [])
    with pytest.raises(training.TrainError, match="choose none .* pip install -e ."):
        training.paper_settings("shutdown")


def test_an_interrupted_train_called_from_python_gives_its_caller_ctrl_c_back(tmp_path, days, capsys, monkeypatch):
    """A stopped training leaves its caller's handlers as they were: a caller in the same process (a
    notebook, this suite) keeps its Ctrl-C, and the children it starts later inherit no ignored SIGINT
    (Python would install no handler in them).  Only the command's own exit ignores a repeated signal
    (exit_after_stop; tests/agents/test_train_kills.py sends them)."""
    import signal

    from batsched_py.agents.common import papers, training
    from batsched_py.interrupts import Interrupted

    def stopped(config, argv):
        raise Interrupted("SIGTERM")
    monkeypatch.setattr(training, "train", stopped)
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    assert train_main(_train(tmp_path / "out", days)) == 143
    assert "interrupted by SIGTERM" in capsys.readouterr().err
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_training_runs_without_the_ray_extra(tmp_path):
    """The rl extra alone (no ray) trains: Ray is imported only for --vec-env ray
    (a 16-core machine without Ray found that training imported it at once)."""
    import subprocess
    import sys
    code = ("import sys; sys.modules['ray'] = None\n"      # (import ray raises ImportError)
            "from batsched_py.cli.agents import train_main\n"
            f"assert train_main({_train(tmp_path / 'out', tiny_day(tmp_path / 'day.json'))!r}) == 0\n"
            "from batsched_py.campaigns.ray_vec_env import RayVecEnv\n"
            "try:\n    RayVecEnv([lambda: None])\n"
            "except ImportError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "out" / "model.zip").is_file()
    assert "RayVecEnv needs ray: pip install 'batsched_py[ray]'" in done.stdout      # (--vec-env ray: named)
