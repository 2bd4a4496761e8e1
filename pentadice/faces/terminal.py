"""The terminal front end of the game: draws dice and sheets, reads the players' commands, and plays the
computer. It talks through two small objects, so that a script (or a test) can drive a whole game:
an input source (:class:`LineInput`) and an output function.

Piped input is a script, read line by line. At a terminal the game reads what the player means:

- input typed before a prompt opens (during the computer's turns, or as the auto-commit fires) is discarded,
  so that it never applies to a roll not yet seen;
- when standard output is a terminal too, the line is edited here (the terminal is put in non-canonical mode,
  without echo, for the game): the prompt shows the auto-commit countdown, second by second; typing pauses it,
  and an emptied line starts it again.

Every line is at most :data:`MAX_LINE` bytes of UTF-8 text; another line is refused with a message, and the
game goes on. Names and paths are printed without control characters (see :func:`pentadice.support.inputs.clean`).
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import select
import shlex
import signal
import stat
import time
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

from pentadice.advisor import Advisor, chances
from pentadice.faces import words
from pentadice.faces.words import describe, dice_text, keep_text, sheet_text
from pentadice.game import rules
from pentadice.game.moves import Keep, Score
from pentadice.players.engine import MAX_SAVE_BYTES, SAVE_FORMAT, Game, GameError, Scored, computer_move
from pentadice.support import paths
from pentadice.support.i18n import N_, _
from pentadice.support.inputs import clean
from pentadice.tables import atomic
from pentadice.tables.atomic import write_file

MAX_LINE = 4096  # bytes in a command line
NOT_UTF8 = N_("that line is not UTF-8 text")
TOO_LONG_TEXT = N_("that line is longer than {limit} bytes")
TOO_LONG = TOO_LONG_TEXT.format(limit=MAX_LINE)

HELP = N_("""Commands:
  keep 1 1 4   keep these dice and reroll the others (also: k 1 1 4, or just 1 1 4)
  roll         reroll all the dice (also: r)
  score fours  fill a box (also: s fours, or just the box: fours, "full house", ...)
               a box that scores 0 while rerolls are left asks first: type it again, or yes
  best         play the computer's choice (its best keep or box)
  sheet        show the score sheets
  chances      show each player's chance of winning, from the sheets as they stand
  save [FILE]  save the game (to FILE, or to the --save file), to resume it with `pentadice play --resume FILE`;
               the game is saved there after every box from then on
  quit         stop playing (the game is saved if it has a file; Ctrl-D and Ctrl-C too)
