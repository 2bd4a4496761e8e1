"""Tables that come with the package, so that a first question needs no solve.

Penta's value table and its second moments (the SDs) are package data (``pentadice/tables/shipped/``), the very files
`pentadice solve` writes: a command that finds no Penta table in its table directory copies them there instead of
solving (a fraction of a second against a solve and its first compile), and loads them with every check a solved
table gets. `pentadice solve` itself always solves. tests/test_shipped_tables.py checks the shipped files bit for bit
against a fresh solve; `python tools/ship_tables.py` writes them again from a solved table directory.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path
from typing import BinaryIO

from pentadice.game import rules
from pentadice.tables import chunks
from pentadice.tables.table import TableFiles, read_json, rules_definition

SHIPPED = Path(__file__).resolve().parent / "shipped"
# The files of one rule set, in the order they are put in place: the metadata last, so that a table is complete
# when its metadata appears (a reader finds no table before that, never half of one).
KINDS = ("values", "parquet", "moments", "moments_meta", "meta")


def available(rs: rules.RuleSet) -> bool:
    """Whether the package holds the tables of ``rs``: a built-in rule set (not house rules of the same name) whose
    shipped metadata names exactly its definition."""
    files = TableFiles(SHIPPED, rs.name)
    if rs.name not in rules.BUILT_IN or not all(getattr(files, k).is_file() for k in KINDS):
        return False
    try:
        meta = read_json(files.meta, f"the shipped {rs.name} table's metadata")
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get("rules_definition") == rules_definition(rs)


def install(rs: rules.RuleSet, files: TableFiles) -> bool:
    """Copy the shipped tables of ``rs`` into the table directory of ``files``, written as a solved table's are
    (:class:`~pentadice.tables.chunks.FileSet`: each under a temporary name, then all renamed into place, the
    metadata last, Ctrl-C held meanwhile); False where the package holds none. The caller holds the table's lock
    and loads (checks) the table afterwards."""
    if not available(rs):
        return False
    source = TableFiles(SHIPPED, rs.name)
    with chunks.FileSet(f"the {rs.name} table", files.directory) as out:
        for kind in KINDS:
            out.file(getattr(files, kind), functools.partial(_copy, getattr(source, kind)))
    return True


def _copy(source: Path, out: BinaryIO) -> None:
    with open(source, "rb") as src:
        shutil.copyfileobj(src, out, 1 << 20)
