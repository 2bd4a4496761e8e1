"""`pentadice advise`: human and JSON output, batch mode, and bad input."""

import codecs
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from commands import run

from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.rules import PENTA_RULES
from pentadice.game.sheet import Sheet

BOM = codecs.BOM_UTF8


@pytest.fixture
def advise(penta_table_dir):
    def run(*args, stdin=None):
        return CliRunner().invoke(main, ["advise", "--data", str(penta_table_dir), *args], input=stdin)

    return run


def test_default_is_the_first_roll_of_a_new_penta_game(advise, penta_advisor):
    result = advise("1", "1", "3", "4", "6")
    assert result.exit_code == 0, result.output
    best = penta_advisor.advise(penta_advisor.situation((1, 1, 3, 4, 6), 2)).best
    lines = result.output.splitlines()
    assert lines[0] == "Penta: dice 1 1 3 4 6, roll 1 of 3 (2 rerolls left); start of the game"
    assert (
        lines[2]
        == f"Best: Keep {' '.join(map(str, best.keep))} and reroll four dice (expected final score {best.value:.3f})"
    )
    assert "rank  option" in result.output
    assert result.output.count(", reroll ") == 10  # --top defaults to 10


def test_json_output(advise, penta_advisor):
    result = advise("1", "1", "3", "4", "6", "--rolls-left", "1", "--sheet", "ones=3 threes=9", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {"rules", "dice", "rolls_left", "score_so_far", "best", "options"} <= set(data)
    assert data["rules"] == "penta" and data["dice"] == [1, 1, 3, 4, 6] and data["rolls_left"] == 1
    assert data["score_so_far"] == 12
    advice = penta_advisor.with_spread(
        penta_advisor.advise(penta_advisor.situation((1, 1, 3, 4, 6), 1, penta_advisor_sheet("ones=3 threes=9")))
    )
    assert data["options"] == [o.as_dict() for o in advice.options]  # full float precision, every option
    assert data["best"] == data["options"][0]
    kinds = {o["action"] for o in data["options"]}
    assert kinds == {"keep", "score"}
    assert all(set(o) >= {"action", "keep", "value"} for o in data["options"] if o["action"] == "keep")
    assert all(set(o) >= {"action", "box", "points", "value"} for o in data["options"] if o["action"] == "score")


def penta_advisor_sheet(text):
    from pentadice.game.sheet import Sheet

    return Sheet.parse(text)


def test_joker_and_penta_bonus_in_words(advise):
    result = advise("4", "4", "4", "4", "4", "--rolls-left", "0", "--sheet", "penta=50")
    assert result.exit_code == 0, result.output
    assert "Best: Score Fours: 20 points + 100 Penta bonus" in result.output
    assert "Joker: a new Penta with the Penta box at 50; the Fours box is open, so it must take the roll." in (
        result.output
    )


def test_sacrifice_message(advise):
    sheet = "ones=2 threes=6 fours=8 sixes=12 chance=20 three_of_a_kind=0 four_of_a_kind=0 small_straight=0"
    result = advise("1", "1", "3", "4", "6", "--rolls-left", "0", "--sheet", sheet)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[2].startswith("Best: Score ") and "(sacrifice)" in lines[2]
    assert lines[3] == "No open box scores: you must sacrifice one."
    assert result.output.count("Score ") == 1  # the best sacrifice is named once
    assert json.loads(advise("1", "1", "3", "4", "6", "--rolls-left", "0", "--sheet", sheet, "--json").output)[
        "message"
    ] == ("No open box scores: you must sacrifice one")


def test_sacrifice_message_waits_for_the_last_roll(advise):
    """With rerolls left the player need not sacrifice yet: no message (it used to stand under 'keep nothing')."""
    sheet = "ones=2 threes=6 fours=8 sixes=12 chance=20 three_of_a_kind=0 four_of_a_kind=0 small_straight=0"
    for rolls_left in ("1", "2"):
        result = advise("1", "1", "3", "4", "6", "--rolls-left", rolls_left, "--sheet", sheet)
        assert result.exit_code == 0, result.output
        assert "No open box scores" not in result.output
        data = json.loads(
            advise("1", "1", "3", "4", "6", "--rolls-left", rolls_left, "--sheet", sheet, "--json").output
        )
        assert "message" not in data


def test_sheet_file_and_top(advise, tmp_path):
    path = tmp_path / "sheet.json"
    path.write_text(json.dumps({"ones": 3, "penta": 50, "penta_bonus": 100}))
    result = advise("2", "2", "5", "5", "5", "--sheet-file", str(path), "--top", "3", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert len(data["options"]) == 3 and data["score_so_far"] == 153


def test_batch_answers_each_line_in_order_and_reports_bad_lines(advise):
    lines = [
        {"dice": [1, 1, 3, 4, 6], "rolls_left": 2, "sheet": {}},
        "not json",
        {"dice": [4, 4, 4, 4, 4], "rolls_left": 0, "sheet": {"penta": 50}},
        {"dice": [1, 2, 3, 4, 9], "rolls_left": 0, "sheet": {}},
        {"dice": [6, 6, 6, 2, 2], "rolls_left": 1, "sheet": {"fours": 7}},
    ]
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n"
    result = advise("--batch", "-", stdin=text)
    assert result.exit_code == 2
    out = [json.loads(x) for x in result.stdout.splitlines()]
    assert len(out) == 5
    assert out[1]["line"] == 2 and "not valid JSON" in out[1]["error"]
    assert out[3]["line"] == 4 and "a die shows 1 to 6, not 9" in out[3]["error"]
    assert out[4]["line"] == 5 and "fours=7 is impossible" in out[4]["error"]
    assert "line 2: the line is not valid JSON" in result.stderr and "line 5: fours=7 is impossible" in result.stderr
    single = json.loads(advise("1", "1", "3", "4", "6", "--json").output)
    assert "why" not in out[0] and single.pop("why") is not None  # the batch leaves the explanation out
    for option in [single["best"], *single["options"]]:  # and the SDs (its fast path has no second moments)
        assert option.pop("sd") > 0
    assert out[0] == single
    assert out[2]["options"] == [
        {
            "action": "score",
            "box": "fours",
            "points": 20,
            "penta_bonus": 100,
            "upper_bonus": 0,
            "value": out[2]["options"][0]["value"],
            "loss": 0.0,
        }
    ]


def test_batch_of_good_lines_exits_0(advise, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"dice": [3, 3, 3, 1, 2]}\n{"dice": [6, 5, 4, 3, 2], "rolls_left": 0}\n')
    result = advise("--batch", str(path))
    assert result.exit_code == 0, result.output
    assert [json.loads(x)["dice"] for x in result.output.splitlines()] == [[1, 2, 3, 3, 3], [2, 3, 4, 5, 6]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["1", "2", "3", "4"], "Penta uses 5 dice, not 4"),
        (["1", "2", "3", "4", "5", "6"], "Penta uses 5 dice, not 6"),
        (["0", "2", "3", "4", "5"], "a die shows 1 to 6, not 0"),
        (["1", "2", "3", "4", "x"], "a die shows 1 to 6, not 'x'"),
        (["1", "2", "3", "4", "5", "--sheet", "sevens=7"], "unknown box 'sevens'"),
        (["1", "2", "3", "4", "5", "--sheet", "ones=1 ones=2"], "'ones' is given twice"),
        (["1", "2", "3", "4", "5", "--sheet", "fours=7"], "fours=7 is impossible"),
        (["1", "2", "3", "4", "5", "--sheet", "penta=30"], "penta=30 is impossible"),
        (["1", "2", "3", "4", "5", "--sheet", "chance=3"], "chance=3 is impossible"),
        (["1", "2", "3", "4", "5", "--sheet", "full_house=20"], "full_house=20 is impossible"),
        (["1", "2", "3", "4", "5", "--sheet", "ones=1 penta_bonus=100"], "impossible without penta=50"),
        (["1", "2", "3", "4", "5", "--rolls-left", "3"], "--rolls-left"),
        (["1", "2", "3", "4", "5", "--rolls-left", "-1"], "--rolls-left"),
        (["1", "2", "3", "4", "5", "--rules", "kniffel"], "unknown rule set 'kniffel'"),
    ],
)
def test_bad_input_is_a_usage_error(advise, args, message):
    result = advise(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_full_sheet_is_refused(advise):
    sheet = " ".join(f"{b}=0" for b in PENTA_RULES.box_ids if b != "chance") + " chance=5"
    result = advise("1", "2", "3", "4", "5", "--sheet", sheet)
    assert result.exit_code == 2 and "every box is filled: the game is over" in result.output


def test_table_of_another_rule_set_is_refused(tmp_path, penta_table_dir):
    for suffix in (".npy", ".json"):
        (tmp_path / f"yahtzee{suffix}").write_bytes((penta_table_dir / f"penta{suffix}").read_bytes())
    result = CliRunner().invoke(
        main, ["advise", "1", "2", "3", "4", "5", "--rules", "yahtzee", "--data", str(tmp_path)]
    )
    assert result.exit_code == 1 and "Usage:" not in result.output  # a wrong table is no usage error
    assert "holds the 'penta' rule set, not 'yahtzee'" in result.output


def test_real_command_without_traceback(penta_table_dir):
    exe = os.path.join(os.path.dirname(sys.executable), "pentadice")
    ok = subprocess.run(
        [exe, "advise", "1", "1", "3", "4", "6", "--data", str(penta_table_dir)], capture_output=True, text=True
    )
    assert ok.returncode == 0 and ok.stdout.startswith("Penta: dice 1 1 3 4 6")
    bad = subprocess.run(
        [exe, "advise", "1", "1", "3", "4", "--data", str(penta_table_dir)], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "not 4" in bad.stderr


def test_sheet_given_twice_is_merged_and_a_box_twice_refused(penta_table_dir):
    data = str(penta_table_dir)
    both = run("advise", "11346", "--sheet", "chance=5", "--sheet", "ones=1", "--json", "--data", data)
    assert both.exit_code == 0, both.output
    assert json.loads(both.stdout)["sheet"] == {"ones": 1, "chance": 5}
    twice = run("advise", "11346", "--sheet", "ones=2", "--sheet", "ones=1", "--data", data)
    assert twice.exit_code == 2 and "given twice" in twice.stderr
    dist = run("distribution", "--sheet", "chance=5", "--sheet", "ones=1", "--json", "--data", data)
    assert json.loads(dist.stdout)["sheet"] == {"ones": 1, "chance": 5}


def test_a_bom_in_a_sheet_file_is_dropped(tmp_path, penta_table_dir):
    assert Sheet.read("\ufeffones=3", rules.PENTA_RULES) == Sheet.parse("ones=3", rules.PENTA_RULES)
    path = tmp_path / "sheet.txt"
    path.write_bytes(BOM + b"ones=3\n")
    result = run("advise", "11346", "--sheet-file", str(path), "--json", "--data", str(penta_table_dir))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sheet"] == {"ones": 3}
