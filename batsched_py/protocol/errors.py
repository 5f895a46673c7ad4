"""The one exception type the protocol layer raises."""

from ..errors import BatschedError


class ProtocolError(BatschedError, ValueError):
    """A message or event that does not follow Batsim's 4.x JSON protocol.

    ``where`` locates the problem inside the message (for example
    ``events[3].data.alloc``) so that a user can find it in a transcript.
    """

    def __init__(self, reason: str, where: str = "message"):
        self.reason = reason
        self.where = where
        super().__init__(f"{where}: {reason}")
