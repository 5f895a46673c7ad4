"""The root of the package's errors.

Every error batsched_py raises on purpose derives from :class:`BatschedError` and keeps the
builtin parent it had (ValueError, RuntimeError, OSError, ...), so that a caller can catch them
all in one clause, and a policy's own bug (a KeyError, a TypeError) is told apart by its type.
"""


class BatschedError(Exception):
    """An error that names what went wrong and where, in one line."""


class InputError(BatschedError):
    """A bad input from the caller (an option, a label, a file given): one line naming it."""
