"""Job descriptions and kill progress as they travel in JOB_SUBMITTED, REGISTER_JOB and JOB_KILLED."""
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from . import fields as f
from .errors import ProtocolError
from .frozen import fast_init

_JOB_KEYS = ("id", "subtime", "res", "profile", "walltime")
_NUMBERS = (int, float)


@fast_init
@dataclass(frozen=True, slots=True)
class JobDescription:
    """A job as Batsim describes it; fields Batsim does not know travel untouched in ``extra``."""

    id: str
    res: int
    profile: str
    subtime: Optional[float] = None  # None: absent (registered jobs may omit it)
    walltime: Optional[float] = None  # None: no walltime (Batsim's -1)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_data(cls, data: Any, where: str) -> "JobDescription":
        if data.__class__ is dict and len(data) == 5:
            # (the common case, Batsim's five fields, checked inline; the reads below name any fault)
            job_id, res, profile = data.get("id"), data.get("res"), data.get("profile")
            subtime, walltime = data.get("subtime"), data.get("walltime")
            if (job_id.__class__ is str and res.__class__ is int and res >= 0 and profile.__class__ is str
                    and subtime.__class__ is float and 0.0 <= subtime < math.inf
                    and walltime.__class__ in _NUMBERS and -f.MAX_DOUBLE_INT <= walltime <= f.MAX_DOUBLE_INT):
                return cls(job_id, res, profile, subtime, walltime, {})
        data = f.require_object(data, where)
        res = f.get(data, "res", int, where)
        if res < 0:
            raise ProtocolError(f"job needs a non-negative number of resources, got {res}", f"{where}.res")
        walltime = f.number(data, "walltime", where, None)
        return cls(
            id=f.get(data, "id", str, where),
            res=res,
            profile=f.get(data, "profile", str, where),
            subtime=f.number(data, "subtime", where, None),
            walltime=walltime,
            extra={k: v for k, v in data.items() if k not in _JOB_KEYS},
        )

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id}
        if self.subtime is not None:
            data["subtime"] = self.subtime
        data["res"] = self.res
        data["profile"] = self.profile
        if self.walltime is not None:
            data["walltime"] = self.walltime
        data.update(self.extra)
        return data


@fast_init
@dataclass(frozen=True, slots=True)
class JobProgress:
    """How far a killed job went; composed profiles nest the running task's progress."""

    profile_name: str
    progress: Optional[float] = None
    current_task_index: Optional[int] = None
    current_task: Optional["JobProgress"] = None

    @classmethod
    def from_data(cls, data: Any, where: str) -> "JobProgress":
        data = f.require_object(data, where)
        task = data.get("current_task")
        return cls(
            profile_name=f.get(data, "profile_name", str, where),
            progress=f.number(data, "progress", where, None),
            current_task_index=f.get(data, "current_task_index", int, where, None),
            current_task=None if task is None else cls.from_data(task, f"{where}.current_task"),
        )

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"profile_name": self.profile_name}
        if self.progress is not None:
            data["progress"] = self.progress
        if self.current_task_index is not None:
            data["current_task_index"] = self.current_task_index
        if self.current_task is not None:
            data["current_task"] = self.current_task.to_data()
        return data
