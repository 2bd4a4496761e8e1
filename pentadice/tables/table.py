"""Table files: the solved values on disk, written atomically and checked when loaded.

For a rule set ``NAME`` the table directory holds

- ``NAME.npy``: float64 values shaped ``RuleSet.table_shape`` (Penta ``(2, 8192, 64)``, Yatzy ``(1, 32768,
  64)``, Maxi Yatzy ``(1, 1048576, 76)``) = ``[penta_50, open_mask, upper_subtotal]``, NaN where a state
  cannot occur; loaded into memory, every chunk checked;
- ``NAME.parquet``: one row per reachable state, columns ``open_mask`` (16 bits, 32 past 16 boxes),
  ``open_boxes``, ``open_count``, ``upper_subtotal``, ``penta_50``, ``value``, with the metadata in the schema
  under ``pentadice``;
- ``NAME.json``: the metadata: rule set and its definition, solver version, expected score at game start,
  states, the SHA-256 of the values and of the Parquet file, and the values file's record: the CRC-32 of each
  64 KiB chunk (:mod:`pentadice.tables.chunks`, the format of every stored table), checked whenever it is loaded.

Each file is written to a temporary name and renamed into place (Ctrl-C and SIGTERM held back while the renames
run); the metadata goes last, so a reader never pairs a new value file with old metadata without the checksum
telling it. A lock file keeps two writers of one table apart; a process that needs a missing table waits for
the one solving it (:func:`load_or_solve`). What a loaded table reports (its expected score, its states) is
read from the checked values, never from the metadata alone.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from pentadice.game import rules
from pentadice.support import inputs
from pentadice.support.version import VERSION
from pentadice.tables import atomic, chunks
from pentadice.tables.chunks import Damaged, TableError, TableMissing

__all__ = ["Damaged", "Table", "TableError", "TableFiles", "TableMissing", "load", "load_or_solve", "save", "verify"]

FORMAT = "pentadice-table"
FORMAT_VERSION = 2  # 2: the values' chunk record (pentadice.tables.chunks); 1 had only their SHA-256
META_LIMIT = 1 << 23  # bytes: the metadata is a few KB, and a CRC per 64 KiB chunk (Maxi Yatzy's values: 130 KB)
SOLVER_VERSION = f"pentadice {VERSION}"


class FileName:
    """One file of a table's set, as a class attribute of :class:`TableFiles` and its kin: the path of
    ``pattern`` (``{}`` the rule set's name) in the set's directory."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def __get__(self, files, owner=None):
        if files is None:  # read on the class (help(), documentation tools): the descriptor itself
            return self
        return files.directory / self.pattern.format(files.rules)


@dataclasses.dataclass(frozen=True)
class TableFiles:
    """Where the files of one rule set's table live: the values, their Parquet export, the metadata, the
    writers' lock, and the second moments E[R^2] with their metadata (see :mod:`pentadice.tables.moment_files`)."""

    directory: Path
    rules: str
    values = FileName("{}.npy")
    parquet = FileName("{}.parquet")
    meta = FileName("{}.json")
    lock = FileName(".{}.lock")
    moments = FileName("{}.m2.npy")
    moments_meta = FileName("{}.m2.json")

    def as_dict(self) -> dict[str, str]:
        return {"npy": str(self.values), "parquet": str(self.parquet), "metadata": str(self.meta)}


def read_json(path: Path, what: str, where: str = "") -> object:
    """A table's JSON metadata file read strictly (at most :data:`META_LIMIT` bytes, UTF-8, no duplicate keys):
    OSError or ValueError naming ``what`` (and ``where``) if it cannot be."""
    return inputs.loads(inputs.read_text(path, what, META_LIMIT), where)


def checksum(values: np.ndarray) -> str:
    """SHA-256 of the values' bytes (C order), as ``sha256:HEX``."""
    return "sha256:" + hashlib.sha256(np.ascontiguousarray(values).data).hexdigest()


def file_checksum(path: Path) -> str:
    """SHA-256 of a file's bytes, as ``sha256:HEX`` (what ``sha256sum`` prints)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def expected_score(rs: rules.RuleSet, values: np.ndarray) -> float:
    """Expected final score at game start under optimal play: the value of the state with every box open."""
    return float(values[0, rs.box_mask, 0])


def states(values: np.ndarray) -> int:
    """Number of reachable states (values that are not NaN)."""
    return int(np.count_nonzero(~np.isnan(values)))


def metadata(rs: rules.RuleSet, values: np.ndarray) -> dict:
    """The metadata that travels with a table."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "rules": rs.name,
        "rules_definition": rules_definition(rs),
        "solver_version": SOLVER_VERSION,
        "expected_score": expected_score(rs, values),
        "states": states(values),
        "shape": list(values.shape),
        "dtype": "float64",
        "index": ["penta_50", "open_mask", "upper_subtotal"],
        "checksum": checksum(values),
    }


