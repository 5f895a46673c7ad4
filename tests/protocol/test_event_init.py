"""The protocol's values are immutable and behave as dataclasses (equality, hashing, replace, pickling)."""
import dataclasses
import pickle

import pytest
from procset import ProcSet

from batsched_py import protocol as p
from batsched_py.protocol.message import Message


def test_events_cannot_be_modified():
    e = p.ExecuteJob(1.0, "w!1", ProcSet(3))
    for name, value in (("job_id", "x"), ("timestamp", 2.0), ("alloc", ProcSet(1))):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(e, name, value)
    m = Message(1.0, (e,))
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.now = 2.0
    c = p.JobCompleted(3.0, "w!1", alloc=ProcSet(3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.job_state = "COMPLETED_KILLED"
    with pytest.raises((AttributeError, TypeError)):     # (TypeError: a dataclass slots quirk)
        c.undeclared = 1
    assert c.job_state == "COMPLETED_SUCCESSFULLY" and e.job_id == "w!1" and m.now == 1.0


def test_events_keep_dataclass_semantics():
    e = p.ExecuteJob(1.0, job_id="w!1", alloc=ProcSet(3))
    assert e == p.ExecuteJob(1.0, "w!1", ProcSet(3), None, {})
    assert e != p.ExecuteJob(1.0, "w!2", ProcSet(3))
    assert hash(Message(1.0, ())) == hash(Message(1.0, ()))
    # default factories give a fresh value per instance
    assert p.ExecuteJob(0.0).extra == {} and p.ExecuteJob(0.0).extra is not p.ExecuteJob(0.0).extra
    assert p.JobCompleted(0.0).alloc == ProcSet() and p.JobCompleted(0.0).return_code == 0
    assert dataclasses.replace(e, job_id="w!2").job_id == "w!2"
    assert pickle.loads(pickle.dumps(e)) == e
    assert repr(e) == "ExecuteJob(timestamp=1.0, job_id='w!1', alloc=ProcSet(3), mapping=None, extra={})"
    with pytest.raises(TypeError):
        p.ExecuteJob()                      # timestamp is required
    with pytest.raises(TypeError):
        p.RejectJob(1.0, nope=1)
    assert isinstance(e, p.Event) and e.TYPE == "EXECUTE_JOB"
