"""Writing files so that a reader never sees half of one: a temporary file beside the target, then a rename."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def write_temp(final: Path, write: Callable[[BinaryIO], object]) -> Path:
    """Write a file under a temporary name beside ``final`` (flushed to disk, with the umask's permissions);
    the caller renames it into place. Nothing is left behind if ``write`` fails."""
    fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return Path(tmp)


def write_file(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> None:
    """Write ``path`` atomically: whole, or not at all (the old file, if any, stays as it was)."""
    final = Path(path).absolute()
    os.replace(write_temp(final, write), final)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
