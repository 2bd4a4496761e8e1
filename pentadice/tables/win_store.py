"""The files of the win strategy's tables built out of core (:mod:`pentadice.cluster`; what the build computes:
:mod:`pentadice.tables.win_plan`), ``NAME.win.store/`` beside the value table ``NAME.npy``:

- ``plan.json``: the plan (thetas, chunks of each layer) and the value table's SHA-256, written first: a build
  resumed later uses the same chunks, and a build of other values starts afresh;
- ``tables.npy``: the table, ``(slots, n_flags, 2**n_boxes, lanes)`` float64, its disk reserved when the build
  starts (slot 0, the value table, and the game's end written then);
- ``L07/s03-c00012.npy`` and ``.json``: a chunk computed by a task (its rows, one per state of the chunk, in the
  layer's order) and its record (a CRC-32 for every 64 KiB, :mod:`pentadice.tables.chunks`), each written under a
  temporary name and renamed, the record last: a chunk is done when its record is there and its rows match it;
- ``L07.merged.json``: layer 7 merged into ``tables.npy`` (written after the table's pages are flushed), with the
  CRC-32 of each slot's rows of the layer; the layer's chunk files are removed then;
- ``table.json``: written last, when every layer is merged and checked: the finished table's record (a CRC-32
  for every 64 KiB of ``tables.npy``), its SHA-256, the thetas, the value table's SHA-256, how it was built.

Readers (:func:`open_win`) use only a finished store and check every chunk of it before the first use;
``pentadice verify`` (:func:`verify`) checks it whole, SHA-256 included, and the layer records against it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import re
import shutil
import zlib
from pathlib import Path

import numpy as np

from pentadice.game import rules, states
from pentadice.support.exits import TableError
from pentadice.tables import atomic, chunks, table, win_tables
from pentadice.tables.win_plan import KIND, Plan, Task, computed, from_json

FORMAT = "pentadice-store"
FORMAT_VERSION = 1
ARRAY_KIND = "win-store"  # the registered kind of the table and of its chunk files (chunks.KINDS)


class StoreError(TableError):
    """A store that cannot be built or read: damaged, of other values, or a disk that is full."""


@dataclasses.dataclass(frozen=True)
class Store:
    """Where the files of one rule set's out-of-core win tables live (``directory``: the table directory)."""

    directory: Path
    rules: str

    @property
    def root(self) -> Path:
        return self.directory / f"{self.rules}.{KIND}.store"

    @property
    def plan_file(self) -> Path:
        return self.root / "plan.json"

    @property
    def array(self) -> Path:
        return self.root / "tables.npy"

    @property
    def meta(self) -> Path:
        return self.root / "table.json"

    @property
    def lock_files(self) -> table.TableFiles:
        return table.TableFiles(self.directory, f"{self.rules}.{KIND}.store")  # .NAME.win.store.lock

    def layer_dir(self, layer: int) -> Path:
        return self.root / f"L{layer:02d}"

    def merged(self, layer: int) -> Path:
        return self.root / f"L{layer:02d}.merged.json"

    def chunk(self, task: Task) -> tuple[Path, Path]:
        """``(rows, record)`` of a task's chunk."""
        stem = self.layer_dir(task.layer) / f"s{task.slot:02d}-c{task.chunk:05d}"
        return stem.with_suffix(".npy"), stem.with_suffix(".json")


# The names a build gives its files (both kinds of store: this module's and tables/layer_store.py's): only these are
# ever removed from a store, so that a file of the user's put there is left alone (and the folder holding it).
WRITTEN = re.compile(
    r"plan\.json|tables\.npy|table\.json|work\.npy|index\.npy|L[0-9]{2}\.(rows\.npy|q\.npy|merged\.json)"
    r"|\.[A-Za-z0-9.]+\.npy\.new"  # an array being written in place (.tables.npy.new, .L03.rows.npy.new)
    r"|(s[0-9]{2}-)?c[0-9]{5}\.(npy|json|rows\.npy|q\.npy|index\.npy)"  # a chunk's files, in its layer's folder
    r"|\..+\.[0-9]+-[a-z0-9_]{8}\.tmp"  # a file being written (atomic.write_temp)
)
LAYER_FOLDER = re.compile(r"L[0-9]{2}")


def remove_written(folder: Path) -> None:
    """Remove what a build wrote in ``folder`` (a store, or a layer's folder of chunks): the files named as a build
    names them (:data:`WRITTEN`) and its layers' folders, then ``folder`` itself when that leaves it empty. Any
    other file (the user's) is left where it is, with the folders that hold it; a symbolic link in ``folder``'s
    place is never followed (the files where it leads are not the build's)."""
    if os.path.islink(folder):
        return
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            if LAYER_FOLDER.fullmatch(entry.name):
                remove_written(Path(entry.path))
        elif WRITTEN.fullmatch(entry.name) and (entry.is_file(follow_symlinks=False) or entry.is_symlink()):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
    with contextlib.suppress(OSError):  # not empty: a file of the user's is there
        os.rmdir(folder)


