"""Scandinavian Yatzy and Maxi Yatzy (../shared/rules/yatzy-family.md): every box on every roll against an
independent scorer written from the spec's words, and each box's examples by hand."""

import itertools

import numpy as np
import pytest
from reference import family_points

from pentadice.game import dice, rules

YATZY = rules.get_rules("yatzy")
MAXI = rules.get_rules("maxi-yatzy")
UPPER = ("ones", "twos", "threes", "fours", "fives", "sixes")
# The box ids as the spec's tables list them.
SPEC_BOXES = {
    "yatzy": (
        *UPPER,
        *("one_pair", "two_pairs", "three_of_a_kind", "four_of_a_kind", "small_straight", "large_straight"),
        *("full_house", "chance", "yatzy"),
    ),
    "maxi-yatzy": (
        *UPPER,
        *("one_pair", "two_pairs", "three_pairs", "three_of_a_kind", "four_of_a_kind", "five_of_a_kind"),
        *("small_straight", "large_straight", "full_straight", "full_house", "super_house", "tower", "chance"),
        "maxi_yatzy",
    ),
}


def test_the_sheets_dice_and_bonus_are_the_specs():
    assert YATZY.box_ids == SPEC_BOXES["yatzy"] and YATZY.boxes == YATZY.box_ids
    assert MAXI.box_ids == SPEC_BOXES["maxi-yatzy"] and MAXI.boxes == MAXI.box_ids
    assert (YATZY.dice, YATZY.rolls, YATZY.n_boxes, YATZY.upper_threshold, YATZY.upper_bonus) == (5, 3, 15, 63, 50)
    assert (MAXI.dice, MAXI.rolls, MAXI.n_boxes, MAXI.upper_threshold, MAXI.upper_bonus) == (6, 3, 20, 75, 50)
    for rs in (YATZY, MAXI):
        assert rs.penta_box == -1 and rs.penta_id is None and rs.penta_points == 0 and rs.n_flags == 1
        assert rs.boxes_of(rs.upper_mask) == list(UPPER)
        assert [rs.face_box(f) for f in range(1, 7)] == list(UPPER)
    assert YATZY.all_alike_box == "yatzy" and MAXI.all_alike_box == "maxi_yatzy"
    assert YATZY.table_shape == (1, 2**15, 64) and MAXI.table_shape == (1, 2**20, 76)
    assert (YATZY.lanes, MAXI.lanes) == (64, 80)


# ------------------------------------------------------------------------------------------------------------
# Every box on every roll, against reference.family_points (subsets of the dice, from the spec's words).


def test_every_yatzy_box_on_every_ordered_roll():
    for roll in itertools.product(range(1, 7), repeat=5):
        legal, bonus = rules.legal_scores(YATZY, roll, YATZY.box_ids, False)
        assert legal == {b: family_points(b, roll) for b in YATZY.box_ids}, roll
        assert bonus == 0


def test_every_maxi_yatzy_box_on_every_roll_of_six_dice():
    for roll in itertools.combinations_with_replacement(range(1, 7), 6):
        expected = {b: family_points(b, roll) for b in MAXI.box_ids}
        for order in {roll, roll[::-1], roll[3:] + roll[:3]}:  # the order of the dice does not matter
            legal, bonus = rules.legal_scores(MAXI, order, MAXI.box_ids, False)
            assert legal == expected, order
            assert bonus == 0


@pytest.mark.parametrize("rs", [YATZY, MAXI], ids=lambda rs: rs.name)
def test_score_table_holds_every_hands_points_and_successor_rows(rs):
    t = dice.tables(rs.dice)
    table = rules.score_table(rs)
    n = rs.n_boxes
    assert table.shape == (t.n_hands, 2 * n + 1)
    rows = table[:, n + 1 :]
    for h in range(t.n_hands):
        hand = t.keep_faces[h]
        assert list(table[h, :n]) == [family_points(b, hand) for b in rs.box_ids], hand
        assert table[h, n] == 1  # no Penta box: every hand's points hold in every state
    # An upper box's successor row counts the dice of its face on from the row of none; every other box has one
    # row whatever the hand; no two boxes share a row, and the rows number the turn's successors.
    seen = set()
    for b, box in enumerate(rs.box_ids):
        if box in UPPER:
            face = UPPER.index(box) + 1
            count = t.counts[: t.n_hands, face - 1]
            base = rows[count == 0, b]
            assert (base == base[0]).all()
            np.testing.assert_array_equal(rows[:, b], base[0] + count)
            own = set(range(base[0], base[0] + rs.dice + 1))
        else:
            assert (rows[:, b] == rows[0, b]).all()
            own = {int(rows[0, b])}
        assert not own & seen
        seen |= own
    assert seen == set(range(rs.n_rows))


