"""Built-in policies; importing this package registers them by name."""
from . import fcfs  # noqa: F401
