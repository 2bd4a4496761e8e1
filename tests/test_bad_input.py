"""Bad input on every path of `advise` and `simulate`: each bad thing gets its own clear answer, the good rest
is answered, and nothing ends in a traceback. Parsers are fuzzed with hypothesis."""

import contextlib
import json
import string
import subprocess
import sys

import pytest
from click.testing import CliRunner
from commands import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pentadice.advisor.batch_lines import MAX_LINE, BatchLineError, parse_line
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.sheet import Sheet, SheetError

PENTA = rules.get_rules("penta")
KIRIKI = rules.get_rules("kiriki")
GOOD = b'{"dice": [1, 1, 3, 4, 6]}\n'


@pytest.fixture
def advise(penta_table_dir):
    def run(*args, stdin=None):
        return CliRunner().invoke(main, ["advise", "--data", str(penta_table_dir), *args], input=stdin)

    return run


BAD_LINES = {
    "not UTF-8": (b'{"dice": [1, 1, 3, 4, 6], "sheet": {"ones": 2}} \xff\xfe\n', "not UTF-8"),
    "nested": (b"[" * 10_000 + b"]" * 10_000 + b"\n", "nested more than"),
    "nested 100,000 deep": (b"[" * 100_000 + b"]" * 100_000 + b"\n", "longer than"),
    "too long": (b'{"dice": [1, 1, 3, 4, 6], "x": "' + b"a" * (MAX_LINE + 10) + b'"}\n', "longer than"),
    "key twice": (b'{"dice": [1, 1, 3, 4, 6], "dice": [2, 2, 2, 2, 2]}\n', "given twice"),
    "dice not numbers": (b'{"dice": ["1", 1, 3, 4, 6]}\n', "whole numbers"),
    "rolls_left float": (b'{"dice": [1, 1, 3, 4, 6], "rolls_left": 1.5}\n', "rolls left"),
    "rolls_left bool": (b'{"dice": [1, 1, 3, 4, 6], "rolls_left": true}\n', "rolls left"),
    "sheet a list": (b'{"dice": [1, 1, 3, 4, 6], "sheet": [["ones", 3]]}\n', "object of box"),
    "points a float": (b'{"dice": [1, 1, 3, 4, 6], "sheet": {"ones": 3.0}}\n', "whole number"),
    "NaN": (b'{"dice": [1, 1, 3, 4, 6], "rolls_left": NaN}\n', "NaN"),
    "huge number": (b'{"dice": [1, 1, 3, 4, 6], "rolls_left": 1' + b"0" * 5000 + b"}\n", "too long"),
    "blank": (b"\n", "the line is blank"),
}


@pytest.mark.parametrize("name", list(BAD_LINES))
def test_a_bad_line_gets_its_error_object_and_the_good_lines_are_answered(advise, name):
    bad, message = BAD_LINES[name]
    result = advise("--batch", "-", stdin=GOOD + bad + GOOD)
    assert result.exit_code == 2
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(out) == 3
    assert out[0]["dice"] == out[2]["dice"] == [1, 1, 3, 4, 6]
    assert out[1]["line"] == 2 and message in out[1]["error"], out[1]
    assert "line 2: " in result.stderr and "Traceback" not in result.output


def test_a_batch_without_a_final_newline_and_with_crlf_is_answered(advise):
    result = advise("--batch", "-", stdin=b'{"dice": [6, 6, 6, 6, 6]}\r\n{"dice": [1, 2, 3, 4, 5]}')
    assert result.exit_code == 0, result.output
    assert [json.loads(x)["dice"] for x in result.stdout.splitlines()] == [[6, 6, 6, 6, 6], [1, 2, 3, 4, 5]]


SHEET_FILES = {
    "a list of numbers": (b"[1, 2]", "must be a JSON object"),
    "a list of pairs": (b'[["ones", 3]]', "must be a JSON object"),
    "an empty list": (b"[]", "must be a JSON object"),
    "nested": (b'{"ones": ' + b"[" * 10_000 + b"]" * 10_000 + b"}", "nested more than"),
    "not UTF-8": (b'{"ones": 3, "\xff": 1}', "not UTF-8"),
    "key twice": (b'{"ones": 3, "ones": 2}', "given twice"),
}


@pytest.mark.parametrize("name", list(SHEET_FILES))
def test_a_bad_sheet_file_is_exit_2_in_one_line(advise, tmp_path, name):
    data, message = SHEET_FILES[name]
    path = tmp_path / "sheet.json"
    path.write_bytes(data)
    result = advise("1", "1", "3", "4", "6", "--sheet-file", str(path))
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert result.output.startswith("Error: ") and len(result.output.strip().splitlines()) == 1


def test_sheet_file_that_is_huge_or_a_directory(advise, tmp_path):
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * 10_000_000)
    result = advise("1", "1", "3", "4", "6", "--sheet-file", str(huge))
    assert result.exit_code == 2 and "larger than" in result.output
    result = advise("1", "1", "3", "4", "6", "--sheet-file", str(tmp_path))
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_sheet_file_from_standard_input(advise):
    result = advise("1", "1", "3", "4", "6", "--sheet-file", "-", "--json", stdin='{"ones": 3}')
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["sheet"] == {"ones": 3}


