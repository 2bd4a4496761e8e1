"""The explanation of surprising advice: each figure it cites checked against an independent computation (the
turn followed roll by roll, with every situation asked of the advisor), on the confusing positions players
met and on a sample of random ones."""

import functools
import itertools
import math

import numpy as np
import pytest
from sheets import random_sheet

from pentadice.advisor import Situation
from pentadice.advisor.explain import explain, outlooks
from pentadice.game import rules
from pentadice.game.sheet import Sheet

PENTA = rules.get_rules("penta")


def rolls(n: int):
    """Every result of rolling ``n`` dice, with its probability."""
    for faces in itertools.combinations_with_replacement(range(1, 7), n):
        counts = [faces.count(f) for f in range(1, 7)]
        yield faces, math.factorial(n) / math.prod(math.factorial(c) for c in counts) / 6**n


def reference_outlook(advisor, situation: Situation, option) -> tuple[float, dict[str, float]]:
    """Expected points this turn and the chance of each box, the turn played out roll by roll, each later choice
    the advisor's best option of that situation."""

    @functools.cache
    def play(dice: tuple[int, ...], rolls_left: int) -> tuple[float, tuple[float, ...]]:
        best = advisor.advise(Situation(dice, rolls_left, situation.sheet)).best
        return follow(dice, rolls_left, best)

    def follow(dice, rolls_left, o) -> tuple[float, tuple[float, ...]]:
        if o.action == "score":
            boxes = [0.0] * advisor.rules.n_boxes
            boxes[advisor.rules.box_index[o.box]] = 1.0
            return float(o.points + o.penta_bonus + o.upper_bonus), tuple(boxes)
        points, boxes = 0.0, np.zeros(advisor.rules.n_boxes)
        for faces, p in rolls(len(dice) - len(o.keep)):
            pts, bx = play(tuple(sorted(o.keep + faces)), rolls_left - 1)
            points += p * pts
            boxes += p * np.array(bx)
        return points, tuple(boxes)

    points, boxes = follow(situation.dice, situation.rolls_left, option)
    return points, {advisor.rules.box_ids[b]: c for b, c in enumerate(boxes) if c > 0}


def check(advisor, situation):
    advice = advisor.advise(situation)
    looks = outlooks(advisor, advice)
    for look in looks[:4]:  # the best few, keeps and boxes
        points, boxes = reference_outlook(advisor, situation, look.option)
        assert look.points_now == pytest.approx(points, abs=1e-9)
        assert set(look.boxes) == set(boxes)
        assert all(look.boxes[b] == pytest.approx(boxes[b], abs=1e-12) for b in boxes)
        assert look.points_now + look.later + advice.score_so_far == pytest.approx(look.option.value, abs=1e-9)
    why = explain(advisor, advice)
    most = max(looks, key=lambda o: o.points_now)
    if why is None:
        assert most.points_now <= looks[0].points_now or most.option == looks[0].option
        return None
    assert why.best.option == advice.best
    assert why.obvious.points_now == most.points_now > why.best.points_now  # the rule of thumb's pick
    assert why.gain == pytest.approx(why.obvious.option.loss, abs=1e-12) and why.gain >= 0
    ref_best, _ = reference_outlook(advisor, situation, why.best.option)
    ref_obvious, _ = reference_outlook(advisor, situation, why.obvious.option)
    text = why.text
    assert f"{why.gain:+.2f} in expected final score" in text
    assert f"leaves {why.best.later - why.obvious.later:.1f} more for later" in text
    for ref, look in ((ref_best, why.best), (ref_obvious, why.obvious)):
        shown = f"{ref:.0f} point" if look.option.action == "score" else f"{ref:.1f} points on average"
        assert shown in text
    return why


@pytest.mark.parametrize(
    ("dice", "rolls_left", "sheet"),
    [((1, 2, 3, 3, 4), 2, ""), ((2, 4, 4, 5, 5), 2, ""), ((2, 4, 4, 5, 5), 1, ""), ((1, 1, 3, 4, 6), 0, "ones=3")],
)
def test_the_confusing_positions_are_explained(penta_advisor, dice, rolls_left, sheet):
    why = check(penta_advisor, penta_advisor.situation(dice, rolls_left, Sheet.parse(sheet)))
    assert why is not None


def test_keeping_3_3_over_the_straight_is_explained(penta_advisor):
    why = check(penta_advisor, penta_advisor.situation((1, 2, 3, 3, 4), 2))
    assert why.best.option.keep == (3, 3) and why.obvious.option.keep == (1, 2, 3, 4)
    assert why.best.likely_box[0] == "threes" and why.obvious.likely_box[0] == "small_straight"


def test_a_random_sample_of_positions(penta_advisor):
    rng = np.random.default_rng(11)
    explained = 0
    for _ in range(12):
        sheet = random_sheet(PENTA, rng, int(rng.integers(0, 11)))
        dice = tuple(int(d) for d in rng.integers(1, 7, size=5))
        situation = penta_advisor.situation(dice, int(rng.integers(0, 3)), sheet)
        explained += check(penta_advisor, situation) is not None
    assert explained >= 1


def test_advise_json_carries_the_why(penta_table_dir):
    import json

    from click.testing import CliRunner

    from pentadice.faces.cli import main

    out = CliRunner().invoke(main, ["advise", "1", "2", "3", "3", "4", "--json", "--data", str(penta_table_dir)])
    data = json.loads(out.output)
    assert data["why"]["best"]["option"] == data["best"]
    assert data["why"]["obvious"]["option"]["keep"] == [1, 2, 3, 4]
    human = CliRunner().invoke(main, ["advise", "1", "2", "3", "3", "4", "--data", str(penta_table_dir)]).output
    assert "Why: " in human


@pytest.mark.parametrize("name", ["penta", "kiriki", "yahtzee+forced-joker", "yatzy"])
def test_last_roll_choices_are_the_advisors_best_boxes(name, tmp_path_factory, penta_advisor):
    """The explanation's last-roll table, computed for all hands at once, is what the advisor's own advice
    gives hand by hand: the same box (ties included), the same value to the bit, the same points."""
    from solutions import solved

    from pentadice.advisor import Advisor
    from pentadice.advisor.explain import last_roll_choices
    from pentadice.tables import table

    if name == "penta":
        advisor = penta_advisor
    else:
        if name not in rules.REGISTRY:
            pytest.skip(f"no rule set {name}")
        directory = tmp_path_factory.mktemp(name)
        table.save(rules.get_rules(name), solved(name).values, directory)
        advisor = Advisor.load(name, str(directory), solve_missing=False)
    rs, t = advisor.rules, advisor.inputs.tables
    rng = np.random.default_rng(5)
    sheets = [random_sheet(rs, rng, int(rng.integers(0, len(rs.boxes)))) for _ in range(12)]
    alike = rs.all_alike_box
    sheets.append(Sheet({alike: rs.sheet[rs.box_index[alike]].points}))  # a roll of all alike is a joker then
    sheets.append(Sheet({alike: 0, "fours": 12}))
    for sheet in sheets:
        box, rest, earned = last_roll_choices(advisor, sheet)
        so_far = sheet.score(rs)
        for h in range(t.n_hands):
            best = advisor.advise(Situation(t.keep_faces[h], 0, sheet)).best
            assert rs.box_ids[box[h]] == best.box
            assert so_far + rest[h] == best.value
            assert earned[h] == best.points + best.penta_bonus + best.upper_bonus
