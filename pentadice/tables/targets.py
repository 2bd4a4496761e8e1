"""The target table on disk: P*(s, t), the highest probability of scoring at least ``t`` more points (the advice
from it: :mod:`pentadice.advisor.reach`).

For a rule set ``NAME`` the table directory holds, beside the value table,

- ``NAME.targets.npy``: uint16, the stored probabilities, ``round(P * 65535)``, rows one after another;
- ``NAME.targets-index.npy``: int64 shaped ``(3, *RuleSet.table_shape)`` (Penta: ``(3, 2, 8192, 64)``; Yatzy:
  ``(3, 1, 32768, 64)``): per state ``[penta_50, open_mask, upper_subtotal]`` its row's ``first`` (targets
  ``t < first`` have P = 1; -1 where the state cannot occur), ``count`` (targets ``first <= t < first +
  count`` are stored) and ``offset`` (where they start in the data);
  targets past the row have P = 0 (below half a step of 1/65535);
- ``NAME.targets.json``: the metadata: rule set and its definition, encoding, precision, the SHA-256 of both
  files, how the table was built, and each file's record of 64 KiB chunks and their CRC-32
  (:mod:`pentadice.tables.chunks`).

Files are written under temporary names and renamed into place, metadata last, under a lock
(``.NAME.targets.lock``). Loading checks the metadata and the index whole (every chunk); the data (hundreds of
MB for Penta) is checked a chunk at a time, each chunk before its first use (:meth:`TargetTable.row`), so a
damaged byte is refused by the query that would read it, and a query pays only for the chunks it reads.
:func:`load` with ``verify=True`` checks every chunk and the SHA-256 too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pentadice.game import rules
from pentadice.solver import targets as kernel
from pentadice.tables import atomic, chunks, table

FORMAT = "pentadice-targets"
FORMAT_VERSION = 2  # 2: the files' chunk records (pentadice.tables.chunks)
QUANT = kernel.QUANT
PRECISION = 0.5 / QUANT  # the largest error of a stored probability (rounding to the nearest step)


class TargetsMissing(table.TableMissing):
    """No target table of this rule set in the directory (yet)."""


class TargetsRefused(table.TableError):
    """A rule set whose target table is too large to build (:func:`pentadice.solver.targets.refusal`)."""


@dataclasses.dataclass(frozen=True)
class TargetFiles:
    """Where the files of one rule set's target table live."""

    directory: Path
    rules: str
    data = table.FileName("{}.targets.npy")
    index = table.FileName("{}.targets-index.npy")
    meta = table.FileName("{}.targets.json")

    @property
    def lock_files(self) -> table.TableFiles:
        return table.TableFiles(self.directory, f"{self.rules}.targets")  # its lock: .NAME.targets.lock

    def as_dict(self) -> dict[str, str]:
        return {"data": str(self.data), "index": str(self.index), "metadata": str(self.meta)}


def _sha(a: np.ndarray) -> str:
    return "sha256:" + hashlib.sha256(np.ascontiguousarray(a).data).hexdigest()


