"""The simulator: many solitaire games under a strategy, and the statistics of their scores.

Strategies are value tables: ``optimal`` plays by the solved table; ``greedy`` plays each turn for its own
points (box points, Penta bonus and upper bonus), as if nothing came after: the same code with a table of
zeros. It is the baseline that shows what looking ahead is worth.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from pentadice.game import rules
from pentadice.solver.turn_inputs import turn_inputs
from pentadice.tables import table

STRATEGIES = ("optimal", "greedy")
CHUNK = 400_000  # games played together: the more, the more games share each state's turn values


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
    def upper_bonus(self) -> np.ndarray:
        return final_scores(self.rules, self.scores, self.penta_bonus)[1]

    @property
    def totals(self) -> np.ndarray:
        """Final scores."""
        return final_scores(self.rules, self.scores, self.penta_bonus)[0]


def strategy_values(strategy: str, tbl: table.Table) -> np.ndarray:
    """The value table a strategy plays by, as the compiled games read it: the table itself (never a copy: the
    games read only capped subtotals, so the solver's padded lanes are not needed), or for ``greedy`` a table
    of zeros of its shape (pages the system gives on first touch). A writable C array of float64, as the solver
    writes: a read-only one (a table memory-mapped as it is) is copied once, since it would compile the games
    a second time."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; strategies: {', '.join(STRATEGIES)}")
    rs = tbl.rules
    if strategy == "greedy":
        return np.zeros(rs.table_shape)
    values = np.asarray(tbl.values)
    if values.shape != rs.table_shape:
        raise ValueError(f"a table of {rs.name} is shaped {rs.table_shape}, not {values.shape}")
    if values.dtype != np.float64 or not values.flags.c_contiguous or not values.flags.writeable:
        values = np.array(values, dtype=np.float64, order="C")
    return values


def fresh_seed() -> int:
    """A seed drawn from the system's entropy (printed and stored, so that the run can be played again)."""
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))


def seed_key(seed: int) -> np.uint64:
    """The 64-bit key of the dice generator for a seed (any whole number: NumPy's SeedSequence hashes it)."""
    return np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]


def game_dice(seed: int, game: int, turns: int, rolls: int, dice: int) -> np.ndarray:
    """The dice of game number ``game`` of a run of ``seed``: ``out[t, r, i]`` is die ``i`` of roll ``r`` of turn
    ``t`` (a reroll of k dice uses ``out[t, r, :k]``), as the compiled games draw them (NumPy, to replay one)."""
    from pentadice.solver import games as kernel

    t, r, i = np.meshgrid(np.arange(turns), np.arange(rolls), np.arange(dice), indexing="ij")
    counter = np.uint64(game) * kernel.GAME_STRIDE + ((t * 4 + r) * 8 + i).astype(np.uint64)
    with np.errstate(over="ignore"):
        x = _mix64(seed_key(seed) + counter * kernel.GOLDEN)
        while (unfair := x >= kernel.FAIR_LIMIT).any():
            x = np.where(unfair, _mix64(x + kernel.GOLDEN), x)
    return (x % np.uint64(6)).astype(np.int8) + 1


def _mix64(z: np.ndarray) -> np.ndarray:
    from pentadice.solver import games as kernel

    z = (z ^ (z >> np.uint64(30))) * kernel.MIX1
    z = (z ^ (z >> np.uint64(27))) * kernel.MIX2
    return z ^ (z >> np.uint64(31))


