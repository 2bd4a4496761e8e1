"""`pentadice play` at a real terminal (tmux): the visible countdown that typing pauses, type-ahead discarded,
Ctrl-C and Ctrl-D saving the game and giving the terminal back as it was.

Each test starts the game in a detached tmux session of its own (its own server socket), sends keys and reads
the screen, polling with a generous deadline; the server is killed in the end whatever happens.
"""

import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest
import reduced_games
from commands import SMALL_CLI

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

EXE = os.path.join(os.path.dirname(sys.executable), "pentadice")
DEADLINE = 60.0  # seconds to wait for a screen: far beyond what any takes


class Tmux:
    def __init__(self, socket) -> None:
        self.socket = str(socket)

    def __call__(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, check=True, timeout=30
        ).stdout

    def start(self, command: str) -> None:
        """Run ``command`` in a shell; the shell then says how it ended and whether the terminal's settings
        came back, and stays for the screen to be read."""
        script = (
            f"before=$(stty -g); {command}; echo exit=$?; "
            '[ "$before" = "$(stty -g)" ] && echo terminal-restored; sleep 600'
        )
        self("new-session", "-d", "-x", "120", "-y", "50", "bash", "-c", script)  # bash: Ctrl-C ends only the game

    def screen(self) -> str:
        return self("capture-pane", "-p", "-J", "-S", "-200")

    def wait_for(self, text: str, count: int = 1) -> str:
        """The screen once ``text`` shows on it ``count`` times."""
        end = time.monotonic() + DEADLINE
        while True:
            screen = self.screen()
            if screen.count(text) >= count:
                return screen
            if time.monotonic() > end:
                raise AssertionError(f"{text!r} never showed on the screen:\n{screen}")
            time.sleep(0.05)

    def keys(self, *keys: str) -> None:
        self("send-keys", *keys)


@pytest.fixture
def tmux(tmp_path):
    t = Tmux(tmp_path / "tmux.sock")
    try:
        yield t
    finally:
        subprocess.run(["tmux", "-S", t.socket, "kill-server"], capture_output=True, timeout=30)


def game_command(table_dir, *args: str) -> str:
    return shlex.join([EXE, "play", "--data", str(table_dir), *args])


def small_game_command(*args: str) -> str:
    """A game of the small game standing for Penta (tests/reduced_pentadice.py), on the session's tables with the
    chances table that a game of two or more shows at a terminal (not built again here, about 25 s for Penta)."""
    return shlex.join([*SMALL_CLI, "play", *args])


SMALL_TURNS = len(reduced_games.as_rule_set("penta").boxes)


def test_the_countdown_shows_and_typing_pauses_it(tmux, penta_table_dir):
    tmux.start(game_command(penta_table_dir, "--players", "Ana", "--seed", "3", "--auto-commit", "2"))
    tmux.wait_for("Ana, keep, roll or score?")
    tmux.keys("roll", "Enter")
    tmux.wait_for("Roll 2:")
    tmux.wait_for("Ana, keep, roll or score?", 2)
    tmux.keys("r", "Enter")
    tmux.wait_for("Roll 3:")
    tmux.wait_for("Ana, score which box? (auto-commit in 2 s)")
    tmux.wait_for("Ana, score which box? (auto-commit in 1 s)")  # it counts down, on the same line
    tmux.keys("c", "h", "Left", "Up")  # arrow keys: swallowed, never printed
    tmux.wait_for("Ana, score which box? (auto-commit paused) ch\n")
    time.sleep(3)  # longer than the 2 s countdown: paused, it fills nothing
    screen = tmux.screen()
    assert "Ana scores" not in screen and "(auto-commit paused) ch\n" in screen
    tmux.keys("BSpace", "BSpace")  # the line is empty again: the countdown starts again, from 2
    screen = tmux.wait_for("(auto-commit)")
    assert "Ana scores " in screen and "== Ana, turn 2 of 13 ==" in screen
    assert screen.count("Ana, score which box?") == 1  # redrawn in place: one line
    assert "[D" not in screen and "[A" not in screen


