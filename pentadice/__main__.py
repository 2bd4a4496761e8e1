"""``python -m pentadice``: the ``pentadice`` command."""

from pentadice.faces.cli import entry

if __name__ == "__main__":
    entry()
