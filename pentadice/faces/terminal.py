"""The terminal front end of the game (``pentadice play``): draws dice and sheets, reads the players' commands,
and plays the computer. It talks through two small objects, so that a script (or a test) can drive a whole game:
an input source (:class:`~pentadice.faces.line_input.LineInput`: a script line by line, or a terminal key by
key, with type-ahead dropped and the auto-commit's countdown at the prompt) and an output function.

Its parts: :mod:`pentadice.faces.line_input` (reading lines, the terminal's handling),
:mod:`pentadice.faces.terminal_text` (what the game says, and a box or the dice as typed) and
:mod:`pentadice.faces.save_files` (save files read, and where a game may be saved); their names used by the
command line and the tests are importable from here as well. Names and paths are printed without control
characters (see :func:`pentadice.support.inputs.clean`).
"""

from __future__ import annotations

import contextlib
import math
import os
import shlex
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pentadice.advisor import Advisor, chances
from pentadice.faces import words
from pentadice.faces.line_input import (
    MAX_LINE,
    NOT_UTF8,
    TOO_LONG,
    InputRefused,
    LineInput,
    refused_text,
)
from pentadice.faces.save_files import check_save_path, is_saved_game, load_game
from pentadice.faces.terminal_text import (
    HELP,
    chances_text,
    names_box,
    parse_box,
    parse_keep,
    resumed_text,
    scored_text,
    shown,
)
from pentadice.faces.words import describe, dice_text, keep_text, sheet_text
from pentadice.game.moves import Keep, Score
from pentadice.players.engine import Game, GameError, computer_move
from pentadice.support import paths
from pentadice.support.i18n import _
from pentadice.support.inputs import clean
from pentadice.tables import atomic
from pentadice.tables.atomic import write_file

__all__ = [  # the names the command line and the tests import from here, those of its parts included
    "MAX_LINE",
    "NOT_UTF8",
    "TOO_LONG",
    "InputRefused",
    "LineInput",
    "TerminalGame",
    "check_save_path",
    "load_game",
]


