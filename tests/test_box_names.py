"""Box names as people type them and in each rule set's own words: one parser reads a box however it is
spelled (any case, spaces, hyphens or underscores, the usual short forms) for the command line, sheet text and
JSON and batch lines alike; the five-of-a-kind box goes by the rule set's name (Yahtzee, Kiriki, Penta); a box
named twice under two names is refused; ``advise --help`` lists the names; a sheet file may be in the text form;
``play`` takes the same names; Yahtzee's advice speaks of the Yahtzee bonus, and Kiriki's sheet has no bonus
row."""

import json

import pytest
from commands import run
from solutions import solved

from pentadice.advisor.batch_lines import parse_line
from pentadice.game import rules
from pentadice.game.sheet import Sheet, SheetError
from pentadice.tables import table

PENTA = rules.get_rules("penta")
YAHTZEE = rules.get_rules("yahtzee")
KIRIKI = rules.get_rules("kiriki")
BEST = "best\n" * 200

TYPED = {
    "Full_House": "full_house",
    "full-house": "full_house",
    "fullhouse": "full_house",
    "FULL HOUSE": "full_house",
    "fh": "full_house",
    "3k": "three_of_a_kind",
    "4k": "four_of_a_kind",
    "ss": "small_straight",
    "ls": "large_straight",
    "Aces": "ones",
    "Three of a kind": "three_of_a_kind",
}


@pytest.mark.parametrize(("typed", "box"), list(TYPED.items()))
def test_one_parser_of_box_names_everywhere(typed, box, penta_advisor):
    assert PENTA.parse_box(typed) == box
    points = 0 if box != "ones" else 3
    assert Sheet.parse(f"{typed}={points}", PENTA).boxes == {box: points}
    assert Sheet.read(json.dumps({typed: points}), PENTA).boxes == {box: points}
    line = json.dumps({"dice": [1, 2, 3, 4, 5], "sheet": {typed: points}})
    assert parse_line(PENTA, line).sheet.boxes == {box: points}


def test_the_five_of_a_kind_box_goes_by_the_rule_sets_name():
    assert YAHTZEE.parse_box("yahtzee") == KIRIKI.parse_box("Kiriki") == PENTA.parse_box("penta") == "penta"
    assert YAHTZEE.parse_box("penta") == "penta"  # the id is always understood
    with pytest.raises(rules.UnknownBox):
        PENTA.parse_box("yahtzee")
    assert Sheet.parse("yahtzee=50 yahtzee bonus=100 ones=1", YAHTZEE).penta_bonus == 100
    with pytest.raises(SheetError, match="Kiriki pays no bonus for further Kirikis"):
        Sheet.parse("kiriki=50 penta_bonus=100", KIRIKI)


def test_a_box_named_twice_under_two_names_is_refused():
    with pytest.raises(SheetError, match="given twice"):
        Sheet.parse("fh=25 full house=0", PENTA)


def test_advise_help_lists_the_box_names():
    result = run("advise", "--help")
    assert "full_house (fh, full)" in result.output and "three_of_a_kind (3k" in result.output


def test_sheet_file_takes_the_text_form_too(penta_table_dir, tmp_path):
    sheet = tmp_path / "sheet.txt"
    sheet.write_text("ones=3\nfull house=25\n")
    result = run(
        "advise", "1", "1", "3", "4", "6", "--sheet-file", str(sheet), "--json", "--data", str(penta_table_dir)
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["sheet"] == {"ones": 3, "full_house": 25}


def test_play_takes_the_same_names(penta_table_dir):
    result = run("play", "--players", "Ana", "--seed", "1", "--data", str(penta_table_dir), input="3k\n3k\n" + BEST)
    assert "Ana scores Three of a kind" in result.output.split("== Ana, turn 2")[0]


# Each rule set's own words.


def test_yahtzee_speaks_of_the_yahtzee_bonus(tmp_path, penta_solution):
    table.save(YAHTZEE, solved("yahtzee").values, tmp_path)
    result = run(
        "advise",
        "4",
        "4",
        "4",
        "4",
        "4",
        "--rules",
        "yahtzee",
        "--rolls-left",
        "0",
        "--sheet",
        "yahtzee=50 fours=12",
        "--data",
        str(tmp_path),
    )
    assert result.exit_code == 0, result.output
    assert "Yahtzee bonus" in result.output and "Penta" not in result.output


def test_kiriki_sheet_has_no_bonus_row(tmp_path):
    table.save(KIRIKI, solved("kiriki").values, tmp_path)
    result = run("play", "--rules", "kiriki", "--players", "Ana", "--seed", "2", "--data", str(tmp_path), input=BEST)
    assert result.exit_code == 0, result.output
    assert "Kiriki bonus" not in result.output and "Penta" not in result.output
