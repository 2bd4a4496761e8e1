"""pentadice's version, here so that any layer may read it (``pentadice.__version__`` re-exports it)."""

VERSION = "0.1.0"
