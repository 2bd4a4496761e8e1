"""The simulator: many solitaire games under a strategy, and the statistics of their scores.

Strategies are value tables: ``optimal`` plays by the solved table; ``greedy`` plays each turn for its own
points (box points, Penta bonus and upper bonus), as if nothing came after: the same code with a table of
zeros. It is the baseline that shows what looking ahead is worth.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from pentadice import rules, table
from pentadice.turn_inputs import turn_inputs

STRATEGIES = ("optimal", "greedy")
CHUNK = 100_000
EXTRA_TURNS = 20  # dice drawn for Kiriki's extra turns; a game needing more (odds below 1e-25) is an error


@dataclass
class Simulation:
    """The games of one run: per-box scores (``scores[g, b]``, -1 for a box the game lacks) and bonuses."""

    rules: rules.RuleSet
    strategy: str
    seed: int
    scores: np.ndarray
    penta_bonus: np.ndarray
    seconds: float
    stats: dict = field(init=False)

    def __post_init__(self) -> None:
        self.stats = statistics(self)

    @property
    def games(self) -> int:
        return len(self.penta_bonus)

    @property
    def upper_total(self) -> np.ndarray:
        return np.clip(self.scores[:, :6], 0, None).sum(axis=1)

    @property
    def upper_bonus(self) -> np.ndarray:
        return np.where(self.upper_total >= self.rules.upper_threshold, self.rules.upper_bonus, 0)

    @property
    def totals(self) -> np.ndarray:
        """Final scores."""
        return np.clip(self.scores, 0, None).sum(axis=1) + self.upper_bonus + self.penta_bonus


def strategy_values(strategy: str, tbl: table.Table) -> np.ndarray:
    """The value table a strategy plays by."""
    if strategy == "optimal":
        return np.asarray(tbl.values)
    if strategy == "greedy":
        return np.zeros_like(tbl.values)
    raise ValueError(f"unknown strategy {strategy!r}; strategies: {', '.join(STRATEGIES)}")


def simulate(
    tbl: table.Table,
    games: int,
    seed: int | None = None,
    strategy: str = "optimal",
    progress: Callable[[int], None] | None = None,
) -> Simulation:
    """Play ``games`` solitaire games of the table's rule set; the same seed gives the same games. Without a
    seed one is drawn (and kept in the result), so that any run can be played again."""
    from pentadice.simulator import games as kernel

    if games < 1:
        raise ValueError(f"the number of games must be at least 1, not {games}")
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
    rs = tbl.rules
    V = strategy_values(strategy, tbl)
    rng = np.random.default_rng(seed)
    max_turns = len(rs.boxes) + (EXTRA_TURNS if rs.penta_repeat else 0)
    scores = np.empty((games, rules.N_BOXES), dtype=np.int16)
    bonus = np.empty(games, dtype=np.int64)
    start = time.perf_counter()
    for lo in range(0, games, CHUNK):
        hi = min(games, lo + CHUNK)
        rolls = rng.integers(1, 7, size=(hi - lo, max_turns, rs.rolls, rs.dice), dtype=np.int8)
        kernel.play_games(V, *turn_inputs(rs).games(), rolls, scores[lo:hi], bonus[lo:hi], threads())
        if (bonus[lo:hi] < 0).any():
            raise RuntimeError(f"a game needed more than {max_turns} turns; raise EXTRA_TURNS")
        if progress is not None:
            progress(hi - lo)
    return Simulation(rs, strategy, seed, scores, bonus, time.perf_counter() - start)


def threads() -> int:
    """Numba's worker threads: the simulator shares each turn's work out in that many blocks."""
    import numba

    return numba.get_num_threads()


def compile_seconds() -> float:
    """Compile (or load from cache) the simulator's kernels; returns the seconds it took."""
    from pentadice.simulator import games as kernel

    rs = rules.PENTA_RULES
    start = time.perf_counter()
    no_games = np.ones((0, len(rs.boxes), rs.rolls, rs.dice), dtype=np.int8)
    kernel.play_games(
        np.zeros(table.SHAPE),
        *turn_inputs(rs).games(),
        no_games,
        np.empty((0, 13), np.int16),
        np.empty(0, np.int64),
        1,
    )
    return time.perf_counter() - start


