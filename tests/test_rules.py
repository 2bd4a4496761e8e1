"""Scoring and legality: every rule of the spec, every example in the rules text, every joker path."""

import pytest

from pentadice.game import rules
from pentadice.game.rules import get_rules, legal_scores, upper_bonus_earned

PENTA = get_rules("penta")
ALL = list(PENTA.box_ids)
UPPER = ["ones", "twos", "threes", "fours", "fives", "sixes"]
LOWER = ["three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight", "chance"]


def scores(dice, open_boxes=ALL, full=False, rs=PENTA):
    return legal_scores(rs, dice, open_boxes, full)


@pytest.mark.parametrize(
    ("dice", "expected"),
    [
        # The rules' own example: with 1 1 3 4 6 only a few boxes score.
        ((1, 1, 3, 4, 6), dict(ones=2, threes=3, fours=4, sixes=6, chance=15)),
        ((2, 2, 2, 5, 5), dict(twos=6, fives=10, three_of_a_kind=16, full_house=25, chance=16)),
        ((6, 6, 6, 6, 1), dict(ones=1, sixes=24, three_of_a_kind=25, four_of_a_kind=25, chance=25)),
        ((1, 2, 3, 4, 6), dict(ones=1, twos=2, threes=3, fours=4, sixes=6, small_straight=30, chance=16)),
        ((3, 4, 5, 6, 6), dict(threes=3, fours=4, fives=5, sixes=12, small_straight=30, chance=24)),
        ((2, 3, 4, 5, 5), dict(twos=2, threes=3, fours=4, fives=10, small_straight=30, chance=19)),
        (
            (1, 2, 3, 4, 5),
            dict(ones=1, twos=2, threes=3, fours=4, fives=5, small_straight=30, large_straight=40, chance=15),
        ),
        (
            (6, 5, 4, 3, 2),
            dict(twos=2, threes=3, fours=4, fives=5, sixes=6, small_straight=30, large_straight=40, chance=20),
        ),
        ((1, 2, 3, 5, 6), dict(ones=1, twos=2, threes=3, fives=5, sixes=6, chance=17)),  # no four in a row
        # Five of a kind with the Penta box open: Penta 50; neither a full house nor a straight.
        ((3, 3, 3, 3, 3), dict(threes=15, three_of_a_kind=15, four_of_a_kind=15, penta=50, chance=15)),
    ],
)
def test_normal_scores_on_an_empty_sheet(dice, expected):
    legal, bonus = scores(dice)
    assert legal == {box: expected.get(box, 0) for box in ALL}
    assert bonus == 0


def test_any_open_box_may_be_sacrificed_at_zero():
    legal, _ = scores((1, 1, 3, 4, 6), open_boxes=["full_house", "large_straight", "twos"])
    assert legal == {"twos": 0, "full_house": 0, "large_straight": 0}


def test_filled_boxes_take_nothing():
    legal, _ = scores((2, 2, 2, 5, 5), open_boxes=["ones", "chance"])
    assert set(legal) == {"ones", "chance"}


def test_joker_upper_box_of_the_face_is_mandatory():
    # "With five 4s, only the Fours box is allowed: 20 points, plus 100 bonus."
    legal, bonus = scores((4,) * 5, open_boxes=[b for b in ALL if b != "penta"], full=True)
    assert legal == {"fours": 20}
    assert bonus == 100


def test_joker_lower_box_when_the_face_box_is_filled():
    open_boxes = [b for b in ALL if b not in ("penta", "fours")]
    legal, bonus = scores((4,) * 5, open_boxes=open_boxes, full=True)
    assert legal == dict(
        three_of_a_kind=20, four_of_a_kind=20, full_house=25, small_straight=30, large_straight=40, chance=20
    )
    assert bonus == 100


def test_joker_lower_box_only_the_open_ones():
    legal, bonus = scores((4,) * 5, open_boxes=["ones", "large_straight"], full=True)
    assert legal == {"large_straight": 40}
    assert bonus == 100


def test_joker_upper_box_at_zero_when_the_lower_section_is_full():
    # "here Aces, 0 points, the 100 bonus still being earned."
    legal, bonus = scores((4,) * 5, open_boxes=["ones", "sixes"], full=True)
    assert legal == {"ones": 0, "sixes": 0}
    assert bonus == 100


