"""The lines a player types, read for the terminal game (:class:`LineInput`), from a script or at a terminal.

Piped input is a script, read line by line. At a terminal the game reads what the player means:

- input typed before a prompt opens (during the computer's turns, or as the auto-commit fires) is discarded
  (:meth:`LineInput.discard_pending`), so that it never applies to a roll not yet seen;
- when standard output is a terminal too, the line is edited here (:meth:`LineInput.session` puts the terminal
  in non-canonical mode, without echo, for the game; :meth:`LineInput.edit` reads it key by key): the prompt
  shows the auto-commit countdown, second by second; typing pauses it, and an emptied line starts it again.

Every line is at most :data:`MAX_LINE` bytes of UTF-8 text; another line is refused (:class:`InputRefused`),
and the game goes on.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import select
import signal
import time
import unicodedata
from collections.abc import Iterator

from pentadice.players.engine import GameError
from pentadice.support.i18n import N_, _
from pentadice.support.inputs import clean

MAX_LINE = 4096  # bytes in a command line
NOT_UTF8 = N_("that line is not UTF-8 text")
TOO_LONG_TEXT = N_("that line is longer than {limit} bytes")
TOO_LONG = TOO_LONG_TEXT.format(limit=MAX_LINE)


class InputRefused(GameError):
    """A line that is not read as a command: not UTF-8 text, or longer than :data:`MAX_LINE` bytes."""


def refused_text(e: InputRefused) -> str:
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
