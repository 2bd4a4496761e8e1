"""Properties every correct table has, checked on the whole Penta table."""

import numpy as np
import pytest
from reference import turn_values

from pentadice import rules, solver

MAX_POINTS = {
    "ones": 5,
    "twos": 10,
    "threes": 15,
    "fours": 20,
    "fives": 25,
    "sixes": 30,
    "three_of_a_kind": 30,
    "four_of_a_kind": 30,
    "full_house": 25,
    "small_straight": 30,
    "large_straight": 40,
    "chance": 30,
    "penta": 50,
}


def test_reachable_states_are_solved_and_the_rest_blank(penta_solution):
    values = penta_solution.values
    assert penta_solution.states_solved == 536_448
    assert np.isnan(values[1, rules.ALL_BOXES]).all()  # Penta box open: the flag cannot be set
    assert np.isnan(values[0, rules.ALL_BOXES, 1:]).all()  # game start: subtotal 0 only
    only_ones_filled = rules.ALL_BOXES & ~1
    assert not np.isnan(values[0, only_ones_filled, :6]).any() and np.isnan(values[0, only_ones_filled, 6:]).all()
    assert (values[:, 0][~np.isnan(values[:, 0])] == 0).all()


def test_values_bounded_by_the_best_possible_remaining_score(penta_solution):
    values = penta_solution.values
    masks = np.arange(values.shape[1])
    best = np.zeros(len(masks))
    for i, box in enumerate(rules.BOX_IDS):
        best += ((masks >> i) & 1) * (MAX_POINTS[box] + 100)  # each turn may also earn a Penta bonus
    best += 35 * ((masks & rules.UPPER_MASK) != 0)
    ok = ~np.isnan(values)
    assert (values[ok] >= 0).all()
    assert (values <= best[None, :, None])[ok].all()


def test_value_never_decreases_when_a_box_is_reopened(penta_solution):
    values = penta_solution.values
    masks = np.arange(values.shape[1])
    checked = 0
    for b in range(rules.N_BOXES - 1):  # reopening Penta changes the flag's meaning; see below
        closed = masks[(masks >> b) & 1 == 0]
        lo, hi = values[:, closed], values[:, closed | (1 << b)]
        both = ~np.isnan(lo) & ~np.isnan(hi)
        assert (hi[both] >= lo[both] - 1e-9).all(), rules.BOX_IDS[b]
        checked += both.sum()
    closed = masks[(masks >> rules.PENTA) & 1 == 0]
    lo, hi = values[0, closed], values[0, closed | (1 << rules.PENTA)]
    both = ~np.isnan(lo) & ~np.isnan(hi)
    assert (hi[both] >= lo[both] - 1e-9).all()
    assert checked > 1_000_000


def test_a_higher_upper_subtotal_never_hurts(penta_solution):
    # Values count points still to come, and the bonus is paid on reaching 63: compare with it added back.
    values = penta_solution.values.copy()
    values[:, :, 63] += 35
    diff = values[:, :, 1:] - values[:, :, :-1]
    assert (diff[~np.isnan(diff)] >= -1e-9).all()


def test_state_value_is_the_expectation_of_the_best_action_over_the_first_roll(penta_solution):
    rs, values = penta_solution.rules, penta_solution.values

    def V(mask, sub, full):
        return values[full, mask, sub]

    rng = np.random.default_rng(2026)
    states = np.argwhere(~np.isnan(values))
    for full, mask, sub in states[rng.choice(len(states), 40, replace=False)]:
        if mask == 0:
            continue
        start, _ = turn_values(rs, int(mask), int(sub), int(full), V)
        assert values[full, mask, sub] == pytest.approx(start, abs=1e-9)
    start, _ = turn_values(rs, rules.ALL_BOXES, 0, 0, V)
    assert penta_solution.expected_score == pytest.approx(start, abs=1e-9)


def test_same_bits_whatever_the_thread_count(penta_solution):
    import numba

    before = numba.get_num_threads()
    one = solver.solve(penta_solution.rules, threads=1)
    assert one.threads == 1 and numba.get_num_threads() == before  # the cap held for that solve only
    np.testing.assert_array_equal(one.values, penta_solution.values)
    assert one.values.tobytes() == penta_solution.values.tobytes()


def test_thread_count_out_of_range_is_refused():
    import numba

    with pytest.raises(ValueError, match="--threads must be between 1 and"):
        solver.solve(rules.get_rules("penta"), threads=numba.config.NUMBA_NUM_THREADS + 1)
