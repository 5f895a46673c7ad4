"""First come, first served without backfilling."""
from procset import ProcSet

from ..scheduler import Scheduler, register


def lowest_ids(free: ProcSet, n: int) -> ProcSet:
    """The ``n`` lowest free host ids, like batsched's ``basic`` selector."""
    picked = ProcSet()
    for lo, hi in free.intervals():
        take = min(n - len(picked), hi - lo + 1)
        picked |= ProcSet((lo, lo + take - 1))
        if len(picked) == n:
            break
    return picked


@register("fcfs")
class FCFS(Scheduler):
    description = "first come, first served, no backfilling (batsched fcfs_fast)"

    def on_job_submitted(self, job):
        if job.res > len(self.platform):
            self.reject(job)

    def schedule(self):
        for job in list(self.jobs.queue.values()):
            if job.res > len(self.platform.free):
                break
            self.execute(job, lowest_ids(self.platform.free, job.res))
