"""The advisor for the Yatzy family's sheets: Scandinavian Yatzy (15 boxes, no Penta box) and Maxi Yatzy (6 dice;
here a small game of its boxes, solved in-process: its full table is 640 MB).

Every option's value is checked against a slow expectimax written here in plain Python over the solved table
(keeps as sub-multisets of the dice, rerolls as every sequence of faces); ``--json`` and ``--batch`` against the
human text; bad input (a wrong number of dice, a box the sheet lacks) against its exit status and message.
"""

from __future__ import annotations

import functools
import itertools
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from family_games import advisor_of, small_maxi
from fastapi.testclient import TestClient
from sheets import random_sheet
from solutions import saved, solved

from pentadice.advisor import Advisor, SituationError
from pentadice.advisor.batch_io import answer_texts, answers
from pentadice.advisor.batch_lines import BatchLineError, parse_line
from pentadice.advisor.explain import explain
from pentadice.faces.cli import main
from pentadice.faces.web.api import create_app
from pentadice.faces.words import advice_text
from pentadice.game import rules
from pentadice.game.moves import Keep, Score
from pentadice.game.sheet import Sheet
from pentadice.game.situation import parse_dice
from pentadice.tables import moment_files, table

YATZY = rules.get_rules("yatzy")


@pytest.fixture(scope="module")
def yatzy_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("yatzy")
    table.save(YATZY, solved("yatzy").values, directory)
    return directory


@pytest.fixture(scope="module")
def yatzy_advisor(yatzy_dir):
    return Advisor.load("yatzy", str(yatzy_dir), solve_missing=False)


@pytest.fixture(scope="module")
def maxi_advisor(tmp_path_factory):
    return advisor_of(small_maxi(), tmp_path_factory.mktemp("small-maxi"))


def brute_options(rs: rules.RuleSet, V: np.ndarray, sheet: Sheet, dice: tuple[int, ...], rolls_left: int) -> dict:
    """Every option of a situation with the points still to come, by expectimax over the table ``V``: a box is
    worth its points, the upper bonus it earns and the next state's value; a keep the mean, over every sequence
    of faces the other dice can show, of the best option of the hand it makes, one roll later."""
    upper = {b.id for b in rs.sheet if b.kind == rules.K_FACE}
    open_boxes = [b for b in rs.boxes if b not in sheet.boxes]
    open_mask = sum(1 << rs.box_ids.index(b) for b in open_boxes)
    threshold = rs.upper_threshold
    sub = min(sum(v for b, v in sheet.boxes.items() if b in upper), threshold)

    @functools.cache
    def boxes(hand: tuple[int, ...]) -> dict[str, float]:
        legal, bonus = rules.legal_scores(rs, hand, open_boxes, False)
        assert bonus == 0  # no bonus for further Yatzys in this family
        out = {}
        for box, points in legal.items():
            added = points if box in upper else 0
            earned = rs.upper_bonus if sub < threshold <= sub + added else 0
            after = V[0, open_mask & ~(1 << rs.box_ids.index(box)), min(sub + added, threshold)]
            out[box] = points + earned + float(after)
        return out

    def keeps(hand: tuple[int, ...]) -> set[tuple[int, ...]]:
        return {tuple(sorted(c)) for k in range(len(hand)) for c in itertools.combinations(hand, k)}

    @functools.cache
    def best(hand: tuple[int, ...], rerolls: int) -> float:
        value = max(boxes(hand).values())
        if rerolls:
            value = max(value, *(keep(k, rerolls) for k in keeps(hand)))
        return value

    @functools.cache
    def keep(kept: tuple[int, ...], rerolls: int) -> float:
        n = rs.dice - len(kept)
        total = sum(
            best(tuple(sorted(kept + faces)), rerolls - 1) for faces in itertools.product(range(1, 7), repeat=n)
        )
        return total / 6**n

    out: dict = {Score(b): v for b, v in boxes(tuple(sorted(dice))).items()}
    if rolls_left:
        out.update({Keep(k): keep(k, rolls_left) for k in keeps(tuple(sorted(dice)))})
    return out


