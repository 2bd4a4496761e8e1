"""The fast solver against a slow expectimax over dice positions, on every state of reduced games."""

import numpy as np
import pytest
from reference import brute_force

from pentadice import rules, solver

# Each game exercises other rules: the joker paths need all dice alike, which small dice counts make common.
GAMES = {
    "penta, 3 dice": rules.get_rules("penta").reduced(
        dice=3, boxes=("ones", "threes", "full_house", "penta"), upper_threshold=8
    ),
    "penta, 2 dice, lower boxes": rules.get_rules("penta").reduced(
        dice=2, boxes=("twos", "three_of_a_kind", "small_straight", "chance", "penta"), upper_threshold=4
    ),
    "yahtzee free joker, 2 dice": rules.get_rules("yahtzee").reduced(
        dice=2, boxes=("ones", "twos", "full_house", "chance", "penta"), upper_threshold=5
    ),
    "yahtzee forced joker, 3 dice, 2 rolls": rules.get_rules("yahtzee+forced-joker").reduced(
        dice=3, rolls=2, boxes=("fives", "sixes", "four_of_a_kind", "penta"), upper_threshold=20
    ),
    "yahtzee no joker, 2 dice": rules.get_rules("yahtzee+no-joker").reduced(
        dice=2, boxes=("ones", "large_straight", "chance", "penta"), upper_threshold=2
    ),
    "kiriki, 2 dice": rules.get_rules("kiriki").reduced(
        dice=2, boxes=("ones", "twos", "chance", "penta"), upper_threshold=4
    ),
    "kiriki, 2 dice, 2 rolls, lower boxes": rules.get_rules("kiriki").reduced(
        dice=2, rolls=2, boxes=("three_of_a_kind", "full_house", "sixes", "penta"), upper_threshold=12
    ),
    "penta, 4 dice, 1 roll": rules.get_rules("penta").reduced(
        dice=4, rolls=1, boxes=("fours", "small_straight", "full_house", "penta"), upper_threshold=12
    ),
}


@pytest.mark.parametrize("name", list(GAMES))
def test_fast_solver_matches_brute_force_on_every_state(name):
    rs = GAMES[name]
    fast = solver.solve(rs).values
    slow = brute_force(rs)
    states = np.argwhere(~np.isnan(fast))
    assert len(states) > 20
    for full, mask, sub in states:
        assert fast[full, mask, sub] == pytest.approx(slow(int(mask), int(sub), int(full)), abs=1e-9), (
            f"state open={rules.boxes_of(int(mask))} subtotal={sub} penta_scored={full}"
        )
    # Unreachable states are blank, never a value that could be mistaken for one.
    assert np.isnan(fast[1, rs.box_mask]).all()  # the Penta box cannot hold 50 while open
