"""Where tables live: ``--data DIR``, else ``$PENTADICE_DATA``, else a source checkout's ``data/`` (where
``make table`` writes), else the user's data directory (``$XDG_DATA_HOME/pentadice``)."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "PENTADICE_DATA"
CHECKOUT = Path(__file__).resolve().parents[2]  # the source tree, when pentadice runs from one
DEFAULT_HELP = f"Table directory [default: ${ENV_VAR}, else a source checkout's data/, else ~/.local/share/pentadice]."


class PathError(ValueError):
    """A path that cannot be used as given (``~user`` of a user that does not exist)."""


def expand(path: str | os.PathLike[str]) -> Path:
    """``path`` with ``~`` and ``~user`` expanded; PathError when the home cannot be found."""
    try:
        return Path(path).expanduser()
    except RuntimeError:  # pathlib's "Could not determine home directory"
        user = os.fspath(path).split("/", 1)[0]
        raise PathError(f"cannot expand {user!r} in {os.fspath(path)!r}: no such user or home") from None


def checkout_data() -> Path | None:
    """The ``data/`` directory of the source checkout pentadice runs from (an editable install), if any."""
    data = CHECKOUT / "data"
    try:
        project = (CHECKOUT / "pyproject.toml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return data if data.is_dir() and 'name = "pentadice"' in project else None


def user_data() -> Path:
    """``$XDG_DATA_HOME/pentadice``, ``~/.local/share/pentadice`` when XDG_DATA_HOME is unset."""
    xdg = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(xdg) / "pentadice"


def locate(override: str | os.PathLike[str] | None = None) -> tuple[Path, str]:
    """The table directory and where the choice came from (``--data``, ``$PENTADICE_DATA``, ``checkout``,
    ``user``)."""
    if override:
        return expand(override), "--data"
    env = os.environ.get(ENV_VAR)
    if env:
        return expand(env), f"${ENV_VAR}"
    data = checkout_data()
    if data is not None:
        return data, "checkout"
    return user_data(), "user"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The table directory (see :func:`locate`)."""
    return locate(override)[0]