def check_against_brute_force(advisor, sheet: Sheet, dice, rolls_left: int) -> None:
    rs = advisor.rules
    situation = advisor.situation(tuple(dice), rolls_left, sheet)
    advice = advisor.advise(situation)
    expected = brute_options(rs, advisor.values, sheet, tuple(dice), rolls_left)
    so_far = sheet.score(rs)
    assert {o.move for o in advice.options} == set(expected), situation
    for o in advice.options:
        assert o.value - so_far == pytest.approx(expected[o.move], abs=1e-9), (situation, o)
        if isinstance(o.move, Score):
            assert o.penta_bonus == 0
    assert advice.best.value - so_far == pytest.approx(max(expected.values()), abs=1e-9)
    assert [o.value for o in advice.options] == sorted((o.value for o in advice.options), reverse=True)
    # The batch path and the compiled kernels give the same bits as the plain one.
    assert advisor.advise_many([situation])[0].options == advice.options


YATZY_SITUATIONS = [
    ("", (1, 1, 3, 4, 6), 2),  # the start of a game
    ("", (2, 3, 4, 5, 6), 0),
    ("ones=3 twos=6 threes=9 fours=12 fives=15", (6, 6, 6, 2, 3), 1),  # the bonus within reach: 45 + 18 = 63
    ("one_pair=12 two_pairs=14 full_house=0 chance=22 yatzy=50", (3, 3, 5, 5, 5), 0),  # 3 3 5 5 5, the spec's
    ("sixes=24 small_straight=15 large_straight=0 four_of_a_kind=16", (1, 2, 2, 6, 6), 2),
]


@pytest.mark.parametrize(("sheet_text", "dice", "rolls_left"), YATZY_SITUATIONS)
def test_yatzy_advice_is_the_expectimax_of_the_table(yatzy_advisor, sheet_text, dice, rolls_left):
    check_against_brute_force(yatzy_advisor, Sheet.parse(sheet_text, YATZY), dice, rolls_left)


def test_yatzy_advice_on_random_mid_game_sheets(yatzy_advisor):
    rng = np.random.default_rng(15)
    for i in range(6):
        sheet = random_sheet(YATZY, rng, int(rng.integers(1, len(YATZY.boxes))))
        dice = tuple(int(d) for d in rng.integers(1, 7, 5))
        check_against_brute_force(yatzy_advisor, sheet, dice, i % 3)


def test_yatzy_scores_by_its_own_sheet(yatzy_advisor):
    """3 3 5 5 5 on the last roll: One pair 10, Two pairs 16, Three of a kind 15, Full house 21 (the spec's
    example); no Penta box, no joker, no bonus; options of equal value in Yatzy's sheet order."""
    advice = yatzy_advisor.advise(yatzy_advisor.situation((3, 3, 5, 5, 5), 0))
    points = {o.box: o.points for o in advice.options}
    assert {b: points[b] for b in ("one_pair", "two_pairs", "three_of_a_kind", "full_house", "yatzy")} == {
        "one_pair": 10,
        "two_pairs": 16,
        "three_of_a_kind": 15,
        "full_house": 21,
        "yatzy": 0,
    }
    assert set(points) == set(YATZY.boxes) and advice.joker is None
    sacrifices = [o for o in advice.options if o.points == 0]
    ties = [o for o in sacrifices if o.value == sacrifices[0].value]
    assert [o.box for o in ties] == sorted((o.box for o in ties), key=YATZY.box_index.__getitem__)


