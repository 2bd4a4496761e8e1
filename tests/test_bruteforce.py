"""The fast solver against a slow expectimax over dice positions, on every state of reduced games."""

import numpy as np
import pytest
import reduced_games
from reference import brute_force

from pentadice import solver

# Each game exercises other rules: the joker paths need all dice alike, which small dice counts make common.
GAMES = reduced_games.pick(
    *reduced_games.JOKERS,
    "kiriki, 2 dice",
    "kiriki, 2 dice, 2 rolls, lower boxes",
    "yatzy, 4 dice, pairs and kinds",
    "yatzy, 5 dice, 1 roll",
    "yatzy, 5 dice, 2 rolls, straights",
    "yatzy, 5 dice, 3 rolls",
    "maxi-yatzy, 6 dice, 3 rolls, houses",
    "maxi-yatzy, 6 dice, 2 rolls, straight",
    "maxi-yatzy, 6 dice, 1 roll",
    "maxi-yatzy, 5 dice, 2 rolls, straights and kinds",
)


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