After the last roll the box is filled for you if you choose nothing within the auto-commit time
(at a terminal the prompt counts down; typing pauses it).""")


class InputRefused(GameError):
    """A line that is not read as a command: not UTF-8 text, or longer than :data:`MAX_LINE` bytes."""


def _refused(e: InputRefused) -> str:
    """Why a line was not read, in the language spoken now."""
    reason = str(e)
    return _(TOO_LONG_TEXT).format(limit=MAX_LINE) if reason == TOO_LONG else _(reason)


def _decode(raw: bytes) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if len(raw) > MAX_LINE:
        raise InputRefused(TOO_LONG)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputRefused(NOT_UTF8) from None


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False


def _width(text: str) -> int:
    """Columns the text takes at a terminal (wide East Asian characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


class LineInput:
    """Lines from a file descriptor or a stream, with an optional time limit for each line.

    On a descriptor it keeps its own buffer, so that a line already read from the pipe is never waited for;
    reading is linear in the input, and a line longer than :data:`MAX_LINE` bytes is skipped (refused) without
    being kept. ``echo``: where to draw the line being edited when the input is a terminal; given a terminal,
    :meth:`session` puts the input in non-canonical mode and :meth:`edit` reads lines key by key.
    """

    def __init__(self, stream, echo=None) -> None:
        self.stream = stream
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None
        self.interactive = self.fd is not None and os.isatty(self.fd)
        self.echo = echo if self.interactive and echo is not None and _isatty(echo) else None
        self._buf = bytearray()
        self._pos = 0  # start of the next line in _buf
        self._scan = 0  # where the search for a newline goes on
        self._skipping = False  # in a line too long: dropped until its newline
        self._esc = 0  # in an escape sequence typed at the terminal (arrow keys ...): 1 ESC, 2 CSI, 3 SS3
        self._wake: int | None = None  # read end of the pipe that signals (SIGCONT, SIGWINCH) write to
        self._editing = False
        self._raw: list | None = None  # the terminal settings of the session

    @property
    def editing(self) -> bool:
        """Whether lines are edited here, key by key (:meth:`edit`): inside :meth:`session` at a terminal."""
        return self._editing

    # Scripts: line by line.

    def readline(self, timeout: float | None = None) -> str | None:
        """The next line, None when ``timeout`` seconds pass without one; EOFError at the end of input;
        :class:`InputRefused` for a line that is too long or not UTF-8 (the next line is read next time)."""
        if self.fd is None:
            if self.stream is None:  # standard input closed (`<&-`)
                raise EOFError
            return self._readline_stream()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            line = self._take_line()
            if line is not None:
                return line
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = select.select([self.fd], [], [], wait)[0]
            if not ready:
                return None
            chunk = self._read(65536)
            if not chunk:
                if self._pos < len(self._buf) or self._skipping:
                    self._buf += b"\n"  # the last line, without its newline
                    continue
                raise EOFError
            self._buf += chunk

    def _take_line(self) -> str | None:
        """A whole line from the buffer, or None (the buffer keeps the start of the next one)."""
        nl = self._buf.find(b"\n", self._scan)
        if nl < 0:
            del self._buf[: self._pos]  # at most one line's start is moved: linear
            self._pos = 0
            self._scan = len(self._buf)
            if len(self._buf) > MAX_LINE + 1:
                self._skipping = True
                self._buf.clear()
                self._scan = 0
            return None
        raw = bytes(self._buf[self._pos : nl])
        self._pos = self._scan = nl + 1
        if self._skipping:
            self._skipping = False
            raise InputRefused(TOO_LONG)
        return _decode(raw)

    def _readline_stream(self) -> str:
        """A line from a stream without a descriptor (a test's input): bytes when it has them."""
        source = getattr(self.stream, "buffer", None) or self.stream
        limit = MAX_LINE + 2  # the line, "\r" and "\n"
        line = source.readline(limit)
        if not line:
            raise EOFError
        newline = b"\n" if isinstance(line, bytes) else "\n"
        too_long = False
        while not line.endswith(newline) and len(line) >= limit:
            too_long = True
            line = source.readline(65536)  # the rest of the line is dropped, a piece at a time
            if not line:
                break
        if too_long:
            raise InputRefused(TOO_LONG)
        line = line[: -len(newline)] if line.endswith(newline) else line
        if isinstance(line, bytes):
            return _decode(line)
        line = line.removesuffix("\r")
        if len(line.encode("utf-8", "surrogatepass")) > MAX_LINE:
            raise InputRefused(TOO_LONG)
        return line

    def discard_pending(self) -> None:
        """At a terminal: drop whatever was typed before now (type-ahead), in the terminal and in the buffer.
        A script (piped input) keeps every line."""
        if not self.interactive:
            return
        import termios

        with contextlib.suppress(termios.error, OSError):
            termios.tcflush(self.fd, termios.TCIFLUSH)
        self._buf.clear()
        self._pos = self._scan = 0
        self._skipping = False
        self._esc = 0

    # A terminal: key by key.

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """For the whole game at a terminal (input and output): non-canonical input without echo, so that
        :meth:`edit` sees each key; Ctrl-C still interrupts. The terminal's settings are restored after (also
        after Ctrl-Z and ``fg``, which set them again). Elsewhere it does nothing."""
        if self.echo is None or self.fd is None:
            yield
            return
        import termios

        fd = self.fd
        try:
            old = termios.tcgetattr(fd)
        except termios.error:
            yield
            return
        new = termios.tcgetattr(fd)
        new[3] &= ~(termios.ICANON | termios.ECHO | termios.IEXTEN)
        new[6][termios.VMIN] = 1
        new[6][termios.VTIME] = 0
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)

        def on_signal(signum: int, frame: object) -> None:
            if signum == signal.SIGCONT:  # back from Ctrl-Z: the shell has set its own settings
                with contextlib.suppress(termios.error):
                    termios.tcsetattr(fd, termios.TCSANOW, new)
            with contextlib.suppress(OSError):
                os.write(wake_w, b"!")  # the line is drawn again

        previous = {}
        for sig in (signal.SIGCONT, signal.SIGWINCH):
            with contextlib.suppress(ValueError, OSError):  # only the main thread may set handlers
                previous[sig] = signal.signal(sig, on_signal)
        try:
            termios.tcsetattr(fd, termios.TCSANOW, new)
            self._wake, self._editing, self._raw = wake_r, True, new
            yield
        finally:
            self._wake, self._editing, self._raw = None, False, None
            with contextlib.suppress(termios.error):
                termios.tcsetattr(fd, termios.TCSAFLUSH, old)  # what was typed for the game stays here
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            os.close(wake_r)
            os.close(wake_w)

    def edit(self, prompt: str, seconds: float | None = None) -> str | None:
        """A line typed at the terminal after ``prompt``, edited here (Backspace, Ctrl-U, Ctrl-W). With
        ``seconds``, the prompt counts them down and None is returned when they run out with the line empty;
        typing pauses the count, and emptying the line starts it again. EOFError: Ctrl-D on an empty line, or
        the terminal is gone. :class:`InputRefused`: the line is not UTF-8."""
        assert self.fd is not None
        text = bytearray()
        deadline = None if seconds is None else time.monotonic() + seconds
        shown: tuple[str, bytes] | None = None
        while True:
            wait = None
            if deadline is None:
                status = ""
            elif text:
                status = _("(auto-commit paused)") + " "
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._draw(prompt, "", text, end="\n")
                    return None
                whole = math.ceil(remaining)
                status = _("(auto-commit in {seconds} s)").format(seconds=whole) + " "
                wait = remaining - (whole - 1)  # until the number shown changes
            if shown != (status, bytes(text)):
                self._draw(prompt, status, text)
                shown = (status, bytes(text))
            if self._settings_lost():
                shown = None
            watched = [self.fd] if self._wake is None else [self.fd, self._wake]
            # Every half second at most: the settings are checked again (a shell may set its own after fg).
            ready = select.select(watched, [], [], 0.5 if wait is None else min(wait, 0.5))[0]
            if self._wake is not None and self._wake in ready:
                with contextlib.suppress(OSError):
                    os.read(self._wake, 1024)
                shown = None
            if self.fd not in ready:
                continue
            chunk = self._read(1024)
            if not chunk:
                raise EOFError
            had_text = bool(text)
            if self._keys(chunk, text):
                self._draw(prompt, "", text, end="\n")
                return _decode(bytes(text))
            if had_text and not text and seconds is not None:
                deadline = time.monotonic() + seconds

    def _read(self, size: int) -> bytes:
        """Bytes from the descriptor; b"" (the end) also when the terminal is gone (EIO after a hang-up)."""
        try:
            return os.read(self.fd, size)
        except OSError as e:
            if e.errno == errno.EIO:
                return b""
            raise

    def _settings_lost(self) -> bool:
        """Put the session's terminal settings back if something changed them (a shell after Ctrl-Z and fg);
        True if it did."""
        if self._raw is None:
            return False
        import termios

        try:
            if termios.tcgetattr(self.fd)[3] & (termios.ICANON | termios.ECHO) == 0:
                return False
            termios.tcsetattr(self.fd, termios.TCSANOW, self._raw)
        except termios.error:
            return False
        return True

    def _keys(self, chunk: bytes, text: bytearray) -> bool:
        """Apply the keys of ``chunk`` to ``text``; True at Enter (what follows it is dropped: type-ahead)."""
        for b in chunk:
            if self._esc == 1:  # ESC [ ... (CSI), ESC O x (SS3), or ESC and one key (Alt-x)
                self._esc = 2 if b == 0x5B else 3 if b == 0x4F else 0
            elif self._esc == 2:
                if 0x40 <= b <= 0x7E:
                    self._esc = 0
            elif self._esc == 3:
                self._esc = 0
            elif b == 0x1B:
                self._esc = 1
            elif b in (0x0D, 0x0A):
                return True
            elif b in (0x7F, 0x08):  # Backspace: one character, all its UTF-8 bytes
                while text and text[-1] & 0xC0 == 0x80:
                    text.pop()
                if text:
                    text.pop()
            elif b == 0x15:  # Ctrl-U
                text.clear()
            elif b == 0x17:  # Ctrl-W: the last word
                while text and text[-1] == 0x20:
                    text.pop()
                while text and text[-1] != 0x20:
                    text.pop()
            elif b == 0x04:  # Ctrl-D
                if not text:
                    raise EOFError
            elif b < 0x20:
                pass  # other control keys do nothing
            elif len(text) < MAX_LINE:
                text.append(b)
            else:
                self._write("\a")
        return False

    def _draw(self, prompt: str, status: str, text: bytearray, end: str = "") -> None:
        """The prompt line again, from its start: the end of a long line when it does not fit."""
        typed = clean(bytes(text).decode("utf-8", "replace"))
        head = prompt + status
        try:
            columns = os.get_terminal_size(self.echo.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, OSError, ValueError):
            columns = 80
        room = max(columns - 1 - _width(head), 8)
        if _width(typed) > room:
            while typed and _width(typed) > room - 1:
                typed = typed[1:]
            typed = "<" + typed
        self._write("\r\x1b[K" + head + typed + end)

    def _write(self, text: str) -> None:
        assert self.echo is not None
        self.echo.write(text)
        self.echo.flush()


