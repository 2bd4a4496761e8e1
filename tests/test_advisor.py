"""The advisor: options, values, the computer's box choice, and its consistency with the table."""

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from sheets import random_sheet

from pentadice.advisor import NO_SCORE_MESSAGE, Advisor, Option, SituationError
from pentadice.advisor.advice import joker_note
from pentadice.game import dice, rules
from pentadice.game.moves import Keep, Score
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation

PENTA = rules.get_rules("penta")


def sheet(text=""):
    return Sheet.parse(text)


def test_table_value_is_the_expectation_of_the_best_option_over_the_first_roll(penta_advisor):
    rng = np.random.default_rng(7)
    t = dice.tables(5)
    hands = [t.keep_faces[h] for h in range(t.n_hands)]
    probability = t.weight / 6**5
    for filled in [0, 1, 3, 6, 9, 12, 12]:
        s = random_sheet(PENTA, rng, filled)
        situations = [penta_advisor.situation(h, 2, s) for h in hands]
        best = np.array([a.best.value for a in penta_advisor.advise_many(situations)])
        start = s.score(PENTA) + penta_advisor.table.value(
            s.open_mask(PENTA), s.upper_subtotal(PENTA), s.penta_scored(PENTA)
        )
        assert probability @ best == pytest.approx(start, abs=1e-9), s


def test_score_options_are_points_plus_the_next_state_value(penta_advisor):
    rng = np.random.default_rng(11)
    for _ in range(30):
        s = random_sheet(PENTA, rng, int(rng.integers(0, 12)))
        roll = tuple(int(x) for x in rng.integers(1, 7, 5))
        advice = penta_advisor.advise(penta_advisor.situation(roll, 0, s))
        legal, bonus = rules.legal_scores(PENTA, roll, PENTA.boxes_of(s.open_mask(PENTA)), s.penta_scored(PENTA))
        assert {o.box for o in advice.options} == set(legal)
        for o in advice.options:
            b = PENTA.box_index[o.box]
            after = Sheet({**s.boxes, o.box: o.points}, s.penta_bonus + bonus)
            rest = 0.0
            if len(after.boxes) < 13:
                rest = penta_advisor.table.value(
                    after.open_mask(PENTA), after.upper_subtotal(PENTA), after.penta_scored(PENTA)
                )
            assert o.points == legal[o.box] and o.penta_bonus == bonus
            assert o.value == pytest.approx(after.score(PENTA) + rest, abs=1e-9), (s, roll, o)
            assert o.upper_bonus == (35 if b < 6 and s.upper_total < 63 <= s.upper_total + o.points else 0)


def test_best_box_is_always_legal_and_maximal(penta_advisor):
    rng = np.random.default_rng(3)
    for _ in range(50):
        s = random_sheet(PENTA, rng, int(rng.integers(0, 12)))
        roll = tuple(int(x) for x in rng.integers(1, 7, 5))
        situation = penta_advisor.situation(roll, int(rng.integers(0, 3)), s)
        advice = penta_advisor.advise(situation)
        legal, _ = rules.legal_scores(PENTA, roll, PENTA.boxes_of(s.open_mask(PENTA)), s.penta_scored(PENTA))
        box = penta_advisor.best_box(situation)
        assert box.box in legal
        assert box.value == max(o.value for o in advice.options if o.action == "score")
        assert advice.best.value == max(o.value for o in advice.options)
        assert [o.value for o in advice.options] == sorted((o.value for o in advice.options), reverse=True)
        assert advice.best.loss == 0 and all(
            o.loss == pytest.approx(advice.best.value - o.value) for o in advice.options
        )


@pytest.mark.parametrize(
    ("roll", "count"), [((1, 2, 3, 4, 5), 31), ((4, 4, 4, 4, 4), 5), ((1, 1, 3, 4, 6), 23), ((2, 2, 5, 5, 5), 11)]
)
def test_keeps_are_the_distinct_proper_sub_multisets(penta_advisor, roll, count):
    advice = penta_advisor.advise(penta_advisor.situation(roll, 2))
    keeps = [o.keep for o in advice.options if o.action == "keep"]
    assert len(keeps) == len(set(keeps)) == count
    assert () in keeps and tuple(sorted(roll)) not in keeps
    assert not [o for o in penta_advisor.advise(penta_advisor.situation(roll, 0)).options if o.action == "keep"]


def test_joker_forces_the_upper_box_of_the_face(penta_advisor):
    advice = penta_advisor.advise(penta_advisor.situation((4,) * 5, 0, sheet("penta=50")))
    assert [(o.box, o.points, o.penta_bonus) for o in advice.options] == [("fours", 20, 100)]
    assert "the Fours box is open, so it must take the roll" in advice.joker


def test_joker_lower_boxes_when_the_face_box_is_filled(penta_advisor):
    advice = penta_advisor.advise(penta_advisor.situation((4,) * 5, 0, sheet("penta=50 fours=12")))
    got = {o.box: o.points for o in advice.options}
    assert got == dict(
        three_of_a_kind=20, four_of_a_kind=20, full_house=25, small_straight=30, large_straight=40, chance=20
    )
    assert all(o.penta_bonus == 100 for o in advice.options)
    assert advice.joker == (
        "Joker: a new Penta with the Penta box at 50; Fours is filled, so any open lower box takes it "
        "(Full house 25, Small straight 30, Large straight 40)"
    )


