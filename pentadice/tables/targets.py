"""Target scores on disk and in advice: P*(s, t), the highest probability of scoring at least ``t`` more points.

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

The advice for a target runs one turn of the target kernel (``pentadice.solver.targets``) for the situation,
one lane (the target), as plain Python, from the stored rows of the next states.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from pentadice.game import rules
from pentadice.solver import targets as kernel
from pentadice.solver.turn_inputs import turn_inputs
from pentadice.support import inputs
from pentadice.support.interrupts import Held
from pentadice.tables import atomic, chunks, table

FORMAT = "pentadice-targets"
FORMAT_VERSION = 2  # 2: the files' chunk records (pentadice.tables.chunks)
QUANT = kernel.QUANT
PRECISION = 0.5 / QUANT  # the largest error of a stored probability (rounding to the nearest step)
MAX_TARGET = 100_000  # --target above this is refused as a typo (no game scores that much)


class TargetsMissing(table.TableMissing):
    """No target table of this rule set in the directory (yet)."""


class TargetsRefused(table.TableError):
    """A rule set whose target table is too large to build (:func:`pentadice.solver.targets.refusal`)."""


@dataclasses.dataclass(frozen=True)
class TargetFiles:
    """Where the files of one rule set's target table live."""

    directory: Path
    rules: str

    @property
    def data(self) -> Path:
        return self.directory / f"{self.rules}.targets.npy"

    @property
    def index(self) -> Path:
        return self.directory / f"{self.rules}.targets-index.npy"

    @property
    def meta(self) -> Path:
        return self.directory / f"{self.rules}.targets.json"

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
    return f"run `pentadice solve --targets --rules {rs.name} --data {directory}`"


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
    temps: list[tuple[Path, Path]] = []
    try:
        tmp, data_record = chunks.write_temp(data_path, np.asarray(built.data, dtype=np.uint16), "targets")
        temps.append((tmp, data_path))
        tmp, index_record = chunks.write_temp(index_path, index, "targets-index")
        temps.append((tmp, index_path))
        text = json.dumps({**meta, "data_array": data_record, "index_array": index_record}, indent=2).encode()
        temps.append((atomic.write_temp(meta_path, lambda fh: fh.write(text)), meta_path))
        with Held(committed=True):
            for tmp, final in temps:
                os.replace(tmp, final)
            temps.clear()
    except OSError as e:
        disk_full = e.errno in (errno.ENOSPC, errno.EDQUOT) or "requested and" in str(e)
        reason = "the disk is full" if disk_full else (e.strerror or str(e))
        raise table.TableError(f"cannot write the {rs.name} target table to {files.directory}: {reason}") from None
    finally:
        for tmp, _ in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


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
    if reason:
        raise TargetsRefused(reason)
    how = hint(rs, files.directory)
    if not files.meta.exists() or not files.data.exists() or not files.index.exists():
        raise TargetsMissing(f"no {rs.name} target table in {files.directory}; {how}")
    for path in (files.meta, files.data, files.index):  # never open a fifo or a device (it could block forever)
        if not path.is_file():
            raise table.TableError(f"{chunks.not_a_file(path)}, then {how}")
    try:
        meta = inputs.loads(inputs.read_text(files.meta, "the target table's metadata", table.META_LIMIT))
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


def _successors(rs: rules.RuleSet, penta_scored: int, open_mask: int, sub: int) -> set[tuple[int, int, int]]:
    """Every state a turn from this one can lead to (:func:`pentadice.game.rules.successors`), and the state itself
    (Kiriki comes back to it)."""
    succ, _ = rules.successors(rs.params(), rs.dice, open_mask, penta_scored)
    out = {(penta_scored, open_mask, sub)}
    out.update((int(f), int(m), min(sub + int(a), rs.upper_threshold)) for _, m, f, a in succ)
    return out


def situation_probabilities(tt: TargetTable, situation, needed: int) -> tuple[dict[int, float], np.ndarray]:
    """``(keeps, boxes)``: the probability of reaching ``needed`` more points under the target strategy,
    for keeping each sub-multiset of the dice (keep number -> P; empty on the last roll) and for scoring the
    dice in each box now (-1 where illegal)."""
    rs = tt.rules
    sheet = situation.sheet
    open_mask, sub, flag = sheet.open_mask(rs), sheet.upper_subtotal(rs), int(sheet.penta_scored(rs))
    ti = turn_inputs(rs)
    t = ti.tables
    hand = t.keep_of(situation.dice)
    lane = max(needed, 0)
    off = np.zeros(rs.table_shape, dtype=np.int64)
    ln = np.zeros(rs.table_shape, dtype=np.int64)
    parts = []
    at = 0
    for f, m, s in sorted(_successors(rs, flag, open_mask, sub)):
        if m == 0:
            row = np.zeros(1) + 1.0
        elif tt.first[f, m, s] < 0:
            continue  # a successor the rules never reach from here (the Penta box at 50 without a Penta)
        else:
            full = tt.row(f, m, s)
            row = full[: lane + 1]
        off[f, m, s] = at
        ln[f, m, s] = len(row)
        parts.append(row)
        at += len(row)
    buf = np.concatenate(parts)
    K = np.zeros((t.n_keeps, 1))
    B = np.zeros((t.n_keeps, 1))
    points = np.empty(rs.n_boxes, dtype=np.int64)
    p, n_dice, n_hands, counts, scores, add, subs = ti.turn()
    boxes = kernel.situation_targets(
        p, n_dice, n_hands, counts, scores, add, subs, buf, off, ln, hand, open_mask, flag, sub, lane,
        situation.rolls_left, K, B, points,
    )  # fmt: skip
    keeps = {}
    if situation.rolls_left > 0:
        keeps = {int(k): float(K[k, 0]) for k in t.subkeeps[hand] if k >= 0}
    return keeps, boxes


