"""The win strategy's tables on disk, beside the value table ``NAME.npy`` (see :mod:`pentadice.tables.table`):
``NAME.KIND.npy`` (float64) and its metadata ``NAME.KIND.json``: what it is, its parameters (the thetas; the
end game's boxes), its SHA-256 and the SHA-256 of the value table it was built from. Written atomically
(metadata last) under the table's lock; a file that is missing, damaged, of other parameters or of other values
is built again (:mod:`pentadice.players.win` builds them)."""

from __future__ import annotations

import glob
import json
import logging
from pathlib import Path

import numpy as np

from pentadice.game import rules
from pentadice.tables import chunks, table


def saved_shape(rs: rules.RuleSet, a: np.ndarray) -> np.ndarray:
    """A table as saved, ``rs.table_shape`` (``threshold + 1`` subtotals), from one as saved or ``rs.lanes``
    wide (the solver's own), float64 and contiguous."""
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)[:, :, : rs.upper_threshold + 1])


WIN_FORMAT = "pentadice-win-tables"
WIN_FORMAT_VERSION = 2  # 2: the array's chunk record (pentadice.tables.chunks)
THETA_KIND = "win"  # the utility tables of the nonzero thetas, (n, n_flags, 2**n_boxes, lanes)
ENDGAME_KIND = "win-end"  # the end-game table, (masks, n_flags, threshold + 1, 512)
KIND_WHAT = {
    THETA_KIND: "sign(theta) * E[exp(theta R)] under the policy maximising it, one table per nonzero theta",
    ENDGAME_KIND: "the highest expected win credit against a finished opponent d points ahead",
}


def saved_paths(rs: rules.RuleSet, directory: Path | str, kind: str, params: dict | None = None) -> tuple[Path, Path]:
    """``(array file, metadata file)`` of a win table of ``kind`` in ``directory`` (the end-game tables of
    different ``max_open`` have files of their own: ``NAME.win-end-4.npy``)."""
    d = Path(directory)
    stem = kind if kind != ENDGAME_KIND or params is None else f"{kind}-{params['max_open']}"
    return d / f"{rs.name}.{stem}.npy", d / f"{rs.name}.{stem}.json"


def save_tables(
    rs: rules.RuleSet, directory: Path | str, kind: str, array: np.ndarray, values: np.ndarray, params: dict
) -> Path:
    """Write a win table beside the value table ``values`` of ``rs`` in ``directory``, atomically (metadata
    last), under the table's lock. TableError if the value table there is not ``values`` (or missing), or on a
    write error."""

    files = table.TableFiles(Path(directory), rs.name)
    array = np.ascontiguousarray(array, dtype=np.float64)
    values_checksum = table.checksum(saved_shape(rs, values))
    meta = {
        "format": WIN_FORMAT,
        "format_version": WIN_FORMAT_VERSION,
        "kind": kind,
        "what": KIND_WHAT.get(kind, kind),
        "rules": rs.name,
        "solver_version": table.SOLVER_VERSION,
        "params": params,
        "shape": list(array.shape),
        "dtype": "float64",
        "values_checksum": values_checksum,
        "checksum": table.checksum(array),
    }
    npy, meta_path = saved_paths(rs, directory, kind, params)
    with table.writer_lock(files):
        table.check_values_on_disk(
            files, values_checksum, f"the {rs.name} table in {files.directory} is not the one the win tables are of"
        )
        with chunks.FileSet(f"the {rs.name} win tables", files.directory) as out:
            final_npy, final_meta = (chunks.table_target(p) for p in (npy, meta_path))
            out.json(final_meta, {**meta, "array": out.array(final_npy, array, kind)})
    return npy


def save_quietly(
    rs: rules.RuleSet, directory: Path | str, kind: str, array: np.ndarray, values: np.ndarray, params: dict
) -> bool:
    """:func:`save_tables`, never an error (a read-only directory, no table there: the tables stay in memory);
    whether they were written."""

    try:
        save_tables(rs, directory, kind, array, values, params)
    except (table.TableError, OSError):
        return False
    return True