def _lower_box_note(rs: rules.RuleSet, filled: str) -> str | None:
    """The joker's note for five 4s with the Penta box at 50 and ``filled`` filled, the lower boxes legal."""
    situation = Situation.make(rs, [4] * 5, 0, sheet(f"penta=50 {filled}"))
    legal = [SimpleNamespace(box=b) for b in rs.boxes if b not in situation.sheet.boxes]
    return joker_note(rs, situation, legal)


def test_joker_note_names_the_boxes_and_points_of_its_own_sheet():
    """The note lists the boxes a joker fills at their points from the sheet: a house rule's points, only the
    boxes in play, and no list where there are none."""
    house = PENTA.reduced(
        sheet=tuple(
            dataclasses.replace(b, points={"full_house": 20, "large_straight": 45}.get(b.id, b.points))
            for b in PENTA.sheet
        ),
        boxes=(),
    )
    assert house.joker_boxes == (("full_house", 20), ("small_straight", 30), ("large_straight", 45))
    assert _lower_box_note(house, "fours=12").endswith("takes it (Full house 20, Small straight 30, Large straight 45)")
    fewer = PENTA.reduced(boxes=("fours", "full_house", "chance", "penta"))
    assert fewer.joker_boxes == (("full_house", 25),)
    assert _lower_box_note(fewer, "fours=12").endswith("takes it (Full house 25)")
    none = PENTA.reduced(boxes=("fours", "chance", "penta"))
    assert none.joker_boxes == () and _lower_box_note(none, "fours=12").endswith("lower box takes it")
    yahtzee = rules.get_rules("yahtzee")  # a free joker: the boxes scored in full, by the sheet's names
    assert _lower_box_note(yahtzee, "fours=12") == (
        "Joker: a new Yahtzee with the Yahtzee box at 50 and Fours filled: Full house, Small straight, "
        "Large straight score in full; any open box"
    )


def test_joker_upper_box_at_zero_when_the_lower_section_is_full(penta_advisor):
    full_lower = (
        "three_of_a_kind=20 four_of_a_kind=20 full_house=25 small_straight=30 large_straight=40 "
        "chance=20 penta=50 fours=12"
    )
    advice = penta_advisor.advise(penta_advisor.situation((4,) * 5, 2, sheet(full_lower)))
    scores = {o.box: (o.points, o.penta_bonus) for o in advice.options if o.action == "score"}
    assert scores == {b: (0, 100) for b in ("ones", "twos", "threes", "fives", "sixes")}
    assert advice.no_box_scores and "an open upper box takes it at 0" in advice.joker


def test_penta_box_at_zero_makes_five_of_a_kind_ordinary(penta_advisor):
    advice = penta_advisor.advise(penta_advisor.situation((4,) * 5, 0, sheet("penta=0")))
    scores = {o.box: (o.points, o.penta_bonus) for o in advice.options}
    assert len(scores) == 12 and scores["large_straight"] == (0, 0) and scores["fours"] == (20, 0)
    assert advice.joker is None


def test_sacrifice_when_no_box_scores(penta_advisor):
    s = sheet("ones=2 threes=6 fours=8 sixes=12 chance=20 three_of_a_kind=0 four_of_a_kind=0 small_straight=0")
    advice = penta_advisor.advise(penta_advisor.situation((1, 1, 3, 4, 6), 0, s))
    assert advice.no_box_scores
    assert all(o.points == 0 for o in advice.options)
    assert advice.as_dict(PENTA)["message"] == NO_SCORE_MESSAGE
    assert not penta_advisor.advise(penta_advisor.situation((1, 1, 3, 4, 6), 0)).no_box_scores


def test_loss_of_an_option_against_the_best(penta_advisor):
    situation = penta_advisor.situation((1, 1, 3, 4, 6), 2)
    advice = penta_advisor.advise(situation)
    assert penta_advisor.loss(situation, box=advice.best.box, keep=advice.best.keep) == 0
    chance = advice.option_for(box="chance")
    assert penta_advisor.loss(situation, box="chance") == advice.best.value - chance.value > 0
    assert penta_advisor.loss(situation, keep=[1, 1]) == advice.best.value - advice.option_for(keep=[1, 1]).value
    with pytest.raises(ValueError, match="not a legal option"):
        penta_advisor.loss(situation, keep=[2])


def test_ties_are_ordered_scoring_first_then_sheet_order_then_larger_keeps():
    opts = [
        Option(Keep((2,)), 1.0),
        Option(Keep((1, 5)), 1.0),
        Option(Score("chance"), 1.0),
        Option(Score("ones"), 1.0),
        Option(Keep((1,)), 1.0),
        Option(Keep(()), 2.0),
    ]
    ordered = sorted(opts, key=Option.sort_key)
    assert [str(o.move) for o in ordered] == ["roll", "score ones", "score chance", "keep 1 5", "keep 1", "keep 2"]


