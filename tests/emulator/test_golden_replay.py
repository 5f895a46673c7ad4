"""Every golden case, replayed in-process: the emulator must send what real Batsim 4.2.1 sent."""
import os
from pathlib import Path

import pytest

from batsched_py.emulator import run_engine
from batsched_py.cli.emulate import batsim_args_to_kwargs

from golden_replay import GOLDEN, Replayer, cases, meta, transcript
from helpers import OUTPUTS, output_differences

def replay(case: str, out: Path) -> Replayer:
    rep = Replayer(transcript(case))
    cwd = os.getcwd()
    os.chdir(GOLDEN / case)
    try:
        run_engine(exchange=rep, **batsim_args_to_kwargs(meta(case)["batsim_args"] + ["-e", str(out)]))
    except Exception as exc:   # reported through the first difference below
        rep.error = exc
    finally:
        os.chdir(cwd)
    return rep


def csv_differences(case: str, prefix: Path) -> list[str]:
    diffs = [output_differences(GOLDEN / case / f"out_{name}.csv", Path(f"{prefix}_{name}.csv"), name)
             for name in OUTPUTS if (GOLDEN / case / f"out_{name}.csv").exists()]
    return [d for d in diffs if d]


@pytest.mark.golden
@pytest.mark.parametrize("case", cases())
def test_messages_match(case, tmp_path):
    rep = replay(case, tmp_path / "out")
    diff = rep.first_difference()
    assert diff is None, diff


@pytest.mark.golden
@pytest.mark.parametrize("case", cases())
def test_outputs_match(case, tmp_path):
    """Batsim's output files, every row and field as Batsim printed it."""
    replay(case, tmp_path / "out")
    diffs = csv_differences(case, tmp_path / "out")
    assert not diffs, diffs


def test_output_comparison_is_exact(tmp_path):
    """Every field must be printed as Batsim printed it: one unit in the last place of the total
    energy is a difference too."""
    golden, mine = tmp_path / "golden.csv", tmp_path / "mine.csv"
    golden.write_text("time,energy,event_type,wattmin,epower\n1.000000,71347046.845669,e,12160.000000,NA\n")
    for row, same in [("1.000000,71347046.845669,e,12160.000000,NA", True),
                      ("1.000000,71347046.845670,e,12160.000000,NA", False),
                      ("1.000000,71347046.845668,e,12160.000000,NA", False),
                      ("1.000000,71347046.845669,e,12160.000001,NA", False),
                      ("1.000000,71347046.845669,e,12160.000000,12160.000000", False),
                      ("1.0,71347046.845669,e,12160.000000,NA", False)]:
        mine.write_text(f"time,energy,event_type,wattmin,epower\n{row}\n")
        assert (output_differences(golden, mine, "consumed_energy") is None) == same, row
    mine.write_text("time,energy,event_type,wattmin,epower\n")
    assert "Batsim wrote 1 rows, the emulator 0" in output_differences(golden, mine, "consumed_energy")
    golden.write_text("job_id,consumed_energy\n1,2188799.999995\n")
    mine.write_text("job_id,consumed_energy\n1,2188799.999994\n")
    assert "row 1" in output_differences(golden, mine, "jobs")