def layer_folder(folder: Path) -> None:
    """``folder``, a layer's folder of chunks in a store, made if missing; StoreError when a symbolic link (or a
    file) is in its place: the chunks are never written, nor later removed, where it leads."""
    folder.mkdir(exist_ok=True)
    if folder.is_symlink() or not folder.is_dir():
        raise StoreError(
            f"{folder} is a symbolic link, not a folder of the build's: remove it (a build writes its chunks only "
            "in folders of its own)"
        )


def write_json(path: Path, data: dict) -> None:
    """A small JSON file, written under a temporary name, flushed and renamed into place."""
    text = json.dumps(data, indent=1).encode()
    tmp = atomic.write_temp(path, lambda fh: fh.write(text))
    os.replace(tmp, path)


def read_json(path: Path, what: str) -> dict | None:
    """A JSON object written by this module, or None when missing or not one."""
    try:
        data = table.read_json(path, what)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def disk_error(error: OSError, where: Path) -> StoreError:
    """An OSError while writing, in words: a full disk says what to do (free space, run the command again)."""
    full = error.errno in (errno.ENOSPC, errno.EDQUOT) or "requested and" in str(error)
    if full:
        return StoreError(
            f"the disk holding {where} is full: free some space, then run the same command again (the build "
            "goes on from the chunks already written)"
        )
    return StoreError(f"cannot write {where}: {error.strerror or error}")


def values_checksum(rs: rules.RuleSet, values: np.ndarray) -> str:
    return table.checksum(win_tables.saved_shape(rs, values))


def needed_bytes(store: Store, plan: Plan) -> int:
    """The free disk a build still needs: the table (unless already reserved) and the chunk files of its widest
    layer."""
    have = store.array.stat().st_blocks * 512 if store.array.is_file() else 0
    return max(plan.bytes - have, 0) + max(plan.layer_bytes(i) for i in range(len(plan.cuts)))


def check_disk(store: Store, need: int) -> None:
    """StoreError before a build starts (or goes on) when the disk has less than ``need`` bytes free."""
    free = shutil.disk_usage(store.directory).free
    if need > free:
        raise StoreError(
            f"the {store.rules} win tables need {need / 1e9:,.1f} GB more on the disk holding {store.directory}, "
            f"which has {free / 1e9:,.1f} GB free: free some space or build them in another --data directory"
        )


def start(store: Store, plan: Plan, values: np.ndarray, checksum: str) -> Plan:
    """The plan to build: the one saved in the store when it is of the same values (a build resumed), else
    ``plan`` with a new store (any old one removed): its plan file, then its table with slot 0 (the value table)
    and the game's end written, its disk reserved."""
    saved = read_json(store.plan_file, "the build's plan")
    if saved is not None and saved.get("values_checksum") == checksum and store.array.is_file():
        resumed = from_json(plan.rules, saved, plan.thetas)
        if resumed is not None and _array_shape(store.array) == resumed.shape:
            return resumed
    rs = plan.rules
    if os.path.lexists(store.root):
        if store.root.is_symlink() or not store.root.is_dir():
            raise StoreError(f"{store.root} is not a folder of win tables: remove it or build in another --data")
        if any(store.root.iterdir()) and (saved or {}).get("format") != FORMAT:
            raise StoreError(f"{store.root} holds files that are not win tables: remove it or build elsewhere")
    old = sum(p.stat().st_blocks * 512 for p in store.root.rglob("*") if p.is_file()) if store.root.is_dir() else 0
    check_disk(store, plan.bytes + max(plan.layer_bytes(i) for i in range(len(plan.cuts))) - old)  # before writing
    remove_written(store.root)  # a store of other values or another plan: built afresh
    store.root.mkdir(parents=True, exist_ok=True)
    write_json(store.plan_file, {"format": FORMAT, "rules": rs.name, "values_checksum": checksum, **plan.as_json()})
    tmp = store.root / ".tables.npy.new"
    try:
        array = chunks.create_mapped(tmp, plan.shape, "float64")  # the disk is taken now, not mid-build
        write_fixed(array, plan, values)
        del array
        os.replace(tmp, store.array)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise disk_error(e, store.root) from None
    return plan