def check_save_path(path: Path) -> None:
    """Refuse, before the game starts, a save file that could never be written (a directory, a device, a pipe,
    a file in a directory that does not exist or cannot be written) or that is some other file than a saved
    game, which saving would destroy. (A symbolic link is followed.)"""
    try:
        atomic.target(path, replaces=is_saved_game)
    except atomic.TargetError as e:
        raise GameError(f"cannot save the game: {clean(str(e))}") from None


def is_saved_game(path: Path) -> bool:
    """Whether ``path`` looks like a saved game (so that saving may replace it): its start names the format."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return head.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"{") and SAVE_FORMAT.encode() in head  # BOM


def load_game(path: Path) -> Game:
    """The game saved in ``path``: a regular file of at most a megabyte (read no further), checked whole by
    :meth:`Game.from_json`; GameError naming what is wrong."""
    shown = clean(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe given by mistake must not hang
    except OSError as e:
        raise GameError(f"cannot read the saved game {shown}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise GameError(f"{shown} is not a regular file: not a saved game")
        if st.st_size > MAX_SAVE_BYTES:
            raise GameError(f"{shown} is larger than {MAX_SAVE_BYTES >> 20} MB: not a saved pentadice game")
        chunks, size = [], 0
        while size <= MAX_SAVE_BYTES:
            chunk = os.read(fd, MAX_SAVE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise GameError(f"cannot read the saved game {shown}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    try:
        return Game.from_json(b"".join(chunks))
    except GameError as e:
        raise GameError(f"{shown}: {e}") from None


def parse_box(rs: rules.RuleSet, text: str) -> str:
    """A box as the player names it (ids, names in English or the language spoken, short forms); GameError
    otherwise."""
    try:
        return words.parse_box(rs, text)
    except rules.UnknownBox as e:
        raise GameError(str(e)) from None


def _names_box(rs: rules.RuleSet, text: str) -> bool:
    """Whether ``text`` names a box (``3k``, ``4k`` start with a digit, as kept dice do)."""
    try:
        words.parse_box(rs, text)
    except rules.UnknownBox:
        return False
    return True


def _shown(text: str, limit: int = 40) -> str:
    """Typed text in a message: quoted, escaped, cut short."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def percent_text(p: float) -> str:
    """A probability as a whole percentage, never rounded to a certainty it is not: ``<1 %``, ``>99 %``."""
    if 0 < p < 0.005:
        return _("<1 %")
    if 0.995 <= p < 1:
        return _(">99 %")
    return _("{percent} %").format(percent=round(100 * p))


