"""The optional orjson accelerator is used only where it refuses deep nesting instead of crashing."""
import importlib
import subprocess
import sys
import types

import pytest

from batsched_py import json_accel


@pytest.mark.parametrize("version, ok", [("3.8.3", False), ("3.9.14", False), ("3.9.15", True),
                                         ("3.10.0rc1", True), ("3.13.0", True), ("4", True), ("", False)])
def test_which_versions_are_used(version, ok):
    assert json_accel.usable(version) is ok


def test_an_unsafe_orjson_is_ignored(monkeypatch):
    fake = types.SimpleNamespace(__version__="3.8.3", loads=lambda raw: 1, dumps=lambda value: b"1",
                                 JSONDecodeError=ValueError)
    monkeypatch.setitem(sys.modules, "orjson", fake)
    try:
        importlib.reload(json_accel)
        assert json_accel.loads is None and json_accel.dumps is None
        fake.__version__ = "3.9.15"
        importlib.reload(json_accel)
        assert json_accel.loads is fake.loads and json_accel.dumps is fake.dumps
    finally:
        monkeypatch.undo()
        importlib.reload(json_accel)


@pytest.mark.parametrize("reader", ["message", "workload"])
def test_text_nested_200000_deep_is_a_one_line_error(reader, tmp_path):
    # (in a child process: a crash there fails this test instead of killing the test run)
    deep = "'[' * 200_000 + ']' * 200_000"
    path = str(tmp_path / "w.json")
    code = {
        "message": "from batsched_py.protocol import decode_message\n"
                   f"decode_message(('{{\"now\": 0.0, \"events\": ' + {deep} + '}}').encode())",
        "workload": "from pathlib import Path\nfrom batsched_py.models.document import read_workload_file\n"
                    f"Path({path!r}).write_text('{{\"jobs\": ' + {deep} + '}}')\n"
                    f"read_workload_file({path!r})",
    }[reader]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, (done.returncode, done.stderr[-300:])
    last = done.stderr.strip().splitlines()[-1]
    assert ("not valid JSON" in last or "nested too deep" in last), last
