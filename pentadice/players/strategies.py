"""Computer players' strategies by name: how a computer chooses its move, given the game.

- ``optimal`` (the default): the advisor's best option, the highest expected final score (the solved table).
- ``win``: the move that maximises the chance of finishing first against the other players' sheets
  (:class:`pentadice.players.win.WinStrategy`, loaded once per rule set and table, on first use).

A player is written ``NAME`` (a person), ``cpu`` (a computer playing ``optimal``), ``cpu:STRATEGY``,
``cpu:NAME`` (a named computer playing ``optimal``: any name that is not a strategy's) or
``cpu:STRATEGY:NAME`` (see :func:`parse_computer`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from pentadice.game.moves import Move
from pentadice.game.situation import Situation


class Position(Protocol):
    """What a strategy reads of a game (:class:`pentadice.players.engine.Game` is one): the player to move and
    every player, each with a ``sheet``, and the situation now. A protocol, so that the engine, which picks a
    computer's strategy here, is not imported back."""

    @property
    def player(self) -> object: ...

    @property
    def players(self) -> Sequence: ...

    def situation(self) -> Situation: ...


DEFAULT = "optimal"
STRATEGIES = ("optimal", "win")


class StrategyError(ValueError):
    """An unknown strategy, or one the rule set does not allow."""


def known(name: str) -> str | None:
    """The strategy called ``name`` (any case, surrounding spaces ignored), or None."""
    word = name.strip().lower()
    return word if word in STRATEGIES else None


def parse_computer(rest: str, item: str) -> tuple[str, str]:
    """The strategy and name of a computer player from what follows ``cpu:`` in ``item``: ``STRATEGY``,
    ``NAME`` or ``STRATEGY:NAME``. ``cpu:win`` plays ``win``; ``cpu:Bob`` is Bob playing ``optimal``;
    ``cpu:win:Bob`` is Bob playing ``win``. StrategyError when ``STRATEGY:NAME`` names no strategy."""
    first, colon, name = rest.partition(":")
    if not colon:
        strategy = known(first)
        return (strategy, "") if strategy else (DEFAULT, first.strip())
    strategy = known(first)
    if strategy is None:
        raise StrategyError(
            f"unknown strategy {first.strip()!r} in {item!r}: a computer is cpu, cpu:STRATEGY, cpu:NAME or "
            f"cpu:STRATEGY:NAME, strategies: {', '.join(STRATEGIES)}"
        )
    return strategy, name.strip()


def check(rs, strategy: str, tables=None) -> str:
    """``strategy`` if it is known and the rule set ``rs`` allows it (its tables in the table directory
    ``tables``, default the default one, where they must be built beforehand); StrategyError saying why not."""
    if strategy not in STRATEGIES:
        raise StrategyError(f"unknown strategy {strategy!r}: strategies are {', '.join(STRATEGIES)}")
    if strategy == "win":
        reason = _win_refusal(rs, tables)
        if reason:
            raise StrategyError(reason)
    return strategy


def _win_refusal(rs, tables=None) -> str | None:
    """Why ``win`` is not available under ``rs`` (the win strategy's own reason), or None."""
    try:
        from pentadice.players import win
    except ImportError as e:  # a build without it
        return f"the win strategy is not available: {e}"
    return win.refusal(rs, tables)


def choose_optimal(game: Position, advisor) -> Move:
    """The advisor's best option: the highest expected final score."""
    return advisor.advise(game.situation()).best.move


_win_players: dict[tuple, object] = {}
_win_lock = threading.Lock()


def table_directory(advisor):
    """The table directory ``advisor``'s table was read from (None: a table held in memory only)."""
    return getattr(getattr(getattr(advisor, "table", None), "files", None), "directory", None)


def win_player(advisor):
    """The win strategy of ``advisor``'s rule set and table, built once (its tables are built on demand)."""
    from pentadice.players.win import WinStrategy

    directory = table_directory(advisor)
    key = (advisor.rules.name, id(advisor.values), str(directory))
    with _win_lock:
        found = _win_players.get(key)
        if found is None:
            found = _win_players[key] = WinStrategy(advisor.rules, advisor.values, directory)
    return found


def choose_win(game: Position, advisor) -> Move:
    """The move with the best chance of finishing first, against every other player's sheet as it stands."""
    player = win_player(advisor)
    others = [p.sheet for p in game.players if p is not game.player]
    return player.choose(game.situation(), game.player.sheet, others)


REGISTRY: dict[str, Callable[[Position, object], Move]] = {"optimal": choose_optimal, "win": choose_win}


def choose(strategy: str, game: Position, advisor) -> Move:
    """The move the computer playing ``strategy`` makes now in ``game`` (the dice rolled)."""
    return REGISTRY[strategy](game, advisor)
