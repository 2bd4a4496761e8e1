"""The two moves of a turn, one type each, with one text notation read and written as a matched pair.

- :class:`Keep`: keep these dice and reroll the others (``keep 1 3 4``; keeping nothing, ``roll``, rerolls all);
- :class:`Score`: fill a box with the dice (``score full_house``).

``str(move)`` writes the notation and :func:`parse_move` reads it back (``parse_move(str(m)) == m``), as
python-chess's ``Move.uci()`` and ``Move.from_uci()`` do. The advisor's options, the engine's ``play``, the
simulator's replay and every front end use these types; front ends may accept looser input (box names as
people type them) through the rule set's :meth:`~pentadice.game.rules.RuleSet.parse_box`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pentadice.game import rules


class MoveError(ValueError):
    """Text that is not a move."""


@dataclass(frozen=True)
class Keep:
    """Keep ``dice`` (faces, sorted) and reroll the others."""

    dice: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not all(isinstance(d, int) and not isinstance(d, bool) for d in self.dice):
            raise MoveError(f"dice are whole numbers: cannot keep {self.dice!r}")
        object.__setattr__(self, "dice", tuple(sorted(self.dice)))  # which faces show is the game's to check

    def __str__(self) -> str:
        return "keep " + " ".join(map(str, self.dice)) if self.dice else "roll"


@dataclass(frozen=True)
class Score:
    """Fill ``box`` (a box id) with the dice showing."""

    box: str

    def __post_init__(self) -> None:
        if self.box not in rules.BOX_NAMES_EN:  # a box of some sheet; the game checks it is one of its own
            raise MoveError(f"unknown box id {self.box!r}; box ids: {' '.join(rules.BOX_IDS)}")

    def __str__(self) -> str:
        return f"score {self.box}"


Move = Keep | Score


def parse_move(text: str, rs: rules.RuleSet | None = None) -> Move:
    """A move from its notation (``keep 1 3 4``, ``roll``, ``score chance``); with ``rs``, box names as the
    rule set reads them (``score fh``). MoveError naming the problem."""
    word, _, rest = text.strip().partition(" ")
    rest = rest.strip()
    if word == "roll" and not rest:
        return Keep()
    if word == "keep":
        faces = rest.replace(",", " ").split()
        if not all(f.isascii() and f.isdigit() and len(f) == 1 for f in faces):
            raise MoveError(f"keep takes dice 1 to 6 apart, e.g. 'keep 1 3 4', not {rest[:40]!r}")
        return Keep(tuple(int(f) for f in faces))
    if word == "score" and rest:
        if rs is None:
            return Score(rest)
        try:
            return Score(rs.parse_box(rest))
        except rules.UnknownBox as e:
            raise MoveError(str(e)) from None
    raise MoveError(f"not a move: {text.strip()[:40]!r} (moves: 'keep 1 3 4', 'roll', 'score BOX')")
