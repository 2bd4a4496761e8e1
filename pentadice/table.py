"""Table files: the solved values on disk, written atomically and checked when loaded.

For a rule set ``NAME`` the table directory holds

- ``NAME.npy``: float64 values shaped ``(2, 8192, 64)`` = ``[penta_50, open_mask, upper_subtotal]``, NaN
  where a state cannot occur; loads memory-mapped;
- ``NAME.parquet``: one row per reachable state, columns ``open_mask``, ``open_boxes``, ``open_count``,
  ``upper_subtotal``, ``penta_50``, ``value``, with the metadata in the schema under ``pentadice``;
- ``NAME.json``: the metadata: rule set and its definition, solver version, expected score at game start,
  states, and the SHA-256 of the values.

Each file is written to a temporary name and renamed into place; the metadata goes last, so a reader never
pairs a new value file with old metadata without the checksum telling it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import hashlib
import json
import os
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from pentadice import __version__, rules
from pentadice.atomic import write_temp

FORMAT = "pentadice-table"
FORMAT_VERSION = 1
SOLVER_VERSION = f"pentadice {__version__}"
SHAPE = (2, 1 << rules.N_BOXES, 64)


class TableError(ValueError):
    """A table that is missing, of another rule set, or damaged; or a table that cannot be written."""


class TableMissing(TableError):
    """No table of this rule set in the directory (yet)."""


@dataclasses.dataclass(frozen=True)
class TableFiles:
    """Where the files of one rule set's table live."""

    directory: Path
    rules: str

    @property
    def values(self) -> Path:
        return self.directory / f"{self.rules}.npy"

    @property
    def parquet(self) -> Path:
        return self.directory / f"{self.rules}.parquet"

    @property
    def meta(self) -> Path:
        return self.directory / f"{self.rules}.json"

    @property
    def lock(self) -> Path:
        return self.directory / f".{self.rules}.lock"

    def as_dict(self) -> dict[str, str]:
        return {"npy": str(self.values), "parquet": str(self.parquet), "metadata": str(self.meta)}


def checksum(values: np.ndarray) -> str:
    """SHA-256 of the values' bytes (C order), as ``sha256:HEX``."""
    return "sha256:" + hashlib.sha256(np.ascontiguousarray(values).data).hexdigest()


def metadata(rs: rules.RuleSet, values: np.ndarray) -> dict:
    """The metadata that travels with a table."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "rules": rs.name,
        "rules_definition": rules_definition(rs),
        "solver_version": SOLVER_VERSION,
        "expected_score": float(values[0, rs.box_mask, 0]),
        "states": int(np.count_nonzero(~np.isnan(values))),
        "shape": list(values.shape),
        "dtype": "float64",
        "index": ["penta_50", "open_mask", "upper_subtotal"],
        "checksum": checksum(values),
    }


def rules_definition(rs: rules.RuleSet) -> dict:
    """The rule set's switches as plain JSON data (display names left out: they do not change values)."""
    d = dataclasses.asdict(rs)
    d.pop("box_names")
    d["boxes"] = list(d["boxes"])
    return d


def parquet_table(values: np.ndarray, meta: dict):
    """The values as an Arrow table: one row per reachable state."""
    import pyarrow as pa

    full, mask, sub = np.nonzero(~np.isnan(values))
    names = pa.array([" ".join(rules.boxes_of(m)) for m in range(values.shape[1])])
    table = pa.table(
        {
            "open_mask": pa.array(mask.astype(np.uint16)),
            "open_boxes": pa.DictionaryArray.from_arrays(pa.array(mask.astype(np.int16)), names),
            "open_count": pa.array(np.bitwise_count(mask.astype(np.uint16)).astype(np.uint8)),
            "upper_subtotal": pa.array(sub.astype(np.uint8)),
            "penta_50": pa.array(full.astype(bool)),
            "value": pa.array(values[full, mask, sub]),
        }
    )
    return table.replace_schema_metadata({"pentadice": json.dumps(meta)})


@contextlib.contextmanager
def writer_lock(files: TableFiles) -> Iterator[None]:
    """Hold the table's lock file, or fail at once if another solve is writing the same table."""
    fd = os.open(files.lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TableError(
                f"another pentadice solve is writing the {files.rules} table in {files.directory}; "
                "wait for it to finish"
            ) from None
        yield
    finally:
        os.close(fd)


def prepare_directory(directory: Path) -> None:
    """Create the table directory and check that files can be written there, before any solving."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as e:
        raise TableError(f"cannot write tables to {directory}: {e.strerror or e}") from None


def save(rs: rules.RuleSet, values: np.ndarray, directory: Path) -> TableFiles:
    """Write the table of ``rs`` into ``directory`` atomically; returns where the files are."""
    import pyarrow.parquet as pq

    if values.shape != SHAPE or values.dtype != np.float64:
        raise TableError(f"a table is float64 shaped {SHAPE}, not {values.dtype} {values.shape}")
    files = TableFiles(Path(directory), rs.name)
    prepare_directory(files.directory)
    meta = metadata(rs, values)
    temps: list[tuple[Path, Path]] = []
    try:
        with writer_lock(files):
            temps.append((write_temp(files.values, lambda fh: np.save(fh, values)), files.values))
            arrow = parquet_table(values, meta)
            temps.append((write_temp(files.parquet, lambda fh: pq.write_table(arrow, fh)), files.parquet))
            text = json.dumps(meta, indent=2).encode()
            temps.append((write_temp(files.meta, lambda fh: fh.write(text)), files.meta))
            # The renames go through even if Ctrl-C arrives now: no mixed set of files is left.
            old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            try:
                for tmp, final in temps:
                    os.replace(tmp, final)
                temps.clear()
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
    except OSError as e:
        reason = "the disk is full" if e.errno == errno.ENOSPC else (e.strerror or str(e))
        raise TableError(f"cannot write the {rs.name} table to {files.directory}: {reason}") from None
    finally:
        for tmp, _ in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return files


@dataclasses.dataclass(frozen=True)
class Table:
    """A loaded table: ``values[penta_50, open_mask, upper_subtotal]`` (memory-mapped) and its metadata."""

    rules: rules.RuleSet
    values: np.ndarray
    meta: dict
    files: TableFiles

    @property
    def expected_score(self) -> float:
        """Expected final score at game start under optimal play."""
        return float(self.meta["expected_score"])

    def value(self, open_mask: int, upper_subtotal: int, penta_50: bool) -> float:
        """Expected score still to come from the start of a turn in this state (NaN if it cannot occur)."""
        return float(self.values[int(penta_50), open_mask, min(upper_subtotal, self.rules.upper_threshold)])


def load(rs: rules.RuleSet, directory: Path, verify: bool = True) -> Table:
    """Load the table of ``rs`` from ``directory``, memory-mapped; refuse a wrong or damaged one."""
    files = TableFiles(Path(directory), rs.name)
    hint = f"run `pentadice solve --rules {rs.name} --out {files.directory}`"
    if not files.meta.exists() or not files.values.exists():
        raise TableMissing(f"no {rs.name} table in {files.directory}; {hint}")
    try:
        meta = json.loads(files.meta.read_text())
        values = np.load(files.values, mmap_mode="r", allow_pickle=False)
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
    if values.shape != SHAPE or values.dtype != np.float64:
        raise TableError(f"{files.values} has shape {values.shape} {values.dtype}, not {SHAPE} float64; {hint}")
    if verify and checksum(values) != meta.get("checksum"):
        raise TableError(f"{files.values} does not match its checksum: the table is damaged; {hint}")
    return Table(rs, values, meta, files)
