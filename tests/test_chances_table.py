"""The chances table (:mod:`pentadice.solver.remaining`, stored by :mod:`pentadice.tables.chance_tables`): every
state's row against the exact forward pass (:func:`pentadice.advisor.distribution.final_distribution`, itself
checked against a brute force in ``test_distribution.py``) on reduced games, mid-turn likewise, its files saved,
loaded and damaged, its refusals, and the same bits with any number of threads."""

from __future__ import annotations

import functools
import itertools
import math
import os
import re

import numpy as np
import pytest
import reduced_games
from sheets import random_sheet

from pentadice import solver
from pentadice.advisor import distribution
from pentadice.game import rules
from pentadice.game.sheet import Sheet, possible_points
from pentadice.solver import remaining
from pentadice.solver.turn_inputs import turn_inputs
from pentadice.tables import chance_tables, chunks, table

TV = 1e-7  # a row against the exact distribution, in total variation
TOTAL = 1e-6  # a row's probabilities add up to 1 within this
MEAN = 1e-5  # a row's mean against the value table

# Every joker convention (Penta's, free, forced, none), a Penta box with its bonus and without one (Yatzy: one
# flag), one to three rolls; the reduced Maxi Yatzy games of test_distribution have 2**20 box masks (no table).
GAMES = reduced_games.pick(
    *reduced_games.JOKERS,
    "yatzy, 3 dice",
    "yatzy, 4 dice, 2 rolls",
    "penta, 6 dice, 80 lanes",  # a threshold above 63: 80 lanes (fives and sixes of six dice reach 66)
)
assert GAMES["penta, 6 dice, 80 lanes"].lanes == 80


@functools.cache
def values_of(name: str) -> np.ndarray:
    return solver.solve(GAMES[name]).values


@functools.cache
def table_of(name: str, threads: int = 1) -> remaining.Remaining:
    return remaining.solve(GAMES[name], values_of(name), threads=threads)


def states(rs: rules.RuleSet):
    """Every state between turns of ``rs``: ``(flag, open_mask, subtotal)``."""
    masks = [m for m in range(1 << rs.n_boxes) if m & ~rs.box_mask == 0]
    return itertools.product(range(rs.n_flags), masks, range(rs.upper_threshold + 1))


def sheet_of(rs: rules.RuleSet, flag: int, mask: int, sub: int) -> Sheet | None:
    """A sheet of the state ``(flag, mask, sub)`` (the filled lower boxes at their fewest points, the upper ones
    at points adding up to the subtotal), or None when no sheet has it."""
    possible = possible_points(rs)
    boxes, upper = {}, []
    for b in rs.boxes:
        i = rs.box_index[b]
        if (mask >> i) & 1:
            continue
        if i == rs.penta_box:
            boxes[b] = rs.penta_points if flag else 0
        elif (rs.upper_mask >> i) & 1:
            upper.append(b)
        else:
            boxes[b] = min(possible[b])
    if flag and rs.penta_id not in boxes:
        return None
    for points in itertools.product(*(sorted(possible[b]) for b in upper)):
        if min(sum(points), rs.upper_threshold) == sub:
            return Sheet({**boxes, **dict(zip(upper, points, strict=True))})
    return None


def total_variation(lo_a: int, a: np.ndarray, lo_b: int, b: np.ndarray) -> float:
    start, stop = min(lo_a, lo_b), max(lo_a + len(a), lo_b + len(b))
    x, y = np.zeros(stop - start), np.zeros(stop - start)
    x[lo_a - start : lo_a - start + len(a)] = a
    y[lo_b - start : lo_b - start + len(b)] = b
    return 0.5 * math.fsum(np.abs(x - y))


def mean(lo: int, probs: np.ndarray) -> float:
    return math.fsum(np.arange(lo, lo + len(probs)) * probs)


def exact(rs, values, sheet: Sheet, dice=None, rolls_left=None) -> tuple[int, np.ndarray]:
    """The exact distribution of the points still to come: the forward pass's, the sheet's score taken off."""
    dist = distribution.final_distribution(rs, values, sheet, dice, rolls_left)
    return dist.offset - sheet.score(rs), dist.probs


