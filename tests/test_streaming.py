"""The streaming paths: a batch answers in order and starts answering before its input ends, and interrupted says
how many lines it answered; a simulation is the same games, and so the same summary, whatever its chunk size and its
threads."""

import json
import os
import select
import subprocess
import sys
import time

import numpy as np
import pytest
from commands import CLI
from signals import interrupt

from pentadice.simulator import simulate as sim

SITUATIONS = [
    {"dice": [1, 1, 3, 4, 6], "rolls_left": 2},
    {"dice": [6, 6, 6, 6, 6], "rolls_left": 0, "sheet": {"penta": 50}},
    {"dice": [2, 3, 4, 5, 5], "rolls_left": 1, "sheet": {"ones": 3, "chance": 22}},
    {"dice": [1, 2, 3, 4, 5], "rolls_left": 0},
]


def read_line(stream, timeout: float) -> bytes:
    """One line from a pipe, or a failure after ``timeout`` seconds (never a hung test)."""
    deadline = time.monotonic() + timeout
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        ready, _, _ = select.select([stream], [], [], max(left, 0))
        if not ready:
            pytest.fail(f"no answer within {timeout} s (got {line!r})")
        chunk = os.read(stream.fileno(), 1)
        if not chunk:
            pytest.fail(f"the output ended early (got {line!r})")
        line += chunk
    return line


def test_a_batch_answers_the_first_line_before_its_input_ends_and_in_order(penta_table_dir):
    proc = subprocess.Popen(
        [sys.executable, "-m", "pentadice", "advise", "--batch", "-", "--data", str(penta_table_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        proc.stdin.write((json.dumps(SITUATIONS[0]) + "\n").encode())
        proc.stdin.flush()
        first = json.loads(read_line(proc.stdout, timeout=120))  # the pipe is still open: more may come
        assert proc.poll() is None
        assert first["dice"] == SITUATIONS[0]["dice"] and first["rolls_left"] == 2
        lines = [SITUATIONS[i % len(SITUATIONS)] for i in range(1, 9000)]  # more than one chunk
        out, err = proc.communicate("".join(json.dumps(s) + "\n" for s in lines).encode(), timeout=300)
        assert proc.returncode == 0, err.decode()
        rest = [json.loads(line) for line in out.splitlines()]
    finally:
        proc.kill()
        proc.wait()
    assert len(rest) == len(lines)
    for given, answer in zip(lines, rest, strict=True):
        assert answer["dice"] == given["dice"] and answer["rolls_left"] == given["rolls_left"]
        assert answer["sheet"] == given.get("sheet", {})


def games(tbl, n: int, seed: int, chunk: int | None) -> tuple[np.ndarray, np.ndarray]:
    parts = list(sim.play_chunks(tbl, n, seed, chunk=chunk))
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


@pytest.mark.parametrize("strategy", ["optimal", "greedy"])
def test_the_games_are_the_same_whatever_the_chunk_size_and_the_threads(penta_advisor, monkeypatch, strategy):
    tbl = penta_advisor.table
    scores, bonus = games(tbl, 3_000, 11, chunk=None)
    for chunk in (1, 7, 1_000, 2_999):
        if chunk == 1:
            same = games(tbl, 40, 11, chunk=1)
            assert np.array_equal(same[0], scores[:40]) and np.array_equal(same[1], bonus[:40])
            continue
        other_scores, other_bonus = games(tbl, 3_000, 11, chunk=chunk)
        assert np.array_equal(other_scores, scores) and np.array_equal(other_bonus, bonus)
    monkeypatch.setattr(sim, "threads", lambda: 1)
    one_thread = games(tbl, 3_000, 11, chunk=None)
    assert np.array_equal(one_thread[0], scores) and np.array_equal(one_thread[1], bonus)


def test_the_summary_is_the_same_whatever_the_chunk_size(penta_advisor, monkeypatch):
    def summary(chunk: int) -> dict:
        monkeypatch.setattr(sim, "CHUNK", chunk)
        tally = sim.Tally(penta_advisor.rules)
        sim.run(penta_advisor.table, 2_500, 4, "optimal", tally)
        return tally.stats(1.0)

    assert summary(sim.CHUNK) == summary(999) == summary(64)


def test_a_game_is_its_seed_and_number_only(penta_advisor):
    tbl = penta_advisor.table
    scores, _ = games(tbl, 200, 5, chunk=None)
    later, _ = games(tbl, 260, 5, chunk=None)
    assert np.array_equal(later[:200], scores)
    other, _ = games(tbl, 200, 6, chunk=None)
    assert not np.array_equal(other, scores)
    dice = sim.game_dice(5, 3, 13, 3, 5)
    assert dice.shape == (13, 3, 5) and dice.min() >= 1 and dice.max() <= 6
    assert np.array_equal(sim.game_dice(5, 3, 13, 3, 5), dice)
    assert not np.array_equal(sim.game_dice(5, 4, 13, 3, 5), dice)


def test_the_dice_are_fair():
    faces = np.concatenate([sim.game_dice(1, g, 13, 3, 5).ravel() for g in range(2_000)])
    counts = np.bincount(faces, minlength=7)[1:]
    expected = len(faces) / 6
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 25  # 5 degrees of freedom: above 20.5 one time in a thousand


def test_an_interrupted_batch_says_how_many_lines_were_answered(penta_table_dir):
    import time

    proc = subprocess.Popen(
        [*CLI, "advise", "--batch", "-", "--data", str(penta_table_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdin.write(b'{"dice": [1, 1, 3, 4, 6]}\n' * 3)
    proc.stdin.flush()
    answers = [proc.stdout.readline() for _ in range(3)]  # answered before the input ends
    assert all(json.loads(a)["dice"] == [1, 1, 3, 4, 6] for a in answers)
    time.sleep(0.2)
    interrupt(proc)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"Interrupted: 3 lines were answered (lines 1 to 3)" in err