def test_upper_bonus_of_the_sheet(yatzy_advisor, maxi_advisor):
    yatzy = yatzy_advisor.advise(
        yatzy_advisor.situation((6, 6, 6, 2, 3), 0, Sheet.parse("ones=3 twos=6 threes=9 fours=12 fives=15", YATZY))
    )
    assert yatzy.option_for(box="sixes").upper_bonus == 50 and yatzy.option_for(box="sixes").points == 18
    rs = maxi_advisor.rules  # upper threshold 50 in the small game, bonus 50
    for fives, bonus in ((25, 0), (30, 50)):  # 25 + 24 = 49 falls short; 30 + 24 = 54 reaches it
        maxi = maxi_advisor.advise(maxi_advisor.situation((6, 6, 6, 6, 1, 2), 0, Sheet({"fives": fives})))
        assert (maxi.option_for(box="sixes").points, maxi.option_for(box="sixes").upper_bonus) == (24, bonus)
        assert maxi.option_for(box="sixes").value == pytest.approx(
            maxi.score_so_far
            + 24
            + bonus
            + maxi_advisor.table.value(
                rs.mask_of(["one_pair", "three_pairs", "tower", "full_straight", "chance", "maxi_yatzy"]),
                fives + 24,
                False,
            )
        )


MAXI_SITUATIONS = [
    ("", (1, 1, 3, 4, 6, 6), 2),  # the start of a game
    ("", (1, 2, 3, 4, 5, 6), 0),  # a full straight, on the last roll
    ("fives=20 one_pair=12 chance=30", (6, 6, 6, 5, 5, 1), 1),
    ("sixes=30 tower=0 full_straight=21 three_pairs=18", (2, 2, 4, 4, 6, 6), 2),
    ("fives=25 sixes=24 one_pair=10 three_pairs=0 tower=26 chance=20 maxi_yatzy=0", (1, 1, 1, 2, 2, 3), 0),
]


@pytest.mark.parametrize(("sheet_text", "dice", "rolls_left"), MAXI_SITUATIONS)
def test_six_dice_advice_is_the_expectimax_of_the_table(maxi_advisor, sheet_text, dice, rolls_left):
    check_against_brute_force(maxi_advisor, Sheet.parse(sheet_text, maxi_advisor.rules), dice, rolls_left)


def test_six_dice_options_are_every_distinct_keep(maxi_advisor):
    advice = maxi_advisor.advise(maxi_advisor.situation((1, 2, 3, 4, 5, 6), 2))
    keeps = [o.keep for o in advice.options if o.action == "keep"]
    assert len(keeps) == len(set(keeps)) == 2**6 - 1  # six different faces: every proper subset once
    two_alike = maxi_advisor.advise(maxi_advisor.situation((1, 1, 2, 2, 3, 3), 2))
    kept = {o.keep for o in two_alike.options if o.action == "keep"}
    assert len(kept) == math.prod(3 for _ in range(3)) - 1  # 0-2 of each of three faces, all six excepted


# --json, --batch and the human text say the same.


def cli(*args, stdin=None):
    return CliRunner().invoke(main, ["advise", *args], input=stdin)


