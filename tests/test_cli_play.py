"""`pentadice play`: scripted games end to end, the auto-commit, bad input, saving and resuming."""

import os
import subprocess
import sys
import threading

from click.testing import CliRunner

from pentadice.faces.cli import main

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
    assert "Not allowed: unknown command or box 'frobnicate'" in out
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
    lines = []  # the output up to the next turn, which starts once the box is filled for Ana (not a fixed wait)
    stuck = threading.Timer(120, proc.kill)  # a game that never fills the box: killed, its output ends
    stuck.start()
    try:
        while not lines or "turn 2 of 13" not in lines[-1]:
            line = proc.stdout.readline()
            assert line, f"no second turn: {''.join(lines)}{proc.stderr.read()}"
            lines.append(line)
    finally:
        stuck.cancel()
    proc.stdin.write("quit\n")
    proc.stdin.flush()
    out, err = proc.communicate(timeout=60)
    out = "".join(lines) + out
    assert proc.returncode == 0, err
    assert "(auto-commit)" in out and "Ana scores " in out
    assert "turn 2 of 13" in out


# The terminal game takes what the player means, and its save files are checked.

import io  # noqa: E402
import json  # noqa: E402

import pytest  # noqa: E402

from pentadice.game import rules  # noqa: E402
from pentadice.players.engine import Game, Player  # noqa: E402

PENTA = rules.get_rules("penta")