def load_saved(
    rs: rules.RuleSet, directory: Path | str, kind: str, values: np.ndarray, params: dict
) -> np.ndarray | None:
    """A saved win table of ``kind``, checked: its metadata (format, rule set, parameters), that it was built
    from ``values``, every chunk against its CRC (:mod:`pentadice.tables.chunks`). None when missing, stale or damaged
    (the caller builds it again; a damaged file is said on stderr)."""

    npy, meta_path = saved_paths(rs, directory, kind, params)
    if not npy.is_file() or not meta_path.is_file():
        return None
    try:
        meta = table.read_json(meta_path, "the win tables' metadata")
        if not isinstance(meta, dict):
            return None
        expected = {"format": WIN_FORMAT, "format_version": WIN_FORMAT_VERSION, "kind": kind, "rules": rs.name}
        if any(meta.get(k) != v for k, v in expected.items()):
            return None
        if json.dumps(meta.get("params"), sort_keys=True) != json.dumps(params, sort_keys=True):
            return None
        if meta.get("values_checksum") != table.checksum(saved_shape(rs, values)):
            return None
        array = chunks.open_array(npy, meta.get("array"), kind).array
    except chunks.Damaged as e:
        # The text, not the exception: a log handler that keeps records would keep its traceback and the array.
        logging.getLogger("pentadice").warning("%s; building it again", str(e))
        return None
    except (OSError, ValueError, EOFError):
        return None
    if list(array.shape) != meta.get("shape"):
        return None
    return array


def verify_saved(rs: rules.RuleSet, directory: Path | str, values: np.ndarray) -> list[tuple[Path, str, bool]]:
    """Check every saved win table of ``rs`` in ``directory`` whole (``pentadice verify``): each chunk and the
    SHA-256 of its array. ``(file, its SHA-256, whether it belongs to the value table ``values``)`` for each;
    TableError naming a damaged one (a command would build it again, saying so)."""

    d = Path(directory)
    values_checksum = table.checksum(saved_shape(rs, values))
    found = []
    for suffix in (f".{THETA_KIND}.npy", f".{ENDGAME_KIND}-*.npy"):
        for npy in sorted(d.glob(glob.escape(rs.name) + suffix)):
            kind = THETA_KIND if npy.name.endswith(f".{THETA_KIND}.npy") else ENDGAME_KIND
            meta_path = npy.with_suffix(".json")
            try:
                meta = table.read_json(meta_path, "the win tables' metadata")
                array = chunks.open_array(npy, meta.get("array") if isinstance(meta, dict) else None, kind).array
            except (OSError, ValueError) as e:
                raise table.TableError(f"{npy} cannot be used ({e}); it is built again when needed") from None
            digest = table.checksum(array)
            if digest != meta.get("checksum"):
                raise table.TableError(f"{npy} does not match the SHA-256 in {meta_path}: the file is damaged")
            found.append((npy, digest, meta.get("values_checksum") == values_checksum))
    return found


def saved_whole(rs: rules.RuleSet, directory: Path | str | None, endgame_boxes: int) -> tuple[list[Path], int]:
    """The win strategy's table files whole in ``directory`` (an array with its metadata beside it: they are
    written atomically, metadata last), and how many it has when all are there (Kiriki, whose turns repeat, has
    no end-game table); ``endgame_boxes``: the end game's open boxes (:data:`pentadice.players.win.ENDGAME_BOXES`).
    No directory: none saved."""
    kinds: list[tuple[str, dict | None]] = [(THETA_KIND, None)]
    if not rs.unbounded:
        kinds.append((ENDGAME_KIND, {"max_open": endgame_boxes}))
    if directory is None:
        return [], len(kinds)
    pairs = [saved_paths(rs, directory, kind, params) for kind, params in kinds]
    return [npy for npy, meta in pairs if npy.is_file() and meta.is_file()], len(kinds)
