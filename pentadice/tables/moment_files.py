"""The second moments on disk: ``NAME.m2.npy`` beside the values (computed by :mod:`pentadice.solver.moments`),
shaped like them, with its own metadata ``NAME.m2.json`` (its SHA-256 and the SHA-256 of the values it was
computed from): the spread (each option's SD) that ``advise`` shows. Written atomically under the table's lock,
checked when loaded, computed again when missing or of other values."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np

from pentadice.game import rules
from pentadice.tables import chunks, table
from pentadice.tables.chunks import TableError, TableMissing

MOMENTS_FORMAT = "pentadice-moments"


def moments_metadata(rs: rules.RuleSet, m2: np.ndarray, values_checksum: str, sd_at_start: float) -> dict:
    """The metadata that travels with a second-moment table."""
    return {
        "format": MOMENTS_FORMAT,
        "format_version": table.FORMAT_VERSION,
        "rules": rs.name,
        "what": "E[R^2], R the points still to come from the state under the advisor's policy",
        "solver_version": table.SOLVER_VERSION,
        "sd_at_start": sd_at_start,
        "shape": list(m2.shape),
        "dtype": "float64",
        "index": ["penta_50", "open_mask", "upper_subtotal"],
        "values_checksum": values_checksum,
        "checksum": table.checksum(m2),
    }


def save_moments(rs: rules.RuleSet, directory: Path, m2: np.ndarray, values: np.ndarray) -> Path:
    """Write the second moments of the table ``values`` of ``rs`` beside it, atomically (metadata last), under
    the table's lock; TableError if the values on disk are not ``values`` any more, or on a write error."""
    from pentadice.solver.moments import start_sd

    files = table.TableFiles(Path(directory), rs.name)
    if m2.shape != rs.table_shape or m2.dtype != np.float64:
        shape = rs.table_shape
        raise TableError(f"a second-moment table is float64 shaped {shape}, not {m2.dtype} {m2.shape}")
    values_checksum = table.checksum(values)
    meta = moments_metadata(rs, m2, values_checksum, start_sd(rs, values, m2))
    with table.writer_lock(files):
        changed = f"the {rs.name} table in {files.directory} changed: its second moments were not written"
        table.check_values_on_disk(files, values_checksum, changed)
        with chunks.FileSet(f"the {rs.name} second moments", files.directory) as out:
            m2_path, meta_path = (chunks.table_target(p) for p in (files.moments, files.moments_meta))
            out.json(meta_path, {**meta, "array": out.array(m2_path, m2, "moments")})
    return files.moments


