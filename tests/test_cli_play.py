"""`pentadice play`: scripted games end to end, the auto-commit, bad input, saving and resuming."""

import os
import subprocess
import sys
import time

from click.testing import CliRunner

from pentadice.cli import main

BEST = "best\n" * 120  # more than enough: the extra lines are never read


def play(data, *args, script=BEST):
    return CliRunner().invoke(main, ["play", "--data", str(data), *args], input=script)


def test_scripted_two_player_game_runs_to_the_final_scores(penta_table_dir):
    result = play(penta_table_dir, "--players", "Ana,Bo", "--seed", "7")
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.count("== Ana, turn ") == 13 and out.count("== Bo, turn ") == 13
    assert "TOTAL" in out
    last = out.strip().splitlines()[-1]
    assert last.endswith(" points.") and ("wins with" in last or last.startswith("Tie at"))
    totals = [int(x) for x in next(line for line in out.splitlines() if line.startswith("TOTAL")).split()[1:]]
    assert len(totals) == 2 and str(max(totals)) in last


def test_the_same_seed_and_script_give_the_same_transcript(penta_table_dir):
    a = play(penta_table_dir, "--players", "Ana,cpu", "--seed", "42", "--hints")
    b = play(penta_table_dir, "--players", "Ana,cpu", "--seed", "42", "--hints")
    assert a.exit_code == 0 and a.output == b.output
    c = play(penta_table_dir, "--players", "Ana,cpu", "--seed", "43", "--hints")
    assert c.output != a.output


def test_bad_commands_are_refused_and_the_game_goes_on(penta_table_dir):
    script = "keep 7\nscore sevens\nr\nr\nr\nfrobnicate\nbest\n" + BEST
    result = play(penta_table_dir, "--players", "Ana", "--seed", "1", script=script)
    out = result.output
    assert result.exit_code == 0, out
    assert "Not allowed: cannot keep 7: the dice show" in out
    assert "Not allowed: unknown box 'sevens'" in out
    assert "Not allowed: no rolls left: score the dice in a box" in out
    assert "Not allowed: unknown box 'frobnicate'" in out
    assert "Ana wins with" in out


def test_filled_box_is_refused(penta_table_dir):
    result = play(penta_table_dir, "--players", "Ana", "--seed", "1", script="chance\nchance\n" + BEST)
    assert "Not allowed: Chance is already filled" in result.output


def test_hints_show_the_recommendation_and_the_cost(penta_table_dir):
    result = play(penta_table_dir, "--players", "Ana", "--seed", "1", "--hints", script="chance\n" + BEST)
    out = result.output
    assert "Hint: " in out and "(expected " in out
    assert "That cost " in out or "Best choice." in out
    assert "Best choice." in out  # the 'best' moves cost nothing


def test_input_ending_early_stops_and_saves(penta_table_dir, tmp_path):
    save = tmp_path / "game.json"
    result = play(penta_table_dir, "--players", "Ana,cpu", "--seed", "5", "--save", str(save), script="best\n")
    assert result.exit_code == 0
    assert "Input ended: the game stops here." in result.output
    assert save.exists()


def test_resumed_game_ends_as_the_uninterrupted_one(penta_table_dir, tmp_path):
    whole = play(penta_table_dir, "--players", "Ana,cpu", "--seed", "12")
    save = tmp_path / "game.json"
    first = play(
        penta_table_dir, "--players", "Ana,cpu", "--seed", "12", "--save", str(save), script="best\n" * 10 + "quit\n"
    )
    assert first.exit_code == 0 and save.exists()
    rest = play(penta_table_dir, "--resume", str(save))
    assert rest.exit_code == 0, rest.output
    assert rest.output.splitlines()[-1] == whole.output.splitlines()[-1]
    assert rest.output.split("\n\n")[-2:] == whole.output.split("\n\n")[-2:]  # the same final sheets


def test_bad_options_are_usage_errors(penta_table_dir, tmp_path):
    assert "two players are called 'Ana'" in play(penta_table_dir, "--players", "Ana,Ana").output
    assert play(penta_table_dir, "--players", "Ana,Ana").exit_code == 2
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "pentadice-game", "rules": "penta"}')
    result = play(penta_table_dir, "--resume", str(broken))
    assert result.exit_code == 2 and "the saved game is damaged" in result.output
    result = play(penta_table_dir, "--rules", "kniffel")
    assert result.exit_code == 2


def test_auto_commit_after_the_last_roll_when_nobody_chooses(penta_table_dir):
    exe = os.path.join(os.path.dirname(sys.executable), "pentadice")
    cmd = [exe, "play", "--players", "Ana", "--seed", "3", "--auto-commit", "0.3", "--data", str(penta_table_dir)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdin.write("roll\nroll\n")
    proc.stdin.flush()
    time.sleep(2.0)  # well past the 0.3 s: the box is filled for Ana
    proc.stdin.write("quit\n")
    proc.stdin.flush()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "(auto-commit)" in out and "Ana scores " in out
    assert "turn 2 of 13" in out
