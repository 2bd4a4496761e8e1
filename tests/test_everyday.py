"""Everyday use: one table location, box names as people type them, each rule set's own words, one option
name for the table directory, dice however typed, wording, simulate's output."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from pentadice.advisor.batch_lines import parse_line
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.sheet import Sheet, SheetError
from pentadice.support import paths

PENTA = rules.get_rules("penta")
YAHTZEE = rules.get_rules("yahtzee")
KIRIKI = rules.get_rules("kiriki")
ROOT = Path(__file__).resolve().parent.parent
BEST = "best\n" * 200


def run(*args, input=None, env=None):
    return CliRunner().invoke(main, list(args), input=input, env=env)


# One table location.


def test_a_checkout_uses_its_data_folder_without_anything_exported(monkeypatch):
    monkeypatch.delenv(paths.ENV_VAR, raising=False)
    if paths.checkout_data() is None:
        pytest.skip("not run from a source checkout with data/")
    assert paths.locate() == (ROOT / "data", "checkout")
    monkeypatch.setenv(paths.ENV_VAR, "/somewhere")
    assert paths.locate() == (Path("/somewhere"), f"${paths.ENV_VAR}")
    assert paths.locate("/given") == (Path("/given"), "--data")


def test_outside_a_checkout_the_user_data_directory(monkeypatch, tmp_path):
    monkeypatch.delenv(paths.ENV_VAR, raising=False)
    monkeypatch.setattr(paths, "CHECKOUT", tmp_path)  # no pyproject.toml of pentadice there
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert paths.locate() == (tmp_path / "xdg" / "pentadice", "user")


def test_where_says_which_directory_and_which_tables(penta_table_dir):
    result = run("where", "--data", str(penta_table_dir))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"Table directory: {penta_table_dir} (given by --data)"
    assert "penta                 solved: expected score 254.4848458817" in result.output
    assert "kiriki                not solved yet" in result.output
    data = json.loads(run("where", "--data", str(penta_table_dir), "--json").output)
    assert data["source"] == "--data" and data["tables"]["penta"].startswith("solved")


def test_make_table_does_nothing_when_nothing_changed(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("no make")
    installed = ROOT / ".venv" / ".installed"
    if not installed.exists():
        pytest.skip("make install has not run")
    data = tmp_path / "data"
    data.mkdir()
    plan = subprocess.run(["make", "-n", "table", f"DATA={data}"], cwd=ROOT, capture_output=True, text=True)
    assert f"pentadice solve --rules penta --data {data}" in plan.stdout  # missing: solved
    (data / "penta.win-end-4.json").write_text("{}")  # written last: it stands for the whole set
    up_to_date = subprocess.run(["make", "-q", "table", f"DATA={data}"], cwd=ROOT)
    assert up_to_date.returncode == 0  # newer than its sources and the install: nothing to do


def test_solve_takes_data_and_out_as_one_option(tmp_path):
    for option in ("--data", "--out"):
        result = run("solve", "--skip", "chances,win,win-end", option, str(tmp_path / option.strip("-")), "--json")
        assert result.exit_code == 0, result.output
        assert (tmp_path / option.strip("-") / "penta.npy").exists()


def test_python_m_pentadice_works():
    proc = subprocess.run([sys.executable, "-m", "pentadice", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "Usage: pentadice" in proc.stdout and "where" in proc.stdout


# Box names as people type them.

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
    from solutions import solved

    from pentadice.tables import table

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
    from solutions import solved

    from pentadice.tables import table

    table.save(KIRIKI, solved("kiriki").values, tmp_path)
    result = run("play", "--rules", "kiriki", "--players", "Ana", "--seed", "2", "--data", str(tmp_path), input=BEST)
    assert result.exit_code == 0, result.output
    assert "Kiriki bonus" not in result.output and "Penta" not in result.output


# Dice however typed, from arguments or standard input.


@pytest.mark.parametrize("dice", [["13346"], ["1", "3", "3", "4", "6"], ["1,3,3,4,6"]])
def test_dice_as_typed(penta_table_dir, dice):
    result = run("advise", *dice, "--json", "--data", str(penta_table_dir))
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["dice"] == [1, 3, 3, 4, 6]


def test_dice_from_standard_input(penta_table_dir):
    exe = [sys.executable, "-m", "pentadice", "advise", "--json", "--data", str(penta_table_dir)]
    proc = subprocess.run(exe, input="1 1 3 4 6\n", capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["dice"] == [1, 1, 3, 4, 6]
    bad = subprocess.run(exe, input="1 1 3 x 6\n", capture_output=True, text=True)
    assert bad.returncode == 2 and "not 'x'" in bad.stderr


# Wording.


def test_wording_of_advise(penta_table_dir):
    result = run("advise", "1", "1", "3", "4", "6", "--sheet", "chance=20", "--data", str(penta_table_dir))
    assert "1 box filled, 20 points so far" in result.output
    assert "keep 4, reroll four dice" in result.output and ", reroll 4 " not in result.output


def test_play_shows_kept_dice_apart_totals_and_the_rolls_scores(penta_table_dir):
    script = "keep 6\nsheet\nchance\n" + BEST
    result = run("play", "--players", "Ana", "--seed", "1", "--hints", "--data", str(penta_table_dir), input=script)
    out = result.output
    assert "(expected final score " in out
    assert "[6] kept | " in out and " rolled" in out
    assert "Ana's roll [" in out and "would score: Ones" in out
    assert "Ana scores Chance: " in out and "; total " in out


def test_one_computer_is_cpu_and_six_players_fit_80_columns(penta_table_dir):
    players = "cpu,Alexandra Longname,Bartholomew,Christopher,Dominique Q,Eleanor Rigby"
    result = run(
        "play", "--players", players, "--seed", "1", "--pause", "0", "--data", str(penta_table_dir), input=BEST * 4
    )
    assert result.exit_code == 0, result.output
    assert "== cpu, turn 1 of 13 ==" in result.output
    sheet = result.output[result.output.rindex("TOTAL") - 2000 :]
    assert max(len(line) for line in sheet.splitlines()) <= 80


# simulate.


def test_simulate_draws_prints_and_stores_its_seed(penta_table_dir, tmp_path):
    out = tmp_path / "games.parquet"
    result = run("simulate", "-n", "300", "--out", str(out), "--data", str(penta_table_dir))
    assert result.exit_code == 0, result.output
    seed = int(result.output.split("(seed ")[1].split(")")[0])
    games = pq.read_table(out)
    assert games.schema.metadata[b"seed"] == str(seed).encode()
    assert games.schema.field("penta_bonus").type == games.schema.field("ones").type  # int16 both
    again = run("simulate", "-n", "300", "--seed", str(seed), "--json", "--data", str(penta_table_dir))
    assert json.loads(again.output)["mean"] == pytest.approx(float(np.mean(games.column("total").to_numpy())))


def test_simulate_json_percentiles_are_scores_and_no_extra_turns_in_penta(penta_table_dir):
    data = json.loads(run("simulate", "-n", "500", "--seed", "1", "--json", "--data", str(penta_table_dir)).output)
    assert all(isinstance(v, int) for v in data["percentiles"].values())
    assert "extra_turns_distribution" not in data


def test_simulate_summary_lines_align(penta_table_dir):
    out = run("simulate", "-n", "200", "--seed", "1", "--data", str(penta_table_dir)).output
    line = next(x for x in out.splitlines() if x.startswith("Solved mean:"))
    assert line.startswith("Solved mean:       254.485")
    assert "Percentiles:       1%: " in out and ".0" not in out.split("Percentiles:")[1].splitlines()[0]


def test_readme_mentions_shell_completion_and_colour():
    readme = (ROOT / "README.md").read_text()
    assert "_PENTADICE_COMPLETE=bash_source pentadice" in readme and "NO_COLOR" in readme


def test_shell_completion_script_is_produced():
    exe = Path(sys.executable).parent / "pentadice"
    env = dict(os.environ, _PENTADICE_COMPLETE="bash_source")
    proc = subprocess.run([str(exe)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0 and "_pentadice_completion" in proc.stdout


def test_no_colour_is_ever_written(penta_table_dir):
    result = run("advise", "1", "1", "3", "4", "6", "--data", str(penta_table_dir), env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in result.output
