"""External events files (--events): every malformed line is named with its file and line number."""
import pytest

from batsched_py.models.errors import EmulatorError
from batsched_py.models.events_file import load_events


def write(tmp_path, *lines: str):
    path = tmp_path / "events.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_events_are_read_in_order(tmp_path):
    path = write(tmp_path, '{"timestamp": 5, "type": "machine_unavailable", "resources": "0-1,3"}', "",
                 '{"timestamp": 7.5, "type": "my_event", "x": [1]}')
    first, second = load_events(path, nb_hosts=4)
    assert (first.timestamp, first.type, str(first.resources)) == (5.0, "machine_unavailable", "0-1 3")
    assert (second.timestamp, second.type, second.resources, second.data["x"]) == (7.5, "my_event", None, [1])


@pytest.mark.parametrize("line,words", [
    ('{"timestamp": 1, "type": "x"', "invalid JSON"),
    ('[1, 2]', "an object with a string 'type'"),
    ('{"timestamp": 1, "type": 3}', "an object with a string 'type'"),
    ('{"type": "x"}', "finite non-negative number, got null"),
    ('{"timestamp": -1, "type": "x"}', "finite non-negative number, got -1"),
    ('{"timestamp": NaN, "type": "x"}', "finite non-negative number, got NaN"),
    ('{"timestamp": Infinity, "type": "x"}', "finite non-negative number, got Infinity"),
    ('{"timestamp": true, "type": "x"}', "finite non-negative number, got true"),
    ('{"timestamp": "1", "type": "x"}', 'finite non-negative number, got "1"'),
    ('{"timestamp": 1, "type": "machine_available"}', "'resources' must be an interval set"),
    ('{"timestamp": 1, "type": "machine_available", "resources": "a-b"}', "'resources' must be an interval set"),
    ('{"timestamp": 1, "type": "machine_available", "resources": "2-9"}', "resources 2-9 out of range 0-3"),
    pytest.param('{"timestamp": ' + "9" * 5000 + ', "type": "x"}', "invalid JSON (Exceeds the limit (4300 digits)",
                 id="integer-of-5000-digits"),
    pytest.param("[" * 100_000 + "]" * 100_000, "JSON nested too deep", id="nested-100000-deep"),
    ('{"timestamp": 1, "type": "x", "load": [0.5, NaN]}', "load[1] is nan: JSON has no NaN nor Infinity"),
])
def test_malformed_lines_are_named(tmp_path, line, words):
    path = write(tmp_path, '{"timestamp": 0, "type": "ok"}', line)
    with pytest.raises(EmulatorError) as exc:
        load_events(path, nb_hosts=4)
    assert f"events file {path}, line 2: " in str(exc.value)
    assert words in str(exc.value)


def test_timestamps_must_ascend(tmp_path):
    path = write(tmp_path, '{"timestamp": 3, "type": "x"}', '{"timestamp": 2, "type": "x"}')
    with pytest.raises(EmulatorError, match=r"line 2: timestamps must be in ascending order \(2 < 3\)"):
        load_events(path, nb_hosts=4)


def test_unreadable_file(tmp_path):
    with pytest.raises(EmulatorError, match="events file .*missing.txt: cannot read"):
        load_events(tmp_path / "missing.txt", nb_hosts=4)