def statistics(sim: Simulation) -> dict:
    """Summary figures of a run."""
    totals = sim.totals
    n = len(totals)
    std = float(totals.std(ddof=1)) if n > 1 else 0.0
    penta = sim.scores[:, rules.PENTA]
    n_bonus = sim.penta_bonus // sim.rules.penta_bonus if sim.rules.penta_bonus else np.zeros(n, dtype=np.int64)
    counts = np.bincount(n_bonus)
    stats = {
        "games": n,
        "mean": float(totals.mean()),
        "std": std,
        "stderr": std / np.sqrt(n),
        "min": int(totals.min()),
        "max": int(totals.max()),
        # Scores that exist: the smallest score reached by at least q % of the games (the inverted CDF).
        "percentiles": {
            str(q): int(np.percentile(totals, q, method="inverted_cdf")) for q in (1, 5, 10, 25, 50, 75, 90, 95, 99)
        },
        "upper_bonus_rate": float((sim.upper_bonus > 0).mean()),
        "penta_rate": float((penta > 0).mean()),
        "penta_bonus_distribution": {str(k): int(c) for k, c in enumerate(counts) if c},
        "seconds": sim.seconds,
        "games_per_second": n / sim.seconds if sim.seconds > 0 else float("inf"),
    }
    if sim.rules.penta_repeat:  # only Kiriki gives extra turns
        extra = np.clip(penta // sim.rules.penta_points - 1, 0, None)
        stats["extra_turns_distribution"] = {str(k): int(c) for k, c in enumerate(np.bincount(extra)) if c}
    return stats


def histogram(totals: np.ndarray, bins: int = 20) -> list[tuple[int, int, int]]:
    """``(low, high, games)`` for equal-width bins of final scores."""
    lo, hi = int(totals.min()), int(totals.max()) + 1
    width = max(1, -(-(hi - lo) // bins))
    edges = np.arange(lo, hi + width, width)
    counts, _ = np.histogram(totals, bins=edges)
    return [(int(edges[i]), int(edges[i + 1]) - 1, int(c)) for i, c in enumerate(counts)]


def arrow_table(sim: Simulation):
    """One row per game: final score, each box's score, upper bonus, Penta bonus."""
    import pyarrow as pa

    columns = {"game": pa.array(np.arange(sim.games, dtype=np.int64)), "total": pa.array(sim.totals)}
    for b in sim.rules.boxes:
        columns[b] = pa.array(sim.scores[:, rules.BOX_INDEX[b]])
    columns["upper_bonus"] = pa.array(sim.upper_bonus.astype(np.int16))
    columns["penta_bonus"] = pa.array(sim.penta_bonus.astype(np.int16))  # at most 100 a turn: fits like the boxes
    meta = {"rules": sim.rules.name, "strategy": sim.strategy, "seed": str(sim.seed)}
    return pa.table(columns).replace_schema_metadata(meta)


def write_parquet(sim: Simulation, path) -> None:
    """Write the games to a Parquet file atomically (temporary file, then rename), or stream them to ``-`` or a
    pipe (a checked :class:`pentadice.atomic.Target` may be given); each page carries its CRC checksum."""
    import pyarrow.parquet as pq

    from pentadice import atomic

    where = path if isinstance(path, atomic.Target) else atomic.target(path, stream_ok=True)
    games = arrow_table(sim)
    atomic.write_file(where, lambda fh: pq.write_table(games, fh, write_page_checksum=True))


def is_games_file(path) -> bool:
    """Whether ``path`` holds games written by :func:`write_parquet` (which may then replace it): a Parquet file
    whose metadata names a strategy. A table's Parquet export, or any other file, is not."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, ValueError, pa.ArrowException):
        return False
    return b"strategy" in meta and b"pentadice" not in meta


BYTES_PER_GAME = rules.N_BOXES * 2 + 8  # int16 box scores and the int64 Penta bonus


def check_memory(games: int) -> None:
    """Refuse, before any work, a run whose games would not fit in the memory available now."""
    need = games * BYTES_PER_GAME
    available = _available_memory()
    if available is not None and need > available:
        raise ValueError(
            f"{games:,} games need {need / 2**30:.1f} GiB to hold their scores, and {available / 2**30:.1f} GiB "
            "of memory is available: simulate fewer"
        )


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None
