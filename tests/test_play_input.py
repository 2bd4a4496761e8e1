"""`pentadice play`'s input: lines bounded and read in linear time, bytes that are not UTF-8 refused line by line,
and the terminal line editor (driven through a pseudo-terminal)."""

import io
import os
import threading
import time

import pytest

from pentadice.faces.terminal import MAX_LINE, NOT_UTF8, TOO_LONG, InputRefused, LineInput


def pipe_input(data: bytes) -> LineInput:
    """A LineInput on the read end of a pipe, fed ``data`` by a thread (a pipe holds only 64 KB)."""
    r, w = os.pipe()

    def feed() -> None:
        with os.fdopen(w, "wb") as fh:
            fh.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return LineInput(os.fdopen(r, "rb", buffering=0))


def read_all(inp: LineInput) -> list[str]:
    """Every line, a refused one as 'REFUSED: message'."""
    out = []
    while True:
        try:
            out.append(inp.readline())
        except InputRefused as e:
            out.append(f"REFUSED: {e}")
        except EOFError:
            return out


@pytest.mark.parametrize("make", [pipe_input, lambda data: LineInput(io.BytesIO(data))], ids=["pipe", "stream"])
def test_a_line_too_long_or_not_utf8_is_refused_and_the_next_is_read(make):
    data = (
        b"roll\n" + b"x" * (MAX_LINE + 1) + b"\n" + b"keep 1 \xff\xfe\n" + b"chance\r\n" + b"y" * MAX_LINE + b"\nlast"
    )
    assert read_all(make(data)) == [
        "roll",
        f"REFUSED: {TOO_LONG}",
        f"REFUSED: {NOT_UTF8}",
        "chance",
        "y" * MAX_LINE,
        "last",
    ]


@pytest.mark.parametrize("make", [pipe_input, lambda data: LineInput(io.BytesIO(data))], ids=["pipe", "stream"])
def test_a_32_mb_line_is_skipped_in_linear_time(make):
    # Quadratic reading (the buffer searched whole after each chunk) took 68 s of processor time for this;
    # linear takes well under a second. Processor time, not wall time: a busy machine does not change it.
    inp = make(b"z" * (32 << 20) + b"\nchance\n")
    start = time.process_time()
    assert read_all(inp) == [f"REFUSED: {TOO_LONG}", "chance"]
    assert time.process_time() - start < 15


def test_many_short_lines_in_one_chunk_are_read_in_linear_time():
    lines = 200_000
    inp = pipe_input(b"best\n" * lines)
    start = time.process_time()
    assert len(read_all(inp)) == lines
    assert time.process_time() - start < 15


def test_a_pipe_line_waited_for_times_out_and_is_read_whole_later():
    r, w = os.pipe()
    inp = LineInput(os.fdopen(r, "rb", buffering=0))
    os.write(w, b"cha")
    assert inp.readline(timeout=0.05) is None  # half a line: the time runs out
    os.write(w, b"nce\n")
    assert inp.readline(timeout=5) == "chance"
    os.close(w)
    with pytest.raises(EOFError):
        inp.readline(timeout=5)


def test_text_streams_are_bounded_too():
    inp = LineInput(io.StringIO("a" * (MAX_LINE + 10) + "\nok\n"))
    assert read_all(inp) == [f"REFUSED: {TOO_LONG}", "ok"]


# The line editor at a terminal, through a pseudo-terminal.


class Pty:
    """A LineInput on the terminal side of a pseudo-terminal; ``type`` sends keys from the other side."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        self.tty = os.fdopen(self.slave, "r+b", buffering=0)
        self.echo = open(os.dup(self.slave), "w", encoding="utf-8", closefd=True)  # noqa: SIM115
        self.inp = LineInput(self.tty, echo=self.echo)

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def screen(self) -> bytes:
        """What the program drew so far (read from the terminal's other side)."""
        out = b""
        os.set_blocking(self.master, False)
        try:
            while True:
                out += os.read(self.master, 65536)
        except (BlockingIOError, OSError):
            return out

    def close(self) -> None:
        self.echo.close()
        self.tty.close()
        os.close(self.master)


@pytest.fixture
def pty():
    p = Pty()
    try:
        yield p
    finally:
        p.close()


def edit_after(pty: Pty, keys: bytes, seconds=None, delay: float = 0.2):
    """Run the editor in the session, the keys typed after ``delay`` (once the prompt is open)."""
    timer = threading.Timer(delay, pty.type, [keys])
    timer.start()
    try:
        with pty.inp.session():
            assert pty.inp.editing
            return pty.inp.edit("Ana, score which box? ", seconds)
    finally:
        timer.cancel()


def test_editor_keys_backspace_ctrl_u_ctrl_w_and_arrow_keys(pty):
    keys = b"xx\x15fours\x7f\x7f\x7f\x7f\x7f\x1b[D\x1b[Achan\x1bOCce junk\x17\r"
    assert edit_after(pty, keys) == "chance "  # Ctrl-W leaves the space before the word, as in a shell
    screen = pty.screen()
    assert b"\x1b[D" not in screen and b"[A" not in screen  # arrow keys are swallowed, never echoed


def test_editor_backspace_removes_a_whole_utf8_character(pty):
    assert edit_after(pty, "Jos\u00e9\x7fe\r".encode()) == "Jose"


def test_editor_refuses_a_line_that_is_not_utf8(pty):
    with pytest.raises(InputRefused, match=NOT_UTF8):
        edit_after(pty, b"ch\xe9\r")


def test_editor_ctrl_d_on_an_empty_line_ends_the_input(pty):
    with pytest.raises(EOFError):
        edit_after(pty, b"\x04")


def test_editor_countdown_runs_out_with_the_line_empty(pty):
    assert edit_after(pty, b"", seconds=0.3) is None
    assert b"auto-commit in 1 s" in pty.screen()


def test_editor_typing_pauses_the_countdown(pty):
    # The countdown is 0.5 s; the keys typed at 0.1 s pause it, and Enter comes at 1.2 s: no auto-commit.
    timer = threading.Timer(1.2, pty.type, [b"\r"])
    timer.start()
    try:
        assert edit_after(pty, b"ch", seconds=0.5, delay=0.1) == "ch"
    finally:
        timer.cancel()
    assert b"(auto-commit paused) ch" in pty.screen()


def test_editor_control_characters_typed_are_not_echoed(pty):
    assert edit_after(pty, b"a\x07\x01\x1bxb\r") == "ab"  # BEL and Ctrl-A dropped, Alt-x swallowed
    assert b"\x07" not in pty.screen()


def test_the_terminal_settings_come_back_after_the_session(pty):
    import termios

    before = termios.tcgetattr(pty.slave)
    with pty.inp.session():
        assert termios.tcgetattr(pty.slave)[3] & termios.ICANON == 0
    assert termios.tcgetattr(pty.slave) == before


def test_type_ahead_is_discarded_at_a_terminal_only(pty):
    pty.type(b"chance\n")
    time.sleep(0.1)
    pty.inp.discard_pending()
    pty.type(b"sixes\n")
    assert pty.inp.readline(timeout=5) == "sixes"
    piped = pipe_input(b"chance\nsixes\n")
    piped.discard_pending()  # a script keeps its lines
    assert piped.readline(timeout=5) == "chance"
