"""The README's console examples are the real output of the current code: each `$ .venv/bin/pentadice ...`
command in a ```console block is run as a user would run it in the checkout (no table directory exported: the
checkout's data/), and its output compared line by line. A line `...` stands for any lines; `...` inside a
line for any text."""

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "$ .venv/bin/pentadice "


def examples() -> list[tuple[str, list[str]]]:
    """``(command, expected lines)`` of every console block, in order."""
    text = (ROOT / "README.md").read_text()
    found = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        for chunk in block.split(PROMPT)[1:]:
            command, *lines = chunk.rstrip("\n").split("\n")
            found.append((command, lines))
    return found


def matches(expected: list[str], actual: list[str]) -> bool:
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    pattern = ".*".join(re.escape(part) for part in head.split("..."))
    return re.fullmatch(pattern, actual[0]) is not None and matches(rest, actual[1:])


@pytest.fixture(scope="module")
def checkout_table(penta_table_dir):
    """The checkout's data/ holds the Penta table, as after `make table` (copied there if missing)."""
    data = ROOT / "data"
    for suffix in (".npy", ".parquet", ".json"):
        if not (data / f"penta{suffix}").exists():
            shutil.copy(penta_table_dir / f"penta{suffix}", data / f"penta{suffix}")
    return data


def test_the_readme_has_examples():
    assert len(examples()) >= 4


@pytest.mark.parametrize(("command", "expected"), examples(), ids=[c for c, _ in examples()])
def test_readme_example(checkout_table, command, expected, monkeypatch):
    env = {k: v for k, v in __import__("os").environ.items() if k != "PENTADICE_DATA"}
    proc = subprocess.run(
        [sys.executable, "-m", "pentadice", *shlex.split(command)], capture_output=True, text=True, cwd=ROOT, env=env
    )
    actual = proc.stdout.rstrip("\n").split("\n")
    assert proc.returncode == 0, proc.stderr
    assert matches(expected, actual), "\n".join(["expected:", *expected, "actual:", *actual])
