"""Reading batch situations: one JSON object a line, ``{"dice": [..], "rolls_left": N, "sheet": {..}}``."""

from __future__ import annotations

import json
from collections.abc import Iterable

from pentadice import rules
from pentadice.advisor.situation import Situation
from pentadice.sheet import Sheet

FIELDS = {"dice", "rolls_left", "sheet"}


def parse_line(rs: rules.RuleSet, line: str) -> Situation:
    """One batch line as a checked situation; ValueError naming the problem."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise ValueError(f"not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise ValueError('a line must be a JSON object {"dice": [..], "rolls_left": N, "sheet": {..}}')
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r}; fields: dice, rolls_left, sheet")
    if "dice" not in data:
        raise ValueError("missing field 'dice'")
    dice = data["dice"]
    if not isinstance(dice, list):
        raise ValueError("'dice' must be a list of whole numbers 1 to 6")
    sheet = Sheet.from_mapping(data.get("sheet", {}))
    return Situation.make(rs, dice, data.get("rolls_left", 2), sheet)


def parse_lines(rs: rules.RuleSet, lines: Iterable[str]) -> tuple[list[Situation | None], dict[int, str]]:
    """Every line as a situation, or None with its error under its line number (1-based). Blank lines count
    as errors too, so that output line N always answers input line N."""
    situations: list[Situation | None] = []
    errors: dict[int, str] = {}
    for number, line in enumerate(lines, 1):
        try:
            situations.append(parse_line(rs, line))
        except ValueError as e:
            situations.append(None)
            errors[number] = str(e)
    return situations, errors
