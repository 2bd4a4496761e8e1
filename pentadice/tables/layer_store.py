"""The work folder of a table of rows of varying length built out of core, layer by layer (the target table's:
:mod:`pentadice.tables.targets_store`; the chances table's: :mod:`pentadice.tables.chances_store`): what both
builds share.

``NAME.KIND.build/`` holds ``plan.json``, the build's work arrays (memory-mapped), a folder of chunk files per
layer being computed (``L03/c00012.*``, the record ``.json`` written last), and per merged layer its rows in
float64 (``L03.rows.npy``: what the next layer reads; the layer below's removed when a layer is merged), its rows
as the table stores them (``L03.q.npy``) and its record (``L03.merged.json``, written after both files and the
work arrays are flushed). Every array carries a record of 64 KiB CRC-32s (:mod:`pentadice.tables.chunks`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from pentadice.support.exits import TableError
from pentadice.tables import chunks, table
from pentadice.tables.win_store import StoreError, disk_error, layer_folder, read_json, remove_written, write_json

ROWS_KIND = "layer-rows"  # a layer's float64 rows, mid-build (chunks.KINDS)


@dataclasses.dataclass(frozen=True)
class Task:
    """One chunk: the states ``lo <= i < hi`` of layer ``layer`` of the table ``table``."""

    layer: int
    chunk: int
    lo: int
    hi: int
    table: str

    @property
    def key(self) -> str:
        return f"{self.table}-L{self.layer:02d}-c{self.chunk:05d}"


@dataclasses.dataclass(frozen=True)
class Store:
    """The work folder of one rule set's table of kind ``kind`` (``targets``, ``chances``) built out of core."""

    directory: Path
    rules: str
    kind: str
    second_kind: str  # the array kind of a chunk's second file (its stored rows, its index)

    @property
    def root(self) -> Path:
        return self.directory / f"{self.rules}.{self.kind}.build"

    @property
    def plan_file(self) -> Path:
        return self.root / "plan.json"

    @property
    def work(self) -> Path:
        return self.root / "work.npy"

    @property
    def index(self) -> Path:
        return self.root / "index.npy"

    def rows(self, layer: int) -> Path:
        return self.root / f"L{layer:02d}.rows.npy"

    def stored(self, layer: int) -> Path:
        return self.root / f"L{layer:02d}.q.npy"

    def merged(self, layer: int) -> Path:
        return self.root / f"L{layer:02d}.merged.json"

    def layer_dir(self, layer: int) -> Path:
        return self.root / f"L{layer:02d}"

    def chunk(self, task: Task, second: str) -> tuple[Path, Path, Path]:
        """``(float64 rows, the second array, record)`` of a task's chunk (``second``: that array's suffix)."""
        stem = self.layer_dir(task.layer) / f"c{task.chunk:05d}"
        return stem.with_suffix(".rows.npy"), stem.with_suffix(second), stem.with_suffix(".json")

    @property
    def lock_files(self) -> table.TableFiles:
        return table.TableFiles(self.directory, f"{self.rules}.{self.kind}")  # the lock its `solve` takes


def check_disk(store: Store, need: int, what: str) -> None:
    """StoreError before a build (or a layer) starts when the disk has less than ``need`` bytes free."""
    free = shutil.disk_usage(store.directory).free
    if need > free:
        raise StoreError(
            f"the {store.rules} {what} needs up to {need / 1e9:,.1f} GB on the disk holding "
            f"{store.directory}, which has {free / 1e9:,.1f} GB free: free some space or build it in another --data "
            "directory (docs/scale.md has every table's size)"
        )


def fresh_folder(store: Store, saved: dict | None, fmt: str, what: str, need: int) -> None:
    """An empty work folder, after the disk is checked for ``need`` bytes: any old one of the format ``fmt``
    removed; a symbolic link, a file, or a folder of other files refused (never removed)."""
    if os.path.lexists(store.root):
        if store.root.is_symlink() or not store.root.is_dir():
            raise StoreError(f"{store.root} is not a folder of a {what}'s build: remove it or use another --data")
        if any(store.root.iterdir()) and (saved or {}).get("format") != fmt:
            raise StoreError(f"{store.root} holds files that are not a {what}'s build: remove it")
    check_disk(store, need, what)
    remove_written(store.root)  # what an old build wrote; a file of the user's is left
    store.root.mkdir(parents=True, exist_ok=True)


