"""Properties every correct table has, checked on whole tables of the registered rule sets (the Yahtzee
conventions and the full Maxi Yatzy, 640 MB, among the slow tests) and on a Maxi Yatzy of eleven of its boxes."""

import functools

import numpy as np
import pytest
import reduced_games
from reference import turn_values
from solutions import solved

from pentadice import solver
from pentadice.game import rules

FAST = ("penta", "kiriki", "yatzy", "maxi-yatzy, 11 boxes")
SLOW = tuple(name for name in rules.REGISTRY if name not in FAST)
CASES = [*FAST, *(pytest.param(name, marks=pytest.mark.slow) for name in SLOW)]

MAX_POINTS = {  # Penta's boxes, from the rules text: the most each can score
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


def small_maxi() -> rules.RuleSet:
    """Maxi Yatzy (6 dice, threshold 75, its scoring) on a sheet of eleven of its boxes: a table of 2**11 masks."""
    return reduced_games.GAMES["maxi-yatzy, 11 boxes"]


def chunks(a: np.ndarray, size: int = 1 << 16) -> list[slice]:
    """Slices of ``size`` masks (a table's second axis, or a vector of masks): whole-table temporaries of Maxi
    Yatzy would take gigabytes."""
    n = a.shape[1] if a.ndim == 3 else len(a)
    return [slice(lo, lo + size) for lo in range(0, n, size)]


@functools.cache
def solution(name: str) -> solver.Solution:
    if name == "maxi-yatzy, 11 boxes":
        return solver.solve(small_maxi())
    return solved(name)


def test_penta_reachable_state_count(penta_solution):
    assert penta_solution.states_solved == 536_448
    assert penta_solution.values.shape == (2, 2**13, 64)


@pytest.mark.parametrize("name", CASES)
def test_reachable_states_are_solved_and_the_rest_blank(name):
    rs, values = solution(name).rules, solution(name).values
    assert values.shape == rs.table_shape
    start = rs.box_mask
    if rs.n_flags == 2:
        assert np.isnan(values[1, start]).all()  # Penta box open: the flag cannot be set
    assert np.isnan(values[0, start, 1:]).all() and not np.isnan(values[0, start, 0])  # game start: subtotal 0
    # One upper box filled: the subtotals its face's dice can give, capped at the threshold, and no other.
    for face in range(1, 7):
        box = rs.face_box(face)
        if box is not None:
            only = start & ~rs.mask_of([box])
            can = {min(face * c, rs.upper_threshold) for c in range(rs.dice + 1)}
            assert set(np.flatnonzero(~np.isnan(values[0, only]))) == can, box
    lower = next(b for b in rs.box_ids if rs.face_box(1) != b and b not in rs.boxes_of(rs.upper_mask))
    only = start & ~rs.mask_of([lower])
    assert set(np.flatnonzero(~np.isnan(values[0, only]))) == {0}  # no upper box filled yet
    over = values[:, 0][~np.isnan(values[:, 0])]
    assert len(over) and (over == 0).all()  # game over: nothing more to come


@pytest.mark.parametrize("name", [c for c in CASES if getattr(c, "values", (c,))[0] != "kiriki"])
def test_values_bounded_by_the_best_possible_remaining_score(name):
    # (Not Kiriki: each further Kiriki gives the game a turn more, so no sum of the boxes bounds it.)
    rs, values = solution(name).rules, solution(name).values
    if rs.sheet == rules.PENTA_SHEET:
        most = np.array([MAX_POINTS[b] for b in rs.box_ids])
    else:
        most = rules.score_table(rs)[:, : rs.n_boxes].max(axis=0)  # the most each box scores on any hand
    masks = np.arange(values.shape[1])
    best = np.zeros(len(masks))
    for i in range(rs.n_boxes):
        best += ((masks >> i) & 1) * (most[i] + rs.params()[rules.P_PENTA_BONUS])  # and a bonus each turn
    best += rs.upper_bonus * ((masks & rs.upper_mask) != 0)
    for part in chunks(values):  # (Maxi Yatzy's table is 640 MB: a part at a time)
        v = values[:, part]
        ok = ~np.isnan(v)
        assert (v[ok] >= 0).all()
        assert (v <= best[None, part, None])[ok].all()


@pytest.mark.parametrize("name", CASES)
def test_value_never_decreases_when_a_box_is_reopened(name):
    rs, values = solution(name).rules, solution(name).values
    masks = np.arange(values.shape[1])
    checked = 0
    for b in range(rs.n_boxes):
        closed = masks[(masks >> b) & 1 == 0]
        flags = [0] if b == rs.penta_box else range(rs.n_flags)  # reopening Penta changes the flag's meaning
        for f in flags:
            for part in chunks(closed):
                lo, hi = values[f, closed[part]], values[f, closed[part] | (1 << b)]
                both = ~np.isnan(lo) & ~np.isnan(hi)
                assert (hi[both] >= lo[both] - 1e-9).all(), rs.box_ids[b]
                checked += both.sum()
    assert checked > np.count_nonzero(~np.isnan(values))  # each state compared with several others


@pytest.mark.parametrize("name", CASES)
def test_a_higher_upper_subtotal_never_hurts(name):
    # Values count points still to come, and the bonus is paid on reaching the threshold: compare with it added.
    rs, values = solution(name).rules, solution(name).values
    compared = 0
    for part in chunks(values):
        v = values[:, part].copy()
        v[:, :, rs.upper_threshold] += rs.upper_bonus
        diff = v[:, :, 1:] - v[:, :, :-1]
        ok = ~np.isnan(diff)
        assert (diff[ok] >= -1e-9).all()
        compared += ok.sum()
    assert compared > 0


@pytest.mark.parametrize("name", CASES)
def test_state_value_is_the_expectation_of_the_best_action_over_the_first_roll(name):
    rs, values = solution(name).rules, solution(name).values

    def V(mask, sub, full):
        return values[full, mask, sub]

    rng = np.random.default_rng(2026)
    checked = 0
    while checked < 40:  # random reachable states (drawn from the whole table: listing them takes a gigabyte)
        full, mask, sub = np.unravel_index(int(rng.integers(values.size)), values.shape)
        if mask == 0 or np.isnan(values[full, mask, sub]):
            continue
        checked += 1
        start, _ = turn_values(rs, int(mask), int(sub), int(full), V)
        assert values[full, mask, sub] == pytest.approx(start, abs=1e-9)
    start, _ = turn_values(rs, rs.box_mask, 0, 0, V)
    assert solution(name).expected_score == pytest.approx(start, abs=1e-9)


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
