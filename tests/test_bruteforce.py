"""The fast solver against a slow expectimax over dice positions, on every state of reduced games."""

import numpy as np
import pytest
from reference import brute_force

from pentadice import solver
from pentadice.game import rules

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
    # Yatzy: no Penta box (one flag), boxes that score the sum of the dice they use, straights as sets of faces.
    "yatzy, 4 dice, pairs and kinds": rules.get_rules("yatzy").reduced(
        dice=4, boxes=("twos", "one_pair", "two_pairs", "three_of_a_kind", "four_of_a_kind"), upper_threshold=4
    ),
    "yatzy, 5 dice, 1 roll": rules.get_rules("yatzy").reduced(
        rolls=1, boxes=("sixes", "one_pair", "two_pairs", "full_house", "yatzy"), upper_threshold=12
    ),
    "yatzy, 5 dice, 2 rolls, straights": rules.get_rules("yatzy").reduced(
        rolls=2, boxes=("fives", "small_straight", "large_straight", "full_house", "chance"), upper_threshold=10
    ),
    "yatzy, 5 dice, 3 rolls": rules.get_rules("yatzy").reduced(
        boxes=("ones", "two_pairs", "full_house", "yatzy"), upper_threshold=3
    ),
    # Maxi Yatzy: 6 dice, combinations of all six dice, and smaller ones that more matching dice supply.
    "maxi-yatzy, 6 dice, 3 rolls, houses": rules.get_rules("maxi-yatzy").reduced(
        boxes=("twos", "three_pairs", "super_house", "tower"), upper_threshold=2
    ),
    "maxi-yatzy, 6 dice, 2 rolls": rules.get_rules("maxi-yatzy").reduced(
        rolls=2, boxes=("sixes", "two_pairs", "full_straight", "maxi_yatzy"), upper_threshold=12
    ),
    "maxi-yatzy, 6 dice, 1 roll": rules.get_rules("maxi-yatzy").reduced(
        rolls=1,
        boxes=("threes", "one_pair", "three_of_a_kind", "five_of_a_kind", "full_house", "small_straight"),
        upper_threshold=9,
    ),
    "maxi-yatzy, 5 dice, 2 rolls, straights and kinds": rules.get_rules("maxi-yatzy").reduced(
        dice=5, rolls=2, boxes=("ones", "four_of_a_kind", "large_straight", "chance", "maxi_yatzy"), upper_threshold=2
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
            f"state open={rs.boxes_of(int(mask))} subtotal={sub} penta_scored={full}"
        )
    # Unreachable states are blank, never a value that could be mistaken for one.
    assert fast.shape == rs.table_shape
    if rs.penta_box >= 0:
        assert np.isnan(fast[1, rs.box_mask]).all()  # the Penta box cannot hold 50 while open
    assert np.isnan(fast[0, rs.box_mask, 1:]).all()  # the game starts at subtotal 0