@contextlib.contextmanager
def _signals_ignored() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP ignored for the block (a second Ctrl-C while the game is saved after the
    first)."""
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            previous[sig] = signal.signal(sig, signal.SIG_IGN)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class TerminalGame:
    """One game in a terminal: ``run()`` plays it to the end, or until the input ends or a player quits.

    ``out(text, nl=True)`` writes (``click.echo`` fits). After Ctrl-C (KeyboardInterrupt out of ``run``),
    :meth:`save_interrupted` saves the game as it stood at the last prompt.
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
        resumed_from: Path | None = None,
        show_chances: bool = False,
        chances_wait: bool = True,
    ) -> None:
        self.game, self.advisor, self.inp, self.out = game, advisor, inp, out
        # Each player's chance of winning after every box: computed in the background (early in a game it takes
        # seconds) and shown once ready, or waited for (chances_wait: a script reads them in a fixed place).
        self.show_chances, self.chances_wait = show_chances, chances_wait
        self._chances_due: list | None = None  # the sheets whose chances are still being computed
        self.hints, self.pause, self.resumed_from = hints, pause, resumed_from
        self.recorded_save_path = game.save_path  # where a resumed game says it was saved
        self.save_path: Path | None = None
        self._set_save_path(save_path)
        game.hints = hints
        self.checkpoint = game.to_json()  # the game at the last prompt: what Ctrl-C saves
        self.confirm: str | None = None  # a box scoring 0 with rerolls left, typed once
        self._headed = False  # the current turn's header is shown
        self._fresh = False  # the dice on show are new: the warning is not shown yet
        self._hint_due = False
        self._prompt_open = False  # a prompt waits on its line

    def _set_save_path(self, path: Path | None) -> None:
        self.save_path = path
        self.game.save_path = None if path is None else os.path.abspath(path)

    def run(self) -> bool:
        """Play until the game is over (True) or stops early (False)."""
        game = self.game
        names = ", ".join(clean(p.name) for p in game.players)
        self.out(
            _("{title}: {names}. Type 'help' for the commands.").format(title=words.title(game.rules), names=names)
        )
        if self.resumed_from is not None:
            self.out(resumed_text(game, self.resumed_from, self.recorded_save_path))
        with self.inp.session():
            try:
                while not game.over:
                    self.turn()
            except (EOFError, _Quit) as stop:
                saved = self._stop_text()  # saved first: the terminal may be gone
                self.out("" if isinstance(stop, _Quit) else "\n" + _("Input ended: the game stops here."))
                self.out(saved)
                return False
        self.out("\n" + sheet_text(game))
        winners = game.winners()
        best = game.totals(winners[0])["total"]
        if len(winners) == 1:
            self.out(_("{player} wins with {points} points.").format(player=clean(winners[0].name), points=best))
        else:
            names = (" " + _("and") + " ").join(clean(p.name) for p in winners)
            self.out(_("Tie at {points} points: {players}.").format(points=best, players=names))
        if self.save_path is not None:
            self.save(self.save_path)
        return True

    def _stop_text(self) -> str:
        """After quit or the end of input: the game saved, and the line saying where (or how to save it)."""
        if self.save_path is None:
            return _("The game was not saved: start with --save FILE (or type 'save FILE') to keep it.")
        self.save(self.save_path)
        where = clean(str(self.save_path))
        return _("Game saved to {path}; resume it with: {command}").format(
            path=where, command=f"pentadice play --resume {shlex.quote(where)}"
        )

    def save_interrupted(self) -> str:
        """After Ctrl-C: the game as it stood at the last prompt saved, if it has a file; says where (for
        ``Interrupted: ...``). A second Ctrl-C while it is written is ignored."""
        message = _("game saved to {path}").format(path=clean(str(self.save_path)))
        if self.save_path is None:
            message = _("the game was not saved (start with --save FILE to keep it)")
        else:
            with _signals_ignored():
                try:
                    self.save(self.save_path, self.checkpoint)
                except GameError as e:
                    message = _("the game was not saved: {reason}").format(reason=e)
                except KeyboardInterrupt:
                    pass  # noted while the file was renamed into place: it is written
        if self._prompt_open:
            with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
                self.out("")  # the line of the prompt ends
        return message

    def _mark(self) -> None:
        """The game is whole here (between moves): Ctrl-C from now on saves this."""
        self.checkpoint = self.game.to_json()

    def _header(self) -> None:
        game = self.game
        count, n = len(game.rules.boxes), game.turn_number
        player = clean(game.player.name)
        if n <= count:
            header = _("== {player}, turn {turn} of {turns} ==").format(player=player, turn=n, turns=count)
        else:
            header = _("== {player}, turn {turn} (extra turn) ==").format(player=player, turn=n)
        self.out("\n" + header)

    def _show_roll(self, kept: tuple[int, ...] = ()) -> None:
        """The dice, sorted; after a reroll the kept dice first, apart, so that the player sees what came."""
        game = self.game
        if kept and game.dice is not None:
            rolled = list(game.dice)
            for d in kept:
                rolled.remove(d)
            shown = _("{kept} kept | {rolled} rolled").format(kept=dice_text(kept), rolled=dice_text(tuple(rolled)))
        else:
            shown = dice_text(game.dice)
        self.out(_("Roll {roll}: {dice}").format(roll=game.rolls_made, dice=shown))
        self._fresh = self._hint_due = True
        self.confirm = None

    def turn(self) -> None:
        """One step: what the engine plays by itself (a first roll, a computer's move, a due auto-commit),
        shown; or, when a person must act, their command read and played."""
        game = self.game
        if game.dice is not None and not self._headed:  # a game resumed in the middle of a turn
            self._header()
            self._headed = True
            self._show_roll()
        if self._fresh:  # the rules' warning: once for each roll, on the last roll only
            self._fresh = False
            if game.warning:
                self.out(words.message(game.warning) + ".")
        self._mark()
        self._chances_ready()
        happened = game.advance(self.advisor, time.monotonic(), limit=1)
        if happened:
            self.show(happened[0])
        else:
            self.human_step()

    def show(self, event) -> None:
        """What the engine did by itself, for people."""
        game = self.game
        if isinstance(event, tuple):  # ("rolled", player, dice): a turn begins
            self._header()
            self._headed = True
            self._show_roll()
            return
        if event.computer and self.pause:
            time.sleep(self.pause)
        if event.scored is None:
            self.out(f"{clean(event.player)}: {keep_text(event.kept, game.rules).lower()}")
            self._show_roll(event.kept)
        else:
            self.out(scored_text(game, event.scored))
            self.chances_line()
            self.autosave()

    def play_computer_choice(self) -> None:
        """The advisor's best option for the current player (the `best` command), played and shown."""
        self.show(computer_move(self.game, self.advisor))

    def human_step(self) -> None:
        game = self.game
        advice = self.advisor.advise(game.situation())
        if self.hints and self._hint_due:
            self._hint_due = False
            self.out(
                _("Hint: {option} (expected final score {value})").format(
                    option=describe(advice.best, game.rules), value=f"{advice.best.value:.2f}"
                )
            )
        last = game.rolls_left == 0
        name = clean(game.player.name)
        prompt = (_("{player}, score which box?") if last else _("{player}, keep, roll or score?")).format(player=name)
        prompt += " "
        seconds = None if game.deadline is None else max(0.0, game.deadline - time.monotonic())
        line = self.read_choice(prompt, seconds)
        if line is None:  # the countdown ran out (typing paused it): the engine fills the box now
            self.show(game.advance(self.advisor, max(time.monotonic(), game.deadline or 0.0), limit=1)[0])
            return
        game.restart_countdown()  # the player acted: a new prompt counts down afresh
        try:
            self.command(line, advice)
        except GameError as e:
            self.out(_("Not allowed: {reason}").format(reason=clean(str(e))))

    def read_choice(self, prompt: str, seconds: float | None) -> str | None:
        """A command; None when the auto-commit is due (``seconds`` given: no choice within them, or no more
        input). Type-ahead at a terminal is dropped first."""
        self._prompt_open = True  # until a line is read: Ctrl-C ends the prompt's line first
        line = self._read_choice(prompt, seconds)
        self._prompt_open = False
        return line

    def _read_choice(self, prompt: str, seconds: float | None) -> str | None:
        self.inp.discard_pending()
        if self.inp.editing:
            while True:
                try:
                    line = self.inp.edit(prompt, seconds)
                except InputRefused as e:
                    self.out(_("Not read: {reason}.").format(reason=refused_text(e)))
                    continue
                if line is None or line.strip():
                    return None if line is None else line.strip()
        shown = (
            prompt
            if seconds is None
            else prompt + _("(auto-commit in {seconds} s)").format(seconds=math.ceil(seconds)) + " "
        )
        self.out(shown, nl=False)
        deadline = None if seconds is None else time.monotonic() + seconds
        while True:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                line = self.inp.readline(timeout)
            except EOFError:
                if seconds is None:
                    raise
                line = None  # the script ended: the auto-commit fills the box
            except InputRefused as e:
                self.out("")
                self.out(_("Not read: {reason}.").format(reason=refused_text(e)))
                self.out(shown, nl=False)
                continue
            if line is None:
                self.out("")
                return None
            if line.strip():
                if not self.inp.interactive:  # a script's commands stand after their prompts
                    self.out(clean(line.strip()))
                return line.strip()

    def command(self, line: str, advice) -> None:
        game = self.game
        word, _sep, rest = line.partition(" ")
        word, rest = word.lower(), rest.strip()
        confirm, self.confirm = self.confirm, None
        if word in ("help", "?"):
            self.confirm = confirm
            self.out(_(HELP))
        elif word == "sheet":
            self.confirm = confirm
            self.out(sheet_text(game))
        elif word == "chances":
            self.confirm = confirm
            self.chances_line(asked=True)
        elif word == "best":
            self.play_computer_choice()
            self.feedback(advice, 0.0)
        elif word == "quit":
            raise _Quit
        elif word == "save":
            self.save_command(rest)
        elif word == "yes":
            if confirm is None:
                raise GameError(_("there is nothing to confirm"))
            self.score_box(confirm, advice, confirmed=True)
        elif word in ("roll", "r", "keep", "k") or (word[0].isdigit() and not names_box(game.rules, line)):
            if word in ("roll", "r") and rest:
                raise GameError(_("'roll' rerolls all the dice; to keep some, type keep and them, e.g. 'keep 4 4'"))
            if word in ("keep", "k") and not rest:
                raise GameError(_("keep which dice? Type them after keep, e.g. 'keep 4 4' ('roll' rerolls all)"))
            keep = self.parse_dice(rest if word in ("keep", "k") else "" if word in ("roll", "r") else line)
            played = game.play(Keep(keep), self.advisor)
            self.feedback(advice, played.loss)
            self._show_roll(played.kept)
        else:
            if word in ("score", "s"):
                if not rest:
                    raise GameError(_("score which box? e.g. 'score chance'"))
                box = parse_box(game.rules, rest)
            else:
                try:
                    box = parse_box(game.rules, line)
                except GameError:
                    raise GameError(
                        _("unknown command or box {text}; type 'help' for the commands").format(text=shown(line))
                    ) from None
            self.score_box(box, advice, confirmed=box == confirm)

    def score_box(self, box: str, advice, confirmed: bool = False) -> None:
        """Fill ``box``; a box that scores nothing while rerolls are left is filled only once confirmed."""
        game = self.game
        legal, bonus = game.legal_boxes()
        if not confirmed and game.rolls_left > 0 and legal.get(box) == 0 and not bonus:
            self.confirm = box
            self.out(
                _("{box} scores 0 here and you have rerolls left; type it again (or 'yes') to confirm.").format(
                    box=words.box_name(game.rules, box)
                )
            )
            return
        played = game.play(Score(box), self.advisor)
        self.out(scored_text(game, played.scored))
        self.feedback(advice, played.loss)
        self.chances_line()
        self.autosave()

    def chances_line(self, asked: bool = False) -> None:
        """``Chances: Ana 41 %, cpu 59 %``: after every box (with ``--chances``) while the game goes on and
        has several players, or when ``asked`` (the ``chances`` command: waited for)."""
        game, rs, values = self.game, self.game.rules, self.advisor.values
        if not asked and (not self.show_chances or game.over or len(game.players) < 2):
            return
        sheets = [p.sheet for p in game.players]
        try:
            if asked or self.chances_wait:
                shares = chances.win_chances(rs, values, sheets)
            else:
                shares = chances.known_chances(rs, values, sheets)
        except chances.ChancesUnavailable:
            if asked:
                self.out(_("The chances cannot be computed here."))
            self._chances_due = None
            return
        self._chances_due = sheets if shares is None else None
        if shares is not None:
            self.out(chances_text(game, shares))

    def _chances_ready(self) -> None:
        """The chances computed in the background since the last box, shown once ready."""
        due = self._chances_due
        if due is None or self.game.over:
            return
        try:
            shares = chances.known_chances(self.game.rules, self.advisor.values, due)
        except chances.ChancesUnavailable:
            self._chances_due = None
            return
        if shares is not None:
            self._chances_due = None
            self.out(chances_text(self.game, shares))

    def parse_dice(self, text: str) -> tuple[int, ...]:
        """Faces to keep: single digits, separated by spaces or commas (see :func:`parse_keep`)."""
        return parse_keep(text, self.game.dice)

    def feedback(self, advice, loss: float | None) -> None:
        """With hints: what the move cost against the best (the engine's figure)."""
        if not self.hints or loss is None:
            return
        if loss <= 1e-9:
            self.out(_("Best choice."))
        else:
            self.out(
                _("That cost {loss} points against the best: {option}.").format(
                    loss=f"{loss:.2f}", option=describe(advice.best, self.game.rules)
                )
            )

    def save_command(self, name: str) -> None:
        """``save [FILE]``: the game saved (to FILE, or to the save file); FILE is the save file from then on."""
        if len(name) >= 2 and name[0] == name[-1] and name[0] in "'\"":
            name = name[1:-1]
        if not name:
            if self.save_path is None:
                raise GameError(_("save needs a file name (or start with --save FILE)"))
            target = self.save_path
        else:
            try:
                target = paths.expand(name)
            except paths.PathError as e:
                raise GameError(str(e)) from None
        before = self.save_path
        self._set_save_path(target)
        try:
            self.save(target)
        except GameError:
            self._set_save_path(before)
            raise
        where = clean(str(target))
        if before is not None and os.path.abspath(before) == os.path.abspath(target):
            self.out(_("Game saved to {path}.").format(path=where))
        else:
            self.out(_("Game saved to {path}; it is saved there after every box from now on.").format(path=where))

    def autosave(self) -> None:
        """After a box: the game saved to its file, if it has one; a failure is shown and the game goes on."""
        if self.save_path is None:
            return
        try:
            self.save(self.save_path)
        except GameError as e:
            self.out(_("Warning: {reason}; the game goes on.").format(reason=e))

    def save(self, target: Path, text: str | None = None) -> None:
        """Write the game (``text``: a checkpoint; else the game now, which becomes the checkpoint)."""
        if text is None:
            text = self.checkpoint = self.game.to_json()
        data = text.encode()
        try:
            write_file(atomic.target(target, replaces=is_saved_game), lambda fh: fh.write(data))
        except atomic.TargetError as e:
            raise GameError(f"cannot save the game: {clean(str(e))}") from None
        except OSError as e:
            raise GameError(f"cannot save the game to {clean(str(target))}: {e.strerror or e}") from None


class _Quit(Exception):
    """A player typed quit."""
