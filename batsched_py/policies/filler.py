"""First fit without reservation (batsched ``filler``).

Every message, the queue is scanned in order and each job that fits in the
available hosts starts; nothing is reserved, so large jobs can starve.  Like
batsched's filler (whose ``custom_mapping`` is on by default), executions carry
an explicit identity mapping (executor i on the i-th allocated host); option
``"custom_mapping": false`` leaves it out.
"""
from ..scheduler import register
from .base import QueuePolicy


@register("filler")
class Filler(QueuePolicy):
    description = "first fit in queue order, no reservation (batsched filler)"
    OPTIONS = QueuePolicy.OPTIONS | {"custom_mapping"}

    def decide(self) -> None:
        for job in self.released:
            self.admit(job)
        self.sort_queue()
        select = self.selector()
        mapping = self.options.get("custom_mapping", True)
        for job in list(self.queue):
            if not self.available:
                break
            hosts = select(self.free_for(job), job.res)
            if hosts is not None:
                self.start(job, hosts, {str(i): str(i) for i in range(job.res)} if mapping else None)