def write_chunk(store: Store, task: Task, second: str, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """A chunk's files (``arrays``: ``{field of the record: array}``, the float64 rows under ``rows``, the other
    array in the file of suffix ``second``), then its record (``meta`` with each array's chunk record), each under
    a temporary name and renamed: a worker's last step. StoreError when it cannot write (a full disk said)."""
    rows_path, second_path, record = store.chunk(task, second)
    try:
        layer_folder(rows_path.parent)
        records = {}
        for field, array in arrays.items():
            path = rows_path if field == "rows" else second_path
            kind = ROWS_KIND if field == "rows" else store.second_kind
            tmp, records[field] = chunks.write_temp(path, array, kind)
            os.replace(tmp, path)
        write_json(record, {"layer": task.layer, "lo": task.lo, "hi": task.hi, **meta, **records})
    except OSError as e:
        raise disk_error(e, store.root) from None


def crc(*arrays: np.ndarray) -> int:
    """The CRC-32 of integer arrays (as int64): a record of what a layer wrote into the work arrays."""
    c = 0
    for a in arrays:
        c = zlib.crc32(memoryview(np.ascontiguousarray(a, dtype=np.int64)).cast("B"), c)
    return c


def file_record(path: Path, kind: str, shape: tuple[int, ...]) -> dict:
    """The chunk record of an array file written in place (one read of it)."""
    sums, _, size = chunks.digest(path)
    k = chunks.kind(kind)
    return {"kind": kind, "dtype": k.dtype, "shape": list(shape), "bytes": size, "chunk_bytes": chunks.CHUNK_BYTES,
            "algorithm": chunks.ALGORITHM, "chunks": "".join(f"{c:08x}" for c in sums)}  # fmt: skip


def write_layer(store: Store, layer: int, rows: Sequence[np.ndarray], stored: Sequence[np.ndarray], kind: str) -> dict:
    """A merged layer's rows, in float64 and as stored (array kind ``kind``), each written whole from its
    chunks' parts under a temporary name, flushed and renamed; their records."""
    records = {}
    outputs = ((store.rows(layer), ROWS_KIND, rows), (store.stored(layer), kind, stored))
    for path, k, parts in outputs:
        total = sum(len(p) for p in parts)
        tmp = path.with_name(f".{path.name}.new")
        array = chunks.create_mapped(tmp, (total,), chunks.kind(k).dtype)
        pos = 0
        for p in parts:
            array[pos : pos + len(p)] = p  # float32: rounded as the build in memory stores them
            pos += len(p)
        array.flush()
        del array
        records[k] = file_record(tmp, k, (total,))
        os.replace(tmp, path)
    return records


def done_with(store: Store, layer: int) -> None:
    """After a layer is merged: its chunk files, and the rows of the layer below (no task reads them now)."""
    remove_written(store.layer_dir(layer))
    if layer > 0:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(store.rows(layer - 1))


def whole(path: Path, record: object, kind: str) -> bool:
    try:
        chunks.open_array(path, record, kind, private=False).check_all()
    except (TableError, OSError):
        return False
    return True


def resume_from(store: Store, n_layers: int, merged_whole: Callable[[int], bool]) -> int:
    """The first layer a build (resumed) computes: the layers before it are merged whole and the rows of the
    last of them, which it reads, are whole too; it and the layers after it are forgotten. Back to the first layer
    when those rows are damaged (the rows of the layers below them are removed as a build goes)."""
    k = 0
    while k < n_layers and merged_whole(k):
        k += 1
    if 0 < k < n_layers:
        meta = read_json(store.merged(k - 1), "a layer's record") or {}
        if not whole(store.rows(k - 1), meta.get("rows"), ROWS_KIND):
            k = 0
    for i in range(k, n_layers):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(store.merged(i))
        if i > k:  # chunks computed from the layers now forgotten
            remove_written(store.layer_dir(i))
    return k


def gather(store: Store, n_layers: int, kind: str, head: np.ndarray | None = None) -> np.ndarray:
    """Every merged layer's stored rows (each checked whole) one after another, after ``head``, in a new array
    file of the work folder, memory-mapped (what the finished table is written from)."""
    metas = [read_json(store.merged(i), "a layer's record") or {} for i in range(n_layers)]
    parts = [chunks.open_array(store.stored(i), m.get("stored"), kind, private=False) for i, m in enumerate(metas)]
    head = np.zeros(0) if head is None else head
    data = chunks.create_mapped(
        store.root / ".data.npy.new", (len(head) + sum(len(p.array) for p in parts),), chunks.kind(kind).dtype
    )
    data[: len(head)] = head
    pos = len(head)
    for part in parts:
        part.check_all()
        data[pos : pos + len(part.array)] = part.array
        pos += len(part.array)
    data.flush()
    return data


def done(store: Store) -> None:
    """The table is written: the work folder removed (what the build wrote: a file of the user's stays, and the
    folder with it)."""
    remove_written(store.root)
