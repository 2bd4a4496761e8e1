"""Calibration of the live chances: predicted probabilities of winning against simulated outcomes.

Each sample is one two-player game of computer players (``--players``, default ``optimal,optimal``), played by
the game engine from a seed to a random turn (both players have filled ``t`` boxes, ``t`` drawn from
``--turns LO-HI``); the chances of the first player are predicted there from the two sheets
(:func:`pentadice.advisor.chances.win_chances`: exact, every player assumed to play optimal), and the game is then
played out once to its end (a win counts 1, a tie 1/2). Over many positions, the predictions binned by value
must agree with the observed rates: the table prints, for each bin of predicted probability, the mean
prediction, the observed rate and the count, and below it the calibration's z-score (the sum of outcome minus
prediction over its standard deviation) and the Brier score (against 0.25 for always saying 50 %).

    .venv/bin/python benchmarks/calibration.py -n 1000 --seed 1
    .venv/bin/python benchmarks/calibration.py -n 1000 --players win,optimal   # the assumption for win players
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np

from pentadice.advisor import Advisor, chances
from pentadice.players import prepared
from pentadice.players.engine import Game, Player
from pentadice.support import paths


@dataclass
class Sample:
    """Predictions of the first player's chance of winning and the outcomes (1 win, 1/2 tie, 0 loss)."""

    predicted: np.ndarray
    outcome: np.ndarray
    turns: np.ndarray
    seconds_play: float
    seconds_chances: float

    @property
    def z(self) -> float:
        """Sum of outcome minus prediction over its standard deviation under calibration (a tie has less
        variance than a win or a loss, so this bound is conservative): about N(0, 1) when calibrated."""
        p = self.predicted
        sd = math.sqrt(float(np.sum(p * (1 - p)))) or 1.0
        return float(np.sum(self.outcome - p)) / sd

    @property
    def brier(self) -> float:
        return float(np.mean((self.outcome - self.predicted) ** 2))


def sample(
    advisor: Advisor,
    n: int,
    seed: int = 0,
    turns: tuple[int, int] = (4, 12),
    strategies: tuple[str, str] = ("optimal", "optimal"),
    rolled: bool = False,
) -> Sample:
    """``n`` positions of two-player games (game ``g`` seeded ``seed * 1_000_003 + g``), each predicted at a
    random turn and played out once; with ``rolled``, after the first player's first roll of that turn (its dice
    showing, two rerolls left: :meth:`pentadice.advisor.chances.Chances.during_turn`)."""
    rs = advisor.rules
    pick = np.random.default_rng(seed)
    predicted, outcome, at = np.empty(n), np.empty(n), np.empty(n, dtype=int)
    play_s = chances_s = 0.0
    for g in range(n):
        t = int(pick.integers(turns[0], turns[1] + 1))
        players = [Player(f"p{i}", computer=True, strategy=s) for i, s in enumerate(strategies)]
        game = Game(rs, players, seed=seed * 1_000_003 + g, auto_commit_seconds=None)
        start = time.perf_counter()
        while not (game.current == 0 and game.dice is None and game.players[1].turns == t):
            game.advance(advisor, 0.0, limit=1)
        if rolled:
            game.advance(advisor, 0.0, limit=1)
        play_s += time.perf_counter() - start
        start = time.perf_counter()
        sheets = [p.sheet for p in game.players]
        if rolled:
            calc = chances.chances_of(rs, advisor.values)
            predicted[g] = calc.during_turn(sheets, 0, game.dice, game.rolls_left)[0]
        else:
            predicted[g] = chances.win_chances(rs, advisor.values, sheets)[0]
        chances_s += time.perf_counter() - start
        start = time.perf_counter()
        while not game.over:
            game.advance(advisor, 0.0)
        play_s += time.perf_counter() - start
        winners = game.winners()
        outcome[g] = (1.0 / len(winners)) if game.players[0] in winners else 0.0
        at[g] = t
    return Sample(predicted, outcome, at, play_s, chances_s)


def update_times(advisor: Advisor, players: int = 6, seed: int = 0) -> list[tuple[int, float]]:
    """One game of ``players`` optimal computers: after every box, the chances of all computed afresh (new
    states waited for, the others from the cache); ``(boxes filled by the player who just scored, seconds)``."""
    rs = advisor.rules
    # The chances table where it is held (a lookup per state); else an empty cache: the game's own states only.
    calc = chances.chances_of(rs, advisor.values) if chances.table_of(rs, advisor.values) is not None else None
    calc = calc or chances.Chances(rs, advisor.values)
    game = Game(rs, [Player(f"p{i}", computer=True) for i in range(players)], seed=seed, auto_commit_seconds=None)
    out = []
    start = time.perf_counter()
    calc.win_chances([p.sheet for p in game.players])
    out.append((0, time.perf_counter() - start))
    while not game.over:
        for event in game.advance(advisor, 0.0, limit=1):
            if not isinstance(event, tuple) and event.scored is not None:
                start = time.perf_counter()
                calc.win_chances([p.sheet for p in game.players])
                filled = len(next(p for p in game.players if p.name == event.player).boxes)
                out.append((filled, time.perf_counter() - start))
    return out


