"""The terminal front end of the game: draws dice and sheets, reads the players' commands, and plays the
computer. It talks through two small objects, so that a script (or a test) can drive a whole game:
an input source (:class:`LineInput`) and an output function.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from pathlib import Path

from pentadice import rules
from pentadice.advisor import Advisor
from pentadice.advisor.words import describe
from pentadice.atomic import write_file
from pentadice.game.engine import Game, GameError, Scored, computer_move

HELP = """Commands:
  keep 1 1 4   keep these dice and reroll the others (also: k 1 1 4, or just 1 1 4)
  roll         reroll all the dice (also: r)
  score fours  fill a box (also: s fours, or just the box: fours, "full house", ...)
  best         play the computer's choice (its best keep or box)
  sheet        show the score sheets
  save FILE    save the game, to resume it with `pentadice play --resume FILE`
  quit         stop playing
After the last roll the box is filled for you if you choose nothing within the auto-commit time."""


class LineInput:
    """Lines from a file descriptor or a stream, with an optional time limit for each line.

    On a descriptor it keeps its own buffer, so that a line already read from the pipe is never waited for.
    """

    def __init__(self, stream) -> None:
        self.stream = stream
        self.buffer = b""
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None
        self.interactive = self.fd is not None and os.isatty(self.fd)

    def readline(self, timeout: float | None = None) -> str | None:
        """The next line, None when ``timeout`` seconds pass without one; EOFError at the end of input."""
        if self.fd is None:
            line = self.stream.readline()
            if not line:
                raise EOFError
            return (line.decode() if isinstance(line, bytes) else line).rstrip("\r\n")
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                return None
            chunk = os.read(self.fd, 4096)
            if not chunk:
                if self.buffer:
                    line, self.buffer = self.buffer, b""
                    return line.decode().rstrip("\r")
                raise EOFError
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode().rstrip("\r")


def dice_text(dice: tuple[int, ...]) -> str:
    return " ".join(f"[{d}]" for d in dice)


def sheet_text(game: Game) -> str:
    """All players' sheets side by side, with the totals."""
    rs = game.rules
    width = max(10, *(len(p.name) + 2 for p in game.players))
    head = f"{'':<18}" + "".join(f"{p.name:>{width}}" for p in game.players)
    lines = [head, "-" * len(head)]

    def row(label: str, cells: list[str]) -> None:
        lines.append(f"{label:<18}" + "".join(f"{c:>{width}}" for c in cells))

    totals = [game.totals(p) for p in game.players]
    for box in rs.boxes:
        if box == "three_of_a_kind":
            row("Upper", [str(t["upper"]) for t in totals])
            row(f"Bonus ({rs.upper_threshold}+)", [str(t["upper_bonus"]) for t in totals])
        row(rs.box_name(box), [str(p.boxes[box]) if box in p.boxes else "." for p in game.players])
    row("Lower", [str(t["lower"]) for t in totals])
    row(f"{rs.box_name('penta')} bonus", [str(t["penta_bonus"]) for t in totals])
    row("TOTAL", [str(t["total"]) for t in totals])
    return "\n".join(lines)


def parse_box(rs: rules.RuleSet, text: str) -> str:
    """A box from its id or its name, any case, spaces or underscores."""
    key = text.strip().lower().replace(" ", "_")
    for box in rs.boxes:
        if key in (box, rs.box_name(box).lower().replace(" ", "_")):
            return box
    raise GameError(f"unknown box {text.strip()!r}; boxes: {' '.join(rs.boxes)}")


def scored_text(game: Game, s: Scored) -> str:
    rs = game.rules
    text = f"{s.player} scores {rs.box_name(s.box)}: {s.points} point{'s' if s.points != 1 else ''}"
    if s.penta_bonus:
        text += f" + {s.penta_bonus} {rs.box_name('penta')} bonus"
    if s.upper_bonus:
        text += f" + {s.upper_bonus} upper bonus"
    return text + (" (auto-commit)" if s.auto else "")