@pytest.mark.parametrize("name", list(GAMES))
def test_every_row_is_the_exact_distribution(name):
    """Each state a game reaches: its row is the forward pass's distribution from a sheet of that state, adds
    up to 1, and its mean is the value table's; a state no game reaches has no row; no box open is 0 for sure."""
    rs, values, built = GAMES[name], values_of(name), table_of(name)
    checked = 0
    for flag, mask, sub in states(rs):
        reached = not np.isnan(values[flag, mask, sub])
        if mask == 0:
            lo, probs = built.row(flag, mask, sub)
            assert lo == 0 and probs.tolist() == [1.0]
            continue
        if not reached:
            with pytest.raises(ValueError, match="no game reaches"):
                built.row(flag, mask, sub)
            continue
        sheet = sheet_of(rs, flag, mask, sub)
        assert sheet is not None, f"no sheet of a state the game reaches: {flag}, {mask:#x}, {sub}"
        lo, probs = built.row(flag, mask, sub)
        assert probs.dtype == np.float64 and (probs >= 0).all()
        where = f"{name}: {sheet.as_dict(rs)}"
        assert total_variation(lo, probs, *exact(rs, values, sheet)) < TV, where
        assert math.fsum(probs) == pytest.approx(1.0, abs=TOTAL), where
        assert mean(lo, probs) == pytest.approx(float(values[flag, mask, sub]), abs=MEAN), where
        checked += 1
    assert checked > 10


def test_the_tails_dropped_weigh_at_most_eps_a_side_per_layer():
    """Against the table with nothing dropped: each row keeps all but ``2 k EPS`` of the mass (``k`` boxes open),
    and some rows are shorter (the game has tails below EPS: the test above covered dropping them)."""
    name = "penta, 4 dice, 1 roll"
    rs, values, built = GAMES[name], values_of(name), table_of(name)
    whole = remaining.solve(rs, values, eps=0.0)
    assert whole.data.size > built.data.size
    shorter = 0
    for flag, mask, sub in states(rs):
        if not built.width[(flag << rs.n_boxes) | mask, sub]:
            continue
        lo, probs = built.row(flag, mask, sub)
        lo_all, probs_all = whole.row(flag, mask, sub)
        assert lo_all <= lo and lo + len(probs) <= lo_all + len(probs_all)
        kept = probs_all[lo - lo_all : lo - lo_all + len(probs)]
        assert math.fsum(probs_all) - math.fsum(kept) <= 2 * mask.bit_count() * remaining.EPS
        shorter += len(probs) < len(probs_all)
    assert shorter > 0


def test_a_subtotal_past_the_threshold_is_the_threshold():
    name = "penta, 3 dice"
    rs, built = GAMES[name], table_of(name)
    mask = rs.box_mask & ~(1 << rs.box_index["threes"])
    lo, probs = built.row(0, mask, rs.upper_threshold)
    for sub in (rs.upper_threshold + 1, 6 * rs.dice * 6):
        again = built.row(0, mask, sub)
        assert again[0] == lo and np.array_equal(again[1], probs)


@pytest.mark.parametrize("name", list(GAMES))
def test_mid_turn_is_the_exact_distribution(name):
    """Random sheets, dice and rolls left: :func:`remaining.mid_turn` is the forward pass's distribution."""
    rs, values, built = GAMES[name], values_of(name), table_of(name)
    padded = remaining.padded_values(rs, values)
    keeps = turn_inputs(rs).tables
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(12):
        sheet = random_sheet(rs, rng, int(rng.integers(0, len(rs.boxes))))
        dice = tuple(sorted(int(d) for d in rng.integers(1, 7, rs.dice)))
        rolls_left = int(rng.integers(0, rs.rolls))
        flag, mask, sub = int(sheet.penta_scored(rs)), sheet.open_mask(rs), sheet.upper_subtotal(rs)
        lo, probs = remaining.mid_turn(built, padded, flag, mask, sub, keeps.keep_of(dice), rolls_left)
        where = f"{name}: {sheet.as_dict(rs)}, {dice}, {rolls_left} left"
        assert total_variation(lo, probs, *exact(rs, values, sheet, dice, rolls_left)) < TV, where
        assert math.fsum(probs) == pytest.approx(1.0, abs=TOTAL), where


