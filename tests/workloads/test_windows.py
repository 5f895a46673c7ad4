"""The window rules of the elastic reproduction: the job-count window with the longest span, the
fixed-span window with the fewest jobs, each with its training window before it; on LPC-EGEE, that
no window has the paper's size, and which windows the rules pick."""
import pytest

from batsched_py.workloads import ConvertOptions, read_swf
from batsched_py.workloads.convert import prepare
from batsched_py.workloads.windows import fewest_jobs, longest_span, train_test
from helpers import SHARED

LPC = SHARED / "data" / "swf" / "LPC-EGEE-2004-1.2-cln.swf.gz"

# a burst (jobs 0-4, one second apart), a lull (jobs 4-6, 100 s apart), a burst again
SUBMITS = [0, 1, 2, 3, 4, 104, 204, 205, 206, 207]


def test_longest_span_finds_the_lull():
    assert longest_span(SUBMITS, 3) == 4                 # jobs 4-6: 200 s
    assert longest_span(SUBMITS, 2) == 4                 # 4-5 and 5-6 tie at 100 s: the earliest
    assert longest_span(SUBMITS, 10) == 0


def test_longest_span_before_a_job_stays_before_it():
    assert longest_span(SUBMITS, 3, end=6) == 3          # jobs 3-5 (101 s): the lull is cut at job 6
    assert longest_span(SUBMITS, 3, end=3) == 0


def test_fewest_jobs_in_a_span():
    assert fewest_jobs(SUBMITS, 50) == (4, 1)            # 50 s from job 4 hold job 4 alone
    assert fewest_jobs(SUBMITS[:5], 3) == (0, 3)         # a burst alone: 3 jobs in any 3 s
    assert fewest_jobs(SUBMITS, 207) == (0, 9)           # [0, 207) wholly inside; job 9 at 207 is out


def test_fewest_jobs_before_a_job_is_over_by_its_submission():
    assert fewest_jobs(SUBMITS, 50, end=5) == (4, 1)     # [4, 54) is over by job 5 (104 s)
    assert fewest_jobs(SUBMITS, 3, end=4) == (0, 3)
    assert fewest_jobs(SUBMITS, 50, end=9) == fewest_jobs(SUBMITS, 50)


# two quiet stretches (jobs 9 s, then 10 s apart) around a busy one (1 s apart), then a busy tail:
# jobs 0-9 at 0-81, 10-29 at 91-110, 30-39 at 120-210, 40-59 at 211-230
TRACE = [9.0 * i for i in range(10)] + [91.0 + i for i in range(20)] \
    + [120.0 + 10 * i for i in range(10)] + [211.0 + i for i in range(20)]


def test_train_test_matching_the_span_takes_the_sparsest_span_and_one_before_it():
    windows = train_test(TRACE, "span", 1000, 80)
    assert windows["test"] == (29, 8)                    # [110, 190): jobs 29-36, into the quieter stretch
    assert windows["train"] == (0, 9)                    # [0, 80): jobs 0-8, over by job 30 (120 s)
    train, test = windows["train"], windows["test"]
    assert TRACE[train[0] + train[1] - 1] < TRACE[test[0]]


def test_train_test_matching_the_job_count_takes_the_longest_spans():
    windows = train_test(TRACE, "jobs", 8, 1.0)
    # test: jobs 29-36 and 30-37 both span 70 s, the earliest; training: jobs 3-10 (64 s), before job 29
    assert windows == {"train": (3, 8), "test": (29, 8)}


@pytest.mark.parametrize("call, message", [
    (lambda: train_test(TRACE, "weeks", 8, 80), "window match 'weeks': not one of jobs, span"),
    (lambda: train_test(TRACE[30:], "span", 8, 80), "before job 0"),
    (lambda: fewest_jobs(SUBMITS, 50, end=10), "the trace has jobs 0-9"),
    (lambda: fewest_jobs(SUBMITS, 50, end=4), "the trace spans only 4 s before job 4"),
])
def test_bad_train_test_windows_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("call, message", [
    (lambda: longest_span(SUBMITS, 11), "the trace has only 10 jobs"),
    (lambda: longest_span(SUBMITS, 0), "not a positive integer"),
    (lambda: longest_span(SUBMITS, 3, end=2), "only 2 jobs there"),
    (lambda: longest_span([3, 1, 2], 2), "not sorted"),
    (lambda: fewest_jobs(SUBMITS, 0), "not a positive number"),
    (lambda: fewest_jobs(SUBMITS, 1000), "the trace spans only 207 s"),
])
def test_bad_windows_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.slow
@pytest.mark.skipif(not LPC.exists(), reason="needs ../shared beside the repository")
def test_lpc_egee_has_no_window_of_the_papers_size():
    """The paper's trace: about 9,500 jobs in seven weeks.  LPC-EGEE's sparsest seven weeks hold
    3.5 times as many, and its sparsest 9,500 jobs span under four weeks."""
    submits = [j.submit for j in prepare(read_swf(LPC), ConvertOptions())[0]]
    _, count = fewest_jobs(submits, 49 * 86400)
    assert count > 30_000
    test = longest_span(submits, 9500)
    train = longest_span(submits, 9500, end=test)
    assert train + 9500 <= test
    assert 14 * 86400 < submits[test + 9499] - submits[test] < 49 * 86400
    weeks = train_test(submits, "span", 9500, 49 * 86400)
    assert weeks["test"] == (119_322, 33_404)
    start, count = weeks["train"]
    assert count > 30_000 and submits[start + count - 1] < submits[119_322]
