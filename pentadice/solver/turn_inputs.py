"""What the turn kernels read for a rule set, built once: the rules' parameter vector, the dice's index tables
and the rules' score table. The solver, the advisor (one situation or a batch) and the simulator pass these
same arrays, so that no caller assembles a kernel's argument list by hand from private attributes."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from pentadice.game import dice, rules


@dataclass(frozen=True, eq=False)
class TurnInputs:
    """The arrays of one rule set that the turn functions take (see :mod:`pentadice.solver.turn`)."""

    rules: rules.RuleSet
    p: np.ndarray  # RuleSet.params()
    tables: dice.DiceTables  # hands, keeps and their index tables
    scores: np.ndarray  # rules.score_table(): points of the hands that do not depend on the state

    @property
    def n_dice(self) -> int:
        return self.rules.dice

    @property
    def n_hands(self) -> int:
        return self.tables.n_hands

    @property
    def n_keeps(self) -> int:
        return self.tables.n_keeps

    def turn(self) -> tuple:
        """``(p, n_dice, n_hands, counts, scores, add, subs)``: the leading arguments of
        :func:`pentadice.solver.turn.situation_values`."""
        t = self.tables
        return self.p, self.n_dice, t.n_hands, t.counts, self.scores, t.add, t.subs

    def games(self) -> tuple:
        """``(p, n_dice, counts, scores, size, add, subs, subkeeps)``: the arguments of the simulator's
        ``play_turn`` between the value table and the run's key."""
        t = self.tables
        return self.p, self.n_dice, t.counts, self.scores, t.size, t.add, t.subs, t.subkeeps

    def layer(self) -> tuple:
        """``(p, n_dice, counts, scores, add, subs, weight)``: the arguments of the solver's ``solve_states``
        between the value table and the states."""
        t = self.tables
        return self.p, self.n_dice, t.counts, self.scores, t.add, t.subs, t.weight


@functools.cache
def turn_inputs(rs: rules.RuleSet) -> TurnInputs:
    """The kernel inputs of ``rs`` (built once per rule set)."""
    return TurnInputs(rs, rs.params(), dice.tables(rs.dice), rules.score_table(rs))
