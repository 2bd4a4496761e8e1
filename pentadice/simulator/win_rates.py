"""The win rates of multiplayer games (:mod:`pentadice.simulator.multiplayer`), summed up game by game.

Each game's winners (the highest total) share the win evenly. A strategy's rate is the mean share of a player
playing it (with the same strategy twice, the mean of its players: ``optimal,optimal`` gives 0.5 each); its
95 % interval is the normal one from the per-game shares. Per player figures are in ``players``, each seat's
rate in ``seat_rates`` (game ``g`` seats the players in the order of the list rotated by ``g``:
:func:`seat_player`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from pentadice.game import rules

Z95 = 1.959963984540054


def seat_player(game, seat, n_players):
    """The player (its place in the list) in ``seat`` (0: first to play) of game number ``game``: the list's
    order rotated by the game's number (works on NumPy arrays too)."""
    return (seat + game) % n_players


@dataclass
class WinTally:
    """Per player (the list's order): games, sum and sum of squares of its per-game win share, sum of its
    final scores; per strategy the same of the mean share of its players in each game."""

    players: tuple[str, ...]
    games: int = 0
    share: np.ndarray = field(init=False)
    share_sq: np.ndarray = field(init=False)
    score_sum: np.ndarray = field(init=False)
    strategy_share: dict = field(init=False)
    seat_share: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        n = len(self.players)
        self.share = np.zeros(n)
        self.share_sq = np.zeros(n)
        self.score_sum = np.zeros(n)
        self.seat_share = np.zeros(n)
        self.strategy_share = {s: [0.0, 0.0] for s in dict.fromkeys(self.players)}

    def add(self, totals: np.ndarray, first: int) -> None:
        """Add games ``first, first + 1, ...`` whose final scores are ``totals[g, j]`` (player ``j``)."""
        best = totals.max(axis=1, keepdims=True)
        winners = totals == best
        shares = winners / winners.sum(axis=1, keepdims=True)
        self.games += len(totals)
        self.share += shares.sum(axis=0)
        self.share_sq += (shares**2).sum(axis=0)
        self.score_sum += totals.sum(axis=0)
        n = len(self.players)
        g = np.arange(first, first + len(totals))
        for s in range(n):
            self.seat_share[s] += shares[np.arange(len(totals)), seat_player(g, s, n)].sum()
        for strategy, acc in self.strategy_share.items():
            cols = [j for j, name in enumerate(self.players) if name == strategy]
            x = shares[:, cols].mean(axis=1)
            acc[0] += x.sum()
            acc[1] += (x**2).sum()

    def summary(self) -> dict:
        """``win_rates`` per strategy, ``players`` per player, ``seats``: the win rate of each seat."""
        n = self.games

        def rate(total: float, total_sq: float) -> tuple[float, list[float]]:
            mean = total / n
            var = max(total_sq / n - mean * mean, 0.0) * n / max(n - 1, 1)
            half = Z95 * math.sqrt(var / n)
            # A rate lies in [0, 1]: the normal interval is cut there (it matters only for a few games).
            return float(mean), [float(max(mean - half, 0.0)), float(min(mean + half, 1.0))]

        win_rates = {}
        for strategy, (s, sq) in self.strategy_share.items():
            r, ci = rate(s, sq)
            cols = [j for j, name in enumerate(self.players) if name == strategy]
            win_rates[strategy] = {
                "rate": float(r),
                "ci95": ci,
                "mean_score": float(self.score_sum[cols].sum() / (n * len(cols))),
                "players": len(cols),
            }
        players = []
        for j, strategy in enumerate(self.players):
            r, ci = rate(self.share[j], self.share_sq[j])
            players.append({"strategy": strategy, "rate": r, "ci95": ci, "mean_score": float(self.score_sum[j] / n)})
        return {"win_rates": win_rates, "players": players, "seat_rates": [float(x / n) for x in self.seat_share]}


def summary_lines(result: dict, rs: rules.RuleSet) -> list[str]:
    """The human summary of :func:`pentadice.simulator.multiplayer.simulate_players`."""
    lines = [
        f"{rs.title}, {len(result['strategies'])} players ({', '.join(result['strategies'])}), "
        f"{result['games']:,} games (seed {result['seed']}), seats rotated game by game"
    ]
    lines.append(f"{'strategy':<10}{'players':>8}{'win rate':>10}   {'95 % interval':<18}{'mean score':>11}")
    for name, w in result["win_rates"].items():
        lo, hi = w["ci95"]
        lines.append(
            f"{name:<10}{w['players']:>8}{w['rate']:>10.2%}   [{lo:.2%}, {hi:.2%}]{'':<2}{w['mean_score']:>11.2f}"
        )
    if len(result["win_rates"]) < len(result["strategies"]):
        lines.append("Per player (a strategy played twice: each player's own figures):")
        for j, pl in enumerate(result["players"]):
            lo, hi = pl["ci95"]
            figures = f"{pl['rate']:>10.2%}   [{lo:.2%}, {hi:.2%}]  {pl['mean_score']:>9.2f}"
            lines.append(f"  player {j + 1} {pl['strategy']:<8}{figures}")
    seats = ", ".join(f"{r:.2%}" for r in result["seat_rates"])
    lines.append(f"Win rate by seat (first to play first): {seats}")
    rate = result["games"] / result["seconds"] if result["seconds"] > 0 else float("inf")
    lines.append(f"Speed: {rate:,.0f} games/s ({result['seconds']:.2f} s)")
    if result.get("tables_seconds", 0) >= 0.01:
        lines.append(f"Win strategy's tables read or built in {result['tables_seconds']:.1f} s")
    return lines