def test_yatzy_json_batch_and_text_agree(yatzy_advisor, yatzy_dir):
    data = ["--rules", "yatzy", "--data", str(yatzy_dir)]
    for sheet_text, dice, rolls_left in YATZY_SITUATIONS:
        args = [*map(str, dice), "--rolls-left", str(rolls_left), *(["--sheet", sheet_text] if sheet_text else [])]
        text = cli(*args, *data)
        as_json = cli(*args, *data, "--json")
        assert text.exit_code == 0 and as_json.exit_code == 0, (text.output, as_json.output)
        answer = json.loads(as_json.output)
        situation = yatzy_advisor.situation(dice, rolls_left, Sheet.parse(sheet_text, YATZY))
        advice = yatzy_advisor.advise(situation)
        assert answer["rules"] == "yatzy" and answer["dice"] == sorted(dice) and "joker" not in answer
        assert [o["value"] for o in answer["options"]] == [o.value for o in advice.options]
        # The text shows the same best option and the same ranking, rounded.
        lines = text.output.splitlines()
        assert lines[0].startswith("Yatzy (Scandinavian): dice " + " ".join(map(str, sorted(dice))))
        best = next(line for line in lines if line.startswith("Best: "))
        assert best.endswith(f"(expected final score {answer['best']['value']:.3f})")
        header = next(line.split() for line in lines if line.startswith("rank"))
        column = header.index("expected") - len(header)  # counted from the end: the option's words vary
        rows = [line.split() for line in lines if line[:4].strip().isdigit()]
        assert [float(r[column]) for r in rows] == [round(o["value"], 3) for o in answer["options"][:10]]
        # --batch answers the same situation with the same options (it shows no SD and no why).
        line = json.dumps({"dice": list(dice), "rolls_left": rolls_left, "sheet": Sheet.parse(sheet_text, YATZY).boxes})
        batch = cli("--batch", "-", *data, stdin=line + "\n")
        assert batch.exit_code == 0, batch.output
        got = json.loads(batch.output)
        plain = {k: v for k, v in answer.items() if k != "why"}
        plain["options"] = [{k: v for k, v in o.items() if k != "sd"} for o in answer["options"]]
        plain["best"] = plain["options"][0]
        assert got == plain


def test_six_dice_batch_json_and_text_agree(maxi_advisor):
    rs = maxi_advisor.rules
    lines = [
        json.dumps({"dice": list(d), "rolls_left": r, "sheet": Sheet.parse(s, rs).as_dict(rs)})
        for s, d, r in MAXI_SITUATIONS
    ]
    fast = "".join(text for text, _, _ in answer_texts(maxi_advisor, lines))
    slow = [answer for answer, _ in answers(maxi_advisor, lines)]
    assert [json.loads(x) for x in fast.splitlines()] == slow
    for (sheet_text, dice, rolls_left), answer in zip(MAXI_SITUATIONS, slow, strict=True):
        advice = maxi_advisor.advise(maxi_advisor.situation(dice, rolls_left, Sheet.parse(sheet_text, rs)))
        assert answer == advice.as_dict(rs)
        text = advice_text(advice, rs, 10, explain(maxi_advisor, advice))
        assert f"dice {' '.join(map(str, sorted(dice)))}" in text.splitlines()[0]
        assert f"(expected final score {advice.best.value:.3f})" in text


# Bad input: exit 2 and the problem in words.


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rules", "yatzy", "1", "2", "3", "4", "5", "6"], "Yatzy (Scandinavian) uses 5 dice, not 6"),
        (["--rules", "maxi-yatzy", "1", "1", "3", "4", "6"], "Maxi Yatzy uses 6 dice, not 5"),
        (["--rules", "maxi-yatzy", "1", "1", "3", "4", "6", "6", "6"], "Maxi Yatzy uses 6 dice, not 7"),
        (["--rules", "yatzy", "1", "1", "3", "4", "6", "--sheet", "penta=50"], "has no Penta box"),
        (["--rules", "yatzy", "1", "1", "3", "4", "6", "--sheet", "three_pairs=12"], "has no Three pairs box"),
        (["--rules", "yatzy", "1", "1", "3", "4", "6", "--sheet", "yatzy=50 penta_bonus=100"], "pays no bonus"),
        (["--rules", "maxi-yatzy", "1", "1", "3", "4", "6", "6", "--sheet", "penta=50"], "has no Penta box"),
        (["--rules", "maxi-yatzy", "1", "1", "3", "4", "6", "6", "--sheet", "tower=25"], "tower=25 is impossible"),
        (["--rules", "penta", "1", "1", "3", "4", "6", "--sheet", "one_pair=12"], "Penta has no One pair box"),
    ],
)
def test_bad_input_is_a_usage_error(tmp_path, args, message):
    result = cli(*args, "--data", str(tmp_path))  # refused before any table is looked for
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not list(tmp_path.iterdir())