# ------------------------------------------------------------------------------------------------------------
# Each box by hand: the spec's examples and more.

EXAMPLES = {
    "yatzy": {
        "ones": [((1, 1, 2, 3, 1), 3), ((2, 3, 4, 5, 6), 0), ((1, 1, 1, 1, 1), 5)],
        "twos": [((2, 2, 2, 3, 1), 6), ((1, 3, 4, 5, 6), 0)],
        "threes": [((3, 3, 5, 5, 5), 6), ((1, 2, 4, 5, 6), 0)],
        "fours": [((4, 4, 4, 4, 1), 16), ((1, 2, 3, 5, 6), 0)],
        "fives": [((3, 3, 5, 5, 5), 15), ((5, 5, 5, 5, 5), 25)],
        "sixes": [((6, 6, 6, 6, 2), 24), ((1, 2, 3, 4, 5), 0)],
        # The highest pair: the sum of its two dice. Three or more alike supply a pair.
        "one_pair": [((3, 3, 5, 5, 5), 10), ((1, 1, 2, 6, 6), 12), ((4, 4, 4, 4, 4), 8), ((1, 2, 3, 4, 6), 0)],
        # Two pairs of different faces; four alike are not two pairs, five alike neither.
        "two_pairs": [
            ((3, 3, 5, 5, 5), 16),
            ((2, 2, 6, 6, 1), 16),
            ((4, 4, 4, 4, 1), 0),
            ((4, 4, 4, 4, 2), 0),
            ((6, 6, 6, 6, 6), 0),
            ((1, 1, 2, 3, 4), 0),
        ],
        "three_of_a_kind": [((3, 3, 5, 5, 5), 15), ((6, 6, 6, 6, 1), 18), ((2, 2, 2, 2, 2), 6), ((1, 1, 2, 2, 3), 0)],
        "four_of_a_kind": [((6, 6, 6, 6, 1), 24), ((5, 5, 5, 5, 5), 20), ((3, 3, 5, 5, 5), 0)],
        # Straights are sets of faces, 15 and 20 points (the order of the dice does not matter).
        "small_straight": [((5, 3, 1, 4, 2), 15), ((2, 3, 4, 5, 6), 0), ((1, 2, 3, 4, 4), 0)],
        "large_straight": [((6, 2, 5, 3, 4), 20), ((1, 2, 3, 4, 5), 0), ((2, 3, 4, 5, 5), 0)],
        # Three of one face and two of another: the sum of all five; five alike are no full house.
        "full_house": [((3, 3, 5, 5, 5), 21), ((6, 6, 6, 1, 1), 20), ((4, 4, 4, 4, 4), 0), ((4, 4, 4, 4, 1), 0)],
        "chance": [((3, 3, 5, 5, 5), 21), ((1, 1, 1, 1, 1), 5), ((6, 6, 6, 6, 6), 30)],
        "yatzy": [((2, 2, 2, 2, 2), 50), ((6, 6, 6, 6, 6), 50), ((6, 6, 6, 6, 5), 0)],
    },
    "maxi-yatzy": {
        "ones": [((1, 1, 1, 2, 3, 4), 3), ((2, 3, 4, 5, 6, 6), 0), ((1,) * 6, 6)],
        "twos": [((2, 2, 1, 3, 4, 5), 4), ((1, 3, 4, 5, 6, 6), 0)],
        "threes": [((3, 3, 3, 3, 3, 3), 18), ((1, 2, 4, 5, 6, 6), 0)],
        "fours": [((4, 4, 4, 1, 2, 3), 12), ((1, 2, 3, 5, 6, 6), 0)],
        "fives": [((5, 5, 5, 5, 5, 1), 25), ((1, 2, 3, 4, 6, 6), 0)],
        "sixes": [((6, 6, 6, 6, 1, 2), 24), ((1, 2, 3, 4, 5, 5), 0)],
        "one_pair": [((3, 3, 5, 5, 5, 1), 10), ((1, 1, 2, 2, 6, 6), 12), ((4,) * 6, 8), ((1, 2, 3, 4, 5, 6), 0)],
        # The two highest pairs of different faces; three pairs give the two highest.
        "two_pairs": [
            ((3, 3, 5, 5, 5, 1), 16),
            ((1, 1, 2, 2, 6, 6), 16),
            ((4, 4, 4, 4, 1, 2), 0),
            ((4, 4, 4, 4, 2, 2), 12),
            ((5, 5, 5, 6, 6, 6), 22),
            ((6,) * 6, 0),
        ],
        # Three pairs need three different faces: four alike and a pair are not three pairs.
        "three_pairs": [
            ((1, 1, 2, 2, 6, 6), 18),
            ((3, 3, 4, 4, 5, 5), 24),
            ((4, 4, 4, 4, 2, 2), 0),
            ((5, 5, 5, 6, 6, 6), 0),
            ((6,) * 6, 0),
            ((1, 1, 2, 2, 3, 4), 0),
        ],
        # The highest face with three alike; more alike supply it (four sixes give 18).
        "three_of_a_kind": [((6, 6, 6, 6, 1, 2), 18), ((2, 2, 2, 5, 5, 5), 15), ((3,) * 6, 9), ((1, 1, 2, 2, 3, 3), 0)],
        "four_of_a_kind": [((6, 6, 6, 6, 1, 2), 24), ((3,) * 6, 12), ((2, 2, 2, 5, 5, 5), 0)],
        "five_of_a_kind": [((5, 5, 5, 5, 5, 1), 25), ((2,) * 6, 10), ((4, 4, 4, 4, 1, 1), 0)],
        # Straights among the dice, as sets of faces.
        "small_straight": [((1, 2, 3, 4, 5, 5), 15), ((1, 2, 3, 4, 5, 6), 15), ((2, 3, 4, 5, 6, 6), 0)],
        "large_straight": [((2, 3, 4, 5, 6, 1), 20), ((6, 5, 4, 3, 2, 2), 20), ((1, 2, 3, 4, 5, 5), 0)],
        "full_straight": [((6, 5, 4, 3, 2, 1), 21), ((1, 2, 3, 4, 5, 5), 0), ((2, 3, 4, 5, 6, 6), 0)],
        # Three of one face and two of another, the sixth die ignored: the best such five dice. Four of a kind
        # and a pair give one from three of the four and the pair; two triples give one too.
        "full_house": [
            ((3, 3, 5, 5, 5, 1), 21),
            ((6, 6, 6, 6, 2, 2), 22),
            ((2, 2, 2, 2, 6, 6), 18),
            ((5, 5, 5, 6, 6, 6), 28),
            ((1, 1, 1, 2, 2, 6), 7),
            ((6,) * 6, 0),
            ((4, 4, 4, 4, 4, 1), 0),
            ((1, 1, 2, 2, 3, 3), 0),
        ],
        # Two triples of different faces; six alike are not a super house.
        "super_house": [((5, 5, 5, 6, 6, 6), 33), ((1, 1, 1, 2, 2, 2), 9), ((6,) * 6, 0), ((4, 4, 4, 4, 2, 2), 0)],
        # Four of one face and two of another; six alike are not a tower.
        "tower": [((4, 4, 4, 4, 2, 2), 20), ((1, 1, 6, 6, 6, 6), 26), ((6,) * 6, 0), ((5, 5, 5, 6, 6, 6), 0)],
        "chance": [((1, 2, 3, 4, 5, 6), 21), ((6,) * 6, 36)],
        "maxi_yatzy": [((6,) * 6, 100), ((1,) * 6, 100), ((5, 5, 5, 5, 5, 6), 0)],
    },
}


