"""``python -m batsched_py.cli``: the ``batsched-py`` command."""

from . import command

if __name__ == "__main__":      # (not when a module walk imports it)
    command()