def test_bad_batch_lines_are_answered_with_their_error(yatzy_dir):
    lines = [
        {"dice": [1, 1, 3, 4, 6, 6]},
        {"dice": [1, 1, 3, 4, 6], "sheet": {"penta": 50}},
        {"dice": [1, 1, 3, 4, 6], "sheet": {"one_pair": 12}},
        {"dice": [1, 1, 3, 4, 6], "sheet": {"one_pair": 7}},
    ]
    stdin = "".join(json.dumps(x) + "\n" for x in lines)
    result = CliRunner().invoke(
        main, ["advise", "--rules", "yatzy", "--data", str(yatzy_dir), "--batch", "-"], input=stdin
    )
    assert result.exit_code == 2
    out = [json.loads(x) for x in result.output.splitlines() if x.startswith("{")]
    assert out[0] == {"line": 1, "error": "Yatzy (Scandinavian) uses 5 dice, not 6"}
    assert "has no Penta box" in out[1]["error"]
    assert out[2]["rules"] == "yatzy" and out[2]["sheet"] == {"one_pair": 12}
    assert out[3]["line"] == 4 and "one_pair=7 is impossible" in out[3]["error"]


def test_six_dice_are_read_and_checked(maxi_advisor):
    rs = maxi_advisor.rules
    assert parse_dice(rs, "113466") == [1, 1, 3, 4, 6, 6]
    assert parse_dice(rs, "1 1 3 4 6 6") == [1, 1, 3, 4, 6, 6]
    with pytest.raises(SituationError, match="Maxi Yatzy uses 6 dice, not 5"):
        maxi_advisor.situation((1, 1, 3, 4, 6), 2)
    with pytest.raises(BatchLineError, match="Maxi Yatzy uses 6 dice, not 5"):
        parse_line(rs, '{"dice": [1, 1, 3, 4, 6]}')
    with pytest.raises(BatchLineError, match="Maxi Yatzy has no Penta box"):
        parse_line(rs, '{"dice": [1, 1, 3, 4, 6, 6], "sheet": {"penta": 50}}')
    with pytest.raises(SituationError, match=r"give the 6 dice, e\.g\. 1 1 3 4 6 6"):
        parse_dice(rs, "  ")


# The SD column: from the second moments, or none where a rule set has none.


def test_no_second_moments_means_no_sd_rather_than_an_error(yatzy_dir, monkeypatch):
    def unavailable(tbl, save=True):
        raise NotImplementedError("no second moments for this test")

    monkeypatch.setattr(moment_files, "moments_for", unavailable)
    advisor = Advisor.load("yatzy", str(yatzy_dir), solve_missing=False)
    assert advisor.load_spread() is False and advisor.no_spread == "no second moments for this test"
    advice = advisor.advise(advisor.situation((1, 1, 3, 4, 6), 2))
    assert all(o.sd is None for o in advice.options)
    assert advisor.with_spread(advice) == advice
    result = cli("--rules", "yatzy", "--data", str(yatzy_dir), "1", "1", "3", "4", "6", "--json")
    assert result.exit_code == 0, result.output
    assert all("sd" not in o for o in json.loads(result.output)["options"])
    assert cli("--rules", "yatzy", "--data", str(yatzy_dir), "1", "1", "3", "4", "6").exit_code == 0


def test_sds_of_the_family(maxi_advisor):
    advice = maxi_advisor.with_spread(maxi_advisor.advise(maxi_advisor.situation((1, 1, 3, 4, 6, 6), 1)))
    assert all(o.sd is not None and o.sd >= 0 for o in advice.options)
    last = maxi_advisor.with_spread(
        maxi_advisor.advise(
            maxi_advisor.situation(
                (6, 6, 6, 6, 6, 6),
                0,
                Sheet.parse(
                    "fives=25 sixes=30 one_pair=12 three_pairs=0 tower=0 full_straight=0 chance=20", maxi_advisor.rules
                ),
            )
        )
    )
    assert last.option_for(box="maxi_yatzy").sd == 0  # the last box: nothing is left to chance