def test_penta_sacrificed_at_zero_makes_five_of_a_kind_an_ordinary_roll():
    open_boxes = [b for b in ALL if b != "penta"]
    legal, bonus = scores((4,) * 5, open_boxes=open_boxes, full=False)
    assert bonus == 0
    assert legal["large_straight"] == 0 and legal["full_house"] == 0 and legal["small_straight"] == 0
    assert legal["fours"] == 20 and legal["ones"] == 0 and legal["chance"] == 20
    assert set(legal) == set(open_boxes)  # no forced placement


def test_no_bonus_without_five_of_a_kind():
    legal, bonus = scores((4, 4, 4, 4, 2), open_boxes=["fours", "chance"], full=True)
    assert bonus == 0 and legal == {"fours": 16, "chance": 18}


@pytest.mark.parametrize(
    ("subtotal", "added", "bonus"),
    [(62, 3, 35), (60, 3, 35), (60, 2, 0), (0, 30, 0), (63, 5, 0), (50, 24, 35), (62, 0, 0)],
)
def test_upper_bonus_35_at_63(subtotal, added, bonus):
    assert upper_bonus_earned(PENTA, subtotal, added) == bonus


# The published Yahtzee conventions, through the same function.


def test_free_joker_applies_once_the_face_box_is_filled_even_with_the_box_at_zero():
    rs = get_rules("yahtzee")
    open_boxes = ["ones", "full_house", "large_straight", "chance"]
    legal, bonus = scores((4,) * 5, open_boxes=open_boxes, full=False, rs=rs)
    assert legal == {"ones": 0, "full_house": 25, "large_straight": 40, "chance": 20}  # placement is free
    assert bonus == 0  # the box holds 0: no +100


def test_free_joker_not_while_the_face_box_is_open():
    rs = get_rules("yahtzee")
    legal, bonus = scores((4,) * 5, open_boxes=["fours", "full_house", "chance"], full=True, rs=rs)
    assert legal == {"fours": 20, "full_house": 0, "chance": 20}
    assert bonus == 100


def test_forced_joker_also_with_the_box_at_zero():
    rs = get_rules("yahtzee+forced-joker")
    legal, bonus = scores((4,) * 5, open_boxes=["fours", "full_house", "chance"], full=False, rs=rs)
    assert legal == {"fours": 20} and bonus == 0
    legal, bonus = scores((4,) * 5, open_boxes=["ones", "full_house"], full=False, rs=rs)
    assert legal == {"full_house": 25} and bonus == 0


def test_no_joker_keeps_the_bonus_and_free_placement():
    rs = get_rules("yahtzee+no-joker")
    legal, bonus = scores((4,) * 5, open_boxes=["fours", "full_house", "chance"], full=True, rs=rs)
    assert legal == {"fours": 20, "full_house": 0, "chance": 20} and bonus == 100


def test_no_bonus_has_neither():
    rs = get_rules("yahtzee+no-bonus")
    legal, bonus = scores((4,) * 5, open_boxes=["ones", "full_house"], full=True, rs=rs)
    assert legal == {"ones": 0, "full_house": 0} and bonus == 0


def test_registry_lookup_and_unknown_names():
    assert get_rules("penta") is rules.REGISTRY["penta"]
    assert set(rules.REGISTRY) >= {"penta", "yahtzee", "yahtzee+forced-joker", "yahtzee+no-joker", "yahtzee+no-bonus"}
    with pytest.raises(rules.UnknownRules, match="unknown rule set 'kniffel'"):
        get_rules("kniffel")


def test_box_ids_are_the_published_ones():
    penta = "ones twos threes fours fives sixes three_of_a_kind four_of_a_kind full_house small_straight large_straight"
    for name in ("penta", "yahtzee", "yahtzee+forced-joker", "yahtzee+no-joker", "yahtzee+no-bonus", "kiriki"):
        assert " ".join(get_rules(name).box_ids) == penta + " chance penta"
    upper = "ones twos threes fours fives sixes one_pair two_pairs "
    assert " ".join(get_rules("yatzy").box_ids) == (
        upper + "three_of_a_kind four_of_a_kind small_straight large_straight full_house chance yatzy"
    )
    assert " ".join(get_rules("maxi-yatzy").box_ids) == (
        upper + "three_pairs three_of_a_kind four_of_a_kind five_of_a_kind small_straight large_straight "
        "full_straight full_house super_house tower chance maxi_yatzy"
    )


