"""Small games of the Yatzy family for the advisor's tests: Maxi Yatzy's six dice and scoring on a sheet of a few
of its boxes (a full Maxi Yatzy table is 640 MB and a minute or two to solve), solved in-process once."""

from __future__ import annotations

import functools
from pathlib import Path

import reduced_games

from pentadice.game import rules
from pentadice.solver import induction
from pentadice.tables import table


def small_maxi() -> rules.RuleSet:
    """Maxi Yatzy (6 dice, its scoring, no joker, bonus 50) on a sheet of eight of its boxes (64 lanes)."""
    return reduced_games.GAMES["maxi-yatzy, 8 boxes"]


@functools.cache
def solved_small(rs: rules.RuleSet) -> induction.Solution:
    return induction.solve(rs)


def advisor_of(rs: rules.RuleSet, directory: Path, compiled: bool = True):
    """An advisor of a (possibly unregistered) rule set, its table solved once and saved in ``directory``."""
    from pentadice.advisor import Advisor

    values = solved_small(rs).values
    table.save(rs, values, directory)
    return Advisor(table.load(rs, directory), compiled=compiled)