def build_in_progress(rs: rules.RuleSet, directory: Path) -> bool:
    """Whether another process holds the lock of the target table of ``rs`` in ``directory`` (a ``solve
    --targets`` building it now). Takes nothing: the lock is only tried, shared, and let go at once."""
    import fcntl

    try:
        fd = os.open(TargetFiles(Path(directory), rs.name).lock_files.lock, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False  # no lock file: no build was ever started here
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing lets go of a lock just taken
    return False


def building_message(rs: rules.RuleSet, directory: Path) -> str:
    """What ``advise --target`` says while the target table it needs is being built."""
    return (
        f"the {rs.name} target table is being built in {directory} by another pentadice process "
        "(`pentadice solve --targets`); wait for it to finish, then ask again"
    )


def hint(rs: rules.RuleSet, directory: Path) -> str:
    if kernel.refusal(rs):  # too large for memory: out of core (pentadice.cluster)
        return f"run `pentadice build --table targets --rules {rs.rules_option} --data {directory}`"
    return f"run `pentadice solve --targets --rules {rs.rules_option} --data {directory}`"


def solve_and_save(
    rs: rules.RuleSet,
    directory: Path,
    threads: int = 1,
    progress: Callable[[int, int], None] | None = None,
    check: Callable[[], None] | None = None,
) -> tuple[kernel.Built, TargetFiles]:
    """Build the target table of ``rs`` and write it into ``directory``, holding its lock from before the
    build (a second writer is refused at once). Returns the build and where the files are."""
    reason = kernel.refusal(rs)
    if reason:
        raise ValueError(reason)
    files = TargetFiles(Path(directory), rs.name)
    table.prepare_directory(files.directory)
    targets = _targets(files)
    with table.writer_lock(files.lock_files):
        built = kernel.build(rs, threads=threads, progress=progress, check=check)
        write(rs, built, files, targets)
        load(rs, files.directory, verify=True)  # read back whole: what was written is what was built
    return built, files


def _targets(files: TargetFiles) -> list[Path]:
    try:
        return [chunks.table_target(p) for p in (files.data, files.index, files.meta)]
    except atomic.TargetError as e:
        raise table.TableError(f"cannot write the {files.rules} target table: {e}") from None


def metadata(rs: rules.RuleSet, built: kernel.Built, index: np.ndarray) -> dict:
    """The metadata that travels with a target table."""
    start = index[:, 0, rs.box_mask, 0]
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "rules": rs.name,
        "rules_definition": table.rules_definition(rs),
        "solver_version": table.SOLVER_VERSION,
        "encoding": f"uint16 fixed point: P = q / {QUANT}; targets below first: 1; past the row: 0",
        "precision": PRECISION,
        "cut_below": kernel.EPS,
        "index": ["field (first, count, offset)", "penta_50", "open_mask", "upper_subtotal"],
        "states": int(np.count_nonzero(index[0] >= 0)),
        "stored": len(built.data),
        "longest_row": built.longest,
        "start_row": {"first": int(start[0]), "count": int(start[1])},
        "build_seconds": built.seconds,
        "compile_seconds": built.compile_seconds,
        "threads": built.threads,
        "lane_states": built.lanes,
        "index_checksum": _sha(index),
        "data_checksum": _sha(built.data),
    }


def write(rs: rules.RuleSet, built: kernel.Built, files: TargetFiles, targets: list[Path] | None = None) -> None:
    """Write the data, index and metadata files under temporary names, then rename them into place, metadata
    last."""
    data_path, index_path, meta_path = targets or _targets(files)
    index = np.stack([built.first, built.count, built.offset]).astype(np.int64)
    meta = metadata(rs, built, index)
    with chunks.FileSet(f"the {rs.name} target table", files.directory) as out:
        data_record = out.array(data_path, np.asarray(built.data, dtype=np.uint16), "targets")
        index_record = out.array(index_path, index, "targets-index")
        out.json(meta_path, {**meta, "data_array": data_record, "index_array": index_record})


@dataclasses.dataclass(frozen=True)
class TargetTable:
    """A loaded target table (the data memory-mapped, each chunk checked before its first use; a private copy
    where :func:`pentadice.tables.chunks.use_private_copies` is on)."""

    rules: rules.RuleSet
    first: np.ndarray
    count: np.ndarray
    offset: np.ndarray
    checked: chunks.CheckedArray
    meta: dict
    files: TargetFiles

    def row(self, penta_scored: int, open_mask: int, sub: int, lanes: int | None = None) -> np.ndarray:
        """P*(state, t) for t = 0 .. (the row's length, or ``lanes``) - 1, as float64."""
        sub = min(sub, self.rules.upper_threshold)
        f = int(self.first[penta_scored, open_mask, sub])
        if f < 0:
            raise ValueError("this state cannot occur in a game")
        c = int(self.count[penta_scored, open_mask, sub])
        o = int(self.offset[penta_scored, open_mask, sub])
        n = f + c if lanes is None else lanes
        out = np.zeros(n)
        out[: min(f, n)] = 1.0
        if n > f:
            k = min(c, n - f)
            self.checked.ensure(o, o + k)  # chunks.Damaged (a TableError) before any damaged byte is used
            out[f : f + k] = self.checked.array[o : o + k] / QUANT
        return out

    def p(self, penta_scored: int, open_mask: int, sub: int, needed: int) -> float:
        """P*(state, needed): the highest probability of scoring at least ``needed`` more points."""
        if needed <= 0:
            return 1.0
        return float(self.row(penta_scored, open_mask, sub, needed + 1)[needed])