def test_a_rule_set_is_its_definition():
    yatzy, maxi = get_rules("yatzy"), get_rules("maxi-yatzy")
    assert (yatzy.dice, yatzy.n_boxes, yatzy.upper_threshold, yatzy.upper_bonus) == (5, 15, 63, 50)
    assert (maxi.dice, maxi.n_boxes, maxi.upper_threshold, maxi.upper_bonus) == (6, 20, 75, 50)
    assert yatzy.table_shape == (1, 1 << 15, 64) and maxi.table_shape == (1, 1 << 20, 76)
    assert PENTA.table_shape == (2, 1 << 13, 64) and (yatzy.lanes, maxi.lanes) == (64, 80)
    assert yatzy.penta_box == maxi.penta_box == -1 and PENTA.penta_box == 12 and PENTA.penta_id == "penta"
    assert maxi.mask_of(["ones", "maxi_yatzy"]) == 1 | 1 << 19 and maxi.boxes_of(1 << 6) == ["one_pair"]
    with pytest.raises(ValueError, match="unknown box id 'penta'"):
        yatzy.mask_of(["penta"])
    with pytest.raises(rules.UnknownBox, match="has no Penta box"):
        yatzy.parse_box("penta")
    assert yatzy.parse_box("Two pairs") == "two_pairs" and maxi.parse_box("villa") == "super_house"


@pytest.mark.parametrize(
    "change",
    [
        {"dice": 7},
        {"dice": 0},
        {"sheet": (rules.Box("ones", rules.K_FACE, 2),)},
        {"sheet": (rules.Box("chance", rules.K_FACE, 1),)},
        {"sheet": (rules.Box("chance", rules.K_CHANCE), rules.Box("chance", rules.K_CHANCE))},
        {"sheet": (rules.Box("penta", rules.K_PENTA), rules.Box("yatzy", rules.K_PENTA))},
        {"sheet": (rules.Box("no_such_box", rules.K_CHANCE),)},
        {"sheet": (*rules.MAXI_YATZY_SHEET, rules.Box("penta", rules.K_PENTA, points=50))},  # 21 boxes
    ],
)
def test_a_sheet_that_is_not_a_game_is_refused(change):
    with pytest.raises(ValueError):
        rules.RuleSet("x", "X", boxes=("chance",) if "sheet" in change else (), **change)


@pytest.mark.parametrize("bad", [(1, 2, 3, 4), (1, 2, 3, 4, 5, 6), (0, 1, 2, 3, 4), (1, 2, 3, 4, 7)])
def test_bad_dice_are_refused(bad):
    with pytest.raises(ValueError):
        scores(bad)


def test_reduced_games_score_all_same_as_penta():
    rs = PENTA.reduced(dice=3, boxes=("ones", "threes", "full_house", "penta"))
    legal, bonus = legal_scores(rs, (3, 3, 3), ["ones", "threes", "full_house", "penta"], False)
    assert legal == {"ones": 0, "threes": 9, "full_house": 0, "penta": 50} and bonus == 0
    legal, bonus = legal_scores(rs, (1, 1, 1), ["threes", "full_house"], True)
    assert legal == {"full_house": 25} and bonus == 100


@pytest.mark.parametrize("name", list(rules.REGISTRY))
def test_score_table_matches_the_rules_in_every_state_for_hands_marked_state_free(name):
    import numpy as np

    from pentadice.game import dice

    rs = get_rules(name)
    t = dice.tables(rs.dice)
    table = rules.score_table(rs)
    p = rs.params()
    n = rs.n_boxes
    points = np.empty(n, dtype=np.int64)
    rng = np.random.default_rng(1)
    masks = rng.integers(1, 1 << n, size=60)
    for h in range(t.n_hands):
        free = table[h, n] == 1
        assert free == (t.counts[h].max() < rs.dice or rs.penta_box < 0)
        if not free:
            continue
        for mask in masks:
            for full in (0, 1):
                bonus = rules.score_options(p, t.counts[h], int(mask), full, points)
                expected = [table[h, b] if (mask >> b) & 1 else -1 for b in range(n)]
                assert bonus == 0 and list(points) == expected
        for b, box in enumerate(rs.sheet):  # the successor row of each box for these points (see turn.py)
            row = p[rules.P_BOX_DATA + rules.BOX_FIELDS * b + rules.F_ROW]
            if box.kind == rules.K_FACE:
                assert table[h, n + 1 + b] == row + t.counts[h][box.a - 1]
            elif box.kind == rules.K_PENTA:
                assert table[h, n + 1 + b] == row + (table[h, b] > 0)
            else:
                assert table[h, n + 1 + b] == row