def one_line_error(result, code=2):
    """The command ended with ``code`` and one line, no usage banner, no traceback."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and "Usage:" not in result.output
    return result.output.strip().splitlines()[-1]


@pytest.mark.parametrize("value", ["inf", "1e300", "nan", "-1", "Infinity", "3 s"])
def test_auto_commit_must_be_finite_seconds_or_off(penta_table_dir, value):
    result = play(penta_table_dir, "--auto-commit", value)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "Invalid value for --auto-commit" in result.output
    assert "is not a number of seconds from 0 to 86400, or off" in result.output


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_pause_must_be_finite_seconds(penta_table_dir, value):
    result = play(penta_table_dir, "--players", "cpu", "--pause", value)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "Invalid value for" in result.output and "--pause" in result.output


def test_auto_commit_off_never_fills_a_box_and_is_saved(penta_table_dir, tmp_path):
    save = tmp_path / "g.json"
    result = play(penta_table_dir, "--players", "Ana", "--seed", "1", "--auto-commit", "off", "--save", str(save),
                  script="roll\nroll\n")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Ana, score which box? \n" in result.output and "auto-commit" not in result.output
    assert "Input ended" in result.output and "Ana scores" not in result.output
    data = json.loads(save.read_text())
    assert data["auto_commit_seconds"] is None and data["rolls_made"] == 3
    resumed = play(penta_table_dir, "--resume", str(save), script="")
    assert "auto-commit" not in resumed.output and "Ana scores" not in resumed.output


def test_auto_commit_given_on_resume_wins(penta_table_dir, tmp_path):
    save = tmp_path / "g.json"
    play(penta_table_dir, "--players", "Ana", "--seed", "1", "--auto-commit", "off", "--save", str(save), script="")
    play(penta_table_dir, "--resume", str(save), "--auto-commit", "2", script="")
    assert json.loads(save.read_text())["auto_commit_seconds"] == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'{"format": "pentadice-game", "auto_commit_seconds": Infinity}', "Infinity is not a number"),
        (b'{"format": "pentadice-game", "auto_commit_seconds": NaN}', "NaN is not a number"),
        (b"[" * 200_000, "nested more than 64 levels deep"),
        (b'{"format": "pentadice-game\xff\xfe"}', "not UTF-8 text"),
        (b"", "not valid JSON"),
    ],
)
def test_save_files_that_are_not_games_are_refused_in_one_line(penta_table_dir, tmp_path, text, message):
    bad = tmp_path / "bad.json"
    bad.write_bytes(text)
    assert message in one_line_error(play(penta_table_dir, "--resume", str(bad)))


def saved_game(path, mutate=None, seed=3, players=("Ana", "Bo"), rolls=1):
    g = Game(PENTA, [Player(n) for n in players], seed=seed)
    for _ in range(rolls):
        g.roll()
    data = json.loads(g.to_json())
    if mutate:
        mutate(data)
    path.write_text(json.dumps(data))
    return path


FULL = {b: 0 for b in rules.PENTA_RULES.box_ids} | {"chance": 22}


def _set(**changes):
    def mutate(data):
        for who, values in changes.items():
            target = data if who == "game" else data["players"][int(who[1:])]
            target.update(values)

    return mutate


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (_set(p0={"computer": "false"}), "computer must be true or false, not 'false'"),
        (_set(p0={"sheet": FULL | {"ones": 999, "penta": 50, "penta_bonus": -7}, "turns": 13}), "ones=999"),
        (_set(p0={"sheet": FULL, "turns": 13}, p1={"sheet": FULL, "turns": 13}), "dice are showing"),
        (_set(p0={"name": "\x1b]0;pwned\x07Ana"}), "control character"),
        (_set(game={"auto_commit_seconds": 1e300}), "auto-commit time is 0 to 86400"),
        (lambda d: d["rng"]["state"].update(state=-5), "rng state must be 0 to"),
        (lambda d: d["rng"].update(state="x"), "rng: state must be an object"),
    ],
)
def test_edited_save_files_are_refused_with_the_reason(penta_table_dir, tmp_path, mutate, message):
    path = saved_game(tmp_path / "g.json", mutate)
    line = one_line_error(play(penta_table_dir, "--resume", str(path)))
    assert line.startswith(f"Error: {path}: the saved game is damaged: ") and message in line
    assert "\x1b" not in line


def test_save_files_that_are_not_regular_or_too_large_are_refused_unread(penta_table_dir, tmp_path):
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as fh:
        fh.truncate(10**10)  # sparse: 10 GB that are never read
    assert "larger than 1 MB" in one_line_error(play(penta_table_dir, "--resume", str(huge)))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: reading it would hang
    assert "not a regular file" in one_line_error(play(penta_table_dir, "--resume", str(fifo)))
    assert "not a regular file" in one_line_error(play(penta_table_dir, "--resume", "/dev/zero"))
    assert "No such file" in one_line_error(play(penta_table_dir, "--resume", str(tmp_path / "none.json")))


def test_bytes_that_are_not_utf8_or_a_huge_line_do_not_end_the_game(penta_table_dir):
    script = b"\xff\xfe chance\n" + b"x" * 100_000 + b"\n" + BEST.encode()
    result = play(penta_table_dir, "--players", "Ana", "--seed", "1", script=script)
    assert result.exit_code == 0, result.output
    assert "Not read: that line is not UTF-8 text." in result.output
    assert "Not read: that line is longer than 4096 bytes." in result.output
    assert "Ana wins with" in result.output


class InterruptedInput(io.BytesIO):
    """Standard input that gives ``lines`` and then Ctrl-C (KeyboardInterrupt) as the player is asked again."""

    def readline(self, size=-1):
        line = super().readline(size)
        if not line:
            raise KeyboardInterrupt
        return line


def test_ctrl_c_saves_the_game_says_where_and_exits_130(penta_table_dir, tmp_path):
    save = tmp_path / "g.json"
    result = CliRunner().invoke(
        main,
        ["play", "--data", str(penta_table_dir), "--players", "Ana,cpu", "--seed", "5", "--save", str(save)],
        input=InterruptedInput(b"roll\n"),
    )
    assert result.exit_code == 130, result.output
    assert result.output.strip().splitlines()[-1] == f"Interrupted: game saved to {save}"
    game = Game.from_json(save.read_text())
    assert (game.current, game.rolls_made) == (0, 2)  # Ana's prompt after her reroll: nothing lost
    result = CliRunner().invoke(
        main, ["play", "--data", str(penta_table_dir), "--players", "Ana"], input=InterruptedInput(b"")
    )
    assert result.exit_code == 130
    assert result.output.strip().splitlines()[-1] == (
        "Interrupted: the game was not saved (start with --save FILE to keep it)"
    )


def test_quit_and_end_of_input_say_where_the_game_was_saved(penta_table_dir, tmp_path):
    save = tmp_path / "g.json"
    result = play(penta_table_dir, "--players", "Ana", "--seed", "1", "--save", str(save), script="quit\n")
    assert result.exit_code == 0
    assert result.output.strip().splitlines()[-1] == (
        f"Game saved to {save}; resume it with: pentadice play --resume {save}"
    )
    result = play(penta_table_dir, "--players", "Ana", "--seed", "1", "--save", str(save), script="")
    assert "Input ended: the game stops here.\nGame saved to " in result.output
    result = play(penta_table_dir, "--players", "Ana", "--seed", "1", script="quit\n")
    assert result.output.strip().splitlines()[-1] == (
        "The game was not saved: start with --save FILE (or type 'save FILE') to keep it."
    )


def sacrifice_save(path, rolls_made):
    g = Game(PENTA, [Player("Ana")], seed=2)
    g.players[0].boxes.update(
        {"ones": 2, "threes": 6, "fours": 8, "sixes": 12, "chance": 20, "three_of_a_kind": 0, "four_of_a_kind": 0}
        | {"small_straight": 0}
    )
    g.players[0].turns = 8
    g.dice, g.rolls_made = (1, 1, 3, 4, 6), rolls_made
    path.write_text(g.to_json())
    return path


def test_the_sacrifice_warning_only_on_the_last_roll_and_once(penta_table_dir, tmp_path):
    from pentadice.advisor import NO_SCORE_MESSAGE

    early = play(penta_table_dir, "--resume", str(sacrifice_save(tmp_path / "a.json", 2)), script="foo\nquit\n")
    assert early.exit_code == 0, early.output
    assert NO_SCORE_MESSAGE not in early.output
    last = play(penta_table_dir, "--resume", str(sacrifice_save(tmp_path / "b.json", 3)),
                script="foo\nsheet\nbest\nquit\n")  # fmt: skip
    assert last.exit_code == 0, last.output
    assert last.output.count(NO_SCORE_MESSAGE) == 1


def test_save_command_confirms_expands_home_and_uses_the_save_file(penta_table_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    result = play(penta_table_dir, "--players", "Ana", "--seed", "1", script="save\nsave ~/mine.json\nquit\n")
    assert "Not allowed: save needs a file name (or start with --save FILE)" in result.output
    assert f"Game saved to {tmp_path / 'mine.json'}; it is saved there after every box from now on." in result.output
    assert Game.from_json((tmp_path / "mine.json").read_text()).save_path == str(tmp_path / "mine.json")
    result = play(penta_table_dir, "--players", "Ana", "--seed", "1", "--save", "~/given.json", script="save\nquit\n")
    assert f"Game saved to {tmp_path / 'given.json'}." in result.output
    assert (tmp_path / "given.json").exists()


def test_a_save_file_that_can_never_be_written_is_refused_before_the_game(penta_table_dir, tmp_path):
    for bad in (tmp_path, tmp_path / "no" / "such" / "dir.json", "/dev/null"):
        result = play(penta_table_dir, "--players", "Ana", "--save", str(bad))
        assert result.exit_code == 2 and "== Ana" not in result.output, result.output


def test_resume_says_so_shows_the_turn_and_refuses_players_rules_seed(penta_table_dir, tmp_path):
    save = tmp_path / "g.json"
    play(penta_table_dir, "--players", "Ana,Bo", "--seed", "4", "--save", str(save), script="best\nquit\n")
    result = play(penta_table_dir, "--resume", str(save), script="quit\n")
    out = result.output
    assert f"Resumed the game saved in {save}: Ana to play, roll 2 of 3." in out
    assert out.index("Resumed") < out.index("== Ana, turn 1 of 13 ==") < out.index("Roll 2: ")
    for option in (["--players", "X"], ["--rules", "penta"], ["--seed", "4"]):
        result = play(penta_table_dir, "--resume", str(save), *option)
        assert result.exit_code == 2 and "come from the save file" in result.output
        assert option[0] in result.output


def test_hints_are_kept_in_the_save_file_and_an_explicit_choice_wins(penta_table_dir, tmp_path):
    save = tmp_path / "g.json"
    play(penta_table_dir, "--players", "Ana", "--seed", "4", "--hints", "--save", str(save), script="quit\n")
    assert "Hint: " in play(penta_table_dir, "--resume", str(save), script="quit\n").output
    assert "Hint: " not in play(penta_table_dir, "--resume", str(save), "--no-hints", script="quit\n").output
    assert "Hint: " not in play(penta_table_dir, "--resume", str(save), script="quit\n").output  # saved off
    assert "Hint: " in play(penta_table_dir, "--resume", str(save), "--hints", script="quit\n").output


def test_a_box_scoring_0_with_rerolls_left_asks_first(penta_table_dir):
    # Seed 11 rolls 1 1 3 4 5 first.
    script = "FULL HOUSE\nyes\nquit\n"
    out = play(penta_table_dir, "--players", "Ana", "--seed", "11", script=script).output
    assert "Roll 1: [1] [1] [3] [4] [5]" in out
    ask = "Full house scores 0 here and you have rerolls left; type it again (or 'yes') to confirm."
    assert out.index(ask) < out.index("Ana scores Full house: 0 points")
    out = play(penta_table_dir, "--players", "Ana", "--seed", "11", script="full house\nfull_house\nquit\n").output
    assert ask in out and "Ana scores Full house: 0 points" in out
    out = play(penta_table_dir, "--players", "Ana", "--seed", "11", script="full house\nroll\nyes\nquit\n").output
    assert "Ana scores" not in out and "Not allowed: there is nothing to confirm" in out
    out = play(penta_table_dir, "--players", "Ana", "--seed", "11", script="chance\nquit\n").output
    assert "Ana scores Chance: 14 points" in out and ask not in out


def test_keep_messages_say_what_is_wrong_and_which_dice_show(penta_table_dir):
    # Seed 6 rolls 3 3 4 4 6 first.
    out = play(penta_table_dir, "--players", "Ana", "--seed", "6", script="keep\nkeep 33\nkeep 3 3 3\nquit\n").output
    assert "Not allowed: keep which dice? Type them after keep, e.g. 'keep 4 4' ('roll' rerolls all)" in out
    assert (
        "Not allowed: '33' is not a die: a die shows 1 to 6 (to keep 2 dice, type them apart: 'keep 3 3'); "
        "the dice show 3 3 4 4 6"
    ) in out
    assert "Not allowed: cannot keep 3 3 3: the dice show 3 3 4 4 6 (only two 3s)" in out
    assert "Roll 2" not in out  # nothing was rerolled


def test_names_with_control_characters_are_refused(penta_table_dir):
    for spec in ("\x1b]0;pwned\x07Ana", "Ana,cpu:\x1b[2J", "A\u202eB"):
        result = play(penta_table_dir, "--players", spec)
        assert result.exit_code == 2 and "control character" in result.output
        assert "\x1b" not in result.output and "\u202e" not in result.output


@pytest.mark.parametrize(("seed", "totals"), [(1, [246, 240, 264]), (2, [233, 282, 257]), (3, [225, 375, 294])])
def test_seeded_games_end_as_before(penta_table_dir, seed, totals):
    args = ["--players", "Ana,cpu,Bo", "--seed", str(seed), "--pause", "0", "--auto-commit", "0"]
    result = play(penta_table_dir, *args, script="best\n" * 200)
    assert result.exit_code == 0, result.output
    assert [int(x) for x in next(x for x in result.output.splitlines() if x.startswith("TOTAL")).split()[1:]] == totals
    if seed == 1:  # and through a real pipe, as `yes best | pentadice play ...`
        exe = os.path.join(os.path.dirname(sys.executable), "pentadice")
        proc = subprocess.run(
            [exe, "play", "--data", str(penta_table_dir), *args],
            input="best\n" * 2000,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        assert (
            f"TOTAL {''.join(f'{t:>10}' for t in totals)}".split()
            == next(x for x in proc.stdout.splitlines() if x.startswith("TOTAL")).split()
        )


def test_a_failing_save_is_shown_and_the_game_goes_on(penta_table_dir, tmp_path, monkeypatch):
    import errno

    from pentadice.faces import terminal

    def full_disk(path, write):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(terminal, "write_file", full_disk)
    save = tmp_path / "g.json"
    result = play(penta_table_dir, "--players", "Ana", "--seed", "1", "--save", str(save))
    assert f"Warning: cannot save the game to {save}: No space left on device; the game goes on." in result.output
    assert "Ana wins with" in result.output
    assert one_line_error(result, 1) == f"Error: cannot save the game to {save}: No space left on device"


def test_ctrl_c_in_the_middle_of_a_move_saves_the_game_before_it(penta_advisor, tmp_path):
    from pentadice.faces.terminal import LineInput, TerminalGame
    from pentadice.players.engine import parse_players

    def out(text="", nl=True):
        if text.startswith("cpu scores"):  # the move is made; Ctrl-C before it is saved
            raise KeyboardInterrupt

    game = Game(PENTA, parse_players("cpu"), seed=8)
    front = TerminalGame(game, penta_advisor, LineInput(io.BytesIO(b"")), out, save_path=tmp_path / "g.json")
    with pytest.raises(KeyboardInterrupt):
        front.run()
    assert game.players[0].turns == 1  # the live game had moved on
    assert front.save_interrupted() == f"game saved to {tmp_path / 'g.json'}"
    saved = Game.from_json((tmp_path / "g.json").read_text())
    assert saved.players[0].turns == 0 and saved.dice is not None  # the last prompt: the move is played again
    replay = TerminalGame(saved, penta_advisor, LineInput(io.BytesIO(b"")), out)
    with pytest.raises(KeyboardInterrupt):
        replay.run()
    assert saved.players[0].boxes == game.players[0].boxes  # the same dice, the same move
