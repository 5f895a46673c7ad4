"""An outside reviewer's battery of bad and odd inputs (issue 33), written apart from the other
bad-input tests: every ``batsched-py`` command, the Gymnasium environments and the Python entry
points, given malformed, truncated, empty or binary files, wrong types, out-of-range numbers,
NaN/inf, missing paths, folders for files (and the reverse), outputs naming inputs, contradictory
options and unknown names.  Each must end with a non-zero exit (or the package's named error) and
ONE line naming what and where: never a traceback, a hang or a silent acceptance.

The commands run in-process (``main(argv)``), each under an alarm, so the file stays fast."""
from __future__ import annotations

import gzip
import json
import math
import os
import re
import shutil
import signal
import zipfile
from pathlib import Path

import pytest

from batsched_py.cli import main
from batsched_py.errors import BatschedError

ROOT = Path(__file__).resolve().parents[1]
E128 = ROOT / "platforms" / "energy_platform_homogeneous_no_net_128.xml"
TAURUS = ROOT / "platforms" / "taurus_deepshutdown.xml"          # 168 hosts, counts in minutes
ELASTIC = ROOT / "platforms" / "elastic_140.xml"
DAYS = ROOT / "workloads" / "deepshutdown" / "train"
TINY_SWF = ROOT / "tests" / "data" / "swf" / "tiny.swf"
RUN = ROOT / "tests" / "data" / "golden" / "easy_bf-e128-hpc250"   # a whole run's outputs (out_*.csv)
MODEL = ROOT / "models" / "deepshutdown-taurus.zip"
HANG_S = 60          # far above any case's time on a loaded machine: only a real hang reaches it

GOOD_JOB = {"id": "1", "subtime": 0, "res": 1, "walltime": 10, "profile": "d"}
GOOD_PROFILES = {"d": {"type": "delay", "delay": 5}}


def _workload(nb_res=8, jobs=None, profiles=None, **job):
    return {"nb_res": nb_res, "jobs": [{**GOOD_JOB, **job}] if jobs is None else jobs,
            "profiles": GOOD_PROFILES if profiles is None else profiles}


# the workloads given by name to -w: each is broken in one way
BAD_WORKLOADS = {
    "res-0": _workload(res=0), "res-negative": _workload(res=-2), "res-float": _workload(res=1.5),
    "res-text": _workload(res="two"), "res-over-platform": _workload(nb_res=500, res=200),
    "subtime-negative": _workload(subtime=-5), "subtime-nan": _workload(subtime="NaN"),
    "subtime-inf": _workload(subtime="Infinity"), "subtime-text": _workload(subtime="noon"),
    "walltime-negative": _workload(walltime=-10), "walltime-nan": _workload(walltime="NaN"),
    "walltime-text": _workload(walltime="long"),
    "profile-unknown": _workload(profile="nowhere"), "profile-missing": _workload(profile=None),
    "delay-negative": _workload(profiles={"d": {"type": "delay", "delay": -5}}),
    "delay-nan": _workload(profiles={"d": {"type": "delay", "delay": "NaN"}}),
    "delay-text": _workload(profiles={"d": {"type": "delay", "delay": "five"}}),
    "profile-type-unknown": _workload(profiles={"d": {"type": "teleport", "delay": 5}}),
    "profile-no-type": _workload(profiles={"d": {"delay": 5}}),
    "profiles-a-list": _workload(profiles=[{"type": "delay", "delay": 5}]),
    "jobs-an-object": _workload(jobs={"1": GOOD_JOB}),
    "jobs-of-numbers": _workload(jobs=[1, 2]),
    "duplicate-ids": _workload(jobs=[GOOD_JOB, GOOD_JOB]),
    "job-without-id": _workload(jobs=[{k: v for k, v in GOOD_JOB.items() if k != "id"}]),
    "job-without-res": _workload(jobs=[{k: v for k, v in GOOD_JOB.items() if k != "res"}]),
    "nb-res-0": _workload(nb_res=0), "nb-res-negative": _workload(nb_res=-8), "nb-res-text": _workload(nb_res="8"),
    "top-level-array": [GOOD_JOB],
}


