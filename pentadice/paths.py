"""Where tables live: ``--out``/``--data``, else ``$PENTADICE_DATA``, else the user's data directory."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "PENTADICE_DATA"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The table directory: ``override`` if given, else ``$PENTADICE_DATA``, else
    ``$XDG_DATA_HOME/pentadice`` (``~/.local/share/pentadice`` when XDG_DATA_HOME is unset)."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(xdg) / "pentadice"