def test_compiled_python_and_batch_paths_agree_exactly(penta_advisor):
    plain = Advisor(penta_advisor.table, compiled=False)
    rng = np.random.default_rng(5)
    situations = []
    for _ in range(12):
        s = random_sheet(PENTA, rng, int(rng.integers(0, 12)))
        situations.append(
            penta_advisor.situation(tuple(int(x) for x in rng.integers(1, 7, 5)), int(rng.integers(0, 3)), s)
        )
    batch = penta_advisor.advise_many(situations)
    for s, b in zip(situations, batch, strict=True):
        assert penta_advisor.advise(s).options == plain.advise(s).options == b.options


@pytest.mark.parametrize(
    ("dice_", "rolls", "text", "message"),
    [
        ((1, 2, 3, 4), 2, "", "Penta uses 5 dice, not 4"),
        ((1, 2, 3, 4, 7), 2, "", "a die shows 1 to 6, not 7"),
        ((1, 2, 3, 4, 5), 3, "", "rolls left must be 0 to 2, not 3"),
        ((1, 2, 3, 4, 5), 0, "fours=7", "fours=7 is impossible"),
        ((1, 2, 3, 4, 5), 0, "penta=30", "penta=30 is impossible"),
        ((1, 2, 3, 4, 5), 0, "chance=3", "chance=3 is impossible"),
        ((1, 2, 3, 4, 5), 0, "full_house=20", "full_house=20 is impossible"),
        ((1, 2, 3, 4, 5), 0, "ones=2 penta_bonus=100", "penta_bonus=100 is impossible without penta=50"),
        ((1, 2, 3, 4, 5), 0, "penta=50 penta_bonus=100", "each bonus comes with another filled box"),
        ((1, 2, 3, 4, 5), 0, "penta=50 ones=1 penta_bonus=150", "in steps of 100"),
    ],
)
def test_impossible_situations_are_refused(penta_advisor, dice_, rolls, text, message):
    with pytest.raises(SituationError, match=message):
        penta_advisor.situation(dice_, rolls, sheet(text))


def test_a_full_sheet_is_refused(penta_advisor):
    full = {b: 0 for b in PENTA.box_ids if b != "chance"} | {"chance": 5}
    with pytest.raises(SituationError, match="every box is filled"):
        penta_advisor.situation((1, 2, 3, 4, 5), 0, Sheet(full))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fives=5 fives=10", "'fives' is given twice"),
        ("sevens=7", "unknown box 'sevens'"),
        ("ones", "is not BOX=POINTS"),
        ("ones=x", "points must be a whole number"),
    ],
)
def test_unreadable_sheets_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        Sheet.parse(text)


def test_missing_table_is_solved_once_and_cached(tmp_path, monkeypatch):
    """(Without the copy of Penta's table the package holds, which tests/test_shipped_tables.py checks.)"""
    from pentadice.tables import shipped

    monkeypatch.setattr(shipped, "available", lambda rs: False)
    calls = []
    advisor = Advisor.load("penta", str(tmp_path), progress=lambda done, total: calls.append(done))
    assert calls and calls[-1] == 25  # 13 numbers of open boxes; 12 of them also with the Penta box filled
    assert (tmp_path / "penta.npy").exists()
    again = Advisor.load("penta", str(tmp_path), solve_missing=False)
    assert again.table.expected_score == advisor.table.expected_score


@pytest.mark.slow
def test_option_values_agree_with_yatzy_solver(tmp_path):
    ys = pytest.importorskip("yatzy_solver")
    from solutions import solved

    from pentadice.tables import table

    solution = solved("yahtzee")
    table.save(solution.rules, solution.values, tmp_path)
    advisor = Advisor.load("yahtzee", str(tmp_path), solve_missing=False)
    peer = ys.Solver.build(ys.Variant("american"))
    rs = advisor.rules
    rng = np.random.default_rng(13)
    for _ in range(40):
        s = random_sheet(rs, rng, int(rng.integers(0, 12)))
        roll = sorted(int(x) for x in rng.integers(1, 7, 5))
        rolls = int(rng.integers(0, 3))
        advice = advisor.advise(advisor.situation(roll, rolls, s))
        names = {("five_of_a_kind" if b == "penta" else b) for b in s.boxes}
        filled = ",".join(c for c in peer.variant.categories if c in names) or "-"
        note = f"dice {' '.join(map(str, roll))} | rolls {rolls} | upper {s.upper_subtotal(rs)} | filled {filled}"
        if "penta" in s.boxes:
            note += f" | five_of_a_kind {s.boxes['penta']}"
        theirs = dict(peer.option_values(note))
        for o in advice.options:
            action = (
                f"score {'five_of_a_kind' if o.box == 'penta' else o.box}"
                if o.action == "score"
                else "keep " + (" ".join(map(str, o.keep)) if o.keep else "-")
            )
            assert o.value - advice.score_so_far == pytest.approx(theirs.pop(action), abs=1e-9), (note, action)
