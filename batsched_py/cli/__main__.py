"""``python -m batsched_py.cli``: the ``batsched-py`` command."""
import sys

from . import main

sys.exit(main())