def write_fixed(array: np.ndarray, plan: Plan, values: np.ndarray) -> None:
    """What a build does not compute, into the table ``array``: slot 0 (the value table), each slot's rows at the
    game's end (``sign(theta) * exp(0)``) and NaN where no state is; flushed."""
    array[0] = values
    done = computed(plan.rules)
    for s in plan.built_slots:
        array[s][~done] = np.nan
        array[s][:, 0, :] = np.copysign(1.0, plan.thetas[s])
    array.flush()


def _array_shape(path: Path) -> tuple[int, ...] | None:
    try:
        return tuple(chunks.mapped(path).shape)
    except (OSError, ValueError):
        return None


def chunk_done(store: Store, task: Task) -> bool:
    """Whether a task's chunk is written whole: its record there and its rows matching it."""
    rows, record = store.chunk(task)
    meta = read_json(record, "a chunk's record")
    if meta is None or (meta.get("lo"), meta.get("hi")) != (task.lo, task.hi):
        return False
    try:
        chunks.open_array(rows, meta.get("array"), ARRAY_KIND, private=True)
    except (TableError, OSError, ValueError):
        return False
    return True


def write_chunk(store: Store, task: Task, rows: np.ndarray, info: dict) -> None:
    """A chunk's rows and then its record, each under a temporary name and renamed (a worker's last step)."""
    path, record = store.chunk(task)
    try:
        layer_folder(path.parent)
        tmp, array_record = chunks.write_temp(path, rows, ARRAY_KIND)
        os.replace(tmp, path)
        write_json(record, {"slot": task.slot, "layer": task.layer, "lo": task.lo, "hi": task.hi, **info,
                            "array": array_record})  # fmt: skip
    except OSError as e:
        raise disk_error(e, store.root) from None


def read_chunk(store: Store, task: Task) -> np.ndarray:
    """A chunk's rows, checked whole against its record (StoreError when damaged or missing)."""
    rows, record = store.chunk(task)
    meta = read_json(record, "a chunk's record")
    if meta is None:
        raise StoreError(f"{record} is missing or unreadable: run the build again")
    try:
        return chunks.open_array(rows, meta.get("array"), ARRAY_KIND, private=True).array
    except (TableError, OSError) as e:
        raise StoreError(f"{rows}: {e}; run the build again") from None


def merge(store: Store, plan: Plan, layer: int) -> None:
    """Write every chunk of a finished layer into the table, flush it, record the layer's CRCs, then remove
    the chunk files (a merge cut short is done again from them: it is idempotent)."""
    masks, flags = states.layers(plan.rules)[layer]
    crc = {}
    try:
        array = chunks.mapped(store.array, "r+")
        for s in plan.built_slots:
            c = 0
            for task in plan.tasks(layer):
                if task.slot != s:
                    continue
                rows = read_chunk(store, task)
                array[s, flags[task.lo : task.hi], masks[task.lo : task.hi]] = rows
                c = zlib.crc32(memoryview(np.ascontiguousarray(rows)).cast("B"), c)
            crc[str(s)] = c
        array.flush()
        del array
        write_json(store.merged(layer), {"layer": layer, "crc32": crc})
    except OSError as e:
        raise disk_error(e, store.root) from None
    remove_written(store.layer_dir(layer))


def layer_merged(store: Store, layer: int) -> bool:
    return read_json(store.merged(layer), "a layer's record") is not None


def check_layers(store: Store, plan: Plan, array: np.ndarray) -> int | None:
    """The first layer whose rows in ``array`` do not match the CRCs recorded when it was merged, or None."""
    for layer, (masks, flags) in enumerate(states.layers(plan.rules)):
        meta = read_json(store.merged(layer), "a layer's record")
        want = meta.get("crc32") if meta else None
        if not isinstance(want, dict):
            return layer
        for s in plan.built_slots:
            rows = np.ascontiguousarray(array[s, flags, masks])
            if zlib.crc32(memoryview(rows).cast("B")) != want.get(str(s)):
                return layer
    return None