def test_type_ahead_during_the_computers_turn_is_discarded(tmux, small_game_tables):
    tmux.start(
        small_game_command("--data", str(small_game_tables), "--players", "cpu,Ana", "--seed", "3", "--pause", "1")
    )
    tmux.wait_for(f"== cpu, turn 1 of {SMALL_TURNS} ==")
    tmux.keys("chance", "Enter")  # typed while the computer plays: not for a roll not yet seen
    tmux.wait_for("Ana, keep, roll or score?")
    tmux.keys("sheet", "Enter")
    screen = tmux.wait_for("TOTAL")
    assert "Ana scores" not in screen
    chance = next(line for line in screen.splitlines() if line.startswith("Chance "))
    assert chance.split()[-1] == ".", screen  # Ana's Chance box (the last column): still open


def test_ctrl_c_saves_says_where_exits_130_and_restores_the_terminal(tmux, small_game_tables, tmp_path, penta_is_small):
    save = tmp_path / "game.json"
    tmux.start(
        small_game_command("--data", str(small_game_tables), "--players", "Ana,cpu", "--seed", "5", "--save", str(save))
    )
    tmux.wait_for("Ana, keep, roll or score?")
    tmux.keys("ro")  # half a line
    tmux.wait_for("Ana, keep, roll or score? ro")
    tmux.keys("C-c")
    screen = tmux.wait_for("terminal-restored")
    assert f"\nInterrupted: game saved to {save}\nexit=130\n" in screen
    from pentadice.players.engine import Game

    game = Game.from_json(save.read_text())
    assert (game.current, game.rolls_made) == (0, 1)


def test_ctrl_d_saves_says_where_and_exits_0(tmux, penta_table_dir, tmp_path):
    save = tmp_path / "game.json"
    tmux.start(game_command(penta_table_dir, "--players", "Ana", "--seed", "5", "--save", str(save)))
    tmux.wait_for("Ana, keep, roll or score?")
    tmux.keys("C-d")
    screen = tmux.wait_for("terminal-restored")
    assert "Input ended: the game stops here." in screen
    assert f"Game saved to {save}; resume it with: pentadice play --resume {save}\nexit=0\n" in screen


def test_closing_the_terminal_saves_the_game(tmux, penta_table_dir, tmp_path):
    save = tmp_path / "game.json"
    tmux.start(game_command(penta_table_dir, "--players", "Ana", "--seed", "5", "--save", str(save)))
    tmux.wait_for("Ana, keep, roll or score?")
    tmux.keys("roll", "Enter")
    tmux.wait_for("Roll 2:")
    tmux.wait_for("Ana, keep, roll or score?", 2)
    tmux("kill-session")  # the terminal goes away: SIGHUP
    end = time.monotonic() + DEADLINE
    while not save.exists() and time.monotonic() < end:
        time.sleep(0.05)
    from pentadice.players.engine import Game

    assert Game.from_json(save.read_text()).rolls_made == 2


def test_ctrl_z_and_fg_give_the_game_its_terminal_back(tmux, penta_table_dir):
    tmux("new-session", "-d", "-x", "120", "-y", "50", "env", "PS1=shell$ ", "bash", "--norc", "--noprofile", "-i")
    tmux.wait_for("shell$")
    command = game_command(penta_table_dir, "--players", "Ana", "--seed", "3", "--auto-commit", "off")
    tmux.keys(command, "Enter")
    tmux.wait_for("Ana, keep, roll or score?")
    tmux.keys("ro")
    tmux.wait_for("Ana, keep, roll or score? ro")
    tmux.keys("C-z")
    tmux.wait_for("Stopped")
    tmux.keys("fg", "Enter")  # the shell sets its own terminal settings, then the game takes them back
    tmux.wait_for("shell$ fg")
    time.sleep(1)  # the game checks its settings every half second
    tmux.keys("ll", "Enter")
    screen = tmux.wait_for("Roll 2:")
    assert "Ana, keep, roll or score? roll\nRoll 2:" in screen
    assert "\nll\n" not in screen  # not echoed by the terminal in canonical mode