def play_chunks(
    tbl: table.Table,
    games: int,
    seed: int,
    strategy: str = "optimal",
    chunk: int | None = None,
    wide_from: int | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(scores, penta_bonus)`` of each run of at most ``chunk`` games (default :data:`CHUNK`), in order: memory
    bounded by the chunk, whatever the number of games. A game's dice depend on the seed and its number only,
    so the games are the same whatever the chunk size and the threads. Each turn of a chunk is played by the
    threads at once, each a share of the turn's groups of games (the compiled games release the GIL).
    ``wide_from``: the games of one state from which their turn is computed for every subtotal at once
    (default ``games.wide_from(rules)``; 1: always; above the chunk, never but in groups the threads split:
    ``games.SHARED_GROUP``); the games are the same."""
    from pentadice.solver import games as kernel

    if games < 1:
        raise ValueError(f"the number of games must be at least 1, not {games}")
    chunk = chunk or CHUNK
    rs = tbl.rules
    # A writable C array with the rule set's lanes, as the solver's: the turn code is then the solver's compiled
    # code, not a second compilation for a read-only table.
    V = strategy_values(strategy, tbl)
    play_turn = kernel.play_turn_for(rs.lanes)
    wide = kernel.wide_from(rs) if wide_from is None else max(1, int(wide_from))
    args = turn_inputs(rs).games()
    key = seed_key(seed)
    parts = threads()
    pool = ThreadPoolExecutor(parts) if parts > 1 else None
    try:
        for lo in range(0, games, chunk):
            n = min(games, lo + chunk) - lo
            scores = np.full((n, rs.n_boxes), -1, dtype=np.int16)
            bonus = np.zeros(n, dtype=np.int64)
            masks = np.full(n, rs.box_mask, dtype=np.int64)
            penta_scored = np.zeros(n, dtype=np.int64)
            subtotals = np.zeros(n, dtype=np.int64)
            order = np.empty(n, dtype=np.int64)
            starts = np.empty(kernel.n_keys(rs) + 1, dtype=np.int64)
            state = (masks, penta_scored, subtotals, order, starts)
            # A group of the chunk's games or of SHARED_GROUP (which the threads split) is the largest: above it,
            # the threshold is never reached; the scratch of the small groups' games stays small.
            wide_n = min(wide, n + 1, kernel.SHARED_GROUP)
            for t in range(kernel.MAX_TURNS):
                if kernel.group_games(masks, penta_scored, rs.n_flags, order, starts) == 0:
                    break
                if pool is None:
                    play_turn(V, *args, key, lo, t, *state, 0, 1, scores, bonus, wide_n)
                else:  # each thread a share of the turn's groups; the next turn waits for them all
                    turn: Callable[..., None] = play_turn  # a Numba dispatcher, whose signature mypy cannot read
                    shares = [
                        pool.submit(turn, V, *args, key, lo, t, *state, part, parts, scores, bonus, wide_n)
                        for part in range(parts)
                    ]
                    for share in shares:
                        share.result()
            else:
                raise RuntimeError(f"a game needed more than {kernel.MAX_TURNS} turns")
            yield scores, bonus
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def simulate(
    tbl: table.Table,
    games: int,
    seed: int | None = None,
    strategy: str = "optimal",
    progress: Callable[[int], None] | None = None,
) -> Simulation:
    """Play ``games`` solitaire games of the table's rule set, every game kept (see :class:`Tally` for a
    summary in bounded memory); the same seed gives the same games. Without a seed one is drawn (and kept in
    the result), so that any run can be played again."""
    seed = fresh_seed() if seed is None else seed
    start = time.perf_counter()
    parts = []
    for scores, bonus in play_chunks(tbl, games, seed, strategy):
        parts.append((scores, bonus))
        if progress is not None:
            progress(len(bonus))
    scores = np.concatenate([p[0] for p in parts])
    bonus = np.concatenate([p[1] for p in parts])
    return Simulation(tbl.rules, strategy, seed, scores, bonus, time.perf_counter() - start)


def threads() -> int:
    """Numba's worker threads: the simulator shares each turn's work out in that many blocks."""
    import numba

    return numba.get_num_threads()


def compile_seconds(rs: rules.RuleSet = rules.PENTA_RULES) -> float:
    """Compile (or load from cache) the simulator's kernels for ``rs``'s lanes; returns the seconds it took."""
    from pentadice.solver import games as kernel

    start = time.perf_counter()
    no_games = np.zeros(0, dtype=np.int64)
    starts = np.zeros(2, dtype=np.int64)  # one key: no game reaches the turn's loop over the keys
    state = (no_games, no_games, no_games, no_games, starts)
    kernel.group_games(no_games, no_games, rs.n_flags, no_games, starts)
    scores = np.empty((0, rs.n_boxes), np.int16)
    V = np.zeros((rs.n_flags, 1 << min(rs.n_boxes, 1), rs.upper_threshold + 1))  # the type matters, not the size
    play_turn = kernel.play_turn_for(rs.lanes)
    play_turn(V, *turn_inputs(rs).games(), seed_key(0), 0, 0, *state, 0, 1, scores, no_games, kernel.wide_from(rs))
    return time.perf_counter() - start


def needs_compiling(rs: rules.RuleSet = rules.PENTA_RULES) -> bool:
    """Whether the simulator's kernel for ``rs``'s lanes is not in Numba's cache yet (a first run): compiling
    takes seconds."""
    from pentadice.solver import games as kernel
    from pentadice.solver.compiled import cached

    return not cached(kernel.play_turn_for(rs.lanes))


def final_scores(rs: rules.RuleSet, scores: np.ndarray, bonus: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(totals, upper_bonus)`` of games from their box scores (one column per box of the sheet, -1 for a box
    the game lacks) and bonuses."""
    upper_columns = [b for b in range(rs.n_boxes) if (rs.upper_mask >> b) & 1]
    upper = np.clip(scores[:, upper_columns], 0, None).sum(axis=1)
    upper_bonus = np.where(upper >= rs.upper_threshold, rs.upper_bonus, 0)
    return np.clip(scores, 0, None).sum(axis=1) + upper_bonus + bonus, upper_bonus


