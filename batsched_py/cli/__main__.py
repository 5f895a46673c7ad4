"""``python -m batsched_py.cli``: the ``batsched-py`` command."""
import sys

from . import main

if __name__ == "__main__":      # (not when a module walk imports it)
    sys.exit(main())
