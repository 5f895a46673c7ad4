"""The emulator's exception type (platform errors have their own) and its warning."""


class EmulatorError(RuntimeError):
    """A run that real Batsim would refuse or abort: bad input, bad decision, silent peer.

    The message names what (profile, job, decision), where (file, message index) and the rule.
    """


class NetworkNotModelledWarning(UserWarning):
    """The platform has network links: Batsim's internal messages between compute hosts and the
    master host would take time crossing them, which the emulator does not model."""