def test_every_box_has_examples():
    for name, boxes in SPEC_BOXES.items():
        assert set(EXAMPLES[name]) == set(boxes)


@pytest.mark.parametrize(("name", "box"), [(name, box) for name, boxes in SPEC_BOXES.items() for box in boxes])
def test_box_scores_the_spec_examples(name, box):
    rs = rules.get_rules(name)
    for roll, points in EXAMPLES[name][box]:
        legal, bonus = rules.legal_scores(rs, roll, rs.box_ids, False)
        assert legal[box] == points, roll
        assert bonus == 0
        alone, _ = rules.legal_scores(rs, roll, [box], False)  # the points do not depend on the other boxes
        assert alone == {box: points}
        assert family_points(box, roll) == points  # the independent scorer reads the spec the same way


def test_the_spec_worked_example_3_3_5_5_5():
    legal, _ = rules.legal_scores(YATZY, (3, 3, 5, 5, 5), YATZY.box_ids, False)
    assert (legal["one_pair"], legal["two_pairs"], legal["three_of_a_kind"], legal["full_house"]) == (10, 16, 15, 21)


@pytest.mark.parametrize("rs", [YATZY, MAXI], ids=lambda rs: rs.name)
def test_any_open_box_may_take_the_roll_at_zero(rs):
    rng = np.random.default_rng(15)
    for _ in range(300):
        roll = tuple(int(d) for d in rng.integers(1, 7, rs.dice))
        open_boxes = [b for b in rs.box_ids if rng.random() < 0.4] or [rs.box_ids[-1]]
        legal, _ = rules.legal_scores(rs, roll, open_boxes, False)
        assert set(legal) == set(open_boxes)  # every open box, scoring or not; no filled box
    legal, _ = rules.legal_scores(rs, (6,) * rs.dice, ["ones", "small_straight"], False)
    assert legal == {"ones": 0, "small_straight": 0}  # a sacrifice even when another box would score


