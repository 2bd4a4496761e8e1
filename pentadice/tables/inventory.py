"""What a table directory holds, in words (``pentadice where``, and which rule sets ``serve`` offers by default):
each registered rule set's table loaded as every command loads it, the files other commands add beside it with the
disk they take, and the tables of house rules found there."""

from __future__ import annotations

import contextlib
import glob
from pathlib import Path

from pentadice.game import rules
from pentadice.tables import table


def inventory(directory: Path) -> dict[str, str]:
    """Each registered rule set's table in ``directory``, in words: solved (with its expected score), missing,
    or why it cannot be used: loaded as every command loads it (each chunk checked, the metadata against the
    values), so that what it reports is what the other commands would use. Then any table of house rules there
    (:func:`_house_tables`)."""
    out = {}
    if directory.exists() and not directory.is_dir():
        return {name: f"unusable: {directory} is not a directory" for name in rules.REGISTRY}
    for name, rs in rules.REGISTRY.items():
        try:
            t = table.load(rs, directory, verify=True)
            out[name] = f"solved: expected score {t.expected_score:.10f}{_extras(directory, name)}"
        except table.TableMissing:
            out[name] = "not solved yet"
        except table.TableError as e:
            out[name] = f"unusable: {str(e).split('; run')[0]}"
    return out | _house_tables(directory, out)


def _house_tables(directory: Path, known: dict[str, str]) -> dict[str, str]:
    """The tables of house rules in ``directory`` (a table's metadata, ``NAME.json``, of a rule set not registered
    here), each in words: what its metadata says, since the rules to check it against are in their file."""
    out = {}
    for path in sorted(Path(directory).glob("*.json")) if Path(directory).is_dir() else ():
        name = path.stem
        if "." in name or name in known:
            continue
        try:
            meta = table.read_json(path, "a table's metadata")
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict) and meta.get("format") == table.FORMAT and meta.get("rules") == name:
            score = meta.get("expected_score")
            said = f"expected score {score:.10f}, " if isinstance(score, float) else ""
            out[name] = f"house rules: {said}checked when their file is given (--rules FILE)"
    return out


# The files other commands add beside a table (their data files; each has its .json too), in words.
EXTRA_FILES = (
    ("m2.npy", "SDs"),
    ("chances.npy", "chances table"),
    ("chances-index.npy", ""),
    ("targets.npy", "target table"),
    ("win.npy", "win tables"),
    ("win-end-*.npy", ""),
    ("win.store/tables.npy", "win tables"),  # built out of core (pentadice build): tables/win_store.py
)


def _extras(directory: Path, name: str) -> str:
    """What the table directory holds beside a table, with the disk it takes: `` (+ SDs 8 MB, ...)``."""
    found: dict[str, int] = {}
    for suffix, label in EXTRA_FILES:
        for path in Path(directory).glob(f"{glob.escape(name)}.{suffix}"):
            key = label or ("chances table" if "chances" in suffix else "win tables")
            with contextlib.suppress(OSError):
                found[key] = found.get(key, 0) + path.stat().st_size
    return f" (+ {', '.join(f'{k} {v / 1e6:,.0f} MB' for k, v in found.items())})" if found else ""
