"""The error of a run that real Batsim would refuse or abort (bad input models included: workloads,
profiles, events, thermal parameters; platforms have their own), and the warning for networks the
emulator does not model."""

from ..errors import BatschedError


class EmulatorError(BatschedError, RuntimeError):
    """A run that real Batsim would refuse or abort: bad input, bad decision, silent peer.

    The message names what (profile, job, decision), where (file, message index) and the rule.
    """


class NetworkNotModelledWarning(UserWarning):
    """The platform's network uses a form the emulator does not model (see network.py): Batsim's
    internal messages to its server would take time crossing it, which the emulator ignores."""