# The web API's advice for the family (the small Maxi Yatzy game served as maxi-yatzy).


def test_api_advises_every_sheet(yatzy_advisor, maxi_advisor):
    with TestClient(create_app({"yatzy": yatzy_advisor, "maxi-yatzy": maxi_advisor})) as client:
        described = {r["name"]: r for r in client.get("/api/rules").json()["rules"]}
        assert [b["id"] for b in described["yatzy"]["boxes"]] == list(YATZY.box_ids)
        assert [b["section"] for b in described["yatzy"]["boxes"]] == ["upper"] * 6 + ["lower"] * 9
        assert described["maxi-yatzy"]["dice"] == 6 and described["yatzy"]["penta_points"] == 0
        for advisor, dice in ((yatzy_advisor, [1, 1, 3, 4, 6]), (maxi_advisor, [1, 1, 3, 4, 6, 6])):
            rs = advisor.rules
            r = client.post("/api/advise", json={"rules": rs.name, "dice": dice, "rolls_left": 1})
            assert r.status_code == 200, r.text
            advice = advisor.with_spread(advisor.advise(advisor.situation(tuple(dice), 1)))
            why = explain(advisor, advice)
            assert r.json() == {**advice.as_dict(rs), "why": why.as_dict() if why else None}
            wrong = client.post("/api/advise", json={"rules": rs.name, "dice": dice[:4]})
            assert wrong.status_code == 422 and f"uses {rs.dice} dice, not 4" in wrong.json()["error"]
            batch = client.post("/api/advise/batch", json={"rules": rs.name, "items": [{"dice": dice}, {"dice": [1]}]})
            results = batch.json()["results"]
            assert results[0] == advisor.advise(advisor.situation(tuple(dice), 2)).as_dict(rs)
            assert results[1]["line"] == 2 and f"uses {rs.dice} dice, not 1" in results[1]["error"]


@pytest.mark.slow
def test_maxi_yatzy_from_its_full_table(tmp_path_factory):
    """The real Maxi Yatzy table (20 boxes, threshold 75; a minute or two to solve, 640 MB): the command's text,
    JSON and batch answers, and the advice against the expectimax late in a game."""
    rs = rules.get_rules("maxi-yatzy")
    directory = saved("maxi-yatzy", tmp_path_factory.mktemp("maxi"))
    data = ["--rules", "maxi-yatzy", "--data", str(directory)]
    dice = ["1", "1", "3", "4", "6", "6"]
    text, as_json = cli(*dice, *data), cli(*dice, *data, "--json")
    assert text.exit_code == 0 and as_json.exit_code == 0, (text.output, as_json.output)
    answer = json.loads(as_json.output)
    assert text.output.startswith("Maxi Yatzy: dice 1 1 3 4 6 6, roll 1 of 3 (2 rerolls left); start of the game")
    assert f"(expected final score {answer['best']['value']:.3f})" in text.output
    batch = cli("--batch", "-", *data, stdin='{"dice": [1, 1, 3, 4, 6, 6]}\n')
    assert batch.exit_code == 0
    assert [o["value"] for o in json.loads(batch.output)["options"]] == [o["value"] for o in answer["options"]]
    advisor = Advisor.load("maxi-yatzy", str(directory), solve_missing=False)
    late = Sheet.parse(
        "ones=3 twos=6 threes=9 fours=16 fives=20 one_pair=10 two_pairs=18 three_pairs=0 three_of_a_kind=15 "
        "four_of_a_kind=20 five_of_a_kind=0 small_straight=15 large_straight=20 full_straight=0 full_house=22 "
        "chance=25",
        rs,
    )
    check_against_brute_force(advisor, late, (6, 6, 6, 6, 2, 2), 1)
    check_against_brute_force(advisor, late, (6, 6, 6, 6, 2, 2), 0)