def load(rs: rules.RuleSet, directory: Path, verify: bool = False) -> TargetTable:
    """The target table of ``rs`` from ``directory``; :class:`TargetsMissing` (saying how to build it) if there
    is none, :class:`pentadice.tables.table.TableError` if it is damaged or of other rules."""
    files = TargetFiles(Path(directory), rs.name)
    reason = kernel.refusal(rs)
    how = hint(rs, files.directory)
    if not files.meta.exists() or not files.data.exists() or not files.index.exists():
        if reason:  # too large to build in memory, and not built out of core here either
            raise TargetsRefused(f"{reason}; it can be built out of core: {how}")
        raise TargetsMissing(f"no {rs.name} target table in {files.directory}; {how}")
    for path in (files.meta, files.data, files.index):  # never open a fifo or a device (it could block forever)
        if not path.is_file():
            raise table.TableError(f"{chunks.not_a_file(path)}, then {how}")
    try:
        meta = table.read_json(files.meta, "the target table's metadata", str(files.meta))
    except (OSError, ValueError) as e:
        first = (str(e).splitlines() or [""])[0]
        raise table.TableError(
            f"the {rs.name} target table in {files.directory} cannot be read ({first or type(e).__name__}); {how}"
        ) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
        raise table.TableError(f"{files.meta} is not a pentadice target table's metadata (of this version); {how}")
    if meta.get("rules") != rs.name or meta.get("rules_definition") != table.rules_definition(rs):
        raise table.TableError(f"the target table in {files.directory} was built for other rules; {how}")
    checked = chunks.open_or_refuse(files.data, meta.get("data_array"), "targets", how)
    index = chunks.open_or_refuse(files.index, meta.get("index_array"), "targets-index", how).array
    data = checked.array
    if index.shape != (3, *rs.table_shape) or data.ndim != 1:
        raise table.TableError(f"the {rs.name} target table in {files.directory} has the wrong shape; {how}")
    first, count, offset = index
    if len(data) != meta.get("stored") or (count.size and int((offset + count).max()) > len(data)):
        raise table.TableError(f"{files.data} is not the size its index says: the table is damaged; {how}")
    if verify:
        try:
            checked.check_all()
        except table.TableError as e:
            raise table.TableError(f"{e}; {how}") from None
        if _sha(data) != meta.get("data_checksum") or _sha(index) != meta.get("index_checksum"):
            raise table.TableError(f"{files.data} does not match its SHA-256: the table is damaged; {how}")
    return TargetTable(rs, first, count, offset, checked, meta, files)


# ----------------------------------------------------------------------------------------------------------
# The probabilities of a situation's options.


def summary_lines(rs: rules.RuleSet, built: kernel.Built, files: TargetFiles, write_seconds: float) -> list[str]:
    """What ``solve --targets`` prints."""
    size = sum(os.path.getsize(p) for p in (files.data, files.index, files.meta))
    start = load(rs, files.directory).row(0, rs.box_mask, 0)
    return [
        f"Rules:           {rs.name} ({rs.title}): target table",
        f"States:          {int(np.count_nonzero(built.first >= 0)):,}, lane-states computed {built.lanes:,}",
        f"Targets:         up to {built.longest - 1} points still needed (longest row)",
        f"From the start:  P(>= 200) {start_p(start, 200):.4f}, P(>= 300) {start_p(start, 300):.4f}, "
        f"P(>= 400) {start_p(start, 400):.4f}",
        f"Build:           {built.seconds:.3f} s on {built.threads} thread{'s' if built.threads != 1 else ''}",
        f"JIT compile:     {built.compile_seconds:.3f} s (Numba; loaded from cache after the first run)",
        f"Write:           {write_seconds:.3f} s",
        f"Float64 rows:    {built.peak_layer_bytes / 1e6:,.1f} MB at most (two layers)",
        f"On disk:         {size / 1e6:,.1f} MB (uint16, precision {PRECISION:.2e})",
        f"Files:           {files.data}",
        f"                 {files.index}",
        f"                 {files.meta}",
    ]