def load_moments(rs: rules.RuleSet, directory: Path, values: np.ndarray | None = None) -> np.ndarray:
    """The second moments ``E[R^2]`` of the table of ``rs`` in ``directory`` (in memory, shaped like the
    values, NaN where a state cannot occur), checked against their SHA-256 and against the values they belong
    to (``values``, else the table's own metadata). :class:`TableMissing` if there are none or they belong to
    other values (an older solve: computed again when needed); :class:`TableError` if damaged."""
    files = table.TableFiles(Path(directory), rs.name)
    hint = f"run `pentadice solve --rules {rs.rules_option} --data {files.directory}`"
    if not files.moments.exists() or not files.moments_meta.exists():
        raise TableMissing(f"no second moments of the {rs.name} table in {files.directory}; {hint}")
    try:
        meta = table.read_json(files.moments_meta, "the second moments' metadata", str(files.moments_meta))
    except (OSError, ValueError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise TableError(
            f"the {rs.name} second moments in {files.directory} cannot be read ({first}); {hint}"
        ) from None
    if not isinstance(meta, dict) or meta.get("format") != MOMENTS_FORMAT or meta.get("rules") != rs.name:
        raise TableError(f"{files.moments_meta} is not the metadata of the {rs.name} second moments; {hint}")
    if meta.get("format_version") != table.FORMAT_VERSION:
        raise TableMissing(f"the {rs.name} second moments in {files.directory} have an old format; {hint}")
    m2 = chunks.open_or_refuse(files.moments, meta.get("array"), "moments", hint).array
    if m2.shape != rs.table_shape or m2.dtype != np.float64:
        shape = rs.table_shape
        raise TableError(f"{files.moments} has shape {m2.shape} {m2.dtype}, not {shape} float64; {hint}")
    if values is not None:
        belongs = meta.get("values_checksum") == table.checksum(values)
    else:
        try:
            table_meta = table.read_json(files.meta, "the table metadata", str(files.meta))
        except (OSError, ValueError):
            table_meta = None
        belongs = isinstance(table_meta, dict) and meta.get("values_checksum") == table_meta.get("checksum")
    if not belongs:
        raise TableMissing(f"the {rs.name} second moments in {files.directory} are of an older table; {hint}")
    return m2


def moments_for(tbl: table.Table, save: bool = True) -> np.ndarray:
    """The second moments of a loaded table: from their file, else computed now (one more pass over the states,
    seconds) and, with ``save``, written beside the table when the directory can be written (never an error:
    a read-only table directory just computes them each time)."""
    try:
        return load_moments(tbl.rules, tbl.files.directory, tbl.values)
    except TableMissing:
        pass
    from pentadice.solver.moments import second_moments

    m2 = second_moments(tbl.rules, tbl.values)
    if save:
        with contextlib.suppress(TableError, OSError):
            save_moments(tbl.rules, tbl.files.directory, m2, tbl.values)
    return m2


def verify_moments(tbl: table.Table) -> dict | None:
    """Check the second moments of a verified table, if there are any: their SHA-256, that they belong to its
    values, and that they are second moments (E[R^2] >= E[R]^2 up to rounding, NaN exactly where the values
    are). Their metadata, or None if there are none; TableError if they fail."""
    files = tbl.files
    if not files.moments.exists() and not files.moments_meta.exists():
        return None
    try:
        m2 = load_moments(tbl.rules, files.directory, tbl.values)
    except TableMissing as e:
        raise TableError(str(e)) from None
    if table.checksum(m2) != table.read_json(files.moments_meta, "").get("checksum"):
        raise TableError(f"{files.moments} does not match the SHA-256 in {files.moments_meta}: the file is damaged")
    values = np.asarray(tbl.values)
    if not np.array_equal(np.isnan(m2), np.isnan(values)):
        raise TableError(f"{files.moments} is not blank exactly where the values are")
    ok = ~np.isnan(values)
    if np.any(m2[ok] - values[ok] ** 2 < -1e-6 * np.maximum(1.0, m2[ok])):
        raise TableError(f"{files.moments} holds a negative variance: it is not the second moments of the values")
    return table.read_json(files.moments_meta, "the second moments' metadata")


def store_moments(rs: rules.RuleSet, directory: Path, values: np.ndarray, m2: np.ndarray) -> dict:
    """Write the second moments solved with ``values`` beside the table (``pentadice solve``): a summary ``{sd,
    file}``, ``sd`` the SD of the final score at the start of a game."""
    from pentadice.solver.moments import start_sd

    path = save_moments(rs, directory, m2, values)
    return {"sd": start_sd(rs, values, m2), "file": str(path)}


def build_moments(
    rs: rules.RuleSet, directory: Path, values: np.ndarray, threads: int = 1, force: bool = False
) -> dict:
    """Compute the second moments of a table solved without them and write them beside it (:func:`store_moments`):
    a summary ``{sd, seconds, compile_seconds, max_value_difference, file}``. ``force`` runs the pass even where
    it is too long to run unasked (Maxi Yatzy's)."""
    from pentadice.solver.moments import second_moments

    timings: dict = {}
    m2 = second_moments(rs, values, threads=threads, timings=timings, force=force)
    return {**store_moments(rs, directory, values, m2), **timings}