@pytest.mark.parametrize(
    ("rs", "text", "message"),
    [
        (PENTA, "chance=0", "Chance scores 5 to 30"),
        (PENTA, "three_of_a_kind=3", "Three of a kind scores 0 or 5 to 30"),
        (PENTA, "penta=50 ones=1 penta_bonus=-100", "a bonus is never negative"),
        (PENTA, "penta=50 ones=1 penta_bonus=150", "in steps of 100"),
        (PENTA, "ones=0_3", "digits 0-9"),
        (PENTA, "ones=\u0663", "digits 0-9"),  # ARABIC-INDIC DIGIT THREE
        (PENTA, "ones=+3", "digits 0-9"),
        (PENTA, "ones=0000000000003", "digits 0-9"),
        (KIRIKI, "penta=500000", "beyond belief"),
    ],
)
def test_sheet_messages_say_what_is_true(rs, text, message):
    with pytest.raises(SheetError) as err:
        Sheet.parse(text).validate(rs)
    assert message in str(err.value)


def test_kiriki_box_may_hold_repeats_within_the_bound():
    Sheet.parse("penta=250").validate(KIRIKI)
    with pytest.raises(SheetError, match="impossible"):
        Sheet.parse("penta=250").validate(PENTA)


# Property-based: any input gives a result or the module's own error, never another exception.

box_keys = st.sampled_from([*rules.BOX_IDS, "penta_bonus", "sevens", "", "ONES"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text())
def test_sheet_text_parser_never_fails_otherwise(text):
    for rs in (PENTA, KIRIKI):
        with contextlib.suppress(SheetError):
            Sheet.parse(text).validate(rs)


@FUZZ
@given(st.lists(st.tuples(box_keys, st.integers(-1000, 1000) | st.text(string.digits + "-_ ", max_size=6))))
def test_sheet_pairs_never_fail_otherwise(pairs):
    text = " ".join(f"{k}={v}" for k, v in pairs)
    with contextlib.suppress(SheetError):
        Sheet.parse(text).validate(PENTA)


@FUZZ
@given(st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
def test_sheet_json_parser_never_fails_otherwise(data):
    with contextlib.suppress(SheetError):
        Sheet.from_json(data).validate(PENTA)


situations = st.fixed_dictionaries(
    {"dice": st.lists(st.integers(0, 7) | json_values, max_size=6)},
    optional={
        "rolls_left": st.integers(-1, 3) | json_values,
        "sheet": st.dictionaries(box_keys, st.integers(-5, 60) | json_values, max_size=6) | json_values,
    },
)


@FUZZ
@given(situations.map(lambda d: json.dumps(d).encode()) | st.binary(max_size=300) | st.text(max_size=300))
def test_batch_line_parser_never_fails_otherwise(line):
    for rs in (PENTA, KIRIKI):
        with contextlib.suppress(BatchLineError):
            parse_line(rs, line)


def test_a_blank_batch_line_is_an_error_naming_it(penta_table_dir):
    lines = '{"dice": [1, 1, 3, 4, 6]}\n\n{"dice": [1, 1, 3, 4, 6]}\n'
    result = run("advise", "--batch", "-", "--data", str(penta_table_dir), stdin=lines)
    assert result.exit_code == 2
    assert "line 2: the line is blank" in result.stderr and "Expecting value" not in result.stderr
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(out) == 3 and out[1] == {"line": 2, "error": out[1]["error"]} and "dice" in out[2]


def test_a_batch_stream_without_newlines_ends_with_an_error_in_bounded_time(penta_table_dir, tmp_path):
    """``advise --batch /dev/zero`` (a stream without a newline) once read for ever at full CPU, printing
    nothing: the line gets its error as soon as it passes 64 KiB, and a line with no end within 1 MiB ends
    the batch (exit 2, saying so). A long line that ends is refused alone, the lines around it answered."""
    args = [sys.executable, "-m", "pentadice", "advise", "--data", str(penta_table_dir), "--batch"]
    try:
        done = subprocess.run([*args, "/dev/zero"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("advise --batch /dev/zero was still reading after 30 s")
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert json.loads(done.stdout) == {"line": 1, "error": "the line is longer than 65,536 bytes"}
    assert "line 1 has no end within 1 MiB" in done.stderr, done.stderr
    lines = tmp_path / "lines.jsonl"
    lines.write_bytes(b'{"dice": [1, 2, 3, 4, 5]}\n' + b" " * 200_000 + b'\n{"dice": [6, 6, 6, 6, 6]}\n')
    done = subprocess.run([*args, str(lines)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("dice") for a in answers] == [[1, 2, 3, 4, 5], None, [6, 6, 6, 6, 6]], answers
    assert answers[1] == {"line": 2, "error": "the line is longer than 65,536 bytes"}
    assert "no end within" not in done.stderr


def test_a_sheet_file_with_bad_content_is_named(penta_table_dir, tmp_path):
    path = tmp_path / "sheet.json"
    path.write_text("{nope")
    result = run("advise", "1", "1", "3", "4", "6", "--sheet-file", str(path), "--data", str(penta_table_dir))
    assert result.exit_code == 2 and str(path) in result.output