@pytest.mark.parametrize("name", ["penta, 3 dice", "yatzy, 4 dice, 2 rolls", "penta, 6 dice, 80 lanes"])
def test_the_same_bits_with_any_number_of_threads(name):
    one, two = table_of(name, 1), table_of(name, 2)
    for a, b in ((one.off, two.off), (one.lo, two.lo), (one.width, two.width), (one.data, two.data)):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    assert one.data.dtype == remaining.STORED


def test_a_pass_broken_off_leaves_nothing_behind(monkeypatch):
    """Ctrl-C between a chunk's turn outcomes and their use: the next pass on the same thread (whose buffers
    the outcomes were added into) is the same bits as ever."""
    name = "penta, 3 dice"
    rs, values, before = GAMES[name], values_of(name), table_of(name)

    def interrupted(*args):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(remaining, "pull_rows", interrupted)
        with pytest.raises(KeyboardInterrupt):
            remaining.solve(rs, values)
    again = remaining.solve(rs, values)
    assert again.data.tobytes() == before.data.tobytes() and again.off.tobytes() == before.off.tobytes()


# Refusals.


def test_kiriki_and_maxi_yatzy_have_no_table_and_say_why():
    kiriki = rules.get_rules("kiriki")
    assert "no bound" in remaining.refusal(kiriki) and "Kiriki" in remaining.refusal(kiriki)
    maxi = rules.get_rules("maxi-yatzy")
    states_ = (maxi.n_flags << maxi.n_boxes) * maxi.lanes
    assert f"{states_:,} states" in remaining.refusal(maxi) and "2**20" in remaining.refusal(maxi)
    for rs in (kiriki, maxi):
        with pytest.raises(ValueError, match=re.escape(remaining.refusal(rs))):
            remaining.solve(rs, np.zeros((1, 1, 1)))  # refused before the values are read
    for name in ("penta", "yahtzee", "yahtzee+forced-joker", "yahtzee+no-joker", "yahtzee+no-bonus", "yatzy"):
        assert remaining.refusal(rules.get_rules(name)) is None, name


# The files.


