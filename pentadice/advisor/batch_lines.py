"""One batch line read: a JSON situation ``{"dice": [..], "rolls_left": N, "sheet": {..}}`` checked, or the
reason it is not one in words. Shared by the batch's reader (:mod:`~pentadice.advisor.batch_io`), its fast
formatter (:mod:`~pentadice.advisor.batch_json`) and the web API."""

from __future__ import annotations

from collections.abc import Iterable

from pentadice.game import rules
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation
from pentadice.support import inputs

FIELDS = {"dice", "rolls_left", "sheet"}
MAX_LINE = 64 * 1024  # bytes: a situation takes about a hundred


class BatchLineError(ValueError):
    """A batch line that is not a situation; the reason in words."""


def parse_line(rs: rules.RuleSet, line: str | bytes | None) -> Situation:
    """One batch line as a checked situation; :class:`BatchLineError` naming the problem."""
    if line is None:
        raise BatchLineError(f"the line is longer than {MAX_LINE:,} bytes")
    if not line.strip():  # an error, not skipped: answer N always answers line N
        raise BatchLineError("the line is blank: one JSON situation a line, and no blank lines")
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
    if "rolls_left" in data and data["rolls_left"] is None:  # left out, it is the first roll's; null is no number
        raise BatchLineError(f"rolls left must be 0 to {rs.rolls - 1}, not None")
    try:
        sheet = Sheet.from_mapping(data.get("sheet", {}), rs)
        return Situation.make(rs, dice, data.get("rolls_left", rs.rolls - 1), sheet)
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