class TerminalGame:
    """One game in a terminal: ``run()`` plays it to the end, or until the input ends or a player quits.

    ``out(text, nl=True)`` writes (``click.echo`` fits).
    """

    def __init__(
        self,
        game: Game,
        advisor: Advisor,
        inp: LineInput,
        out: Callable[..., None],
        hints: bool = False,
        pause: float = 0.0,
        save_path: Path | None = None,
    ) -> None:
        self.game, self.advisor, self.inp, self.out = game, advisor, inp, out
        self.hints, self.pause, self.save_path = hints, pause, save_path

    def run(self) -> bool:
        """Play until the game is over (True) or stops early (False)."""
        game = self.game
        self.out(f"{game.rules.title}: {', '.join(p.name for p in game.players)}. Type 'help' for the commands.")
        try:
            while not game.over:
                self.turn()
        except (EOFError, _Quit) as stop:
            self.out("" if isinstance(stop, _Quit) else "\nInput ended: the game stops here.")
            self.save()
            return False
        self.out("\n" + sheet_text(game))
        winners = game.winners()
        best = game.totals(winners[0])["total"]
        if len(winners) == 1:
            self.out(f"{winners[0].name} wins with {best} points.")
        else:
            self.out(f"Tie at {best} points: {' and '.join(p.name for p in winners)}.")
        self.save()
        return True

    def turn(self) -> None:
        game = self.game
        player = game.player
        if game.dice is None:
            count, n = len(game.rules.boxes), game.turn_number
            of = f"of {count}" if n <= count else "(extra turn)"
            self.out(f"\n== {player.name}, turn {n} {of} ==")
            game.roll()
        self.out(f"Roll {game.rolls_made}: {dice_text(game.dice)}")
        while game.player is player and game.dice is not None:
            if game.warning:
                self.out(game.warning + ".")
            if player.computer:
                self.computer_step()
            else:
                self.human_step()

    def computer_step(self) -> None:
        if self.pause:
            time.sleep(self.pause)
        self.play_computer_choice()

    def play_computer_choice(self) -> None:
        """The advisor's best option for the current player, played and shown."""
        game = self.game
        name = game.player.name
        option, scored = computer_move(game, self.advisor)
        if scored is None:
            self.out(f"{name}: {describe(option, game.rules).lower()}")
            self.out(f"Roll {game.rolls_made}: {dice_text(game.dice)}")
        else:
            self.out(scored_text(game, scored))
            self.save()

    def human_step(self) -> None:
        game = self.game
        advice = self.advisor.advise(game.situation())
        if self.hints:
            self.out(f"Hint: {describe(advice.best, game.rules)} (expected {advice.best.value:.2f})")
        last = game.rolls_left == 0
        if last:
            prompt = f"{game.player.name}, score which box? (auto-commit in {game.auto_commit_seconds:g} s) "
        else:
            prompt = f"{game.player.name}, keep, roll or score? "
        self.out(prompt, nl=False)
        line = self.read_choice(last)
        if line is None or not self.inp.interactive:  # a script's commands stand after their prompts
            self.out(line or "")
        if line is None:
            self.out(scored_text(game, game.auto_commit(self.advisor)))
            self.save()
            return
        try:
            self.command(line, advice)
        except GameError as e:
            self.out(f"Not allowed: {e}")

    def read_choice(self, last: bool) -> str | None:
        """A command; None when the auto-commit is due (no choice within the time, or no more input)."""
        deadline = time.monotonic() + self.game.auto_commit_seconds
        while True:
            timeout = max(0.0, deadline - time.monotonic()) if last else None
            try:
                line = self.inp.readline(timeout)
            except EOFError:
                if last:
                    return None
                raise
            if line is None:
                return None
            if line.strip():
                return line.strip()

    def command(self, line: str, advice) -> None:
        game = self.game
        word, _, rest = line.partition(" ")
        word = word.lower()
        if word in ("help", "?"):
            self.out(HELP)
        elif word == "best":
            self.play_computer_choice()
            self.feedback(advice, advice.best)
        elif word == "sheet":
            self.out(sheet_text(game))
        elif word == "quit":
            raise _Quit
        elif word == "save":
            if not rest.strip():
                raise GameError("save needs a file name")
            self.save(Path(rest.strip()))
        elif word in ("roll", "r", "keep", "k") or word.isdigit():
            keep_text = rest if word in ("keep", "k") else "" if word in ("roll", "r") else line
            keep = self.parse_dice(keep_text)
            if game.rolls_left == 0:
                raise GameError("no rolls left: score the dice in a box")
            game.roll(keep)
            self.feedback(advice, advice.option_for(keep=keep) if len(keep) < game.rules.dice else None)
            self.out(f"Roll {game.rolls_made}: {dice_text(game.dice)}")
        else:
            box = parse_box(game.rules, rest if word in ("score", "s") else line)
            option = next((o for o in advice.options if o.box == box), None)
            self.out(scored_text(game, game.score(box)))
            self.feedback(advice, option)
            self.save()

    def parse_dice(self, text: str) -> tuple[int, ...]:
        try:
            return tuple(int(x) for x in text.replace(",", " ").split())
        except ValueError:
            raise GameError(f"dice are numbers 1 to 6, not {text.strip()!r}") from None

    def feedback(self, advice, option) -> None:
        if not self.hints or option is None:
            return
        if option.loss <= 1e-9:
            self.out("Best choice.")
        else:
            self.out(f"That cost {option.loss:.2f} points against the best: {describe(advice.best, self.game.rules)}.")

    def save(self, path: Path | None = None) -> None:
        target = path or self.save_path
        if target is None:
            return
        text = self.game.to_json().encode()
        try:
            write_file(target, lambda fh: fh.write(text))
        except OSError as e:
            raise GameError(f"cannot save the game to {target}: {e.strerror or e}") from None


class _Quit(Exception):
    """A player typed quit."""
