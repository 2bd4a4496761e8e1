"""What a game keeps of its moves: each decision (:class:`Step`: the moment and the move, kept in
:attr:`pentadice.players.engine.Game.history` and saved with the game, for the review) and what one move did
(:class:`Played`; :class:`Scored` for a box), with the rules' reading of a moment that the engine and a saved
game's check share (:func:`legal_boxes`). Pure Python, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pentadice.game import rules
from pentadice.game.moves import Move
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation


@dataclass(frozen=True)
class Scored:
    """What one scoring move earned."""

    player: str
    box: str
    points: int
    penta_bonus: int
    upper_bonus: int
    auto: bool = False


@dataclass(frozen=True)
class Played:
    """What one move did: who made it, the move, the dice it kept and the dice after it (a keep) or what it
    earned (a score), and what it cost against the best option (when an advisor was asked)."""

    player: str
    move: Move
    dice: tuple[int, ...]  # after a keep, the dice showing; after a score, the dice scored
    kept: tuple[int, ...] = ()
    scored: Scored | None = None
    loss: float | None = None
    computer: bool = False

    def as_dict(self) -> dict:
        out = {"player": self.player, "move": str(self.move), "dice": list(self.dice), "computer": self.computer}
        if self.scored is not None:
            s = self.scored
            out.update(box=s.box, points=s.points, penta_bonus=s.penta_bonus, upper_bonus=s.upper_bonus, auto=s.auto)
        if self.loss is not None:
            out["loss"] = self.loss
        return out


@dataclass(frozen=True)
class Step:
    """One decision of a game: who made it (``player``, the name; ``index``, the seat), in which of their turns,
    the moment before it (the dice showing, the rerolls left, the sheet), the move, the dice after it (a keep),
    and whether the auto-commit (``auto``) or a computer player made it. A turn's first roll is no decision."""

    player: str
    index: int
    turn: int
    dice: tuple[int, ...]
    rolls_left: int
    sheet: Sheet
    move: Move
    after: tuple[int, ...] | None = None
    auto: bool = False
    computer: bool = False

    def situation(self) -> Situation:
        """The moment of the decision as the advisor sees it."""
        return Situation(self.dice, self.rolls_left, self.sheet)

    def as_json(self, rs: rules.RuleSet | None = None) -> dict:
        """The step as saved (the player by seat; the sheet in the order of ``rs``'s boxes)."""
        return {
            "index": self.index,
            "turn": self.turn,
            "dice": list(self.dice),
            "rolls_left": self.rolls_left,
            "sheet": self.sheet.as_dict(rs),
            "move": str(self.move),
            "after": list(self.after) if self.after is not None else None,
            "auto": self.auto,
            "computer": self.computer,
        }


def legal_boxes(rs: rules.RuleSet, dice: Sequence[int], sheet: Sheet) -> tuple[dict[str, int], int]:
    """The boxes of ``sheet`` that may take ``dice`` with their points, and the Penta bonus they earn."""
    return rules.legal_scores(rs, dice, rs.boxes_of(sheet.open_mask(rs)), sheet.penta_scored(rs))