def option_probabilities(tt: TargetTable, advice, target: int) -> list[float]:
    """P(final score >= ``target``) under the target strategy for each of ``advice.options``, in its order."""
    from pentadice.game.moves import Keep

    situation = advice.situation
    needed = target - advice.score_so_far
    if needed <= 0:
        return [1.0] * len(advice.options)
    keeps, boxes = situation_probabilities(tt, situation, needed)
    t = turn_inputs(tt.rules).tables
    out = []
    for o in advice.options:
        if isinstance(o.move, Keep):
            out.append(keeps[t.keep_of(o.move.dice)])
        else:
            out.append(float(boxes[tt.rules.box_index[o.move.box]]))
    return out


def check_target(target: object) -> int:
    """A target final score as given on the command line or in a request: a whole number 0 .. MAX_TARGET."""
    if isinstance(target, bool) or not isinstance(target, int):
        raise ValueError(f"the target must be a whole number of points, not {target!r}")
    if not 0 <= target <= MAX_TARGET:
        raise ValueError(f"the target must be 0 to {MAX_TARGET:,} points, not {target:,}")
    return target


def p_target_max(
    rs: rules.RuleSet,
    directory: str | os.PathLike[str] | None,
    sheet,
    dice: Sequence[int] | None = None,
    rolls_left: int | None = None,
    target: int = 0,
) -> float:
    """The highest probability of finishing with at least ``target`` points from this point: the start of a
    turn with ``sheet`` (no ``dice``), or a moment of a turn (``dice``, ``rolls_left``, default 2). Reads the
    target table (:class:`TargetsMissing` if it has not been built)."""
    from pentadice.game.situation import Situation
    from pentadice.support import paths

    check_target(target)
    tt = load(rs, paths.data_dir(directory))
    sheet.validate(rs)
    needed = target - sheet.score(rs)
    if dice is None:
        return tt.p(int(sheet.penta_scored(rs)), sheet.open_mask(rs), sheet.upper_subtotal(rs), needed)
    situation = Situation.make(rs, dice, rs.rolls - 1 if rolls_left is None else rolls_left, sheet)
    if needed <= 0:
        return 1.0
    keeps, boxes = situation_probabilities(tt, situation, needed)
    return max([*keeps.values(), *(float(x) for x in boxes if x >= 0)])


# ----------------------------------------------------------------------------------------------------------
# The advice for a target, as JSON data and as text.


def ranked(advice, probabilities: list[float]) -> list[tuple[object, float]]:
    """The options with their probabilities, ranked by the probability, then by the expected score (the
    advice's own order breaks the remaining ties)."""
    order = sorted(range(len(advice.options)), key=lambda i: (-probabilities[i], i))
    return [(advice.options[i], probabilities[i]) for i in order]


def advice_dict(advice, rs: rules.RuleSet, probabilities: list[float], target: int, top: int | None) -> dict:
    """``advice.as_dict`` with ``target``, each option's ``p_target``, ranked by it (``best`` is the first)."""
    out = advice.as_dict(rs)
    by_move = {id(o): d for o, d in zip(advice.options, out["options"], strict=True)}
    options = [{**by_move[id(o)], "p_target": p} for o, p in ranked(advice, probabilities)]
    out["target"] = target
    out["best"] = options[0]
    out["options"] = options if top is None else options[:top]
    return out


def advice_text(advice, rs: rules.RuleSet, probabilities: list[float], target: int, top: int) -> str:
    """The options ranked for the target, with the probability beside the expected final score."""
    from pentadice.game.moves import Keep

    needed = target - advice.score_so_far
    lines = [
        advice.situation.describe(rs),
        f"Target: {target} points ({max(needed, 0)} more needed); options ranked by the chance of reaching it",
        f"{'':3} {'option':<28} {'P(>= target)':>13} {'expected':>10}",
    ]
    for i, (o, p) in enumerate(ranked(advice, probabilities)[:top], start=1):
        if isinstance(o.move, Keep):
            what = "keep " + (" ".join(map(str, o.move.dice)) or "nothing") + ", reroll"
        else:
            what = f"score {rs.box_name(o.move.box)} ({o.points + o.penta_bonus + o.upper_bonus})"
        lines.append(f"{i:>2}. {what:<28} {100 * p:>12.4f}% {o.value:>10.2f}")
    lines.append(f"(probabilities to within {100 * PRECISION:.4f} percentage points: the table stores 16 bits)")
    return "\n".join(lines)


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