def chances_text(game: Game, shares: list[float]) -> str:
    """``Chances: Ana 41 %, cpu 59 %``: each player's probability of finishing first (see
    :mod:`pentadice.advisor.chances`)."""
    parts = ", ".join(f"{clean(p.name)} {percent_text(c)}" for p, c in zip(game.players, shares, strict=True))
    return _("Chances: {players}").format(players=parts)


def scored_text(game: Game, s: Scored) -> str:
    """What a box earned, as :func:`pentadice.faces.words.scored_text` says it, with the player's running total."""
    text = words.scored_text(game.rules, clean(s.player), s.box, s.points, s.penta_bonus, s.upper_bonus)
    text += " " + _("(auto-commit)") if s.auto else ""
    player = next(p for p in game.players if p.name == s.player)
    return text + "; " + _("total {points}").format(points=game.totals(player)["total"])


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
            self.out(self._resumed_text())
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

    def _resumed_text(self) -> str:
        game = self.game
        where = clean(str(self.resumed_from))
        if game.over:
            return _("Resumed the game saved in {path}: it is over.").format(path=where)
        player = clean(game.player.name)
        if game.dice is not None:
            text = _("Resumed the game saved in {path}: {player} to play, roll {roll} of {rolls}.").format(
                path=where, player=player, roll=game.rolls_made, rolls=game.rules.rolls
            )
        else:
            text = _("Resumed the game saved in {path}: {player} to play.").format(path=where, player=player)
        recorded, now = self.recorded_save_path, self.game.save_path
        if recorded is not None and now is not None and recorded != now:
            text += " " + _("It was saved to {old}; from now on it is saved to {new}.").format(
                old=clean(recorded), new=clean(now)
            )
        return text

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
                    self.out(_("Not read: {reason}.").format(reason=_refused(e)))
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
                self.out(_("Not read: {reason}.").format(reason=_refused(e)))
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
        elif word in ("roll", "r", "keep", "k") or (word[0].isdigit() and not _names_box(game.rules, line)):
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
                        _("unknown command or box {text}; type 'help' for the commands").format(text=_shown(line))
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
        """Faces to keep: single digits, separated by spaces or commas."""
        words = text.replace(",", " ").split()
        for w in words:
            if len(w) != 1 or w not in "0123456789":
                showing = " ".join(map(str, self.game.dice or ()))
                split = (
                    " "
                    + _("(to keep {n} dice, type them apart: {command})").format(
                        n=len(w), command=f"'keep {' '.join(w)}'"
                    )
                    if w.isascii() and w.isdigit()
                    else ""
                )
                raise GameError(
                    _("{text} is not a die: a die shows 1 to 6{split}; the dice show {dice}").format(
                        text=_shown(w), split=split, dice=showing
                    )
                )
        return tuple(int(w) for w in words)

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
