"""The batch's fast text path writes, byte for byte, what the object path writes (``Advice.as_dict`` through
``json.dumps``), for every rule set, with and without ``top``, for jokers, sacrifices, Kiriki's added Penta,
unusual spellings and bad lines."""

import json

import numpy as np
import pytest
from family_games import advisor_of, small_maxi
from sheets import random_sheet
from solutions import solved

from pentadice.advisor import Advisor
from pentadice.advisor.batch_io import answer_texts, answers
from pentadice.advisor.batch_json import Formatter
from pentadice.game import rules
from pentadice.tables import table

N_RANDOM = 3000


# Every rule set but Maxi Yatzy (its table is 640 MB): a small game of its six dice and boxes stands in for it.
@pytest.fixture(scope="module", params=[*(n for n in rules.REGISTRY if n != "maxi-yatzy"), "small-maxi"])
def advisor(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp("fast")
    if request.param == "small-maxi":
        return advisor_of(small_maxi(), directory)
    solution = solved(request.param)
    table.save(solution.rules, solution.values, directory)
    return Advisor.load(request.param, str(directory), solve_missing=False)


def situations(rs, seed: int) -> list[dict]:
    """Random situations of ``rs``, with jokers, sacrifices and (Kiriki) Penta boxes that grew."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(N_RANDOM):
        filled = int(rng.integers(0, len(rs.boxes)))
        if i % 5 == 0:
            filled = len(rs.boxes) - 1 - int(rng.integers(0, 3))  # late in the game: sacrifices come often
        sheet = random_sheet(rs, rng, filled)
        dice = [int(x) for x in rng.integers(1, 7, size=rs.dice)]
        if i % 7 == 0:
            dice = [int(rng.integers(1, 7))] * rs.dice  # all alike: jokers, bonuses, Kiriki adding
        if i % 11 == 0 and "penta" in sheet.boxes:
            boxes = dict(sheet.boxes)
            boxes["penta"] = rs.penta_points * int(rng.integers(1, 4)) if rs.penta_repeat else rs.penta_points
            sheet = type(sheet)(boxes, sheet.penta_bonus)
        rolls = int(rng.integers(0, rs.rolls))
        item = {"dice": dice, "rolls_left": rolls, "sheet": sheet.as_dict()}
        keys = list(item)
        if i % 3 == 0:  # another order of the fields and boxes
            keys = keys[::-1]
            item = {k: item[k] for k in keys}
            item["sheet"] = dict(reversed(list(item["sheet"].items())))
        if i % 13 == 0 and rolls == 2:
            del item["rolls_left"]
        if i % 17 == 0 and not item["sheet"]:
            del item["sheet"]
        out.append(item)
    return out


def unusual_lines(rs) -> list:
    """Lines for the strict reader: other spellings, text points, a zero bonus, errors of every kind."""
    return [
        b'{"dice": [1, 1, 3, 4, 6], "rolls_left": 2, "sheet": {"full house": 25, "Ones": 3}}\n',
        b'{"dice": [1, 1, 3, 4, 6], "rolls_left": 2, "sheet": {"full_house": "25"}}\n',
        b'{"dice": [2, 2, 2, 2, 2], "rolls_left": 0, "sheet": {"penta": 50, "penta_bonus": 0}}\n',
        b'{"dice": [2, 2, 2, 2, 2], "rolls_left": 0, "sheet": {"penta": 50, "twos": 6, "penta_bonus": 100}}\n',
        b'  {"dice":[6,5,4,3,2] ,"rolls_left":1}  \r\n',
        '{"dice": [1, 2, 3, 4, 5], "sheet": {"chance": 20}}',
        b'{"dice": [1, 1, 3, 4, 6], "rolls_left": 2, "sheet": {"ones": 3, "ones": 2}}\n',
        b'{"dice": [1, 1, 3, 4, 6], "dice": [1, 1, 3, 4, 6]}\n',
        b'{"dice": [1, 1, 3, 4, true]}\n',
        b'{"dice": [1, 1, 3, 4, 6.0]}\n',
        b'{"dice": [1, 1, 3, 4, 6], "rolls_left": true}\n',
        b'{"dice": [1, 1, 3, 4, 6], "rolls_left": null}\n',
        b'{"dice": [1, 1, 3, 4, 6], "rolls_left": 3}\n',
        b'{"dice": [1, 1, 3, 4, 6], "sheet": {"ones": true}}\n',
        b'{"dice": [1, 1, 3, 4, 6], "sheet": {"ones": 1.0}}\n',
        b'{"dice": [1, 1, 3, 4, 6], "sheet": {"ones": 7}}\n',
        b'{"dice": [1, 1, 3, 4, 6], "sheet": {"ones": NaN}}\n',
        b'{"dice": [1, 1, 3, 4, 6], "sheet": {"ones": 100000000000000000000000000000000000000000000}}\n',
        b'{"dice": [1, 1, 3, 4, 6], "sheet": {"penta": 0, "penta_bonus": 100, "ones": 1}}\n',
        b'{"dice": [1, 1, 3, 4, 6], "sheet": {"penta": 50, "penta_bonus": 300, "ones": 1}}\n',
        b'{"dice": [1, 1, 3, 4, 6], "sheet": {"penta": 50, "penta_bonus": 150, "ones": 1, "twos": 2}}\n',
        b'{"dice": [1, 1, 3, 4, 6], "sheet": {"penta": 150}}\n',
        b'{"dice": [1, 1, 3, 4, 6], "sheet": {"penta": 50000}}\n',
        b'{"dice": [1, 1, 3, 4], "rolls_left": 2}\n',
        b'{"dice": [1, 1, 3, 4, 7]}\n',
        b'{"dice": [1, 1, 3, 4, 6], "extra": 1}\n',
        b'{"rolls_left": 1}\n',
        b"[1, 2, 3]\n",
        b"\n",
        b"not json\n",
        b'{"dice": [1, 1, 3, 4, 6], "rolls_left": 2, "sheet": {"\xff": 1}}\n',
        b"[" * 100 + b"]" * 100 + b"\n",
        None,
        b'{"dice": [1, 1, 3, 4, 6], "sheet": {' + b", ".join(f'"{b}": 0'.encode() for b in rs.boxes) + b"}}\n",
        b'\xef\xbb\xbf{"dice": [1, 1, 3, 4, 6]}\n',
    ]


def object_path(advisor, lines, top) -> str:
    return "".join(json.dumps(answer) + "\n" for answer, _ in answers(advisor, lines, top))


def fast_path(advisor, lines, top) -> str:
    out = []
    for text, count, error in answer_texts(advisor, lines, top):
        assert text.count("\n") == count
        if error is not None:
            number, message = error
            assert json.loads(text) == {"line": number, "error": message}
        out.append(text)
    return "".join(out)


@pytest.mark.parametrize("top", [None, 3])
def test_the_fast_path_writes_what_the_object_path_writes(advisor, top):
    rs = advisor.rules
    items = situations(rs, seed=len(rs.name) + (top or 0))
    lines = [json.dumps(item, separators=(", ", ": ") if i % 2 else (",", ":")) + "\n" for i, item in enumerate(items)]
    lines = [line.encode() if i % 4 else line for i, line in enumerate(lines)]
    bad = unusual_lines(rs)
    for j, line in enumerate(bad):  # spread through the batch, across chunk boundaries
        lines.insert(1 + j * (len(lines) // len(bad)), line)
    expected = object_path(advisor, lines, top)
    got = fast_path(advisor, lines, top)
    assert got.count("\n") == len(lines)
    for number, (want, have) in enumerate(zip(expected.splitlines(), got.splitlines(), strict=True), 1):
        assert have == want, f"line {number}: {lines[number - 1]!r}"
    assert got == expected
    # The test is not vacuous: most lines took the fast path, and the special answers occurred.
    formatter = Formatter(advisor, top)
    fast = sum(formatter.read(line) is not None for line in lines)
    assert fast > 0.9 * len(lines)
    assert '"message": ' in got
    if rs.joker is not rules.Joker.NONE:
        assert '"joker": ' in got
    if top is not None:
        assert all(len(json.loads(x).get("options", ())) <= top for x in got.splitlines())


def test_a_sheet_seen_again_answers_the_same(penta_advisor):
    line = b'{"dice": [2, 2, 3, 5, 6], "rolls_left": 1, "sheet": {"ones": 3, "penta": 50, "penta_bonus": 100}}\n'
    lines = [line, line.replace(b"[2, 2, 3", b"[4, 4, 3"), line]
    assert fast_path(penta_advisor, lines, None) == object_path(penta_advisor, lines, None)
