"""The solver against the published optimal expected scores and an independent solver (yatzy-solver)."""

import numpy as np
import pytest
from peer_solver import peer_values
from solutions import solved

from pentadice.game import rules

PUBLISHED = {
    "yahtzee": 254.5896095,
    "yahtzee+forced-joker": 254.5877287,
    "yahtzee+no-joker": 253.9702412,
    "yahtzee+no-bonus": 245.8707745,
}
# The same conventions in yatzy-solver, whose category order puts five of a kind before chance.
PEER_VARIANT = {
    "yahtzee": "american",
    "yahtzee+forced-joker": "american+forced-joker",
    "yahtzee+no-joker": "american+no-joker",
    "yahtzee+no-bonus": "american+no-bonus",
    "yatzy": "yatzy-scandinavian",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PUBLISHED))
def test_published_expected_scores(name):
    assert solved(name).expected_score == pytest.approx(PUBLISHED[name], abs=1e-6)


def test_yatzy_equals_the_published_optimal_expected_score():
    # ../shared/rules/yatzy-family.md: 248.4399894, several independent solvers agreeing.
    solution = solved("yatzy")
    assert solution.values.shape == (1, 2**15, 64)
    assert solution.expected_score == pytest.approx(248.4399894, abs=1e-7)


@pytest.mark.slow
def test_maxi_yatzy_agrees_with_the_published_float32_value():
    # Published 383.3054 from a float32 table: agreement to 1e-3 (a 640 MB table, a minute or two to solve).
    solution = solved("maxi-yatzy")
    assert solution.values.shape == (1, 2**20, 76)
    assert solution.expected_score == pytest.approx(383.3054, abs=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["yahtzee", "yahtzee+forced-joker", "yatzy"])
def test_every_state_agrees_with_yatzy_solver(name):
    values = solved(name).values
    theirs = peer_values(rules.get_rules(name), values, PEER_VARIANT[name])
    np.testing.assert_allclose(values[~np.isnan(values)], theirs, rtol=0, atol=1e-9)


def test_penta_expected_score_lies_between_the_conventions(penta_solution):
    # Penta is the forced joker that needs the box at 50: a little less than the forced joker that does not.
    assert 253.9702412 < penta_solution.expected_score < 254.5877287