def _files(root: Path) -> dict[str, str]:
    """The input files the cases name, by placeholder; written once for the module."""
    root.mkdir(exist_ok=True)
    f = {}

    def put(name, data):
        path = root / name
        (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
        f[name.replace(".", "_").replace("-", "_")] = str(path)

    put("good.json", json.dumps(_workload()))
    put("empty.json", "")
    put("blank.json", "  \n\t\n")
    put("binary.json", bytes(range(256)) * 4)
    put("cut.json", json.dumps(_workload())[:40])
    put("nan.json", "NaN")
    put("latin1.json", '{"nb_res": 8, "jobs": [], "profiles": {}, "x": "\xe9"}'.encode("latin-1"))
    put("array.json", "[1, 2, 3]")
    put("null.json", "null")
    for name, doc in BAD_WORKLOADS.items():
        put(f"w-{name}.json", json.dumps(doc).replace('"NaN"', "NaN").replace('"Infinity"', "Infinity"))
    platform = E128.read_text()
    put("p-empty.xml", "")
    put("p-binary.xml", b"\x00\xff\xfe" * 300)
    put("p-cut.xml", platform[: len(platform) // 2])
    put("p-not-platform.xml", "<?xml version='1.0'?>\n<root><child/></root>\n")
    put("p-html.xml", "<html><body>not a platform</body></html>")
    put("p-no-hosts.xml", "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                          "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\"></zone></platform>\n")
    put("p-nan-watts.xml", platform.replace("95.0:95.0:190.738", "nan:95.0:190.738", 1))
    put("p-text-speed.xml", platform.replace('speed="', 'speed="fast', 1))
    put("p-json.xml", json.dumps(_workload()))
    put("p-good.xml", platform)
    put("swf-empty.swf", "")
    put("swf-binary.swf", bytes(range(256)) * 8)
    put("swf-garbage.swf", "; MaxProcs: 8\nthis is not a trace\n1 2 3\n")
    put("swf-negative.swf", "; MaxProcs: 8\n1 -100 0 50 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n")
    put("swf-fake.swf.gz", b"not gzip at all")
    put("swf-cut.swf.gz", gzip.compress(TINY_SWF.read_bytes())[:60])
    put("swf-comments.swf", "; MaxProcs: 8\n; only comments\n")
    shutil.copy(TINY_SWF, root / "tiny.swf")
    f["tiny"] = str(root / "tiny.swf")
    put("events-binary.txt", b"\x00\x01\x02\xff")
    put("events-bad.txt", "not json\n")
    put("events-fields.txt", '{"timestamp": "later", "type": "machine_failure", "resources": "0"}\n')
    put("config-list.json", "[1, 2]")
    put("config-cut.json", '{"queue_order": ')
    put("model-text.zip", "not a model")
    put("model-cut.zip", MODEL.read_bytes()[:2000])
    zipfile.ZipFile(root / "model-empty.zip", "w").close()
    f["model_empty_zip"] = str(root / "model-empty.zip")
    with zipfile.ZipFile(root / "model-other.zip", "w") as z:
        z.writestr("hello.txt", "a zip, but no model")
    f["model_other_zip"] = str(root / "model-other.zip")
    put("campaign-empty.toml", "")
    put("campaign-binary.toml", b"\x00\xff" * 100)
    put("campaign-syntax.toml", "output = \n[platforms\n")
    put("campaign-yaml.yaml", "output: [unclosed\n")
    campaign = (f'output = "{root}/cout"\n[platforms]\np = "{E128}"\n[workloads]\nw = ["{root}/good.json"]\n'
                '[policies]\neasy = { scheduler = "easy" }\n')
    put("campaign-good.toml", campaign)
    for name, (old, new) in {
        "unknown-key": ("[platforms]", "colour = 'blue'\n[platforms]"),
        "seeds-text": ("[platforms]", "seeds = 'one'\n[platforms]"),
        "repetitions-0": ("[platforms]", "repetitions = 0\n[platforms]"),
        "mmax-negative": ("[platforms]", "mmax = -3\n[platforms]"),
        "energy-text": ("[platforms]", "energy = 'yes'\n[platforms]"),
        "missing-platform": (str(E128), f"{root}/nowhere.xml"),
        "platform-a-folder": (str(E128), str(root)),
        "missing-workload": (f"{root}/good.json", f"{root}/nowhere.json"),
        "unknown-scheduler": ('scheduler = "easy"', 'scheduler = "teleport"'),
        "bad-option": ('scheduler = "easy"', 'scheduler = "easy", options = { queue_order = "random-walk" }'),
        "no-policies": ('[policies]\neasy = { scheduler = "easy" }\n', "[policies]\n"),
        "policy-key": ('scheduler = "easy"', 'scheduler = "easy", colour = 1'),
        "output-is-a-file": (f"{root}/cout", f"{root}/good.json"),
    }.items():
        assert old in campaign, name
        put(f"campaign-{name}.toml", campaign.replace(old, new, 1))
    (root / "folder").mkdir()
    f["folder"] = str(root / "folder")
    (root / "empty-folder").mkdir()
    f["empty_folder"] = str(root / "empty-folder")
    f["missing"] = str(root / "nowhere" / "missing.json")
    f["missing_dir"] = str(root / "nowhere")
    # runs for metrics and plot: a whole one, and broken copies
    for name in ("run-ok", "run-empty-jobs", "run-cut-jobs", "run-binary-jobs", "run-header-only", "run-no-jobs"):
        shutil.copytree(RUN, root / name, ignore=shutil.ignore_patterns("inputs", "transcript*", "meta.json"))
    (root / "run-empty-jobs" / "out_jobs.csv").write_text("")
    text = (root / "run-cut-jobs" / "out_jobs.csv").read_text()
    (root / "run-cut-jobs" / "out_jobs.csv").write_text(text[: len(text) // 3])
    (root / "run-binary-jobs" / "out_jobs.csv").write_bytes(bytes(range(256)))
    (root / "run-header-only" / "out_jobs.csv").write_text(text.splitlines()[0] + "\n")
    (root / "run-no-jobs" / "out_jobs.csv").unlink()
    for name in ("run-ok", "run-empty-jobs", "run-cut-jobs", "run-binary-jobs", "run-header-only", "run-no-jobs"):
        f[name.replace("-", "_")] = str(root / name)
    f["e128"], f["taurus"], f["elastic"], f["days"], f["model"] = str(E128), str(TAURUS), str(ELASTIC), str(DAYS), str(MODEL)
    f["day"] = str(sorted(DAYS.glob("*.json"))[0])
    return f


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("battery")
    names = _files(root / "in")
    before = {p: p.read_bytes() for p in (root / "in").rglob("*") if p.is_file()}
    yield names
    after = {p: p.read_bytes() for p in (root / "in").rglob("*") if p.is_file()}
    changed = [str(p) for p in before if after.get(p) != before[p]]
    assert not changed, f"inputs overwritten by the battery's commands: {changed}"


class _Hang(BaseException):
    """Raised by the alarm: a case ran past HANG_S."""


def _on_alarm(signum, frame):
    raise _Hang()


def _call(argv: list[str]) -> tuple[object, str]:
    """``main(argv)`` in this process under an alarm: (exit status, stderr is read by capsys)."""
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(HANG_S)
    try:
        try:
            return main(argv), ""
        except SystemExit as exc:
            return exc.code, ""
        except _Hang:
            return "hang", ""
        except BaseException as exc:          # a traceback for the user
            import traceback
            return "traceback", "".join(traceback.format_exception(exc))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


#: lines that inform, not err: a warning, the time unit found, the days --dedupe-against left out
NOTES = (": warning: ", ": time unit: ", " left out: ")


def _error_lines(err: str) -> list[str]:
    """What the user reads as the error: argparse's usage block dropped, warnings kept apart."""
    lines = [line for line in err.splitlines() if line.strip()]
    if lines and lines[0].startswith("usage:"):
        errors = [i for i, line in enumerate(lines) if ": error: " in line]
        lines = lines[errors[0]:] if errors else lines
    return [line for line in lines if not any(note in line for note in NOTES)]


def check_refused(argv: list[str], capsys, words=()):
    code, trace = _call(argv)
    out, err = capsys.readouterr()
    assert code != "hang", f"no answer in {HANG_S} s: {argv}"
    assert code != "traceback" and "Traceback (most recent call last)" not in err, trace or err
    assert code not in (0, None), f"accepted (exit 0): {argv}\nstdout: {out[-800:]}\nstderr: {err[-800:]}"
    lines = _error_lines(err)
    assert len(lines) == 1, f"not one line: {err!r}"
    assert "did not reply" not in lines[0], f"not refused before waiting for a peer: {lines[0]}"
    assert ".part" not in lines[0], f"names a file the user never gave: {lines[0]}"
    assert all(w in lines[0] for w in words), lines[0]
    return lines[0]


# --- the command line cases: argv (placeholders: the files above, {out} a fresh folder), words ---

RUN_ARGS = ["run", "-p", "{e128}", "-w", "{good_json}", "--scheduler", "easy", "--no-progress", "-e", "{out}/o"]


def _run(*extra, p="{e128}", w="{good_json}"):
    argv = list(RUN_ARGS)
    argv[2], argv[4] = p, w
    return argv + list(extra)


CLI: dict[str, tuple[list[str], list[str]]] = {}

# run: the platform
for name in ("missing", "folder", "p_empty_xml", "p_binary_xml", "p_cut_xml", "p_not_platform_xml", "p_html_xml",
             "p_no_hosts_xml", "p_nan_watts_xml", "p_text_speed_xml", "p_json_xml", "tiny"):
    CLI[f"run-platform-{name}"] = (_run("-E", p="{%s}" % name), [])
# run: the workload
for name in ("missing", "folder", "empty_json", "blank_json", "binary_json", "cut_json", "nan_json", "latin1_json",
             "array_json", "null_json", "e128", "tiny"):
    CLI[f"run-workload-{name}"] = (_run(w="{%s}" % name), [])
for name in BAD_WORKLOADS:
    CLI[f"run-workload-{name}"] = (_run(w="{w_%s_json}" % name.replace("-", "_")), [])
# run: the policy and its options
for label, extra in {
    "scheduler-unknown": ["--scheduler", "teleport"], "scheduler-empty": ["--scheduler", ""],
    "scheduler-case": ["--scheduler", "EASY"],
    "config-cut": ["--config", '{"queue_order": '], "config-list": ["--config", "[1, 2]"],
    "config-string": ["--config", '"easy"'], "config-file-cut": ["--config", "{config_cut_json}"],
    "config-file-list": ["--config", "{config_list_json}"], "config-missing-file": ["--config", "{missing}"],
    "config-folder": ["--config", "{folder}"], "config-binary": ["--config", "{binary_json}"],
    "config-unknown-option": ["--config", '{"queue_ordr": "fcfs"}'],
    "config-queue-order": ["--config", '{"queue_order": "random-walk"}'],
    "config-queue-order-number": ["--config", '{"queue_order": 5}'],
    "config-allocation": ["--config", '{"allocation": "anywhere"}'],
    "config-cores-0": ["--config", '{"cores_per_node": 0}'],
    "config-cores-negative": ["--config", '{"cores_per_node": -4}'],
    "config-cores-text": ["--config", '{"cores_per_node": "4"}'],
    "config-cores-float": ["--config", '{"cores_per_node": 2.5}'],
    "config-cores-bool": ["--config", '{"cores_per_node": true}'],
    "config-contiguous-text": ["--config", '{"contiguous": "yes"}'],
    "config-nan": ["--config", '{"seed": NaN}'],
    "mmax-negative": ["--mmax", "-1"], "mmax-text": ["--mmax", "all"], "mmax-float": ["--mmax", "2.5"],
    "mmax-huge": ["--mmax", str(10 ** 12)],
    "timeout-negative": ["--timeout", "-1"], "timeout-nan": ["--timeout", "nan"], "timeout-inf": ["--timeout", "inf"],
    "time-unit-unknown": ["--time-unit", "fortnights"], "time-unit-empty": ["--time-unit", ""],
    "time-unit-number": ["--time-unit", "60"],
    "backend-unknown": ["--backend", "slurm"],
    "events-missing": ["--events", "{missing}"], "events-folder": ["--events", "{folder}"],
    "events-binary": ["--events", "{events_binary_txt}"], "events-not-json": ["--events", "{events_bad_txt}"],
    "events-bad-fields": ["--events", "{events_fields_txt}"],
    "export-and-outdir": ["-o", "{out}/d"],
    "outdir-is-a-file": ["-o", "{good_json}"],
    "unknown-option": ["--colour", "blue"],
    "energy-twice-value": ["-E", "yes"],
}.items():
    argv = _run(*extra)
    if label == "outdir-is-a-file":
        argv = [a for a in argv if a != "-e" and a != "{out}/o"]
    CLI[f"run-{label}"] = (argv, [])

# compare
COMPARE = ["compare", "-p", "{e128}", "-w", "{good_json}", "-o", "{out}/c", "--no-plots", "-j", "1"]
for label, extra in {
    "schedulers-empty": ["--schedulers", ""], "schedulers-comma": ["--schedulers", ","],
    "schedulers-unknown": ["--schedulers", "easy,teleport"],
    "schedulers-bad-json": ["--schedulers", "easy={bad"],
    "schedulers-options-list": ["--schedulers", "easy=[1]"],
    "schedulers-bad-option": ["--schedulers", 'easy={"queue_order": "random-walk"}'],
    "schedulers-trailing-comma": ["--schedulers", "easy,"],
    "jobs-negative": ["--schedulers", "easy", "-j", "-2"],
    "jobs-text": ["--schedulers", "easy", "-j", "many"],
    "mmax-negative": ["--schedulers", "easy", "--mmax", "-1"],
    "mmax-over-platform": ["--schedulers", "easy", "--mmax", "1000"],
    "include-missing": ["--schedulers", "easy", "--include-published", "{missing_dir}"],
    "include-a-file": ["--schedulers", "easy", "--include-published", "{good_json}"],
    "include-empty-folder": ["--schedulers", "easy", "--include-published", "{empty_folder}"],
    "address-unknown": ["--schedulers", "easy", "--address", "somewhere"],
    "time-unit-unknown": ["--schedulers", "easy", "--time-unit", "fortnights"],
    "platform-missing": ["--schedulers", "easy", "-p", "{missing}"],
    "platform-binary": ["--schedulers", "easy", "-p", "{p_binary_xml}"],
    "workload-cut": ["--schedulers", "easy", "-w", "{cut_json}"],
    "outdir-is-a-file": ["--schedulers", "easy", "-o", "{good_json}"],
    "events-missing": ["--schedulers", "easy", "--events", "{missing}"],
}.items():
    CLI[f"compare-{label}"] = (COMPARE + extra, [])

# emulate (no scheduler listens: every case must stop before connecting)
EMULATE = ["emulate", "-p", "{e128}", "-w", "{good_json}", "-e", "{out}/o", "--timeout", "1", "-q",
           "-s", "tcp://127.0.0.1:1"]
for label, extra in {
    "platform-missing": ["-p", "{missing}"], "platform-cut": ["-p", "{p_cut_xml}"],
    "platform-binary": ["-p", "{p_binary_xml}"], "platform-folder": ["-p", "{folder}"],
    "workload-missing": ["-w", "{missing}"], "workload-cut": ["-w", "{cut_json}"],
    "workload-empty": ["-w", "{empty_json}"], "workload-nan-subtime": ["-w", "{w_subtime_nan_json}"],
    "workload-res-0": ["-w", "{w_res_0_json}"], "workload-profile-unknown": ["-w", "{w_profile_unknown_json}"],
    "mmax-negative": ["--mmax", "-1"], "mmax-text": ["--mmax", "x"],
    "timeout-nan": ["--timeout", "nan"], "timeout-negative": ["--timeout", "-5"],
    "verbosity-unknown": ["-v", "chatty"], "busy-wait-negative": ["--busy-wait", "-1"],
"thermal-negative": ["--thermal", "-12"], "thermal-text": ["--thermal", "x"],
    "thermal-leakage-unknown": ["--thermal", "12", "--thermal-leakage", "cubic"],
    "events-missing": ["--events", "{missing}"], "events-not-json": ["--events", "{events_bad_txt}"],
    "socket-not-an-endpoint": ["-s", "not-an-endpoint"], "socket-bad-port": ["-s", "tcp://127.0.0.1:99999"],
    "unknown-flag": ["--no-such-flag"],
}.items():
    CLI[f"emulate-{label}"] = (EMULATE + extra, [])

# swf2json
for label, argv in {
    "missing": ["{missing}", "{out}/o.json"], "a-folder": ["{folder}", "{out}/o.json"],
    "binary": ["{swf_binary_swf}", "{out}/o.json"], "garbage": ["{swf_garbage_swf}", "{out}/o.json"],
    "negative-submit-no-shift": ["{swf_negative_swf}", "{out}/o.json", "--no-shift"],
    "fake-gz": ["{swf_fake_swf_gz}", "{out}/o.json"], "cut-gz": ["{swf_cut_swf_gz}", "{out}/o.json"],
    "only-comments": ["{swf_comments_swf}", "{out}/o.json"], "a-json-workload": ["{good_json}", "{out}/o.json"],
    "output-a-folder": ["{tiny}", "{folder}"],
    "output-is-input-by-another-path": ["{tiny}", "{tiny_dotted}"],
    "report-is-output": ["{tiny}", "{out}/o.json", "--report", "{out}/o.json"],
    "speed-0": ["{tiny}", "{out}/o.json", "--profile", "compute", "--speed", "0"],
    "speed-negative": ["{tiny}", "{out}/o.json", "--profile", "compute", "--speed", "-5"],
    "speed-nan": ["{tiny}", "{out}/o.json", "--profile", "compute", "--speed", "nan"],
    "speed-without-compute": ["{tiny}", "{out}/o.json", "--speed", "1e9"],
    "profile-unknown": ["{tiny}", "{out}/o.json", "--profile", "msg"],
    "time-unit-unknown": ["{tiny}", "{out}/o.json", "--time-unit", "hours"],
    "nb-res-0": ["{tiny}", "{out}/o.json", "--nb-res", "0"], "nb-res-negative": ["{tiny}", "{out}/o.json", "--nb-res", "-8"],
    "nb-res-text": ["{tiny}", "{out}/o.json", "--nb-res", "eight"],
    "missing-walltime-unknown": ["{tiny}", "{out}/o.json", "--missing-walltime", "guess"],
    "missing-walltime-negative": ["{tiny}", "{out}/o.json", "--missing-walltime", "value:-5"],
    "missing-walltime-text": ["{tiny}", "{out}/o.json", "--missing-walltime", "value:long"],
    "missing-walltime-nan": ["{tiny}", "{out}/o.json", "--missing-walltime", "value:nan"],
    "short-walltime-unknown": ["{tiny}", "{out}/o.json", "--short-walltime", "ignore"],
    "legacy-factor-without-legacy": ["{tiny}", "{out}/o.json", "--legacy-walltime-factor", "2"],
    "legacy-factor-negative": ["{tiny}", "{out}/o.json", "--legacy", "--legacy-walltime-factor", "-2"],
    "start-negative": ["{tiny}", "{out}/o.json", "--start", "-10"], "start-nan": ["{tiny}", "{out}/o.json", "--start", "nan"],
    "end-inf": ["{tiny}", "{out}/o.json", "--end", "inf"], "end-equal-start": ["{tiny}", "{out}/o.json", "--start", "50", "--end", "50"],
    "skip-negative": ["{tiny}", "{out}/o.json", "--skip-jobs", "-1"], "max-jobs-0": ["{tiny}", "{out}/o.json", "--max-jobs", "0"],
    "max-jobs-negative": ["{tiny}", "{out}/o.json", "--max-jobs", "-3"],
    "max-lines-0": ["{tiny}", "{out}/o.json", "--max-lines", "0"], "max-lines-text": ["{tiny}", "{out}/o.json", "--max-lines", "ten"],
    "indent-negative": ["{tiny}", "{out}/o.json", "--indent", "-2"], "indent-text": ["{tiny}", "{out}/o.json", "--indent", "tab"],
    "split-unknown": ["{tiny}", "{out}/o", "--split", "month"],
    "split-prefix-is-a-folder": ["{tiny}", "{folder}/", "--split", "day"],
    "report-a-folder": ["{tiny}", "{out}/o.json", "--report", "{folder}"],
    "no-output": ["{tiny}"],
}.items():
    CLI[f"swf2json-{label}"] = (["swf2json", *argv, "-q"], [])

# workload characterise / upgrade
for label, argv in {
    "characterise-missing": ["characterise", "{missing}"], "characterise-binary": ["characterise", "{swf_binary_swf}"],
    "characterise-folder": ["characterise", "{folder}"], "characterise-gap-negative": ["characterise", "{tiny}", "--gap", "-1"],
    "characterise-gap-nan": ["characterise", "{tiny}", "--gap", "nan"],
    "characterise-output-is-input": ["characterise", "{tiny}", "-o", "{tiny}"],
    "characterise-output-a-folder": ["characterise", "{tiny}", "-o", "{folder}"],
    "characterise-empty": ["characterise", "{swf_empty_swf}"],
    "upgrade-missing": ["upgrade", "{missing}", "{out}/o.json"], "upgrade-cut": ["upgrade", "{cut_json}", "{out}/o.json"],
    "upgrade-binary": ["upgrade", "{binary_json}", "{out}/o.json"], "upgrade-array": ["upgrade", "{array_json}", "{out}/o.json"],
    "upgrade-output-is-input": ["upgrade", "{good_json}", "{good_json}"],
    "upgrade-output-a-folder": ["upgrade", "{good_json}", "{folder}"],
    "no-action": [], "unknown-action": ["inspect", "{tiny}"],
}.items():
    CLI[f"workload-{label}"] = (["workload", *argv], [])

# platform
for label, argv in {
    "taurus-nodes-0": ["taurus", "-n", "0", "{out}/p.xml"], "taurus-nodes-negative": ["taurus", "-n", "-4", "{out}/p.xml"],
    "taurus-nodes-text": ["taurus", "-n", "many", "{out}/p.xml"], "taurus-nodes-float": ["taurus", "-n", "2.5", "{out}/p.xml"],
    "taurus-nodes-huge": ["taurus", "-n", str(10 ** 12), "{out}/p.xml"],
    "taurus-off-time-negative": ["taurus", "--off-time", "-3", "{out}/p.xml"],
    "taurus-off-time-nan": ["taurus", "--off-time", "nan", "{out}/p.xml"],
    "taurus-on-time-inf": ["taurus", "--on-time", "inf", "{out}/p.xml"],
    "taurus-output-a-folder": ["taurus", "{folder}"],
    "cluster-no-nodes": ["cluster", "{out}/p.xml"], "cluster-nodes-0": ["cluster", "-n", "0", "{out}/p.xml"],
    "cluster-cores-0": ["cluster", "-n", "4", "--cores", "0", "{out}/p.xml"],
    "cluster-cores-negative": ["cluster", "-n", "4", "--cores", "-2", "{out}/p.xml"],
    "cluster-speeds-empty": ["cluster", "-n", "4", "--speeds", "", "{out}/p.xml"],
    "cluster-speeds-hole": ["cluster", "-n", "4", "--speeds", "1e9,,5e8", "{out}/p.xml"],
    "cluster-speeds-text": ["cluster", "-n", "4", "--speeds", "fast", "{out}/p.xml"],
    "cluster-speeds-0": ["cluster", "-n", "4", "--speeds", "0", "{out}/p.xml"],
    "cluster-speeds-nan": ["cluster", "-n", "4", "--speeds", "nan", "{out}/p.xml"],
    "cluster-idle-negative": ["cluster", "-n", "4", "--idle", "-95", "{out}/p.xml"],
    "cluster-compute-nan": ["cluster", "-n", "4", "--compute", "nan", "{out}/p.xml"],
    "cluster-sleep-inf": ["cluster", "-n", "4", "--sleep", "inf", "{out}/p.xml"],
    "cluster-off-time-negative": ["cluster", "-n", "4", "--off-time", "-1", "{out}/p.xml"],
    "cluster-on-watts-text": ["cluster", "-n", "4", "--on-watts", "lots", "{out}/p.xml"],
    "cluster-idle-list-longer-than-speeds": ["cluster", "-n", "4", "--speeds", "1e9", "--idle", "95,80,70", "{out}/p.xml"],
    "cluster-energy-options-with-no-energy": ["cluster", "-n", "4", "--no-energy", "--idle", "50", "{out}/p.xml"],
    "upgrade-missing": ["upgrade", "{missing}", "{out}/p.xml"], "upgrade-binary": ["upgrade", "{p_binary_xml}", "{out}/p.xml"],
    "upgrade-cut": ["upgrade", "{p_cut_xml}", "{out}/p.xml"], "upgrade-empty": ["upgrade", "{p_empty_xml}", "{out}/p.xml"],
    "upgrade-json": ["upgrade", "{good_json}", "{out}/p.xml"],
    "upgrade-output-is-input": ["upgrade", "{p_good_xml}", "{p_good_xml}"],
    "upgrade-output-is-input-by-another-path": ["upgrade", "{p_good_xml}", "{p_good_dotted}"],
    "upgrade-output-a-folder": ["upgrade", "{e128}", "{folder}"],
    "check-missing": ["check", "{missing}"], "check-folder": ["check", "{folder}"], "check-binary": ["check", "{p_binary_xml}"],
    "check-empty": ["check", "{p_empty_xml}"], "check-cut": ["check", "{p_cut_xml}"],
    "check-not-platform": ["check", "{p_not_platform_xml}"], "check-html": ["check", "{p_html_xml}"],
    "check-no-hosts": ["check", "{p_no_hosts_xml}"], "check-nan-watts": ["check", "-E", "{p_nan_watts_xml}"],
    "check-text-speed": ["check", "{p_text_speed_xml}"], "check-json": ["check", "{good_json}"],
    "check-mmax-negative": ["check", "--mmax", "-1", "{e128}"], "check-mmax-over": ["check", "--mmax", "129", "{e128}"],
    "no-action": [], "unknown-action": ["simgrid", "{out}/p.xml"],
}.items():
    CLI[f"platform-{label}"] = (["platform", *argv], [])

# metrics
for label, argv in {
    "missing": ["{missing_dir}"], "a-file": ["{good_json}"], "empty-folder": ["{empty_folder}"],
    "empty-jobs": ["{run_empty_jobs}"], "cut-jobs": ["{run_cut_jobs}"], "binary-jobs": ["{run_binary_jobs}"],
    "no-jobs-csv": ["{run_no_jobs}"], "no-source": [],
    "platform-missing": ["{run_ok}", "-p", "{missing}"], "platform-binary": ["{run_ok}", "-p", "{p_binary_xml}"],
    "platform-json": ["{run_ok}", "-p", "{good_json}"],
    "output-a-folder": ["{run_ok}", "-o", "{folder}"], "output-is-the-jobs-csv": ["{run_ok}", "-o", "{run_ok}/out_jobs.csv"],
    "output-in-missing-folder": ["{run_ok}", "-o", "{missing_dir}/deeper/m.csv"],
    "jobs-csv-a-file": ["{run_ok}", "--jobs-csv", "{good_json}"],
    "time-unit-unknown": ["{run_ok}", "--time-unit", "lightyear"], "time-unit-empty": ["{run_ok}", "--time-unit", ""],
    "same-run-twice": ["{run_ok}", "{run_ok}"],
}.items():
    CLI[f"metrics-{label}"] = (["metrics", *argv], [])

# plot
for label, argv in {
    "gantt-missing": ["gantt", "{missing_dir}", "-o", "{out}/g"], "gantt-no-output": ["gantt", "{run_ok}"],
    "gantt-empty-jobs": ["gantt", "{run_empty_jobs}", "-o", "{out}/g"],
    "gantt-cut-jobs": ["gantt", "{run_cut_jobs}", "-o", "{out}/g"],
    "gantt-binary-jobs": ["gantt", "{run_binary_jobs}", "-o", "{out}/g"],
    "gantt-a-file": ["gantt", "{good_json}", "-o", "{out}/g"],
    "gantt-platform-binary": ["gantt", "{run_ok}", "-o", "{out}/g", "-p", "{p_binary_xml}"],
    "gantt-time-unit": ["gantt", "{run_ok}", "-o", "{out}/g", "--time-unit", "eons"],
    "power-missing": ["power", "{missing_dir}", "-o", "{out}/p"],
    "power-empty-folder": ["power", "{empty_folder}", "-o", "{out}/p"],
    "power-platform-missing": ["power", "{run_ok}", "-o", "{out}/p", "-p", "{missing}"],
    "compare-nothing": ["compare", "-o", "{out}/c"], "compare-missing": ["compare", "{missing_dir}", "-o", "{out}/c"],
    "compare-a-file": ["compare", "{good_json}", "-o", "{out}/c"],
    "compare-empty-jobs": ["compare", "{run_ok}", "{run_empty_jobs}", "-o", "{out}/c"],
    "compare-output-a-file": ["compare", "{run_ok}", "-o", "{good_json}"],
    "no-kind": [], "unknown-kind": ["pie", "{run_ok}", "-o", "{out}/x"],
}.items():
    CLI[f"plot-{label}"] = (["plot", *argv], [])

# campaign
for label, argv in {
    "missing": ["run", "{missing}"], "a-folder": ["run", "{folder}"], "empty": ["run", "{campaign_empty_toml}"],
    "binary": ["run", "{campaign_binary_toml}"], "syntax": ["run", "{campaign_syntax_toml}"],
    "yaml-syntax": ["run", "{campaign_yaml_yaml}"], "a-json": ["run", "{good_json}"],
    "status-missing": ["status", "{missing}"], "status-syntax": ["status", "{campaign_syntax_toml}"],
    "jobs-negative": ["run", "{campaign_good_toml}", "-j", "-1"],
    "retries-negative": ["run", "{campaign_good_toml}", "--retries", "-1"],
    "address-unknown": ["run", "{campaign_good_toml}", "--address", "elsewhere"],
    "no-action": [], "unknown-action": ["resume", "{campaign_good_toml}"],
    **{name: ["run", "{campaign_%s_toml}" % name.replace("-", "_")]
       for name in ("unknown-key", "seeds-text", "repetitions-0", "mmax-negative", "energy-text",
                    "missing-platform", "platform-a-folder", "missing-workload", "unknown-scheduler", "bad-option",
                    "no-policies", "policy-key", "output-is-a-file")},
}.items():
    CLI[f"campaign-{label}"] = (["campaign", *argv, *(["--no-progress"] if argv and argv[0] == "run" else [])], [])

# serve: every case is refused before binding (no Batsim comes)
SERVE = ["serve", "--scheduler", "easy", "--timeout", "1", "-q"]
for label, extra in {
    "socket-not-an-endpoint": ["-s", "nonsense"], "socket-bad-port": ["-s", "tcp://127.0.0.1:70000"],
    "socket-unknown-host": ["-s", "tcp://no.such.host.invalid:5000"], "socket-bad-scheme": ["-s", "udp://127.0.0.1:5000"],
    "timeout-negative": ["--timeout", "-1"], "timeout-nan": ["--timeout", "nan"],
    "busy-wait-inf": ["--busy-wait", "inf"], "transport-unknown": ["--transport", "carrier-pigeon"],
    "scheduler-unknown": ["--scheduler", "teleport"], "config-cut": ["--config", "{"],
    "config-bad-option": ["--config", '{"queue_order": "random-walk"}'],
    "deepshutdown-without-model": ["--scheduler", "deepshutdown"],
    "deepshutdown-missing-model": ["--scheduler", "deepshutdown", "--config", '{"model": "{missing}"}'],
    "deepshutdown-text-model": ["--scheduler", "deepshutdown", "--config", '{"model": "{model_text_zip}"}'],
}.items():
    CLI[f"serve-{label}"] = (SERVE + extra, [])

# train (refused before any actor starts)
TRAIN = ["train", "shutdown", "-p", "{taurus}", "-w", "{day}", "-o", "{out}/t", "--total-steps", "32", "--actors", "1",
         "--vec-env", "dummy", "--no-progress"]
for label, extra in {
    "platform-missing": ["-p", "{missing}"], "platform-binary": ["-p", "{p_binary_xml}"], "platform-cut": ["-p", "{p_cut_xml}"],
    "platform-without-sleep": ["-p", "{e128}"],
    "workloads-missing": ["-w", "{missing}"], "workloads-empty-folder": ["-w", "{empty_folder}"],
    "workloads-binary": ["-w", "{binary_json}"], "workloads-a-platform": ["-w", "{taurus}"],
    "workloads-empty-file": ["-w", "{empty_json}"],
    "out-is-a-file": ["-o", "{good_json}"], "out-in-missing-folder-file": ["-o", "{good_json}/t"],
    "actors-huge": ["--actors", "100000"], "n-steps-huge": ["--hyper", '{"n_steps": 1000000000}'],
    "actors-0": ["--actors", "0"], "actors-negative": ["--actors", "-2"], "actors-text": ["--actors", "many"],
    "total-steps-negative": ["--total-steps", "-32"], "total-steps-text": ["--total-steps", "1e3"],
    "checkpoint-every-0": ["--checkpoint-every", "0"], "torch-threads-negative": ["--torch-threads", "-1"],
    "seed-text": ["--seed", "lucky"], "seed-float": ["--seed", "1.5"],
    "hyper-cut": ["--hyper", '{"gamma": '], "hyper-nan": ["--hyper", '{"gamma": NaN}'],
    "hyper-string": ["--hyper", '"fast"'], "hyper-lr-inf": ["--hyper", '{"learning_rate": Infinity}'],
    "env-cut": ["--env", "{"], "env-list": ["--env", "[1]"], "env-dt-0": ["--env", '{"dt": 0}'],
    "env-day-negative": ["--env", '{"day": -1440}'], "env-history-0": ["--env", '{"history": 0}'],
    "env-weight-nan": ["--env", '{"energy_weight": NaN}'], "env-platform-key": ["--env", '{"platform": "x.xml"}'],
    "env-workloads-key": ["--env", '{"workloads": []}'],
    "imitate-unknown": ["--imitate", "GURU"], "imitate-days-0": ["--imitate", "T0", "--imitate-days", "0"],
    "imitate-epochs-negative": ["--imitate", "T0", "--imitate-epochs", "-1"],
    "vec-env-unknown": ["--vec-env", "threads"], "agent-unknown": ["--total-steps", "32"],
}.items():
    argv = TRAIN + extra
    if label == "agent-unknown":
        argv = ["train", "cooking", *TRAIN[2:]]
    CLI[f"train-{label}"] = (argv, [])

# evaluate (refused before any worker starts)
EVALUATE = ["evaluate", "--env", "shutdown", "-p", "{taurus}", "-w", "{day}", "-o", "{out}/e", "--no-figures", "-j", "1"]
for label, extra in {
    "policies-empty": ["--policies", ""], "policies-comma": ["--policies", "T0,,T1"],
    "policies-unknown": ["--policies", "T0,GURU"], "policies-duplicate-label": ["--policies", "a=T0,a=T1"],
    "policies-empty-label": ["--policies", "=T0"], "policies-missing-model": ["--policies", "{missing_dir}/m.zip"],
    "policies-text-model": ["--policies", "{model_text_zip}"], "policies-cut-model": ["--policies", "{model_cut_zip}"],
    "policies-empty-zip": ["--policies", "{model_empty_zip}"], "policies-other-zip": ["--policies", "{model_other_zip}"],
    "policies-bad-options": ["--policies", "T0:{bad"], "policies-options-list": ["--policies", "T0:[1]"],
    "policies-bad-callable": ["--policies", "no_such_module:act"],
    "policies-scheduling-baseline-on-shutdown": ["--policies", "EASY"],
    "repeat-negative": ["--policies", "T0", "--repeat", "-1"],
    "repeat-deterministic": ["--policies", "T0,T5", "--repeat", "4"], "jobs-text": ["--policies", "T0", "-j", "x"],
    "time-unit-unknown": ["--policies", "T0", "--time-unit", "moons"],
    "address-unknown": ["--policies", "T0", "--address", "nowhere"],
    "env-args-cut": ["--policies", "T0", "--env-args", "{"],
    "env-args-platform-key": ["--policies", "T0", "--env-args", '{"platform": "x.xml"}'], "env-args-dt-0": ["--policies", "T0", "--env-args", '{"dt": 0}'],
    "platform-missing": ["--policies", "T0", "-p", "{missing}"], "platform-binary": ["--policies", "T0", "-p", "{p_binary_xml}"],
    "workloads-missing": ["--policies", "T0", "-w", "{missing}"],
    "workloads-empty-folder": ["--policies", "T0", "-w", "{empty_folder}"],
    "workloads-cut": ["--policies", "T0", "-w", "{cut_json}"],
    "dedupe-missing": ["--policies", "T0", "--dedupe-against", "{missing}"],
    "dedupe-everything": ["--policies", "T0", "--dedupe-against", "{day}"],
    "out-is-a-day": ["--policies", "T0", "-o", "{day}"],
    "env-unknown": ["--policies", "T0", "--env", "cooking"],
}.items():
    CLI[f"evaluate-{label}"] = (EVALUATE + extra, [])

# the top level
CLI["top-unknown-command"] = (["teleport"], [])
CLI["list-schedulers-extra-argument"] = (["list-schedulers", "extra"], [])

# what the line must say, where the wording is this battery's own fix (issue 33)
WORDS = {
    "swf2json-report-is-output": ["--report", "is the output", "overwrite"],
    "swf2json-split-prefix-is-a-folder": ["--split", "names a folder"],
    "swf2json-negative-submit-no-shift": ["submit time -100", "--no-shift"],
    "swf2json-output-a-folder": ["folder: is a directory"], "swf2json-report-a-folder": ["folder: is a directory"],
    "platform-taurus-output-a-folder": ["folder: is a directory"],
    "platform-upgrade-output-a-folder": ["folder: is a directory"],
    "workload-upgrade-output-a-folder": ["folder: is a directory"],
    "workload-characterise-output-is-input": ["-o", "is the input trace", "overwrite"],
    "workload-characterise-empty": ["swf-empty.swf: no job to characterise"],
    "workload-upgrade-output-is-input": ["good.json is the Batsim 3 input"],
    "platform-upgrade-output-is-input": ["p-good.xml is the Batsim 3 input"],
    "platform-upgrade-output-is-input-by-another-path": ["is the Batsim 3 input"],
    "platform-check-mmax-over": ["--mmax 129", "compute hosts"],
    "platform-cluster-idle-list-longer-than-speeds": ["--idle: 3 values for 1 speed(s)"],
    "metrics-output-is-the-jobs-csv": ["-o", "out_jobs.csv", "overwrite"],
    "plot-power-platform-missing": ["-p", "missing.json: no such file"],
    "plot-gantt-platform-binary": ["-p", "p-binary.xml"],
    "evaluate-policies-empty-label": ["'=T0' has an empty label"],
    "emulate-verbosity-unknown": ["--verbosity", "'chatty'"],
    "train-actors-huge": ["--actors 100000", "256"],
    "train-n-steps-huge": ["n_steps 1000000000", "GiB"],
    "evaluate-repeat-deterministic": ["--repeat 4", "no policy is stochastic"],
    "train-env-platform-key": ["--env", "'platform': given by -p and -w"],
    "evaluate-env-args-platform-key": ["--env-args", "'platform': given by -p and -w"],
}
for _case, _words in WORDS.items():
    CLI[_case] = (CLI[_case][0], _words)


def _format(argv, files, out):
    """The placeholders {name} replaced (JSON's own braces left alone)."""
    names = {**files, "out": str(out), "tiny_dotted": str(Path(files["tiny"]).parent) + "/./tiny.swf",
             "p_good_dotted": str(Path(files["p_good_xml"]).parent) + "/../in/p-good.xml"}
    return [re.sub(r"\{(\w+)\}", lambda m: names.get(m[1], m[0]), a) for a in argv]


@pytest.mark.parametrize("case", CLI)
def test_a_command_refuses_nonsense_in_one_line(files, tmp_path, capsys, case):
    argv, words = CLI[case]
    (tmp_path / "out").mkdir()
    check_refused(_format(argv, files, tmp_path / "out"), capsys, words)


# --- what is a documented handling, not a refusal ---

HANDLED = {       # an output in a folder that does not exist yet: the folder is made
    "run-export-in-new-folder": (_run()[:-1] + ["{out}/new/deeper/o"], "{out}/new/deeper/o_jobs.csv"),
    "swf2json-output-in-new-folder": (["swf2json", "{tiny}", "{out}/new/o.json", "-q"], "{out}/new/o.json"),
    "workload-upgrade-output-in-new-folder": (["workload", "upgrade", "{good_json}", "{out}/new/o.json"],
                                              "{out}/new/o.json"),
    "plot-gantt-output-in-new-folder": (["plot", "gantt", "{run_ok}", "-o", "{out}/new/g"], "{out}/new/g.png"),
    "platform-taurus-output-in-new-folder": (["platform", "taurus", "-n", "2", "{out}/new/p.xml"], "{out}/new/p.xml"),
}


@pytest.mark.parametrize("case", HANDLED)
def test_an_output_in_a_new_folder_is_written_there(files, tmp_path, capsys, case):
    argv, written = HANDLED[case]
    (tmp_path / "out").mkdir()
    code, trace = _call(_format(argv, files, tmp_path / "out"))
    err = capsys.readouterr().err
    assert code == 0 and not trace, trace or err
    assert _error_lines(err) == [], err
    assert Path(_format([written], files, tmp_path / "out")[0]).is_file()


def test_no_command_prints_the_help_and_exits_2(capsys):
    assert _call([]) == (2, "")
    out, err = capsys.readouterr()
    assert out.startswith("usage: batsched-py") and "COMMAND" in out and err == ""


# --- the Gymnasium environments: bad construction arguments, and bad calls in an episode ---

VOLUNTEER = ROOT / "tests" / "data" / "golden" / "volunteer_agent_random-pool20s1-E" / "inputs"
ELASTIC_WORKLOAD = ROOT / "workloads" / "elastic" / "lpc_egee_small.json"


def _env_base(name, files):
    """The good arguments of each environment, which a case then spoils."""
    return {"Shutdown": {"platform": str(TAURUS), "workloads": [files["day"]]},
            "Scheduling": {"platform": str(TAURUS), "workloads": [files["day"]]},
            "Elastic": {"platform": str(ELASTIC), "workloads": [str(ELASTIC_WORKLOAD)]},
            "VolunteerPool": {"platform": str(VOLUNTEER / "pool.xml"), "workloads": [str(VOLUNTEER / "jobs.json")],
                              "events": str(VOLUNTEER / "logins.jsonl")},
            "Allocation": {"jobs": files["tiny"], "nb_processors": 4}}[name]


# spoilt arguments common to the environments built on Batsim inputs
COMMON_ENV_KW = {
    "unknown-argument": {"colour": "blue"}, "platform-missing": {"platform": "{missing}"},
    "platform-folder": {"platform": "{folder}"}, "platform-binary": {"platform": "{p_binary_xml}"},
    "platform-cut": {"platform": "{p_cut_xml}"}, "platform-a-workload": {"platform": "{good_json}"},
    "platform-number": {"platform": 3}, "workloads-empty-list": {"workloads": []},
    "workloads-missing": {"workloads": ["{missing}"]}, "workloads-empty-folder": {"workloads": ["{empty_folder}"]},
    "workloads-cut": {"workloads": ["{cut_json}"]}, "workloads-binary": {"workloads": ["{binary_json}"]},
    "workloads-a-platform": {"workloads": ["{e128}"]}, "workloads-number": {"workloads": [5]},
    "workloads-negative-subtime": {"workloads": ["{w_subtime_negative_json}"]},
    "backend-unknown": {"backend": "slurm"}, "output-prefix-number": {"output_prefix": 5},
    "output-prefix-empty": {"output_prefix": ""},
}
ENV_KW = {
    "Shutdown": {"dt-0": {"dt": 0}, "dt-nan": {"dt": math.nan}, "dt-text": {"dt": "1"}, "day-negative": {"day": -1.0},
                 "history-0": {"history": 0}, "history-float": {"history": 2.5}, "queue-features-negative":
                 {"queue_features": -1}, "tau-text": {"tau": "half"}, "tau-inf": {"tau": math.inf},
                 "cores-per-node-0": {"cores_per_node": 0}, "start-asleep-text": {"start_asleep": "yes"},
                 "energy-weight-inf": {"energy_weight": math.inf}},
    "Scheduling": {"dt-negative": {"dt": -1}, "max-queue-0": {"max_queue": 0}, "max-running-negative":
                   {"max_running": -3}, "history-text": {"history": "20"}, "confidence-jobs-negative":
                   {"confidence_jobs": -1}, "sigma-nan": {"sigma": math.nan},
                   "max-time-0": {"max_time": 0}, "timeout-negative": {"timeout": -5.0},
                   "cores-per-node-float": {"cores_per_node": 1.5}},
    "Elastic": {"mode-unknown": {"mode": "teleport"}, "lam-2": {"lam": 2}, "second-unknown": {"second": "speed"},
                "period-0": {"period": 0}, "period-nan": {"period": math.nan}, "pool-steps-empty": {"pool_steps": []},
                "pool-steps-text": {"pool_steps": ["up"]}, "nb-vos-0": {"nb_vos": 0}, "runtimes-unknown":
                {"runtimes": "guess"}, "pool-0": {"pool": 0}, "min-pool-negative": {"min_pool": -1},
                "max-time-negative": {"max_time": -10.0}},
    "VolunteerPool": {"events-missing": {"events": "{missing}"}, "events-folder": {"events": "{folder}"},
                      "events-cut": {"events": "{cut_json}"}, "level-unknown": {"level": "planet"},
                      "sigma-2": {"sigma": 2}, "cycle-0": {"cycle": 0}, "patience-negative": {"patience": -1.0},
                      "seed-negative": {"seed": -1}, "seed-text": {"seed": "x"}, "max-time-0": {"max_time": 0}},
    "Allocation": {"unknown-argument": {"colour": "blue"}, "jobs-missing": {"jobs": "{missing}"},
                   "jobs-folder": {"jobs": "{folder}"}, "jobs-binary": {"jobs": "{swf_binary_swf}"},
                   "jobs-empty": {"jobs": "{swf_empty_swf}"}, "jobs-number": {"jobs": 7},
                   "nb-processors-0": {"nb_processors": 0}, "nb-processors-float": {"nb_processors": 4.0},
                   "cores-0": {"cores": 0}, "cores-text": {"cores": "2"}, "J-3": {"J": 3},
                   "baseline-unknown": {"baseline": "guru"}, "reward-unknown": {"reward": "gold"},
                   "backend-unknown": {"backend": "quantum"}, "predictor-without-file": {"backend": "predictor"},
                   "predictor-missing": {"backend": "predictor", "predictor": "{missing}"},
                   "alpha-negative": {"alpha": -1}, "alpha-nan": {"alpha": math.nan},
                   "episode-days-0": {"episode_days": 0}, "episode-days-text": {"episode_days": "1"},
                   "max-temperature-inf": {"max_temperature": math.inf}, "thermal-unknown": {"thermal": {"colour": 1}},
                   "thermal-a-list": {"thermal": [1]}},
}
ENV_CASES = {f"{env}-{label}": (env, kw) for env in ENV_KW for label, kw in
             ({**(COMMON_ENV_KW if env != "Allocation" else {}), **ENV_KW[env]}).items()}


def _spoil(kw, files):
    def fill(v):
        if isinstance(v, str):
            return _format([v], files, Path("/nonexistent"))[0]
        return [fill(x) for x in v] if isinstance(v, list) else v
    return {k: fill(v) for k, v in kw.items()}


def check_env_error(call):
    """``call()`` raises the package's error (or Gymnasium's own, for what Gymnasium checks) in one line;
    not a TypeError, AttributeError or AssertionError from deep inside, and it does not return."""
    import gymnasium
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(HANG_S)
    try:
        call()
    except (BatschedError, gymnasium.error.Error, TypeError) as exc:
        message = str(exc)
        if not isinstance(exc, (BatschedError, gymnasium.error.Error)):     # Python's, for a misspelt argument
            assert "unexpected keyword argument" in message, repr(exc)
        assert message and "\n" not in message.strip(), repr(message)
        return message
    except _Hang:
        pytest.fail(f"no answer in {HANG_S} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    pytest.fail("accepted")


@pytest.mark.parametrize("case", ENV_CASES)
def test_an_environment_refuses_bad_arguments_at_construction(files, case):
    import gymnasium as gym
    import batsched_py.envs  # noqa: F401  (registers the environments)
    env, kw = ENV_CASES[case]
    arguments = {**_env_base(env, files), **_spoil(kw, files)}
    check_env_error(lambda: gym.make(f"batsched_py/{env}-v0", **arguments))


# bad calls on a built environment: (what, the call on env (unwrapped), reset first)
BAD_ACTIONS = {"minus-one": -1, "one-past": "n", "float": 0.5, "text": "0", "none": None, "list": [0, 1],
               "nan": math.nan, "huge": 2 ** 70}
EPISODE_CALLS = {
    "step-before-reset": (lambda env, a: env.step(0), False),
    "reset-seed-negative": (lambda env, a: env.reset(seed=-1), False),
    "reset-seed-text": (lambda env, a: env.reset(seed="x"), False),
    "reset-seed-float": (lambda env, a: env.reset(seed=1.5), False),
    "reset-options-unknown": (lambda env, a: env.reset(options={"colour": 1}), False),
    "reset-options-not-a-dict": (lambda env, a: env.reset(options="fast"), False),
    "step-after-close": (lambda env, a: (env.close(), env.step(0)), True),
    **{f"step-action-{name}": ((lambda env, a: env.step(env.action_space.n if a == "n" else a)), True)
       for name in BAD_ACTIONS},
}
EPISODE_ENVS = ("Shutdown", "Scheduling", "Elastic", "VolunteerPool", "Allocation")


@pytest.mark.parametrize("call", EPISODE_CALLS)
@pytest.mark.parametrize("env_name", EPISODE_ENVS)
def test_an_environment_refuses_bad_calls(files, env_name, call):
    import gymnasium as gym
    import batsched_py.envs  # noqa: F401
    how, reset_first = EPISODE_CALLS[call]
    env = gym.make(f"batsched_py/{env_name}-v0", **_env_base(env_name, files)).unwrapped
    try:
        if reset_first:
            env.reset(seed=0)
        name = call.removeprefix("step-action-")
        check_env_error(lambda: how(env, BAD_ACTIONS.get(name)))
    finally:
        env.close()


# --- the Python entry points: saved agents and policies with bad options ---

API_CASES = {
    "deepshutdown-model-missing": ("deepshutdown", {"model": "{missing}"}),
    "deepshutdown-model-folder": ("deepshutdown", {"model": "{folder}"}),
    "deepshutdown-model-text": ("deepshutdown", {"model": "{model_text_zip}"}),
    "deepshutdown-model-cut": ("deepshutdown", {"model": "{model_cut_zip}"}),
    "deepshutdown-model-empty-zip": ("deepshutdown", {"model": "{model_empty_zip}"}),
    "deepshutdown-model-other-zip": ("deepshutdown", {"model": "{model_other_zip}"}),
    "deepshutdown-model-number": ("deepshutdown", {"model": 5}),
    "deepshutdown-deterministic-text": ("deepshutdown", {"model": "{model}", "deterministic": "yes"}),
    "deepshutdown-dt-0": ("deepshutdown", {"model": "{model}", "dt": 0}),
    "deepshutdown-history-negative": ("deepshutdown", {"model": "{model}", "history": -1}),
    "deepscheduling-model-text": ("deepscheduling", {"model": "{model_text_zip}"}),
    "deepscheduling-model-of-shutdown": ("deepscheduling", {"model": "{model}"}),
    "dqn-allocation-model-text": ("dqn-allocation", {"model": "{model_text_zip}"}),
    "dqn-allocation-J-3": ("dqn-allocation", {"J": 3}),
    "dqn-allocation-leakage-unknown": ("dqn-allocation", {"leakage_model": "cubic"}),
    "shutdown-agent-policy-unknown": ("shutdown-agent", {"policy": "GURU"}),
    "shutdown-agent-policy-number": ("shutdown-agent", {"policy": 5}),
    "scheduling-agent-policy-unknown": ("scheduling-agent", {"policy": "GURU"}),
    "elastic-agent-policy-unknown": ("elastic-agent", {"policy": "GURU"}),
    "volunteer-agent-policy-unknown": ("volunteer-agent", {"policy": "GURU"}),
    "oracle-host-speed-negative": ("oracle", {"host_speed": -1}),
    "oracle-base-unknown": ("oracle", {"base": "teleport"}),
    "oracle-threshold-nan": ("oracle", {"threshold": math.nan}),
    "timeout-timeout-negative": ("timeout", {"timeout": -5}),
    "timeout-timeout-text": ("timeout", {"timeout": "soon"}),
    "conservative-queue-order-unknown": ("conservative", {"queue_order": "random-walk"}),
    "filler-custom-mapping-text": ("filler", {"custom_mapping": "yes"}),
    "sjf-unknown-option": ("sjf", {"colour": 1}),
    "thermal-allocation-unknown-option": ("thermal-allocation", {"colour": 1}),
    "unknown-scheduler": ("teleport", {}),
    "options-not-a-dict": ("easy", ["queue_order"]),
}


@pytest.mark.parametrize("case", API_CASES)
def test_a_policy_refuses_bad_options_when_created(files, case):
    from batsched_py.scheduler import create
    name, options = API_CASES[case]
    options = _spoil(options, files) if isinstance(options, dict) else options
    check_env_error(lambda: create(name, options))
