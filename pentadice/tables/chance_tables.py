"""The chances table on disk (:mod:`pentadice.solver.remaining`), beside the value table ``NAME.npy``:
``NAME.chances.npy`` (float32, the rows one after another; memory-mapped, each chunk checked before its first
use), ``NAME.chances-index.npy`` (int64 ``(3, states, lanes)``: each row's start, first points and width) and
``NAME.chances.json``: what it is, its precision, its SHA-256s and the SHA-256 of the value table whose policy
it follows. Written atomically (metadata last) under the table's lock; a table of other values is not used."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pentadice.game import rules
from pentadice.solver.remaining import EPS, PRECISION, Remaining
from pentadice.tables import chunks, table
from pentadice.tables.win_tables import saved_shape

FORMAT = "pentadice-chances"
FORMAT_VERSION = 1
WHAT = "P(R = r): the exact distribution of the points still to come from each state under the advisor's policy"


def saved_paths(rs: rules.RuleSet, directory: Path | str) -> tuple[Path, Path, Path]:
    """``(data, index, metadata)`` of the chances table of ``rs`` in ``directory``."""
    d = Path(directory)
    return d / f"{rs.name}.chances.npy", d / f"{rs.name}.chances-index.npy", d / f"{rs.name}.chances.json"


def save(rs: rules.RuleSet, directory: Path | str, built: Remaining, values: np.ndarray) -> Path:
    """Write the chances table beside the value table ``values`` of ``rs`` in ``directory``, atomically
    (metadata last), under the table's lock. TableError if the value table there is not ``values``, or on a
    write error."""
    files = table.TableFiles(Path(directory), rs.name)
    values_checksum = table.checksum(saved_shape(rs, values))
    data, index_path, meta_path = saved_paths(rs, directory)
    index = np.stack([built.off, built.lo, built.width])
    with table.writer_lock(files):
        table.check_values_on_disk(
            files, values_checksum, f"the {rs.name} table in {files.directory} is not the one the chances are of"
        )
        with chunks.FileSet(f"the {rs.name} chances table", files.directory) as out:
            targets = [chunks.table_target(p) for p in (data, index_path, meta_path)]
            meta = {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "what": WHAT,
                "rules": rs.name,
                "solver_version": table.SOLVER_VERSION,
                "eps": EPS,
                "precision": PRECISION,
                "entries": int(built.data.size),
                "states": int((built.width > 0).sum()),
                "seconds": built.seconds,
                "values_checksum": values_checksum,
                "checksum": table.checksum(built.data),
                "array": out.array(targets[0], built.data, "chances"),
                "index": out.array(targets[1], index, "chances-index"),
            }
            out.json(targets[2], meta)
    return data


def _metadata(rs: rules.RuleSet, directory: Path | str, values: np.ndarray) -> dict | None:
    """The chances table's metadata if it is there, of this format and of ``values``; else None."""
    _, _, meta_path = saved_paths(rs, directory)
    if not meta_path.is_file():
        return None
    try:
        meta = table.read_json(meta_path, "the chances table's metadata")
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict):
        return None
    expected = {"format": FORMAT, "format_version": FORMAT_VERSION, "rules": rs.name}
    if any(meta.get(k) != v for k, v in expected.items()):
        return None
    if meta.get("values_checksum") != table.checksum(saved_shape(rs, values)):
        return None
    return meta


def is_saved(rs: rules.RuleSet, directory: Path | str | None, values: np.ndarray) -> bool:
    """Whether a chances table of ``values`` is saved in ``directory``: its metadata (written last) says so and
    its two arrays are there."""
    if directory is None or _metadata(rs, directory, values) is None:
        return False
    data, index, _ = saved_paths(rs, directory)
    return data.is_file() and index.is_file()


def load(rs: rules.RuleSet, directory: Path | str, values: np.ndarray) -> Remaining | None:
    """The saved chances table of ``values``, its index checked whole and each chunk of its rows checked before
    its first use (whole now for a private copy: :func:`pentadice.tables.chunks.use_private_copies`). None when
    missing or of other values; TableError naming a damaged file."""
    meta = _metadata(rs, directory, values)
    if meta is None:
        return None
    data_path, index_path, _ = saved_paths(rs, directory)
    try:
        index = chunks.open_array(index_path, meta.get("index"), "chances-index").array
        data = chunks.open_array(data_path, meta.get("array"), "chances")
    except OSError as e:
        raise table.TableError(f"the {rs.name} chances table in {directory} cannot be read ({e})") from None
    shape = (3, rs.n_flags << rs.n_boxes, rs.lanes)
    if index.shape != shape or data.array.ndim != 1:
        raise table.TableError(f"the {rs.name} chances table in {directory} has the wrong shape: build it again")
    ends = index[0] + index[2]
    if ends.max(initial=0) > data.array.size or index[0].min(initial=0) < 0:
        raise table.TableError(f"the index of the {rs.name} chances table in {directory} is damaged")
    return Remaining(rs, index[0], index[1], index[2], data.array, float(meta.get("seconds") or 0.0), data.ensure)


def verify(rs: rules.RuleSet, directory: Path | str, values: np.ndarray) -> tuple[Path, str] | None:
    """Check the saved chances table whole (``pentadice verify``): every chunk and the SHA-256 of its rows.
    ``(file, SHA-256)``, or None when there is none of ``values``; TableError naming a damaged file."""
    built = load(rs, directory, values)
    if built is None:
        return None
    meta = _metadata(rs, directory, values) or {}
    digest = table.checksum(np.asarray(built.data))
    if digest != meta.get("checksum"):
        raise table.TableError(f"{saved_paths(rs, directory)[0]} does not match its SHA-256: the file is damaged")
    return saved_paths(rs, directory)[0], digest
