"""What the command line takes and how it words its answers: ``advise`` reads dice however they are typed (one
word, five words, commas) from its arguments or standard input and names a bad die; its advice counts the
boxes filled and the points so far and says how many dice to reroll in words; ``play`` shows kept dice apart from
rolled ones, the expected final score, what the roll would score and the running total, calls one computer
player ``cpu`` and fits six players' sheet in 80 columns; ``simulate`` draws, prints and stores its seed, gives
percentiles as whole scores and lines its summary up; a bash completion script is produced and the README says
how to get it; and no colour is ever written."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from commands import run

from pentadice.faces.cli import main

ROOT = Path(__file__).resolve().parent.parent
BEST = "best\n" * 200


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


# Shell completion and colour.


def test_the_documentation_mentions_shell_completion_and_colour():
    readme = (ROOT / "docs" / "getting-started.md").read_text()
    assert "_PENTADICE_COMPLETE=bash_source pentadice" in readme and "NO_COLOR" in readme


def test_shell_completion_script_is_produced():
    exe = Path(sys.executable).parent / "pentadice"
    env = dict(os.environ, _PENTADICE_COMPLETE="bash_source")
    proc = subprocess.run([str(exe)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0 and "_pentadice_completion" in proc.stdout


def test_no_colour_is_ever_written(penta_table_dir):
    args = ["advise", "1", "1", "3", "4", "6", "--data", str(penta_table_dir)]
    result = CliRunner().invoke(main, args, env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in result.output
