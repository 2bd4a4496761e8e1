"""A moment of a turn: the dice, the rerolls left, and the score sheet."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pentadice.game import rules
from pentadice.game.sheet import Sheet, SheetError


class SituationError(ValueError):
    """Dice, rerolls or a sheet that cannot make a situation of the game."""


def parse_dice(rs: rules.RuleSet, text: str) -> list[int]:
    """Dice as people type them: ``1 1 3 4 6``, ``1,1,3,4,6`` or ``13346`` (then one digit a die; as many
    digits as the rule set has dice)."""
    words = text.replace(",", " ").split()
    if len(words) == 1 and len(words[0]) == rs.dice and words[0].isascii() and words[0].isdigit():
        words = list(words[0])
    if not words:
        raise SituationError(f"give the {rs.dice} dice, e.g. {example_dice(rs)}")
    bad = [w for w in words if not (w.isascii() and w.isdigit() and len(w) <= 2)]
    if bad:
        raise SituationError(f"a die shows 1 to 6, not {bad[0][:20]!r}")
    return [int(w) for w in words]


def example_dice(rs: rules.RuleSet) -> str:
    """A roll of the rule set's dice for messages and help: ``1 1 3 4 6`` (six dice: ``1 1 3 4 6 6``)."""
    return " ".join(map(str, (1, 1, 3, 4, 6, 6, 2)[: rs.dice]))


@dataclass(frozen=True)
class Situation:
    """The dice showing (sorted; as many as the rule set has), the rerolls left (0, 1 or 2), and the score
    sheet."""

    dice: tuple[int, ...]
    rolls_left: int = 2
    sheet: Sheet = field(default_factory=Sheet)

    @classmethod
    def make(
        cls, rs: rules.RuleSet, dice: Sequence[int], rolls_left: int | None = None, sheet: Sheet | None = None
    ) -> Situation:
        """A checked situation of rule set ``rs`` (``rolls_left`` None: the first roll's, ``rs.rolls - 1``);
        raises :class:`SituationError` naming the problem."""
        rolls_left = rs.rolls - 1 if rolls_left is None else rolls_left
        if isinstance(dice, str | bytes) or not all(isinstance(d, int) and not isinstance(d, bool) for d in dice):
            raise SituationError(f"dice must be whole numbers 1 to 6, not {dice!r}")
        if len(dice) != rs.dice:
            raise SituationError(f"{rs.title} uses {rs.dice} dice, not {len(dice)}")
        bad = [d for d in dice if not 1 <= d <= 6]
        if bad:
            raise SituationError(f"a die shows 1 to 6, not {bad[0]}")
        if isinstance(rolls_left, bool) or not isinstance(rolls_left, int) or not 0 <= rolls_left < rs.rolls:
            raise SituationError(f"rolls left must be 0 to {rs.rolls - 1}, not {rolls_left!r}")
        sheet = sheet if sheet is not None else Sheet()
        try:
            sheet.validate(rs)
        except SheetError as e:
            raise SituationError(str(e)) from None
        return cls(tuple(sorted(dice)), rolls_left, sheet)

    def describe(self, rs: rules.RuleSet) -> str:
        """One line for people: rule set, roll, dice, score so far."""
        roll = rs.rolls - self.rolls_left
        left = {0: "last roll", 1: "1 reroll left"}.get(self.rolls_left, f"{self.rolls_left} rerolls left")
        filled = len(self.sheet.boxes)
        boxes = f"{filled} box{'es' if filled != 1 else ''} filled"
        when = "start of the game" if filled == 0 else f"{boxes}, {self.sheet.score(rs)} points so far"
        dice = " ".join(map(str, self.dice))
        return f"{rs.title}: dice {dice}, roll {roll} of {rs.rolls} ({left}); {when}"
