"""Batch advice: one JSON situation a line in, ``{"dice": [..], "rolls_left": N, "sheet": {..}}``, one JSON
answer a line out, in order, a chunk of lines at a time.

Every line is answered: a line that cannot be read (not UTF-8, longer than :data:`MAX_LINE` bytes, not a JSON
object, nested too deeply, a key twice, a wrong type, an impossible situation) gets an error object
``{"line": N, "error": ".."}`` in its place, and the good lines around it are answered as usual.
"""

from __future__ import annotations

import json
import os
import select
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

from pentadice.advisor.batch_lines import MAX_LINE, BatchLineError, parse_line, parse_lines

MAX_SKIP = 1024 * 1024  # bytes of a line too long read past, looking for its end; beyond, the batch ends
CHUNK = 4096  # lines evaluated together: big enough for the parallel kernel, small enough to answer at once
FIRST_CHUNK = 64  # the first chunk, doubled chunk after chunk up to CHUNK


class BatchInputError(ValueError):
    """The batch input is not lines at all (a line with no end within :data:`MAX_SKIP` bytes): nothing after
    it is read."""


class LineReader:
    """The lines of a binary stream, each at most ``limit`` bytes (None stands for a longer line: given as
    soon as the limit is passed, then read past up to its end, never held whole; a line with no end within
    ``skip`` bytes raises :class:`BatchInputError`, so that a stream without newlines, such as /dev/zero,
    ends the batch rather than being read for ever), and :meth:`pending`: whether another line can be had
    without waiting, so that the answers to what has come are written before more input is awaited (a
    program that sends a line and waits for its answer gets it)."""

    def __init__(self, stream: BinaryIO, limit: int = MAX_LINE, skip: int | None = None) -> None:
        self.limit = limit
        self.skip = MAX_SKIP if skip is None else skip
        self.lines = 0  # lines given so far
        self.skipped = 0  # bytes of a line too long read past so far
        self.stream = stream
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None  # an in-memory stream: everything is there already
        self.buffer = bytearray()
        self.eof = False
        self.skipping = False  # inside a line that is too long

    def pending(self) -> bool:
        if self.skipping:
            return False  # past a line too long: what came before it is answered first
        if self.fd is None or b"\n" in self.buffer or self.eof:
            return True
        ready, _, _ = select.select([self.fd], [], [], 0)
        return bool(ready)

    def __iter__(self) -> Iterator[bytes | None]:
        if self.fd is None:
            yield from read_lines(self.stream, self.limit)
            return
        while True:
            cut = self.buffer.find(b"\n")
            if cut >= 0:
                line = bytes(self.buffer[: cut + 1])
                del self.buffer[: cut + 1]
                if self.skipping:  # the end of a line too long, given already
                    self.skipping = False
                    continue
                self.lines += 1
                yield None if len(line) > self.limit + 1 else line
                continue
            if self.eof:
                if self.buffer and not self.skipping:
                    self.lines += 1
                    yield None if len(self.buffer) > self.limit else bytes(self.buffer)
                return
            if self.skipping:
                self.skipped += len(self.buffer)
                self.buffer.clear()
                if self.skipped > self.skip:
                    raise BatchInputError(
                        f"line {self.lines} has no end within {self.skip // (1 << 20):,} MiB: the input is not "
                        "one JSON situation a line, and the rest of it is not read"
                    )
            elif len(self.buffer) > self.limit + 1:  # a line too long: its error now, the rest read past
                self.skipped = len(self.buffer)
                self.buffer.clear()
                self.skipping = True
                self.lines += 1
                yield None
                continue
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
            self.buffer += chunk


def read_lines(stream: BinaryIO, limit: int = MAX_LINE) -> Iterator[bytes | None]:
    """The lines of a binary stream; None for a line longer than ``limit`` bytes (read past, never held whole)."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            while True:
                rest = stream.readline(limit)
                if not rest or rest.endswith(b"\n"):
                    break
            yield None
        else:
            yield line


def answers(
    advisor, lines: Iterable[str | bytes | None], top: int | None = None, flush: Callable[[], None] | None = None
) -> Iterator[tuple[dict, str | None]]:
    """``(answer, error)`` for each line in order: the advice as ``--json`` data (without ``why``), or
    ``{"line": N, "error": ..}`` with the error's text. Lines are answered :data:`CHUNK` at a time (the first
    chunks smaller, from :data:`FIRST_CHUNK` lines, so that the first answers come at once), or as many
    as have come when ``lines`` has no more ready (its ``pending()``), then ``flush`` is called: answers start
    at once and memory does not grow with the input."""
    for chunk, before in _chunks(lines, flush):
        yield from _answer_chunk(advisor, advisor.rules, chunk, before, top)


def _chunks(
    lines: Iterable[str | bytes | None], flush: Callable[[], None] | None
) -> Iterator[tuple[list[str | bytes | None], int]]:
    """The lines in chunks, with the number of lines before each: a chunk ends at its size or when no more
    input is waiting (so that what came is answered at once); ``flush`` runs once a chunk's answers are out.
    The size starts at :data:`FIRST_CHUNK` and doubles up to :data:`CHUNK`: the first answers come at once
    even when a whole file is waiting."""
    pending = getattr(lines, "pending", lambda: True)
    number = 0
    size = FIRST_CHUNK
    chunk: list[str | bytes | None] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == size or not pending():
            yield chunk, number
            number += len(chunk)
            chunk = []
            size = min(2 * size, CHUNK)
            if flush is not None:
                flush()
    if chunk:
        yield chunk, number


def _answer_chunk(advisor, rs, chunk, before: int, top: int | None) -> Iterator[tuple[dict, str | None]]:
    situations, errors = parse_lines(rs, chunk)
    good = [s for s in situations if s is not None]
    advices = iter(advisor.advise_many(good)) if good else iter(())
    for i, s in enumerate(situations, 1):
        if s is None:
            yield {"line": before + i, "error": errors[i]}, errors[i]
        else:
            yield next(advices).as_dict(rs, top), None


def answer_texts(
    advisor, lines: Iterable[str | bytes | None], top: int | None = None, flush: Callable[[], None] | None = None
) -> Iterator[tuple[str, int, tuple[int, str] | None]]:
    """:func:`answers` as text, fast: ``(text, count, error)`` with ``text`` the answers of ``count`` lines in
    order (newlines included), the JSON that :func:`answers` gives written as ``json.dumps`` writes it, byte for
    byte (see :mod:`pentadice.advisor.batch_json`); a bad line comes alone, with ``error`` its ``(line number,
    message)``. Chunks and flushes as :func:`answers` does."""
    from pentadice.advisor.batch_json import Formatter

    formatter = Formatter(advisor, top)
    for chunk, before in _chunks(lines, flush):
        yield from _text_chunk(formatter, chunk, before)


def _text_chunk(formatter, chunk, before: int) -> Iterator[tuple[str, int, tuple[int, str] | None]]:
    rs = formatter.rules
    run: list = []
    for i, line in enumerate(chunk, before + 1):
        record = formatter.read(line)
        if record is None:
            try:
                record = formatter.record(parse_line(rs, line))
            except BatchLineError as e:
                yield from formatter.texts(run)
                run = []
                yield json.dumps({"line": i, "error": str(e)}) + "\n", 1, (i, str(e))
                continue
        run.append(record)
    yield from formatter.texts(run)
