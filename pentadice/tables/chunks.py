"""Array files checked chunk by chunk: the one format of every table pentadice stores, and their registry.

A table's array is a NumPy ``.npy`` file (memory-mappable, readable by any NumPy). Its bytes, the header
included, are cut into chunks of :data:`CHUNK_BYTES`, and the CRC-32 of each chunk is kept in the table's JSON
metadata as the array's *record* (:func:`save`; 8 hex digits a chunk). A reader (:func:`open_array`) checks
the record against the file (kind, size, dtype, shape, one CRC per chunk), then checks chunks before it uses
them:

- ``check="all"`` kinds (values, second moments, the target table's index, the win tables: compiled kernels
  read them whole) are read into the process's memory and checked whole when opened (the bytes are read
  either way; a private copy cannot be changed or truncated under the process, which would kill it with
  SIGBUS through a memory map);
- ``check="lazy"`` kinds (the target table's and the chances table's data, hundreds of MB of which a query
  reads a few rows) are memory-mapped, their header chunk checked when opened and every other chunk before
  its first use (:meth:`CheckedArray.ensure`), so a query pays for the few chunks it reads.

A chunk that does not match its CRC raises :class:`Damaged` (a :class:`TableError`): no answer is ever computed
from it. With private copies on (:func:`use_private_copies`, as ``pentadice serve`` and ``play`` do) a lazy
kind too is read into memory once and checked whole, so that nothing done to any file on disk afterwards (a
truncation, a copy over it) reaches the process. The full SHA-256 kept in the metadata as before identifies a
table (what its second moments and win tables belong to) and is checked by ``pentadice verify``.

Every kind of table is in :data:`KINDS`; :func:`save` and :func:`open_array` refuse a kind that is not, and
``tests/test_table_kinds.py`` walks the registry (a new kind joins the damaged-file tests by being listed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import io
import json
import os
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from pentadice.support.exits import TableError
from pentadice.support.interrupts import Held
from pentadice.tables import atomic

CHUNK_BYTES = 1 << 16
ALGORITHM = "crc32"


class TableMissing(TableError):
    """No table of this rule set in the directory (yet)."""


class Damaged(TableError):
    """A table file whose bytes do not match their record: damaged on disk, or changed under its reader."""


@dataclasses.dataclass(frozen=True)
class Kind:
    """A kind of stored table: its file name after the rule set's (``{rules}.{suffix}``; ``{max_open}`` filled
    from the table's parameters), its dtype, how a reader checks it, and what it holds, in words."""

    name: str
    suffix: str
    dtype: str
    check: str  # "all" or "lazy"
    what: str

    def file_name(self, rules: str, **params: object) -> str:
        return f"{rules}.{self.suffix.format(**params)}"


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("values", "npy", "float64", "all", "the value table"),
        Kind("moments", "m2.npy", "float64", "all", "the second moments"),
        Kind("targets", "targets.npy", "uint16", "lazy", "the target table's probabilities"),
        Kind("targets-index", "targets-index.npy", "int64", "all", "the target table's index"),
        Kind("win", "win.npy", "float64", "all", "the win strategy's theta tables"),
        Kind("win-end", "win-end-{max_open}.npy", "float64", "all", "the win strategy's end-game table"),
        Kind("win-store", "win.store/tables.npy", "float64", "lazy", "the win strategy's tables, built out of core"),
        Kind("layer-rows", "build/L00.rows.npy", "float64", "lazy", "a layer's float64 rows, mid-build"),
        Kind("chances", "chances.npy", "float32", "lazy", "the chances table's probabilities"),
        Kind("chances-index", "chances-index.npy", "int64", "all", "the chances table's index"),
    )
}