@pytest.mark.parametrize("rs", [YATZY, MAXI], ids=lambda rs: rs.name)
def test_no_joker_and_no_bonus_for_a_second_all_alike(rs):
    alike = rs.all_alike_box
    others = [b for b in rs.box_ids if b != alike]
    for face in range(1, 7):
        roll = (face,) * rs.dice
        for held in (False, True):  # whatever the state says of the filled box, nothing changes
            legal, bonus = rules.legal_scores(rs, roll, others, held)
            assert bonus == 0
            assert legal == {b: family_points(b, roll) for b in others}
            assert legal["full_house"] == 0 and legal["small_straight"] == 0 and legal["large_straight"] == 0
        own = rs.face_box(face)
        legal, _ = rules.legal_scores(rs, roll, [b for b in others if b != own], True)
        assert legal[rs.face_box(1 if face != 1 else 2)] == 0  # free placement: another face's box takes 0
    assert rs.params()[rules.P_PENTA_BONUS] == 0 and rs.params()[rules.P_JOKER] == rules.JOKER_NONE
    with pytest.raises(rules.UnknownBox, match="no bonus"):
        rs.parse_box("bonus", bonus=True)


@pytest.mark.parametrize(("rs", "threshold"), [(YATZY, 63), (MAXI, 75)], ids=["yatzy", "maxi-yatzy"])
def test_upper_bonus_50_once_the_upper_boxes_reach_the_threshold(rs, threshold):
    assert rules.upper_bonus_earned(rs, threshold - 3, 3) == 50
    assert rules.upper_bonus_earned(rs, threshold - 3, 2) == 0
    assert rules.upper_bonus_earned(rs, 0, threshold) == 50
    assert rules.upper_bonus_earned(rs, threshold - 1, 30) == 50
    assert rules.upper_bonus_earned(rs, threshold, 30) == 0  # paid once
    assert rules.upper_bonus_earned(rs, threshold - 10, 0) == 0
    if rs is MAXI:
        assert rules.upper_bonus_earned(rs, 60, 12) == 0  # 72: 63 is not Maxi Yatzy's threshold
