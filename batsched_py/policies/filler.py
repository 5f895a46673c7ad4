"""First fit without reservation (batsched ``filler``).

Every message, the queue is scanned in order and each job that fits in the
available hosts starts; nothing is reserved, so large jobs can starve.  Like
batsched's filler (whose ``custom_mapping`` is on by default), executions carry
an explicit identity mapping (executor i on the i-th allocated host); option
``"custom_mapping": false`` leaves it out.
"""
from .base import QueuePolicy
from .options import flag_option


class Filler(QueuePolicy):
    description = "first fit in queue order, no reservation (batsched filler)"
    OPTIONS = QueuePolicy.OPTIONS | {"custom_mapping"}

    @classmethod
    def option_defaults(cls):
        return {**super().option_defaults(), "custom_mapping": True}

    def __init__(self, options=None):
        super().__init__(options)
        self.custom_mapping = flag_option(self.options, "custom_mapping", True)

    def decide(self) -> None:
        for job in self.released:
            self.admit(job)
        self.sort_queue()
        select = self.selector()
        mapping = self.custom_mapping
        plain = self.plain_present
        queue = self.queue
        i = 0
        while i < len(queue) and self.available_mask:
            job = queue[i]
            # a selector never fits a job in fewer hosts than it asks for: skip without calling it
            if plain and job.res > self.available_mask.bit_count():
                i += 1
                continue
            hosts = select(self.free_for(job), job.res)
            if hosts is None:
                i += 1
                continue
            self.start(job, hosts, _identity(job.res) if mapping else None, index=i)


_MAPPINGS: dict[int, dict[str, str]] = {}


def _identity(n: int) -> dict[str, str]:
    """Executor i on the i-th allocated host (shared between executions: never modified)."""
    m = _MAPPINGS.get(n)
    if m is None:
        m = _MAPPINGS[n] = {str(i): str(i) for i in range(n)}
    return m