def kind(name: str) -> Kind:
    """The registered kind ``name``; ValueError for any other (a table kind must be registered to be stored)."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"{name!r} is not a registered table kind ({', '.join(KINDS)})") from None


_private = False
_private_lock = threading.Lock()


def use_private_copies(on: bool = True) -> None:
    """From now on, read every table into this process's memory (checked whole once) instead of mapping it:
    for a long-running process (the server), which must not see a file changed or truncated under it."""
    global _private
    with _private_lock:
        _private = on


def private_copies() -> bool:
    """Whether tables are read into memory (:func:`use_private_copies`)."""
    return _private


def crcs(buffer: object) -> list[int]:
    """The CRC-32 of each :data:`CHUNK_BYTES` chunk of ``buffer`` (bytes-like)."""
    view = memoryview(buffer).cast("B")
    return [zlib.crc32(view[i : i + CHUNK_BYTES]) for i in range(0, len(view), CHUNK_BYTES)]


def digest(path: Path) -> tuple[list[int], str, int]:
    """One read of a file: the CRC-32 of each of its 64 KiB chunks, its SHA-256 (``sha256:HEX``), its size (the
    record of a file written in place, as an out-of-core build does)."""
    sums, sha, size = [], hashlib.sha256(), 0
    with open(path, "rb", buffering=0) as fh:
        while block := fh.read(CHUNK_BYTES * 256):
            sha.update(block)
            sums.extend(crcs(block))
            size += len(block)
    return sums, "sha256:" + sha.hexdigest(), size


class _ChunkingWriter(io.RawIOBase):
    """A write-only stream that passes bytes on to ``fh`` and keeps the CRC of each chunk as they go by."""

    def __init__(self, fh: BinaryIO) -> None:
        super().__init__()
        self.fh = fh
        self.sums: list[int] = []
        self.size = 0
        self._crc = 0

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        view = memoryview(b).cast("B")
        self.fh.write(view)
        pos = 0
        while pos < len(view):
            room = CHUNK_BYTES - self.size % CHUNK_BYTES
            part = view[pos : pos + room]
            self._crc = zlib.crc32(part, self._crc)
            self.size += len(part)
            pos += len(part)
            if self.size % CHUNK_BYTES == 0:
                self.sums.append(self._crc)
                self._crc = 0
        return len(view)

    def finish(self) -> list[int]:
        if self.size % CHUNK_BYTES:
            self.sums.append(self._crc)
            self._crc = 0
        return self.sums


def save(fh: BinaryIO, array: np.ndarray, kind_name: str) -> dict:
    """Write ``array`` as a ``.npy`` file of the registered kind to the open binary file ``fh``; its record
    (for the table's metadata): kind, dtype, shape, size, chunk size and the CRC of every chunk."""
    k = kind(kind_name)
    array = np.ascontiguousarray(array)
    if array.dtype != np.dtype(k.dtype):
        raise ValueError(f"{k.what} is {k.dtype}, not {array.dtype}")
    out = _ChunkingWriter(fh)
    np.lib.format.write_array(out, array, allow_pickle=False)
    return {
        "kind": k.name,
        "dtype": k.dtype,
        "shape": list(array.shape),
        "bytes": out.size,
        "chunk_bytes": CHUNK_BYTES,
        "algorithm": ALGORITHM,
        "chunks": "".join(f"{c:08x}" for c in out.finish()),  # 8 hex digits a chunk: 11 bytes a MB in JSON
    }


def write_temp(final: Path, array: np.ndarray, kind_name: str) -> tuple[Path, dict]:
    """``array`` written as a file of the registered kind under a temporary name beside ``final``
    (:func:`pentadice.tables.atomic.write_temp`: the caller renames it into place), and its record (:func:`save`)."""
    record: dict = {}
    tmp = atomic.write_temp(final, lambda fh: record.update(save(fh, array, kind_name)))
    return tmp, record


class FileSet:
    """The files of one table written together: each under a temporary name beside its final one
    (:meth:`array`, :meth:`file`, :meth:`json`), then all renamed into place in the order added (the metadata
    last) while Ctrl-C is held, when the ``with`` block ends without an error. A reader finds the old set or
    the new one, never a mix, and nothing temporary is left behind. A write error is a :class:`TableError`
    naming ``what`` (``the penta table``) and ``directory``; a target that cannot be written, naming ``what``."""

    def __init__(self, what: str, directory: Path) -> None:
        self.what, self.directory = what, directory
        self._temps: list[tuple[Path, Path]] = []

    def array(self, final: Path, array: np.ndarray, kind_name: str) -> dict:
        """``array`` as a checked file of the registered kind; its chunk record (for the metadata)."""
        tmp, record = write_temp(final, array, kind_name)
        self._temps.append((tmp, final))
        return record

    def file(self, final: Path, write: Callable[[BinaryIO], object]) -> Path:
        """A file written by ``write``; its temporary path (to checksum it before the metadata is written)."""
        tmp = atomic.write_temp(final, write)
        self._temps.append((tmp, final))
        return tmp

    def json(self, final: Path, data: dict) -> None:
        text = json.dumps(data, indent=2).encode()
        self.file(final, lambda fh: fh.write(text))

    def __enter__(self) -> FileSet:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        try:
            if error is None:
                with Held(committed=True):  # the renames go through even if Ctrl-C comes now: no mixed set
                    for tmp, final in self._temps:
                        os.replace(tmp, final)
                    self._temps.clear()
        except OSError as e:
            error = e
        finally:
            for tmp, _ in self._temps:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        if isinstance(error, atomic.TargetError):
            raise TableError(f"cannot write {self.what}: {error}") from None
        if isinstance(error, OSError):
            # NumPy reports a short write without an errno ("N requested and M written"): the disk is full too.
            full = error.errno in (errno.ENOSPC, errno.EDQUOT) or "requested and" in str(error)
            reason = "the disk is full" if full else (error.strerror or str(error))
            raise TableError(f"cannot write {self.what} to {self.directory}: {reason}") from None


class CheckedArray:
    """An array read from a checked file: :attr:`array` (memory-mapped, or in memory for a private copy), and
    :meth:`ensure`, which checks the chunks holding some of its elements before they are used."""

    def __init__(self, raw: np.ndarray, sums: list[int], path: Path, what: str) -> None:
        self.raw, self.path, self.what = raw, path, what
        self.array, self.offset = raw, 0  # the file's bytes, until its header is parsed (open_array)
        self._sums = sums
        self._checked = np.zeros(len(sums), dtype=bool)

    def _check_chunks(self, lo: int, hi: int) -> None:
        for c in range(lo, hi):
            if self._checked[c]:
                continue
            start = c * CHUNK_BYTES
            if zlib.crc32(memoryview(self.raw[start : start + CHUNK_BYTES])) != self._sums[c]:
                raise Damaged(
                    f"{self.path} ({self.what}) does not match its checksum at bytes {start:,}-"
                    f"{min(start + CHUNK_BYTES, len(self.raw)):,}: the file is damaged"
                )
            self._checked[c] = True

    def ensure(self, first: int, stop: int) -> None:
        """Check the chunks that hold the flat elements ``first`` to ``stop - 1``; :class:`Damaged` if one does
        not match its CRC. Each chunk is checked once."""
        if stop <= first:
            return
        size = self.array.dtype.itemsize
        lo = (self.offset + first * size) // CHUNK_BYTES
        hi = (self.offset + stop * size - 1) // CHUNK_BYTES + 1
        if not self._checked[lo:hi].all():
            self._check_chunks(lo, hi)

    def check_all(self) -> None:
        """Check every chunk (:class:`Damaged` at the first that does not match)."""
        self._check_chunks(0, len(self._sums))


HUGE_PAGES_FROM = 1 << 22  # bytes: a private copy this large is placed on huge pages where the kernel offers them


def private_buffer(size: int) -> np.ndarray:
    """``size`` bytes of the process's memory for a private copy: on transparent huge pages where the kernel
    offers them (``madvise``), which makes reading a table of hundreds of MB several times faster on this
    machine (673 MB: 0.73 s instead of 4.1 s, the time going to the first touch of each 4 KB page); else
    plain ``np.empty``."""
    import mmap

    if size < HUGE_PAGES_FROM or not hasattr(mmap, "MADV_HUGEPAGE"):
        return np.empty(size, dtype=np.uint8)
    try:
        buffer = mmap.mmap(-1, size)
        buffer.madvise(mmap.MADV_HUGEPAGE)
    except (OSError, ValueError):
        return np.empty(size, dtype=np.uint8)
    return np.frombuffer(buffer, dtype=np.uint8)


def _read_private(path: Path, size: int) -> np.ndarray:
    """The file's ``size`` bytes, read into memory (OSError if it is shorter now)."""
    raw = private_buffer(size)
    view = memoryview(raw)
    with open(path, "rb", buffering=0) as fh:
        if os.fstat(fh.fileno()).st_size != size:
            raise Damaged(f"{path} changed size while it was read")
        got = 0
        while got < size:
            n = fh.readinto(view[got:])
            if not n:
                raise Damaged(f"{path} is shorter than its record says: the file is damaged")
            got += n
    return raw


def open_array(path: Path, record: object, kind_name: str, private: bool | None = None) -> CheckedArray:
    """Open the ``.npy`` file ``path`` of a registered kind against its ``record`` (from :func:`save`, read from
    the table's metadata), checked as its kind says (all of it now, or its header now and each chunk before its
    first use). TableError (:class:`Damaged` for bytes that do not match) naming the file and the problem;
    OSError if it cannot be read. ``private``: read it into memory and check it whole (default: for the kinds
    checked whole, and for every kind where :func:`private_copies` is on)."""
    k = kind(kind_name)
    path = Path(path)
    private = (k.check == "all" or private_copies()) if private is None else private
    if not isinstance(record, dict) or record.get("kind") != k.name or record.get("algorithm") != ALGORITHM:
        raise TableError(f"the metadata of {path} has no record of {k.what} in this format")
    size, hexes = record.get("bytes"), record.get("chunks")
    if record.get("chunk_bytes") != CHUNK_BYTES or not isinstance(size, int) or not isinstance(hexes, str):
        raise TableError(f"the metadata of {path} has no valid record of {k.what}")
    try:
        if len(hexes) != 8 * -(-size // CHUNK_BYTES) or not hexes.isascii():
            raise ValueError
        sums = [int(hexes[i : i + 8], 16) for i in range(0, len(hexes), 8)]
    except ValueError:
        raise TableError(f"the metadata of {path} has no valid record of {k.what}") from None
    if not path.is_file():  # never open a fifo or a device: it could block forever or never end
        raise TableError(not_a_file(path))
    actual = os.path.getsize(path)
    if actual != size:
        raise Damaged(f"{path} is {actual:,} bytes, not the {size:,} its metadata says: the file is damaged")
    if size == 0:
        raise Damaged(f"{path} is empty: the file is damaged")
    raw = _read_private(path, size) if private else np.memmap(path, dtype=np.uint8, mode="r")
    if len(raw) != size:
        raise Damaged(f"{path} changed size while it was read")
    checked = CheckedArray(raw, sums, path, k.what)
    checked.ensure(0, 1)  # the header lies in the first chunk: checked before it is parsed
    checked.array, checked.offset = _parse(raw, path, k, record)
    if private or k.check == "all":
        checked.check_all()
    return checked


def mapped(path: Path, mode: str = "r") -> np.ndarray:
    """The ``.npy`` file ``path`` memory-mapped as it is, unchecked (``mode``: ``"r"``, ``"r+"`` to write in place,
    ``"c"`` copy-on-write): for an out-of-core build, which checks its files by records of its own while it
    writes them (:mod:`pentadice.tables.win_store`); a finished table is opened with :func:`open_array`."""
    return np.load(path, mmap_mode=mode)


def create_mapped(path: Path, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """A new ``.npy`` file of ``shape`` at ``path``, memory-mapped for writing, its disk reserved at once
    (``posix_fallocate``: a full disk is found now, not midway through a build). OSError when it cannot be."""
    array = np.lib.format.open_memmap(path, mode="w+", dtype=np.dtype(dtype), shape=shape)
    with open(path, "r+b") as fh:
        os.posix_fallocate(fh.fileno(), 0, os.fstat(fh.fileno()).st_size)
    return array


TABLE_MAGIC = (b"\x93NUMPY", b"PAR1")  # a .npy file, a Parquet export


def is_table_file(path: Path) -> bool:
    """Whether the existing file ``path`` is one pentadice may write a table over: a ``.npy`` array, a Parquet
    export, or a pentadice table's JSON metadata. Anything else (a text a symbolic link leads to, a file of
    the user's) is left alone (:func:`table_target`)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return head.startswith(TABLE_MAGIC) or (head.lstrip().startswith(b"{") and b'"pentadice' in head)


def table_target(path: Path) -> Path:
    """Where a table file given as ``path`` is written (a link followed), checked first: a regular file that
    is one of pentadice's tables, or a new name (a link to a file not there yet is written through: tables
    kept on another disk); :class:`pentadice.tables.atomic.TargetError` for anything else."""
    return atomic.target(path, replaces=is_table_file).path


def not_a_file(path: Path) -> str:
    """Why ``path`` cannot be read as a table, in words that say what to do: ``X is a symbolic link to
    /dev/zero (a device), not a regular file: remove it`` (a command that writes tables refuses to write
    through it, so solving again would not help)."""
    path = Path(path)
    target = Path(os.path.realpath(path))
    try:
        kind = atomic.kind_of(os.stat(target).st_mode)
    except OSError:
        kind = "missing"
    what = f"a symbolic link to {target} ({kind})" if path.is_symlink() else kind
    return f"{path} is {what}, not a regular file: remove it"


def open_or_refuse(path: Path, record: object, kind_name: str, hint: str) -> CheckedArray:
    """:func:`open_array`, with ``hint`` (what to run about it) at the end of every refusal: TableError, of the
    same class (:class:`Damaged` stays :class:`Damaged`), also for a file that cannot be read."""
    try:
        return open_array(path, record, kind_name)
    except TableError as e:
        raise type(e)(f"{e}; {hint}") from None
    except OSError as e:
        raise TableError(f"{path} cannot be read ({e.strerror or e}); {hint}") from None


def _parse(raw: np.ndarray, path: Path, k: Kind, record: dict) -> tuple[np.ndarray, int]:
    """The array a checked header describes, as a view of ``raw``, and where its data starts."""
    stream = io.BytesIO(raw[: min(len(raw), CHUNK_BYTES)].tobytes())
    try:
        version = np.lib.format.read_magic(stream)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(stream)
    except Exception as e:  # NumPy's parser lets its tokenizer's errors through: any failure is a bad header
        first = (str(e).splitlines() or [type(e).__name__])[0]
        raise Damaged(f"{path} has no valid NumPy header ({first}): the file is damaged") from None
    offset = stream.tell()
    if fortran or dtype != np.dtype(k.dtype) or list(shape) != record.get("shape") or record.get("dtype") != k.dtype:
        raise TableError(f"{path} holds {dtype} {shape}, not {k.what} as its metadata describes it")
    count = int(np.prod(shape, dtype=np.int64))
    if offset + count * dtype.itemsize != len(raw):
        raise Damaged(f"{path} is not the size its header says: the file is damaged")
    return raw[offset:].view(dtype).reshape(shape), offset
