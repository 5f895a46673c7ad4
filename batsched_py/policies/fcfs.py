"""First come, first served without backfilling (batsched ``fcfs_fast``).

A new job starts at once when nothing waits before it and enough hosts are
free; when jobs end, the queue head starts while it fits, and the first job
that does not fit blocks all the others.  Options: ``queue_order`` (default
fcfs), ``allocation``/``contiguous``/``cores_per_node``/``seed`` (selection.py).
"""
from .base import QueuePolicy


class FCFS(QueuePolicy):
    description = "first come, first served, no backfilling (batsched fcfs_fast)"

    def decide(self) -> None:
        select = self.selector()
        # New jobs first, in event order, like fcfs_fast: a rejection and an execution of
        # two jobs of the same message come out in the order the jobs were submitted.
        for job in self.released:
            if not self.admit(job):
                continue
            if len(self.queue) == 1:            # nothing waited before it
                hosts = select(self.free_for(job), job.res)
                if hosts is not None:
                    self.start(job, hosts, index=0)
        if self.ended or self.replan or self.order is not None:
            self.sort_queue()
            while self.queue:
                job = self.queue[0]
                hosts = select(self.free_for(job), job.res)
                if hosts is None:
                    break                       # the head blocks the queue: no backfilling
                self.start(job, hosts, index=0)