@dataclass
class Tally:
    """What the summary needs of games seen so far, in memory that does not grow with their number: how many
    games ended on each final score (the mean, spread and percentiles follow exactly), and counts of bonuses."""

    rules: rules.RuleSet
    games: int = 0
    score_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    upper_bonus_games: int = 0
    penta_games: int = 0
    bonus_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    extra_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def add(self, scores: np.ndarray, bonus: np.ndarray) -> None:
        rs = self.rules
        totals, upper_bonus = final_scores(rs, scores, bonus)
        self.games += len(totals)
        self.score_counts = _add_counts(self.score_counts, np.bincount(totals))
        self.upper_bonus_games += int((upper_bonus > 0).sum())
        penta = scores[:, rs.box_index[rs.all_alike_box]]  # the Penta box, or the sheet's box of all dice alike
        self.penta_games += int((penta > 0).sum())
        n_bonus = bonus // rs.penta_bonus if rs.penta_bonus and rs.penta_box >= 0 else np.zeros(len(bonus), np.int64)
        self.bonus_counts = _add_counts(self.bonus_counts, np.bincount(n_bonus))
        if rs.penta_repeat:
            extra = np.clip(penta.astype(np.int64) // rs.penta_points - 1, 0, None)
            self.extra_counts = _add_counts(self.extra_counts, np.bincount(extra))

    def stats(self, seconds: float) -> dict:
        """The summary figures (see :func:`statistics`)."""
        n = self.games
        values = np.nonzero(self.score_counts)[0]
        counts = self.score_counts[values]
        mean = float(int((values * counts).sum())) / n  # exact: a sum of whole numbers
        std = float(np.sqrt((counts * (values - mean) ** 2).sum() / (n - 1))) if n > 1 else 0.0
        cumulative = np.cumsum(counts)

        def percentile(q: int) -> int:  # the smallest score reached by at least q % of the games
            return int(values[np.searchsorted(cumulative, q / 100 * n, side="left")])

        stats = {
            "games": n,
            "mean": mean,
            "std": std,
            "stderr": std / np.sqrt(n),
            "min": int(values[0]),
            "max": int(values[-1]),
            # Scores that exist: the smallest score reached by at least q % of the games (the inverted CDF).
            "percentiles": {str(q): percentile(q) for q in (1, 5, 10, 25, 50, 75, 90, 95, 99)},
            "upper_bonus_rate": self.upper_bonus_games / n,
            # Games with points in the box of all dice alike (the Penta box; Yatzy's, Maxi Yatzy's).
            "all_alike_box": self.rules.all_alike_box,
            "all_alike_rate": self.penta_games / n,
            "seconds": seconds,
            "games_per_second": n / seconds if seconds > 0 else float("inf"),
        }
        if self.rules.penta_box >= 0:  # a sheet with a Penta box (the bonus and joker's box)
            stats["penta_rate"] = self.penta_games / n
            stats["penta_bonus_distribution"] = {str(k): int(c) for k, c in enumerate(self.bonus_counts) if c}
        if self.rules.penta_repeat:  # only Kiriki gives extra turns
            stats["extra_turns_distribution"] = {str(k): int(c) for k, c in enumerate(self.extra_counts) if c}
        return stats

    def histogram(self, bins: int = 20) -> list[tuple[int, int, int]]:
        """``(low, high, games)`` for equal-width bins of final scores."""
        return _histogram(self.score_counts, bins)


def _add_counts(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros(max(len(a), len(b)), dtype=np.int64)
    out[: len(a)] += a
    out[: len(b)] += b
    return out


def statistics(sim: Simulation) -> dict:
    """Summary figures of a run: games, mean, std, stderr, min, max, percentiles, bonus rates and counts."""
    tally = Tally(sim.rules)
    tally.add(sim.scores, sim.penta_bonus)
    return tally.stats(sim.seconds)


def histogram(totals: np.ndarray, bins: int = 20) -> list[tuple[int, int, int]]:
    """``(low, high, games)`` for equal-width bins of final scores."""
    return _histogram(np.bincount(totals), bins)


def _histogram(score_counts: np.ndarray, bins: int) -> list[tuple[int, int, int]]:
    values = np.nonzero(score_counts)[0]
    lo, hi = int(values[0]), int(values[-1]) + 1
    width = max(1, -(-(hi - lo) // bins))
    edges = np.arange(lo, hi + width, width)
    return [
        (int(edges[i]), int(edges[i + 1]) - 1, int(score_counts[edges[i] : edges[i + 1]].sum()))
        for i in range(len(edges) - 1)
    ]


def arrow_table(sim: Simulation):
    """One row per game: final score, each box's score, upper bonus, Penta bonus (with a Penta box)."""
    return games_table(sim.rules, sim.scores, sim.penta_bonus, 0).replace_schema_metadata(
        games_metadata(sim.rules, sim.strategy, sim.seed)
    )


def games_metadata(rs: rules.RuleSet, strategy: str, seed: int) -> dict[str, str]:
    return {"rules": rs.name, "strategy": strategy, "seed": str(seed)}


def games_table(rs: rules.RuleSet, scores: np.ndarray, bonus: np.ndarray, first: int):
    """Rows of games ``first`` on: game number, final score, each box, upper bonus, Penta bonus (a sheet with a
    Penta box only)."""
    import pyarrow as pa

    totals, upper_bonus = final_scores(rs, scores, bonus)
    columns = {"game": pa.array(np.arange(first, first + len(bonus), dtype=np.int64)), "total": pa.array(totals)}
    for b in rs.boxes:
        columns[b] = pa.array(scores[:, rs.box_index[b]])
    columns["upper_bonus"] = pa.array(upper_bonus.astype(np.int16))
    if rs.penta_box >= 0:
        columns["penta_bonus"] = pa.array(bonus.astype(np.int16))  # at most 100 a turn: fits like the boxes
    return pa.table(columns)


def write_parquet(sim: Simulation, path) -> None:
    """Write the games to a Parquet file atomically (temporary file, then rename), or stream them to ``-`` or a
    pipe (a checked :class:`pentadice.tables.atomic.Target` may be given); each page carries its CRC checksum."""
    import pyarrow.parquet as pq

    from pentadice.tables import atomic

    where = path if isinstance(path, atomic.Target) else atomic.target(path, stream_ok=True)
    games = arrow_table(sim)
    atomic.write_file(where, lambda fh: pq.write_table(games, fh, write_page_checksum=True))


def run(
    tbl: table.Table,
    games: int,
    seed: int,
    strategy: str,
    tally: Tally,
    progress: Callable[[int], None] | None = None,
    out=None,
) -> None:
    """Play ``games`` games into ``tally`` (memory independent of their number); with ``out`` (a checked
    :class:`pentadice.tables.atomic.Target`), each chunk of games is also written as a Parquet row group as it comes:
    atomically into a file (whole or not at all), or streamed into a pipe."""
    import pyarrow.parquet as pq

    from pentadice.tables import atomic

    def play(writer=None) -> None:
        for scores, bonus in play_chunks(tbl, games, seed, strategy):
            if writer is not None:
                writer.write_table(games_table(tbl.rules, scores, bonus, tally.games))
            tally.add(scores, bonus)
            if progress is not None:
                progress(len(bonus))

    if out is None:
        play()
        return

    def write(fh) -> None:
        schema = games_table(tbl.rules, *_no_games(tbl.rules), 0).schema
        schema = schema.with_metadata(games_metadata(tbl.rules, strategy, seed))
        with pq.ParquetWriter(fh, schema, write_page_checksum=True) as writer:
            play(writer)

    atomic.write_file(out, write)


def _no_games(rs: rules.RuleSet) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((0, rs.n_boxes), dtype=np.int16), np.zeros(0, dtype=np.int64)


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