@pytest.fixture
def saved(tmp_path, monkeypatch):
    """A reduced game's value table and chances table saved in ``tmp_path``, in chunks of 1 KB (many chunks)."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1024)
    name = "penta, 3 dice"
    rs, values, built = GAMES[name], values_of(name), table_of(name)
    table.save(rs, values, tmp_path)
    path = chance_tables.save(rs, tmp_path, built, values)
    return rs, values, built, path


def reached_rows(built: remaining.Remaining):
    """``(flag, mask, sub)`` of every row, each row once (lanes sharing one row: the first)."""
    seen = set()
    for sid, u in zip(*np.nonzero(built.width > 0), strict=True):
        key = (int(built.off[sid, u]), int(built.width[sid, u]))
        if key not in seen:
            seen.add(key)
            yield int(sid) >> built.rules.n_boxes, int(sid) & built.rules.box_mask, int(u)


def test_saved_and_loaded_is_the_same_bits(saved):
    rs, values, built, path = saved
    assert path == chance_tables.saved_paths(rs, path.parent)[0] and path.is_file()
    assert chance_tables.is_saved(rs, path.parent, values)
    loaded = chance_tables.load(rs, path.parent, values)
    assert loaded is not None and loaded.ensure is not None  # the rows checked chunk by chunk as read
    for a, b in ((built.off, loaded.off), (built.lo, loaded.lo), (built.width, loaded.width)):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    assert loaded.data.dtype == built.data.dtype and np.asarray(loaded.data).tobytes() == built.data.tobytes()
    for flag, mask, sub in states(rs):
        if built.width[(flag << rs.n_boxes) | mask, sub]:
            lo, probs = loaded.row(flag, mask, sub)
            assert lo == built.row(flag, mask, sub)[0] and probs.tobytes() == built.row(flag, mask, sub)[1].tobytes()
    file, digest = chance_tables.verify(rs, path.parent, values)
    assert file == path and digest == table.checksum(built.data)
    chunks.use_private_copies(True)  # read into memory: the same bits
    private = chance_tables.load(rs, path.parent, values)
    assert np.asarray(private.data).tobytes() == built.data.tobytes()


def test_a_table_of_other_values_is_not_loaded(saved, tmp_path):
    rs, values, built, path = saved
    other = np.array(values)
    other[~np.isnan(other)] += 1.0
    assert not chance_tables.is_saved(rs, path.parent, other)
    assert chance_tables.load(rs, path.parent, other) is None
    assert chance_tables.verify(rs, path.parent, other) is None
    assert not chance_tables.is_saved(rs, None, values)
    assert chance_tables.load(rs, tmp_path / "elsewhere", values) is None  # none there at all
    # Written beside a value table that is not the one it follows: refused, nothing written.
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    table.save(rs, other, elsewhere)
    with pytest.raises(table.TableError, match="not the one the chances are of"):
        chance_tables.save(rs, elsewhere, built, values)
    assert not any(p.name.startswith(f"{rs.name}.chances") for p in elsewhere.iterdir())


def flip(path, position: int) -> None:
    with open(path, "r+b") as fh:
        fh.seek(position)
        byte = fh.read(1)
        fh.seek(position)
        fh.write(bytes([byte[0] ^ 0x01]))


def test_a_damaged_byte_is_refused_where_it_is_read(saved):
    """A byte flipped in the rows' file: the table loads (its rows are checked as read), a row over the damaged
    chunk is refused, a row elsewhere is answered as before; verify, mid-turn and a private copy refuse it."""
    rs, values, built, path = saved
    header = path.stat().st_size - built.data.nbytes
    entry = built.data.size * 2 // 3
    flip(path, header + 4 * entry + 1)
    loaded = chance_tables.load(rs, path.parent, values)
    damaged_chunk = (header + 4 * entry) // chunks.CHUNK_BYTES
    over, clear = 0, 0
    for flag, mask, sub in reached_rows(built):
        sid = (flag << rs.n_boxes) | mask
        a, b = int(built.off[sid, sub]), int(built.off[sid, sub] + built.width[sid, sub])
        first, last = (header + 4 * a) // chunks.CHUNK_BYTES, (header + 4 * b - 1) // chunks.CHUNK_BYTES
        if first <= damaged_chunk <= last:
            with pytest.raises(chunks.Damaged, match="damaged"):
                loaded.row(flag, mask, sub)
            over += 1
        else:
            lo, probs = loaded.row(flag, mask, sub)
            assert lo == built.row(flag, mask, sub)[0] and probs.tobytes() == built.row(flag, mask, sub)[1].tobytes()
            clear += 1
    assert over > 0 and clear > 0
    with pytest.raises(table.TableError, match="damaged"):
        chance_tables.verify(rs, path.parent, values)
    fresh = chance_tables.load(rs, path.parent, values)
    padded = remaining.padded_values(rs, values)
    hand = turn_inputs(rs).tables.keep_of((1, 2, 3))
    with pytest.raises(chunks.Damaged):  # the successors' rows may lie anywhere: all checked
        remaining.mid_turn(fresh, padded, 0, rs.box_mask, 0, hand, 1)
    chunks.use_private_copies(True)
    with pytest.raises(chunks.Damaged):  # read whole into memory: checked whole
        chance_tables.load(rs, path.parent, values)


@pytest.mark.parametrize("which", [0, 1])  # the rows, the index
def test_a_damaged_header_or_index_is_refused_on_loading(saved, which):
    rs, values, _, rows = saved
    path = chance_tables.saved_paths(rs, rows.parent)[which]
    for position in (7, path.stat().st_size - 1) if which else (7,):
        flip(path, position)
        with pytest.raises(chunks.Damaged, match="damaged"):
            chance_tables.load(rs, path.parent, values)
        flip(path, position)
    assert chance_tables.load(rs, path.parent, values) is not None


@pytest.mark.parametrize("which", [0, 1])
def test_a_truncated_file_is_refused(saved, which):
    rs, values, _, rows = saved
    path = chance_tables.saved_paths(rs, rows.parent)[which]
    os.truncate(path, path.stat().st_size - 4)
    with pytest.raises(chunks.Damaged, match=r"not the .* its metadata says"):
        chance_tables.load(rs, path.parent, values)


# The full game, once.


@pytest.mark.slow
def test_penta_table(penta_solution, tmp_path):
    """Penta's table, built from the session's values and saved beside them and loaded as `pentadice solve` does:
    every row adds up to 1 and has the value table's mean; from a sheet and mid-turn it is the forward pass's
    distribution."""
    from solutions import saved

    rs, values = penta_solution.rules, penta_solution.values
    directory = saved("penta", tmp_path / "tables")
    chance_tables.save(rs, directory, remaining.solve(rs, values), values)
    built = chance_tables.load(rs, directory, values)
    assert built.data.dtype == remaining.STORED
    sids, lanes = np.nonzero(built.width > 0)
    offs = built.off[sids, lanes]
    # The rows, each once (lanes that share one: the same start), lie one after another: every entry is a row's.
    starts, first, inverse = np.unique(offs, return_index=True, return_inverse=True)
    widths, los = built.width[sids[first], lanes[first]], built.lo[sids[first], lanes[first]]
    assert np.array_equal(starts[1:], starts[:-1] + widths[:-1]) and starts[-1] + widths[-1] == built.data.size
    totals, means = np.empty(len(starts)), np.empty(len(starts))
    for a in range(0, len(starts), 20_000):
        part = slice(a, a + 20_000)
        base, stop = int(starts[part][0]), int(starts[part][-1] + widths[part][-1])
        probs = built.data[base:stop].astype(np.float64)
        at = starts[part] - base
        k = np.arange(stop - base) - np.repeat(at, widths[part])  # each entry's place in its row
        totals[part] = np.add.reduceat(probs, at)
        means[part] = los[part] * totals[part] + np.add.reduceat(probs * k, at)
    assert np.abs(totals - 1).max() < TOTAL
    masks = sids & rs.box_mask
    expected = np.where(masks == 0, 0.0, values[sids >> rs.n_boxes, masks, np.minimum(lanes, rs.upper_threshold)])
    assert np.abs(means[inverse] - expected).max() < MEAN
    sheet = Sheet.parse("ones=3 twos=6 threes=9 fours=12 fives=15 chance=20 penta=50 full_house=25", rs)
    flag, mask, sub = 1, sheet.open_mask(rs), sheet.upper_subtotal(rs)
    assert total_variation(*built.row(flag, mask, sub), *exact(rs, values, sheet)) < TV
    padded = remaining.padded_values(rs, values)
    keeps = turn_inputs(rs).tables
    for dice, rolls_left in [((6, 6, 6, 6, 1), 1), ((1, 2, 3, 4, 6), 2), ((5, 5, 5, 5, 5), 0)]:
        mid = remaining.mid_turn(built, padded, flag, mask, sub, keeps.keep_of(dice), rolls_left)
        assert total_variation(*mid, *exact(rs, values, sheet, dice, rolls_left)) < TV
    start = remaining.mid_turn(built, padded, 0, rs.box_mask, 0, keeps.keep_of((1, 2, 3, 4, 6)), 2)
    assert total_variation(*start, *exact(rs, values, Sheet(), (1, 2, 3, 4, 6), 2)) < TV
    # The chances of real positions: from the table as from the forward pass (chances.win_chances' own source).
    from pentadice.advisor import chances

    sheets = [
        sheet,
        Sheet.parse("sixes=24 fives=20 fours=16 threes=9 twos=6 ones=3 chance=20", rs),
        Sheet.parse("penta=0 small_straight=30 large_straight=40 full_house=25 chance=24 sixes=18", rs),
    ]
    from_table = chances.Chances(rs, values, table=built).win_chances(sheets)
    forward = chances.Chances(rs, values).win_chances(sheets)
    assert from_table == pytest.approx(forward, abs=1e-7)
