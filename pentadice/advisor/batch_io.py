"""Batch advice: one JSON situation a line in, ``{"dice": [..], "rolls_left": N, "sheet": {..}}``, one JSON
answer a line out, in order, a chunk of lines at a time.

Every line is answered: a line that cannot be read (not UTF-8, longer than :data:`MAX_LINE` bytes, not a JSON
object, nested too deeply, a key twice, a wrong type, an impossible situation) gets an error object
``{"line": N, "error": ".."}`` in its place, and the good lines around it are answered as usual.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import BinaryIO

from pentadice import inputs, rules
from pentadice.advisor.situation import Situation
from pentadice.sheet import Sheet

FIELDS = {"dice", "rolls_left", "sheet"}
MAX_LINE = 64 * 1024  # bytes: a situation takes about a hundred
CHUNK = 4096  # lines evaluated together: big enough for the parallel kernel, small enough to answer at once


class BatchLineError(ValueError):
    """A batch line that is not a situation; the reason in words."""


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


def parse_line(rs: rules.RuleSet, line: str | bytes | None) -> Situation:
    """One batch line as a checked situation; :class:`BatchLineError` naming the problem."""
    if line is None:
        raise BatchLineError(f"the line is longer than {MAX_LINE:,} bytes")
    try:
        data = inputs.loads(line, "the line")
    except inputs.InputError as e:
        raise BatchLineError(str(e)) from None
    if not isinstance(data, dict):
        raise BatchLineError('a line must be a JSON object {"dice": [..], "rolls_left": N, "sheet": {..}}')
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise BatchLineError(f"unknown field {unknown[0]!r}; fields: dice, rolls_left, sheet")
    if "dice" not in data:
        raise BatchLineError("missing field 'dice'")
    dice = data["dice"]
    if not isinstance(dice, list):
        raise BatchLineError("'dice' must be a list of whole numbers 1 to 6")
    try:
        sheet = Sheet.from_mapping(data.get("sheet", {}), rs)
        return Situation.make(rs, dice, data.get("rolls_left", 2), sheet)
    except ValueError as e:
        raise BatchLineError(str(e)) from None


def parse_lines(
    rs: rules.RuleSet, lines: Iterable[str | bytes | None]
) -> tuple[list[Situation | None], dict[int, str]]:
    """Every line as a situation, or None with its error under its line number (1-based). Blank lines count
    as errors too, so that output line N always answers input line N."""
    situations: list[Situation | None] = []
    errors: dict[int, str] = {}
    for number, line in enumerate(lines, 1):
        try:
            situations.append(parse_line(rs, line))
        except BatchLineError as e:
            situations.append(None)
            errors[number] = str(e)
    return situations, errors


def answers(advisor, lines: Iterable[str | bytes | None], top: int | None = None) -> Iterator[tuple[dict, str | None]]:
    """``(answer, error)`` for each line in order: the advice as ``--json`` data, or ``{"line": N, "error": ..}``
    with the error's text. Lines are read and answered :data:`CHUNK` at a time, so that answers start at once
    and memory does not grow with the input."""
    rs = advisor.rules
    number = 0
    chunk: list[str | bytes | None] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == CHUNK:
            yield from _answer_chunk(advisor, rs, chunk, number, top)
            number += len(chunk)
            chunk = []
    if chunk:
        yield from _answer_chunk(advisor, rs, chunk, number, top)


def _answer_chunk(advisor, rs, chunk, before: int, top: int | None) -> Iterator[tuple[dict, str | None]]:
    situations, errors = parse_lines(rs, chunk)
    good = [s for s in situations if s is not None]
    advices = iter(advisor.advise_many(good)) if good else iter(())
    for i, s in enumerate(situations, 1):
        if s is None:
            yield {"line": before + i, "error": errors[i]}, errors[i]
        else:
            yield next(advices).as_dict(rs, top), None
