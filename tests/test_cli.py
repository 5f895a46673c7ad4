"""The ``batsched-py`` command line: help everywhere, list-schedulers, one-line errors with exit code 2."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from batsched_py import cli
from batsched_py.cli.common import parse_options
from batsched_py.errors import InputError
from batsched_py.scheduler import available

ROOT = Path(__file__).resolve().parents[1]


def run_main(capsys, *argv):
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:  # argparse's --help / usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_top_level_help_subprocess():
    proc = subprocess.run([sys.executable, "-m", "batsched_py.cli", "--help"], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0 and "serve" in proc.stdout and "list-schedulers" in proc.stdout


def test_no_command_prints_help(capsys):
    code, out, _ = run_main(capsys)
    assert code == 2 and "usage:" in out


@pytest.mark.parametrize("command", ["serve", "list-schedulers", "run", "compare"])
def test_subcommand_help(capsys, command):
    code, out, _ = run_main(capsys, command, "--help")
    assert code == 0 and "usage:" in out


@pytest.mark.parametrize("command", sorted(cli.DELEGATED))
def test_delegated_help(capsys, command):
    assert callable(cli.DELEGATED[command][0])
    code, out, _ = run_main(capsys, command, "--help")
    assert code == 0 and out.strip()


def test_serve_help_documents_options(capsys):
    _, out, _ = run_main(capsys, "serve", "--help")
    for option in ("--scheduler", "--socket", "--config", "--timeout", "tcp://127.0.0.1:28000"):
        assert option in out


def test_list_schedulers(capsys):
    code, out, _ = run_main(capsys, "list-schedulers")
    assert code == 0
    lines = out.splitlines()
    names = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert names == list(available()) and "fcfs" in names
    fcfs = next(line for line in lines if line.split()[0] == "fcfs")
    assert available()["fcfs"].description in fcfs


def test_list_schedulers_shows_each_policys_options_and_defaults(capsys):
    """Every option a policy accepts is listed, with the default the policy really uses."""
    import json
    from batsched_py.policies.power import combine, PowerMixin, OracleMixin
    from batsched_py.scheduler import create
    code, out, _ = run_main(capsys, "list-schedulers")
    listed: dict[str, dict] = {}
    for line in out.splitlines():
        if not line.startswith(" "):
            current = listed[line.split()[0]] = {}
        else:
            name, _, rest = line.strip().partition("=")
            current[name] = json.loads(rest.split(": ", 1)[0])
    assert listed["saf"]["queue_order"] == "saf" and listed["filler"]["custom_mapping"] is True
    assert listed["timeout"]["timeout"] == 5 and listed["oracle"]["timeout"] == 0
    for name, cls in available().items():
        accepted = combine({"timeout": PowerMixin, "oracle": OracleMixin}[name], "easy").OPTIONS \
            if name in ("timeout", "oracle") else cls.OPTIONS
        if not hasattr(cls, "option_defaults"):
            continue        # (a scheduler of its own kind: its description lists its options)
        assert set(listed[name]) == set(accepted), name
        if listed[name].get("policy", 0) is None or listed[name].get("model", 0) is None:
            continue        # (agent schedulers: their policy or model is required, no default)
        policy = create(name, {k: v for k, v in listed[name].items() if v is not None})   # the defaults are valid
        assert policy.queue_order == listed[name].get("queue_order", "fcfs")   # (thermal: fcfs, not an option)
        if name in ("timeout", "oracle"):
            assert policy.timeout == listed[name]["timeout"]


def test_serve_unknown_scheduler(capsys):
    code, out, err = run_main(capsys, "serve", "--scheduler", "nope", "--socket", "tcp://127.0.0.1:1")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("batsched-py serve: error: unknown scheduler 'nope'; available:") and "fcfs" in err


def test_serve_requires_scheduler(capsys):
    code, _, err = run_main(capsys, "serve")
    assert code == 2 and "--scheduler" in err


@pytest.mark.parametrize("text, words", [
    ('{"a": 1}', None), ("", None), ('{bad', "invalid JSON"), ("[1]", "neither a JSON object"),
    ("/missing.json", "neither a JSON object"),
    pytest.param('{"a": ' + "9" * 5000 + "}", r"invalid JSON \(Exceeds the limit", id="integer-of-5000-digits"),
])
def test_parse_options(text, words):
    if words is None:
        assert isinstance(parse_options(text), dict)
    else:
        with pytest.raises(InputError, match=words):
            parse_options(text)


def test_parse_options_file(tmp_path):
    path = tmp_path / "o.json"
    path.write_text('{"x": 2}')
    assert parse_options(str(path)) == {"x": 2}
    path.write_text('"text"')
    with pytest.raises(InputError, match="must be a JSON object"):
        parse_options(str(path))


def test_version(capsys):
    code, out, _ = run_main(capsys, "--version")
    assert code == 0 and out.startswith("batsched-py ")


@pytest.mark.parametrize("argv, message", [
    (["serve", "--scheduler", "easy", "--timeout", "-1"], "argument --timeout: '-1' is negative"),
    (["serve", "--scheduler", "easy", "--busy-wait", "nan"], "argument --busy-wait: 'nan' is not a finite number"),
    (["run", "-p", "p.xml", "-w", "w.json", "--scheduler", "easy", "--mmax", "-1"], "argument --mmax: '-1' is negative"),
    (["compare", "-p", "p.xml", "-w", "w.json", "--schedulers", "easy", "-o", "o", "-j", "x"],
     "argument -j/--jobs: 'x' is not an integer"),
    (["emulate", "-p", "p.xml", "--timeout", "inf"], "argument --timeout: 'inf' is not a finite number"),
    (["platform", "taurus", "t.xml", "--on-time", "nan"], "argument --on-time: 'nan' is not a finite number"),
    (["platform", "taurus", "t.xml", "-n", "0"], "argument -n/--nodes: 0 is not above 0"),
    (["platform", "cluster", "t.xml", "-n", "4", "--speeds", "1e9,-1"], "argument --speeds: '-1' is not above 0"),
    (["platform", "cluster", "t.xml", "-n", "4", "--idle", "95,x"], "argument --idle: 'x' is not a number"),
    (["swf2json", "in.swf", "out.json", "--start", "nan"], "argument --start: 'nan' is not a finite number"),
    (["swf2json", "in.swf", "out.json", "--speed", "0"], "argument --speed: '0' is not above 0"),
    (["swf2json", "in.swf", "out.json", "--max-jobs", "-2"], "argument --max-jobs: '-2' is negative"),
    (["workload", "characterise", "in.swf", "--gap", "-1"], "argument --gap: '-1' is negative"),
])
def test_numbers_are_checked_where_they_are_read(capsys, argv, message):
    """A negative timeout, a NaN switching time or a zero speed is refused with the option's name
    (before, some were used: a NaN went into a platform file, -1 s timed out at once)."""
    code, _, err = run_main(capsys, *argv)
    assert code == 2 and message in err, err
    assert "Traceback" not in err and "emulate: emulate:" not in err


def test_unwritable_outputs_end_in_one_line(capsys, tmp_path):
    """An output under a path that cannot be a directory is named, not a traceback (writing
    happened outside the commands' error handling)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    bad = str(blocker / "out")
    tiny = str(ROOT / "tests/data/swf/tiny.swf")
    golden = str(ROOT / "tests/data/golden/easy_bf-e128-hpc250")
    for argv, prefix in ((["swf2json", tiny, bad + ".json", "-q"], "swf2json: error: "),
                         (["swf2json", tiny, str(tmp_path / "o.json"), "-q", "--report", bad + ".json"],
                          "swf2json: error: "),
                         (["workload", "characterise", tiny, "-o", bad + ".csv"], "workload: error: "),
                         (["metrics", golden, "-o", bad + ".csv"], "metrics: error: ")):
        code, _, err = run_main(capsys, *argv)
        assert code == 2 and err.strip().splitlines()[-1].startswith(prefix) and "a-file" in err, (argv, err)
        assert "Traceback" not in err
    platform = str(ROOT / "platforms/energy_platform_homogeneous_no_net_128.xml")
    workload = str(ROOT / "tests/data/golden/easy_bf-e128-hpc250/inputs/example_workload_hpc_seed1_jobs250.json")
    for argv, message in ((["run", "-p", platform, "-w", workload, "--scheduler", "easy", "-e", bad + "/x",
                            "--no-progress"], f"batsched-py run: error: output prefix {bad}/x: cannot create {bad}"),
                          (["emulate", "-p", platform, "-w", workload, "-e", bad + "/x"],
                           f"batsched-py emulate: error: output prefix {bad}/x: cannot write {bad}")):
        code, _, err = run_main(capsys, *argv)
        assert code == 2 and err.strip().startswith(message) and "Not a directory" in err, (argv, err)


def test_binary_inputs_are_named_with_their_file(capsys, tmp_path):
    """Bytes that are not UTF-8, where a command reads text, are named with the file and the
    first bad byte (they were tracebacks, or a message without the file)."""
    binary = tmp_path / "bin.dat"
    binary.write_bytes(b"ok\xa6 more")
    csv_source = tmp_path / "run"
    good = (ROOT / "tests/data/golden/easy_bf-e128-hpc250/out_jobs.csv").read_bytes()
    (tmp_path / "run_jobs.csv").write_bytes(good * 3 + b"\xff")           # beyond the first chunk read
    platform = str(ROOT / "platforms/energy_platform_homogeneous_no_net_128.xml")
    workload = str(ROOT / "tests/data/golden/easy_bf-e128-hpc250/inputs/example_workload_hpc_seed1_jobs250.json")
    fault = "not UTF-8 text (invalid start byte at byte 2)"
    for argv, message in (
            (["platform", "upgrade", str(binary), str(tmp_path / "o.xml")], f"{binary}: {fault}"),
            (["serve", "--scheduler", "easy", "--config", str(binary)], f"--config {binary}: {fault}"),
            (["run", "-p", platform, "-w", workload, "--events", str(binary), "--scheduler", "easy",
              "-e", str(tmp_path / "out"), "--no-progress"], f"events file {binary}: {fault}"),
            (["metrics", "-p", str(binary), str(ROOT / "tests/data/golden/easy_bf-e128-hpc250")],
             f"{binary}: {fault}"),
            (["metrics", str(csv_source)],
             f"run_jobs.csv: not UTF-8 text (invalid start byte at byte {3 * len(good)})")):
        code, _, err = run_main(capsys, *argv)
        assert code == 2 and message in err and "Traceback" not in err, (argv, err)


def test_an_unsplittable_batsim_command_is_named(monkeypatch):
    from batsched_py.launcher import LaunchError
    from batsched_py.launcher.process import batsim_command
    monkeypatch.setenv("BATSCHED_PY_BATSIM", '"/opt/batsim/bin/batsim')
    with pytest.raises(LaunchError, match=r"\$BATSCHED_PY_BATSIM '\"/opt/batsim/bin/batsim' cannot be split like "
                                          r"a shell command: No closing quotation"):
        batsim_command()


@pytest.mark.parametrize("transport", ["auto", "libzmq"])
def test_serve_on_an_address_that_is_not_this_machines_says_so(capsys, transport):
    code, _, err = run_main(capsys, "serve", "--scheduler", "easy", "--socket", "tcp://999.1.1.1:28000",
                            "--transport", transport)
    assert code == 2 and err.count("\n") == 1
    assert "cannot bind tcp://999.1.1.1:28000: '999.1.1.1' is neither an IP address, a host name nor a network " \
           "interface of this machine" in err and "No such device" not in err


def test_swf2json_on_a_missing_file_names_it(capsys, tmp_path):
    code, _, err = run_main(capsys, "swf2json", str(tmp_path / "nope.swf"), str(tmp_path / "o.json"))
    assert code == 2 and err == f"swf2json: error: {tmp_path / 'nope.swf'}: no such file or directory\n"


@pytest.mark.parametrize("argv", [["--help"], ["train", "--help"], ["evaluate", "--help"], ["plot", "--help"],
                                  ["campaign", "--help"], ["compare", "--help"]])
def test_help_imports_no_optional_extra(argv):
    """The command line loads its subcommands at once, but none of the optional extras (the rl
    extra's torch, stable-baselines3 and gymnasium, ray, matplotlib, docker): they are imported
    when a command that needs them runs, so help and the other commands work without them."""
    code = ("import runpy, sys\n"
            f"sys.argv = ['batsched-py', *{argv!r}]\n"
            "try:\n"
            "    runpy.run_module('batsched_py.cli', run_name='__main__')\n"
            "except SystemExit as exc:\n"
            "    assert exc.code == 0, exc.code\n"
            "extras = ('torch', 'stable_baselines3', 'gymnasium', 'ray', 'matplotlib', 'docker')\n"
            "print('loaded:', [m for m in extras if m in sys.modules], 'cli' in sys.modules['batsched_py'].__dict__)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "usage:" in proc.stdout and proc.stdout.rstrip().endswith("loaded: [] True")
