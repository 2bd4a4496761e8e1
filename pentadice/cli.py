"""The console script's published entry point (``pentadice = "pentadice.cli:entry"`` in installed scripts):
the commands live in :mod:`pentadice.faces.cli`."""

from pentadice.faces.cli import entry

__all__ = ["entry"]