def start_p(row: np.ndarray, t: int) -> float:
    return float(row[t]) if t < len(row) else 0.0


def summary(rs: rules.RuleSet, built: kernel.Built, files: TargetFiles, write_seconds: float) -> dict:
    """What ``solve --targets --json`` prints."""
    size = sum(os.path.getsize(p) for p in (files.data, files.index, files.meta))
    return {
        "rules": rs.name,
        "targets": True,
        "states": int(np.count_nonzero(built.first >= 0)),
        "lane_states": built.lanes,
        "longest_row": built.longest,
        "seconds": built.seconds,
        "compile_seconds": built.compile_seconds,
        "write_seconds": write_seconds,
        "threads": built.threads,
        "float_rows_bytes": built.peak_layer_bytes,
        "bytes_on_disk": size,
        "precision": PRECISION,
        "files": files.as_dict(),
    }


def timed_solve(
    rs: rules.RuleSet, directory: Path, threads: int | None = None, progress=None, check=None
) -> tuple[kernel.Built, TargetFiles, float]:
    """:func:`solve_and_save` (``threads``: default all cores), with the seconds spent writing (and checking)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if threads is not None and not 1 <= threads <= cores:
        raise ValueError(f"--threads must be between 1 and {cores}, not {threads}")
    threads = threads or cores
    start = time.perf_counter()
    built, files = solve_and_save(rs, directory, threads, progress, check)
    return built, files, time.perf_counter() - start - built.seconds - built.compile_seconds


# ----------------------------------------------------------------------------------------------------------
# Building the table (``pentadice solve --targets``) and finding it (``advise --target``, ``verify``).


def stages(rs: rules.RuleSet) -> int:
    """The stages of :func:`build` (its progress steps: the layers of states by open boxes); ValueError for a
    rule set whose table is refused, checked first (Maxi Yatzy's states are tens of millions)."""
    reason = kernel.refusal(rs)
    if reason:
        raise ValueError(f"{reason}; it can be built out of core with `pentadice build --table targets`")
    return len(kernel.layers(rs))


def build(
    rs: rules.RuleSet,
    directory: Path,
    threads: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    showing: contextlib.AbstractContextManager | None = None,
) -> tuple[kernel.Built, TargetFiles, float]:
    """Build the target table of ``rs`` and write it into ``directory`` (:func:`timed_solve`): the directory
    checked for writing first, ``showing`` (a progress bar) held open while it runs, ``progress`` called at
    each stage. Ctrl-C and SIGTERM are held: KeyboardInterrupt between stages (nothing written), or
    CommittedInterrupt once the files were renamed into place. ValueError for a refused rule set or a bad
    ``threads``; TableError for a directory or files that cannot be written."""
    from pentadice.support import interrupts

    reason = kernel.refusal(rs)
    if reason:
        raise ValueError(f"{reason}; it can be built out of core: {hint(rs, Path(directory))}")
    table.prepare_directory(Path(directory))
    with showing or contextlib.nullcontext(), interrupts.Held() as interrupt:
        return timed_solve(rs, Path(directory), threads, interrupt.steps(progress), interrupt.check)


def load_for_advice(rs: rules.RuleSet, directory: Path) -> TargetTable:
    """:func:`load`, where a missing table that another process is building now (``solve --targets`` holds its
    lock) is :class:`TargetsMissing` saying so, rather than how to build it."""
    try:
        return load(rs, directory)
    except TargetsMissing:
        if build_in_progress(rs, directory):
            raise TargetsMissing(building_message(rs, directory)) from None
        raise


def verify_if_built(rs: rules.RuleSet, directory: Path) -> TargetTable | None:
    """The target table of ``rs`` checked whole (``pentadice verify``), if any of its files is in ``directory``
    (some without the others: TableError); None if it was never built there."""
    files = TargetFiles(Path(directory), rs.name)
    if not any(f.exists() for f in (files.data, files.index, files.meta)):
        return None
    return load(rs, files.directory, verify=True)
