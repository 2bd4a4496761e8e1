"""Small games of the Yatzy family for the advisor's tests: Maxi Yatzy's six dice and scoring on a sheet of a few
of its boxes (a full Maxi Yatzy table is 640 MB and a minute or two to solve), solved in-process once."""

from __future__ import annotations

import functools
from pathlib import Path

from pentadice.game import rules
from pentadice.solver import induction
from pentadice.tables import table

# Boxes of the small Maxi Yatzy game: two upper boxes (the bonus is reachable), pairs, three pairs, houses, a
# straight, chance and six alike.
SMALL_MAXI_BOXES = ("fives", "sixes", "one_pair", "three_pairs", "tower", "full_straight", "chance", "maxi_yatzy")
SMALL_MAXI_THRESHOLD = 50  # 64 lanes, as Penta's: the solver's kernels are compiled already


@functools.cache
def small_maxi() -> rules.RuleSet:
    """Maxi Yatzy (6 dice, its scoring, no joker, bonus 50) on a sheet of :data:`SMALL_MAXI_BOXES`."""
    maxi = rules.get_rules("maxi-yatzy")
    sheet = tuple(b for b in maxi.sheet if b.id in SMALL_MAXI_BOXES)
    return maxi.reduced(sheet=sheet, boxes=tuple(b.id for b in sheet), upper_threshold=SMALL_MAXI_THRESHOLD)


@functools.cache
def solved_small(rs: rules.RuleSet) -> induction.Solution:
    return induction.solve(rs)


def advisor_of(rs: rules.RuleSet, directory: Path, compiled: bool = True):
    """An advisor of a (possibly unregistered) rule set, its table solved once and saved in ``directory``."""
    from pentadice.advisor import Advisor

    values = solved_small(rs).values
    table.save(rs, values, directory)
    return Advisor(table.load(rs, directory), compiled=compiled)