def rules_definition(rs: rules.RuleSet) -> dict:
    """The rule set's switches as plain JSON data (display names left out: they do not change values).

    A rule set on Penta's sheet is described as before sheets were data (the points of its fixed boxes as
    named fields), so that tables solved by earlier versions stay valid; any other sheet is listed box by box.
    """
    d = dataclasses.asdict(rs)
    d.pop("box_names")
    d.pop("source")  # where house rules were read from: not what they are
    sheet = d.pop("sheet")
    d["boxes"] = list(d["boxes"])
    if rs.sheet == rules.PENTA_SHEET:
        points = {b.id: b.points for b in rs.sheet}
        d["penta_points"] = points["penta"]
        d["full_house_points"] = points["full_house"]
        d["small_straight_points"] = points["small_straight"]
        d["large_straight_points"] = points["large_straight"]
    else:
        d["sheet"] = [_box_definition(box) for box in sheet]
    return d


def _box_definition(box: dict) -> dict:
    """A box of a sheet as the metadata lists it: its kind by name, ``alike`` only where set (the tables solved
    before boxes had it keep their definition)."""
    out = {**box, "kind": rules.KIND_NAMES[box["kind"]]}
    if not out.get("alike"):
        out.pop("alike", None)
    return out


PARQUET_MASKS = 1 << 15  # open masks per row group: Maxi Yatzy's 2^20 in 32 groups, memory bounded
PARQUET_COMPRESSION = "zstd"  # the mask columns come in runs of a state's subtotals: zstd halves Maxi Yatzy's file


def parquet_schema(rs: rules.RuleSet, meta: dict):
    """The Parquet export's columns: 16-bit masks, 32-bit past 16 boxes."""
    import pyarrow as pa

    wide = rs.n_boxes > 16
    return pa.schema(
        [
            ("open_mask", pa.uint32() if wide else pa.uint16()),
            ("open_boxes", pa.dictionary(pa.int32() if wide else pa.int16(), pa.string())),
            ("open_count", pa.uint8()),
            ("upper_subtotal", pa.uint8()),
            ("penta_50", pa.bool_()),
            ("value", pa.float64()),
        ],
        metadata={"pentadice": json.dumps(meta)},
    )


def parquet_tables(rs: rules.RuleSet, values: np.ndarray, meta: dict) -> Iterator:
    """The values as Arrow tables, one per row group of :data:`PARQUET_MASKS` open masks: one row per reachable
    state, ordered by (Penta flag, mask, subtotal) within a group."""
    import pyarrow as pa

    schema = parquet_schema(rs, meta)
    mask_type, index_type = schema.field("open_mask").type.to_pandas_dtype(), schema.field("open_boxes").type
    for lo in range(0, values.shape[1], PARQUET_MASKS):
        hi = min(lo + PARQUET_MASKS, values.shape[1])
        block = values[:, lo:hi, :]
        penta_scored, local, sub = np.nonzero(~np.isnan(block))
        names = pa.array([" ".join(rs.boxes_of(m)) for m in range(lo, hi)])
        mask = local + lo
        columns = [
            pa.array(mask.astype(mask_type)),
            pa.DictionaryArray.from_arrays(pa.array(local.astype(index_type.index_type.to_pandas_dtype())), names),
            pa.array(np.bitwise_count(mask).astype(np.uint8)),
            pa.array(sub.astype(np.uint8)),
            pa.array(penta_scored.astype(bool)),
            pa.array(block[penta_scored, local, sub]),
        ]
        yield pa.Table.from_arrays(columns, schema=schema)