def unmerge_from(store: Store, plan: Plan, layer: int) -> None:
    """Forget the layers from ``layer`` up (their rows are computed again: a damaged layer and every layer
    built on it)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(store.meta)
    for i in range(layer, len(plan.cuts)):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(store.merged(i))


def finish(store: Store, plan: Plan, checksum: str, info: dict) -> dict:
    """Check every layer against its record, then write ``table.json``: the table's record and SHA-256 (one
    read of the file). StoreError naming the first layer that does not match (the build goes back to it)."""
    array = chunks.mapped(store.array)
    bad = check_layers(store, plan, array)
    if bad is not None:
        unmerge_from(store, plan, bad)
        raise StoreError(f"layer {bad} of {store.array} does not match its record; it is built again next time")
    del array
    sums, sha, size = chunks.digest(store.array)
    record = {
        "kind": ARRAY_KIND,
        "dtype": "float64",
        "shape": list(plan.shape),
        "bytes": size,
        "chunk_bytes": chunks.CHUNK_BYTES,
        "algorithm": chunks.ALGORITHM,
        "chunks": "".join(f"{c:08x}" for c in sums),
    }
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "kind": KIND,
        "rules": plan.rules.name,
        "rules_definition": table.rules_definition(plan.rules),
        "solver_version": table.SOLVER_VERSION,
        "thetas": list(plan.thetas),
        "slots": "0: the value table; then the win player's thetas; the last two: +h and -h of the variance",
        "values_checksum": checksum,
        "checksum": sha,
        "array": record,
        **info,
    }
    try:
        write_json(store.meta, meta)
    except OSError as e:
        raise disk_error(e, store.root) from None
    return meta


@dataclasses.dataclass(frozen=True)
class Opened:
    """A finished store, opened: the table (memory-mapped, every chunk checked), its thetas and metadata."""

    array: np.ndarray
    thetas: np.ndarray
    meta: dict
    store: Store


def finished_meta(rs: rules.RuleSet, directory: Path | str) -> dict | None:
    """The metadata of a finished store of ``rs`` in ``directory``, or None (none, or not finished)."""
    meta = read_json(Store(Path(directory), rs.name).meta, "the win tables' metadata")
    if meta is None or meta.get("format") != FORMAT or meta.get("rules") != rs.name:
        return None
    return meta


def open_win(rs: rules.RuleSet, directory: Path | str, values: np.ndarray, check: bool = True) -> Opened | None:
    """The finished win tables of ``rs`` in ``directory`` built from ``values``, memory-mapped (``check``: every
    chunk checked against its CRC first, one read of the file); None when there are none for these values.
    StoreError when they are damaged."""
    store = Store(Path(directory), rs.name)
    meta = finished_meta(rs, directory)
    if meta is None or meta.get("values_checksum") != values_checksum(rs, values):
        return None
    if meta.get("rules_definition") != table.rules_definition(rs):
        return None
    try:
        checked = chunks.open_array(store.array, meta.get("array"), ARRAY_KIND, private=False)
        if check:
            checked.check_all()
    except (TableError, OSError) as e:
        raise StoreError(f"{e}; build them again: {build_hint(rs, directory)}") from None
    array = np.asarray(checked.array)
    try:
        thetas = np.array(meta.get("thetas", []), dtype=np.float64)
    except (TypeError, ValueError):
        thetas = np.zeros(0)
    if array.ndim != 4 or thetas.ndim != 1 or array.shape[0] != len(thetas):
        raise StoreError(f"{store.array} does not hold the tables its metadata describes; {build_hint(rs, directory)}")
    return Opened(array, thetas, meta, store)


def build_hint(rs: rules.RuleSet, directory: Path | str) -> str:
    return f"`pentadice build --rules {rs.rules_option} --data {directory}`"


def verify(rs: rules.RuleSet, directory: Path | str, values: np.ndarray) -> tuple[Path, str, bool] | None:
    """Check a finished store whole (``pentadice verify``): every chunk, the SHA-256, the layers' records.
    ``(file, SHA-256, whether it is of these values)``, None when there is none; StoreError when damaged."""
    meta = finished_meta(rs, directory)
    if meta is None:
        return None
    store = Store(Path(directory), rs.name)
    try:
        checked = chunks.open_array(store.array, meta.get("array"), ARRAY_KIND, private=False)  # its header
        sums, sha, _ = chunks.digest(store.array)  # every chunk's CRC and the SHA-256 in one read
    except (TableError, OSError) as e:
        raise StoreError(f"{e}; {build_hint(rs, directory)} builds it again") from None
    recorded = meta["array"]["chunks"]
    for c, crc in enumerate(sums):
        if f"{crc:08x}" != recorded[8 * c : 8 * c + 8]:
            start = c * chunks.CHUNK_BYTES
            raise StoreError(
                f"{store.array} ({checked.what}) does not match its checksum at bytes {start:,}-"
                f"{start + chunks.CHUNK_BYTES:,}: the file is damaged; {build_hint(rs, directory)} builds it again"
            )
    if sha != meta.get("checksum"):
        raise StoreError(f"{store.array} does not match the SHA-256 in {store.meta}: the file is damaged")
    saved = read_json(store.plan_file, "the build's plan")
    plan = from_json(rs, saved, tuple(meta.get("thetas", ()))) if saved else None
    if plan is None or check_layers(store, plan, np.asarray(checked.array)) is not None:
        raise StoreError(f"{store.root}: a layer does not match its record; {build_hint(rs, directory)}")
    return store.array, meta["checksum"], meta.get("values_checksum") == values_checksum(rs, values)
