"""The one exception type of the emulator engine (platform errors have their own)."""


class EmulatorError(RuntimeError):
    """A run that real Batsim would refuse or abort: bad input, bad decision, silent peer.

    The message names what (profile, job, decision), where (file, message index) and the rule.
    """