def table(s: Sample, bins: int = 10) -> list[tuple[float, float, float, float, int]]:
    """Rows ``(lo, hi, mean predicted, observed rate, count)`` for equal-width bins of the prediction."""
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.searchsorted(edges, s.predicted, side="right") - 1, 0, bins - 1)
    rows = []
    for b in range(bins):
        inside = which == b
        count = int(inside.sum())
        if count:
            rows.append(
                (edges[b], edges[b + 1], float(s.predicted[inside].mean()), float(s.outcome[inside].mean()), count)
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=1000, help="positions (games)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--turns", default="4-12", help="the turn reached, drawn from LO-HI (boxes filled by each)")
    parser.add_argument("--players", default="optimal,optimal", help="the two computers' strategies")
    parser.add_argument("--rules", default="penta")
    parser.add_argument("--data", default=None)
    parser.add_argument(
        "--update-times", type=int, metavar="PLAYERS", default=0, help="instead: the time of each update in a game"
    )
    parser.add_argument("--rolled", action="store_true", help="predict after the first roll of the turn (dice showing)")
    parser.add_argument(
        "--no-table", action="store_true", help="compute each state's distribution (the forward pass), not the table's"
    )
    args = parser.parse_args()
    lo, hi = (int(x) for x in args.turns.split("-"))
    strategies = tuple(args.players.split(","))
    advisor = Advisor.load(args.rules, str(paths.data_dir(args.data)))
    if not args.no_table:  # the chances table, when `pentadice solve` built it
        prepared.hold(advisor.rules, advisor.table.files.directory, advisor.values, ["chances"], warm=False)
    held = chances.table_of(advisor.rules, advisor.values) is not None
    if args.rolled and not held:
        raise SystemExit("calibration: --rolled needs the chances table: pentadice solve --only chances")
    print(f"chances from {'the chances table' if held else 'the forward pass, state by state'}")
    if args.update_times:
        times = update_times(advisor, args.update_times, args.seed)
        print(f"chances after every box of a {args.update_times}-player game (seed {args.seed}), ms:")
        for filled in sorted({f for f, _ in times}):
            ms = [1000 * t for f, t in times if f == filled]
            print(
                f"  after box {filled:2d}: max {max(ms):8.1f}, median {float(np.median(ms)):8.1f} ({len(ms)} updates)"
            )
        total = sum(t for _, t in times)
        print(f"  whole game: {total:.1f} s over {len(times)} updates (the machine's load inflates these)")
        return
    start = time.perf_counter()
    try:
        s = sample(advisor, args.n, args.seed, (lo, hi), strategies, args.rolled)  # type: ignore[arg-type]
    except chances.ChancesUnavailable as e:  # Kiriki; Maxi Yatzy with many boxes open (--turns later)
        raise SystemExit(f"calibration: the chances are not computed here: {e}") from None
    total = time.perf_counter() - start
    print(f"calibration: {args.n} positions of {args.rules}, players {args.players} (the first one predicted), ")
    when = ", after the first roll" if args.rolled else ""
    print(f"turns {lo}-{hi}{when}, seed {args.seed}; every player assumed optimal in the prediction")
    print(f"{'predicted':>13} {'mean predicted':>15} {'observed':>9} {'count':>6}")
    for a, b, mean, rate, count in table(s):
        print(f"  {a:4.1f} - {b:3.1f} {mean:15.3f} {rate:9.3f} {count:6d}")
    print(
        f"overall: mean predicted {s.predicted.mean():.4f}, observed {s.outcome.mean():.4f}, z = {s.z:+.2f} "
        f"(|z| < 2 expected if calibrated), Brier {s.brier:.4f} (0.25 for always 50 %)"
    )
    print(
        f"time: {total:.1f} s ({s.seconds_play:.1f} s playing, {s.seconds_chances:.1f} s computing chances, "
        f"{1000 * s.seconds_chances / args.n:.0f} ms a position; the machine's load inflates these)"
    )


if __name__ == "__main__":
    main()