def write_parquet(rs: rules.RuleSet, values: np.ndarray, meta: dict, fh) -> None:
    """Write the Parquet export to the open binary file ``fh``, a row group at a time, with page checksums."""
    import pyarrow.parquet as pq

    options = {"write_page_checksum": True, "compression": PARQUET_COMPRESSION}
    with pq.ParquetWriter(fh, parquet_schema(rs, meta), **options) as writer:
        for group in parquet_tables(rs, values, meta):
            writer.write_table(group)


def check_values_on_disk(files: TableFiles, values_checksum: str, refusal: str) -> None:
    """TableError (``refusal``) unless the value table of ``files`` is the one whose checksum is
    ``values_checksum`` (its metadata says so): a table written beside it must be of those values. Called under
    the table's lock (:func:`writer_lock`), so that the values cannot change before it is written."""
    try:
        on_disk = read_json(files.meta, "the table metadata", str(files.meta))
    except (OSError, ValueError):
        on_disk = None
    if not isinstance(on_disk, dict) or on_disk.get("checksum") != values_checksum:
        raise TableError(refusal)


@contextlib.contextmanager
def writer_lock(files: TableFiles, wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the table's lock file. If another process holds it: fail at once, or, given ``wait``, wait for that
    process to finish, calling ``wait()`` every tenth of a second meanwhile (to say so; it may raise to stop)."""
    try:
        fd = os.open(files.lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as e:
        raise TableError(f"cannot lock the {files.rules} table in {files.directory}: {e.strerror or e}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if wait is None:
                raise TableError(
                    f"another pentadice process is writing the {files.rules} table in {files.directory}; "
                    "wait for it to finish"
                ) from None
            while True:
                wait()
                time.sleep(0.1)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    continue
        yield
    finally:
        os.close(fd)


def prepare_directory(directory: Path, rules_name: str | None = None) -> None:
    """Create the table directory and check that files can be written there, before any solving; given a rule
    set's name, check too that its files are regular files or missing (symbolic links are followed)."""
    if os.path.lexists(directory) and not directory.is_dir():
        raise TableError(f"cannot write tables to {directory}: it is not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as e:
        raise TableError(f"cannot write tables to {directory}: {e.strerror or e}") from None
    if rules_name is not None:
        _targets(TableFiles(directory, rules_name))


def _targets(files: TableFiles) -> list[Path]:
    """Where the values, Parquet and metadata files are written (links followed); TableError if one of them is
    not a regular file: it is never renamed over."""
    try:
        return [chunks.table_target(p) for p in (files.values, files.parquet, files.meta)]
    except atomic.TargetError as e:
        raise TableError(f"cannot write the {files.rules} table: {e}") from None


def save(rs: rules.RuleSet, values: np.ndarray, directory: Path) -> TableFiles:
    """Write the table of ``rs`` into ``directory`` atomically; returns where the files are. Fails at once if
    another process is writing the same table.

    Ctrl-C or SIGTERM while the files are renamed into place is raised after the renames, as
    :class:`pentadice.tables.atomic.CommittedInterrupt`: the new table is then there, whole."""
    return solve_and_save(rs, directory, lambda: values)


def solve_and_save(rs: rules.RuleSet, directory: Path, solve: Callable[[], np.ndarray]) -> TableFiles:
    """Solve (``solve()`` gives the values) and write the table of ``rs``, holding the table's lock from before
    the solve: a second process writing the same table is refused at once, before any work."""
    files = TableFiles(Path(directory), rs.name)
    prepare_directory(files.directory, rs.name)
    with writer_lock(files):
        _write(rs, solve(), files)
    return files


def load_or_solve(
    rs: rules.RuleSet,
    directory: Path,
    solve: Callable[[], np.ndarray],
    on_wait: Callable[[Path], None] | None = None,
    shipped: Callable[[TableFiles], bool] | None = None,
) -> Table:
    """The table of ``rs`` from ``directory``; a missing one is put there by ``shipped(files)`` where that can
    (:func:`pentadice.tables.shipped.install`: the copy the package holds), else solved by ``solve()``, first. Several
    processes may ask at once: one solves, the others wait for it (``on_wait`` says so) and load its table.
    The directory is checked for writing before any solving."""
    try:
        return load(rs, directory)
    except TableMissing:
        pass
    files = TableFiles(Path(directory), rs.name)
    prepare_directory(files.directory, rs.name)
    with writer_lock(files, wait=lambda: on_wait(files.directory) if on_wait else None):
        try:
            return load(rs, directory)  # written by the process we waited for
        except TableMissing:
            pass
        if shipped is None or not shipped(files):  # a copy the package holds, where it has one; else solved
            _write(rs, solve(), files)
    return load(rs, directory)


def _write(rs: rules.RuleSet, values: np.ndarray, files: TableFiles) -> None:
    """Write the three files under temporary names, then rename them into place, metadata last."""

    if values.shape != rs.table_shape or values.dtype != np.float64:
        raise TableError(f"a table is float64 shaped {rs.table_shape}, not {values.dtype} {values.shape}")
    meta = metadata(rs, values)
    values_path, parquet_path, meta_path = _targets(files)
    with chunks.FileSet(f"the {rs.name} table", files.directory) as out:
        record = out.array(values_path, values, "values")
        parquet = out.file(parquet_path, lambda fh: write_parquet(rs, values, meta, fh))
        out.json(meta_path, {**meta, "parquet_checksum": file_checksum(parquet), "array": record})


@dataclasses.dataclass(frozen=True)
class Table:
    """A loaded table: ``values[penta_scored, open_mask, upper_subtotal]`` (a private copy in memory:
    see :mod:`pentadice.tables.chunks`; ``penta_50`` on disk) and its metadata, checked chunk by chunk when loaded."""

    rules: rules.RuleSet
    values: np.ndarray
    meta: dict
    files: TableFiles

    @property
    def expected_score(self) -> float:
        """Expected final score at game start under optimal play (from the values, not the metadata)."""
        return expected_score(self.rules, self.values)

    def value(self, open_mask: int, upper_subtotal: int, penta_scored: bool) -> float:
        """Expected score still to come from the start of a turn in this state (NaN if it cannot occur)."""
        return float(self.values[int(penta_scored), open_mask, min(upper_subtotal, self.rules.upper_threshold)])


class _Mismatch(TableError):
    """Values and metadata that do not go together: damaged, or read while a writer renamed them."""


def load(rs: rules.RuleSet, directory: Path, verify: bool = True) -> Table:
    """Load the table of ``rs`` from ``directory`` into memory (:mod:`pentadice.tables.chunks`); refuse a wrong or
    damaged one: every chunk of the values is checked against its CRC, and with ``verify`` the metadata's
    expected score and states against the values.
    Values and metadata that do not match are read once more a moment later: a writer renames the values first
    and the metadata last, so a reader in between sees the new values with the old metadata."""
    try:
        return _load(rs, directory, verify)
    except _Mismatch:
        time.sleep(0.5)
        return _load(rs, directory, verify)


def _load(rs: rules.RuleSet, directory: Path, verify: bool) -> Table:
    files = TableFiles(Path(directory), rs.name)
    hint = f"run `pentadice solve --rules {rs.rules_option} --data {files.directory}`"
    if not files.meta.exists() or not files.values.exists():
        raise TableMissing(f"no {rs.name} table in {files.directory}; {hint}")
    for path in (files.meta, files.values):
        if not path.is_file():
            raise TableError(f"{chunks.not_a_file(path)}, then {hint}")
    try:
        meta = read_json(files.meta, "the table metadata", str(files.meta))
    except (OSError, ValueError) as e:
        raise TableError(f"the {rs.name} table in {files.directory} cannot be read ({e}); {hint}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise TableError(f"{files.meta} is not a pentadice table's metadata; {hint}")
    if meta.get("rules") != rs.name:
        raise TableError(f"{files.meta} holds the {meta.get('rules')!r} rule set, not {rs.name!r}; {hint}")
    if meta.get("rules_definition") != rules_definition(rs):
        raise TableError(f"the {rs.name} table in {files.directory} was solved for other rules; {hint}")
    if meta.get("format_version") != FORMAT_VERSION:
        raise TableError(f"the {rs.name} table in {files.directory} has an old format; {hint}")
    try:
        values = chunks.open_or_refuse(files.values, meta.get("array"), "values", hint).array
    except Damaged as e:
        raise _Mismatch(str(e)) from None  # read once more: a writer may be renaming its files
    if values.shape != rs.table_shape or values.dtype != np.float64:
        shape = rs.table_shape
        raise TableError(f"{files.values} has shape {values.shape} {values.dtype}, not {shape} float64; {hint}")
    if verify and (meta.get("expected_score") != expected_score(rs, values) or meta.get("states") != states(values)):
        raise _Mismatch(f"{files.meta} does not agree with the values it describes: it was edited; {hint}")
    return Table(rs, values, meta, files)


def read_parquet(path: str | os.PathLike[str]) -> tuple[np.ndarray, dict]:
    """The values and metadata of a table's Parquet export, checked: every page's CRC, and the SHA-256 of the
    values rebuilt from the rows against the checksum in the file's metadata. TableError if anything fails.
    Read a row group at a time: the memory is the values' and one group's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path, page_checksum_verification=True)
        meta = inputs.loads((pf.schema_arrow.metadata or {}).get(b"pentadice", b"null"), f"{path}'s metadata")
    except (OSError, ValueError, pa.ArrowException) as e:
        raise TableError(f"{path} cannot be read as a pentadice table: {e}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise TableError(f"{path} is not a pentadice table's Parquet export")
    try:
        rs = rules.get_rules(str(meta.get("rules")))
        if meta.get("shape") != list(rs.table_shape):
            raise ValueError(f"shape {meta.get('shape')!r}, not {list(rs.table_shape)} as {rs.name} has")
        values = np.full(rs.table_shape, np.nan)
        for batch in pf.iter_batches(columns=["penta_50", "open_mask", "upper_subtotal", "value"]):
            penta_scored = batch.column(0).to_numpy(zero_copy_only=False).astype(np.intp)
            mask = batch.column(1).to_numpy().astype(np.intp)
            sub = batch.column(2).to_numpy().astype(np.intp)
            values[penta_scored, mask, sub] = batch.column(3).to_numpy()
    except (KeyError, IndexError, ValueError, OSError, pa.ArrowException) as e:  # UnknownRules is a ValueError
        raise TableError(f"{path} does not hold a pentadice table's columns: {e}") from None
    if checksum(values) != meta.get("checksum"):
        raise TableError(f"{path} does not match its checksum: the file is damaged")
    return values, meta


def verify(rs: rules.RuleSet, directory: Path) -> Table:
    """Check every file of a table: the values against their checksum, the metadata against the values, the
    Parquet file's SHA-256 against the metadata and its rows against the values. TableError if one fails."""
    tbl = load(rs, directory, verify=True)
    files = tbl.files
    if checksum(tbl.values) != tbl.meta.get("checksum"):
        raise TableError(f"{files.values} does not match the SHA-256 in {files.meta}: the table is damaged")
    if not files.parquet.exists():
        raise TableError(f"{files.parquet} is missing")
    if not files.parquet.is_file():
        raise TableError(f"{files.parquet} is not a regular file")
    if file_checksum(files.parquet) != tbl.meta.get("parquet_checksum"):
        raise TableError(f"{files.parquet} does not match the SHA-256 in {files.meta}: the file is damaged")
    values, _ = read_parquet(files.parquet)
    if not np.array_equal(values, tbl.values, equal_nan=True):
        raise TableError(f"{files.parquet} holds other values than {files.values}")
    return tbl
