"""Target scores: the kernel against a slow expectimax over dice positions, invariants, storage, the advice (a build
in progress said), and the build in parts small enough that SIGTERM ends it within seconds."""

import functools
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import reduced_games
from click.testing import CliRunner
from commands import unbuffered
from family_reference import box_moves, holds_penta, turn_of
from reference import brute_force
from signals import cpu_seconds, interrupt, wait_for_work

from pentadice.advisor import reach
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation
from pentadice.solver import targets as kernel
from pentadice.tables import chunks, table, targets

GAMES = reduced_games.pick(
    "penta, 2 dice, lower boxes",
    "yahtzee free joker, 3 dice, 2 rolls",
    "kiriki, 2 dice, 2 rolls, lower boxes",
    "yatzy, 2 dice",
    "yatzy, 4 dice, 2 rolls, ones and threes",
    "maxi boxes, 6 dice, 2 rolls, sixes",
)
NOT_KIRIKI = [name for name in GAMES if not GAMES[name].penta_repeat]


def marked(names):
    """The brute force of the games of 3 dice or more takes seconds: marked slow (CI runs it too)."""
    slow = ("3 dice", "4 dice", "6 dice")
    return [pytest.param(n, marks=pytest.mark.slow) if any(x in n for x in slow) else n for n in names]


def shifted(row: np.ndarray, g: int) -> np.ndarray:
    """P(remaining >= t - g) for t = 0 .. len(row) - 1: 1 where t <= g."""
    out = np.ones(len(row))
    if g + 1 < len(row):
        out[g + 1 :] = row[1 : len(row) - g]
    return out


def slow_targets(rs: rules.RuleSet, T: int, ev=None):
    """Expectimax over dice (:mod:`family_reference`), each decision maximising P(remaining >= t) for each
    t = 0 .. T - 1 separately; with ``ev`` (the values of ``reference.brute_force``) each decision instead
    maximises the expected score, and the rows are that strategy's tail. Returns ``(V, options)``:
    ``V(open_mask, sub, full)`` the row at the start of a turn, ``options(state, dice, rerolls)`` each option's
    row (``("keep", kept faces)`` or ``("box", box)``)."""

    @functools.cache
    def V(open_mask, sub, full):
        if open_mask == 0:
            out = np.zeros(T)
            out[0] = 1.0
            return out
        if not (rs.penta_repeat and holds_penta(rs, open_mask, full)):
            return make_turn(open_mask, sub, full, V)[0]()[1]
        # Kiriki: lane t reads this state's lane t - 50; iterating from 0 settles a window of 50 lanes a turn.
        state = (open_mask, sub, full)
        x = np.zeros(T)
        while True:
            here = make_turn(open_mask, sub, full, lambda m, s, f, x=x: x if (m, s, f) == state else V(m, s, f))
            nxt = here[0]()[1]
            if np.array_equal(nxt, x):
                return nxt
            x = nxt

    def choose(candidates):
        """The best of ``(expected value, row)`` candidates: lane by lane, or by the expected value."""
        if ev is None:
            return 0.0, np.max([row for _, row in candidates], axis=0)
        return max(candidates, key=lambda c: c[0])

    def mean(values):
        return sum(v for v, _ in values) / len(values), sum(row for _, row in values) / len(values)

    def make_turn(open_mask, sub, full, V):
        def score_now(dice):
            out = {}
            for box, gain, nxt in box_moves(rs, dice, open_mask, sub, full):
                value = gain + (ev(*nxt) if ev is not None else 0.0)
                out[("box", box)] = (value, shifted(V(*nxt), gain))
            return out

        return turn_of(rs, score_now, choose, mean)

    def options(state, dice, rerolls):
        return make_turn(*state, V)[1](tuple(dice), rerolls)

    return V, options


@functools.cache
def built(name):
    rows: dict = {}
    b = kernel.build(GAMES[name], rows=rows)
    return b, rows


@functools.cache
def slow(name):
    b, _ = built(name)
    return slow_targets(GAMES[name], b.longest + 80)


def padded(row, T):
    out = np.zeros(T)
    out[: len(row)] = row[:T]
    return out


@pytest.mark.parametrize("name", marked(GAMES))
def test_kernel_matches_brute_force_on_every_state_and_target(name):
    _, rows = built(name)
    V, _ = slow(name)
    assert len(rows) > 25
    for (f, m, s), row in rows.items():
        ref = V(m, s, f)
        # Exact but for the lanes cut below EPS (kernel.EPS, at most one per layer on the way).
        assert np.abs(padded(row, len(ref)) - ref).max() <= 20 * kernel.EPS, f"state {f, GAMES[name].boxes_of(m), s}"
        assert ref[len(row) :].max(initial=0.0) < 20 * kernel.EPS  # nothing but the cut tail lies past the row


@pytest.mark.parametrize("name", list(GAMES))
def test_invariants(name):
    _, rows = built(name)
    for row in rows.values():
        assert row[0] == 1.0  # P(>= 0) = 1
        assert np.all(np.diff(row) <= 0)  # never more likely to score more
        assert np.all((row >= 0) & (row <= 1))


@pytest.mark.parametrize("name", marked(NOT_KIRIKI))
def test_target_strategy_beats_the_expected_score_strategys_tail_for_every_target(name):
    rs = GAMES[name]
    b, rows = built(name)
    T = b.longest + 20
    values = brute_force(rs)
    tail, _ = slow_targets(rs, T, ev=values)
    strictly = 0
    for (f, m, s), row in rows.items():
        theirs = tail(m, s, f)
        mine = padded(row, T)
        assert np.all(mine >= theirs - 1e-12)
        strictly += bool(np.any(mine > theirs + 1e-9))
        # and the tail sums to the expected score (a check on the reference itself)
        assert theirs[1:].sum() == pytest.approx(values(m, s, f), abs=1e-9)
    assert strictly > 0  # the target strategy is a different strategy


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Each game's target table saved in its own directory."""
    out = {}
    for name, rs in GAMES.items():
        directory = tmp_path_factory.mktemp("targets")
        _, files, _ = targets.timed_solve(rs, directory, threads=2)
        out[name] = files
    return out


@pytest.mark.parametrize("name", list(GAMES))
def test_storage_round_trip_within_the_documented_precision(name, saved):
    rs = GAMES[name]
    _, rows = built(name)
    tt = targets.load(rs, saved[name].directory, verify=True)
    assert tt.meta["precision"] == targets.PRECISION == 0.5 / 65535
    for (f, m, s), row in rows.items():
        stored = tt.row(f, m, s)
        assert np.abs(padded(stored, len(row)) - row).max() <= targets.PRECISION + 1e-12
        assert np.all(np.diff(stored) <= 0) and stored[0] == 1.0
        assert tt.p(f, m, s, 0) == tt.p(f, m, s, -5) == 1.0
    # Past every row, nothing: no game scores that much.
    assert tt.p(0, rs.box_mask, 0, 10**4) == 0.0


def situations(rs, rng, n):
    """Random situations of a reduced game (sheets that can occur)."""
    from sheets import random_sheet

    out = []
    while len(out) < n:
        sheet = random_sheet(rs, rng, int(rng.integers(0, len(rs.boxes))))
        dice = [int(d) for d in rng.integers(1, 7, size=rs.dice)]
        out.append(Situation.make(rs, dice, int(rng.integers(0, rs.rolls)), sheet))
    return out


@pytest.mark.parametrize("name", marked(GAMES))
def test_each_options_probability_matches_brute_force(name, saved):
    from pentadice.advisor import Advisor
    from pentadice.solver import solve

    rs = GAMES[name]
    tt = targets.load(rs, saved[name].directory)
    V, options = slow(name)
    from pentadice.tables import table

    tbl = table.Table(rs, solve(rs).values, {}, None)
    advisor = Advisor(tbl, compiled=False)
    rng = np.random.default_rng(7)
    for situation in situations(rs, rng, 6):
        advice = advisor.advise(situation)
        sheet = situation.sheet
        state = (sheet.open_mask(rs), sheet.upper_subtotal(rs), int(sheet.penta_scored(rs)))
        ref = options(state, situation.dice, situation.rolls_left)
        so_far = advice.score_so_far
        for target in (so_far - 3, so_far + 1, so_far + 20, so_far + 60, so_far + 150):
            got = reach.option_probabilities(tt, advice, target)
            for o, p in zip(advice.options, got, strict=True):
                key = ("keep", o.move.dice) if o.action == "keep" else ("box", o.move.box)
                want = ref[key][1][target - so_far] if target > so_far else 1.0
                assert p == pytest.approx(want, abs=targets.PRECISION + 1e-9), (situation, target, key)
            best = max(r[1][max(target - so_far, 0)] for r in ref.values())
            if target < 0:
                continue
            p_max = reach.p_target_max(rs, str(saved[name].directory), sheet, situation.dice,
                                         situation.rolls_left, target)  # fmt: skip
            assert p_max == pytest.approx(best, abs=targets.PRECISION + 1e-9)
        # At the start of a turn: the stored row.
        start = V(*state)[30]
        p_start = reach.p_target_max(rs, str(saved[name].directory), sheet, target=so_far + 30)
        assert p_start == pytest.approx(start, abs=targets.PRECISION + 1e-9)


def test_missing_and_damaged_tables_are_refused_with_how_to_build_them(tmp_path, saved):
    rs = GAMES["penta, 2 dice, lower boxes"]
    with pytest.raises(targets.TargetsMissing, match=r"run `pentadice solve --targets --rules penta"):
        targets.load(rs, tmp_path)
    with pytest.raises(targets.TargetsMissing):
        reach.p_target_max(rs, str(tmp_path), Sheet(), target=100)
    import shutil

    src = saved["penta, 2 dice, lower boxes"].directory
    for f in src.iterdir():
        shutil.copy(f, tmp_path / f.name)
    files = targets.TargetFiles(tmp_path, rs.name)
    data = bytearray(files.data.read_bytes())
    data[-1] ^= 0xFF
    files.data.write_bytes(bytes(data))
    assert files.data.stat().st_size <= chunks.CHUNK_BYTES  # one chunk, the header's: checked when opened
    with pytest.raises(rules_table_error(), match="does not match its checksum"):
        targets.load(rs, tmp_path)
    with pytest.raises(rules_table_error(), match="does not match its checksum"):
        targets.load(rs, tmp_path, verify=True)
    index = np.load(files.index)
    index[1, 0, rs.box_mask, 0] += 1
    np.save(files.index, index)
    with pytest.raises(rules_table_error(), match="damaged"):
        targets.load(rs, tmp_path)
    # a table of other rules under this name
    with pytest.raises(rules_table_error(), match="other rules"):
        targets.load(rs.reduced(upper_threshold=5), src)


def rules_table_error():
    from pentadice.tables import table

    return table.TableError


def test_bad_targets_are_refused():
    for bad in (-1, 10**9, "300", 2.5, True):
        with pytest.raises(ValueError, match="target"):
            reach.check_target(bad)
    assert reach.check_target(0) == 0


# The commands, on a small game registered as "penta" (the real one's table takes minutes to build).


@pytest.fixture
def small_penta(monkeypatch, tmp_path):
    # (value tables are saved with all 64 subtotals: the threshold stays at 63)
    rs = GAMES["penta, 2 dice, lower boxes"].reduced(upper_threshold=63)
    monkeypatch.setitem(rules.REGISTRY, "penta", rs)
    return rs, tmp_path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_solve_targets_and_advise_target(small_penta):
    rs, data = small_penta
    result = run("solve", "--targets", "--data", data, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["rules"] == "penta" and summary["states"] > 30 and summary["bytes_on_disk"] > 0
    human = run("solve", "--targets", "--data", data)
    assert human.exit_code == 0, human.output
    assert "Build:" in human.output and "On disk:" in human.output

    result = run("advise", "2", "6", "--rolls-left", "1", "--sheet", "twos=4", "--target", "120", "--data", data,
                 "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["target"] == 120
    p = [o["p_target"] for o in out["options"]]
    assert p == sorted(p, reverse=True) and out["best"] == out["options"][0]
    assert all(0 <= x <= 1 for x in p) and all("value" in o for o in out["options"])
    situation = Situation.make(rs, [2, 6], 1, Sheet.parse("twos=4", rs))
    assert max(p) == pytest.approx(reach.p_target_max(rs, str(data), situation.sheet, [2, 6], 1, 120), abs=1e-12)

    text = run("advise", "2", "6", "--rolls-left", "1", "--sheet", "twos=4", "--target", "120", "--data", data)
    assert text.exit_code == 0, text.output
    assert "Target: 120 points (116 more needed)" in text.output and "P(>= target)" in text.output
    assert f"{100 * max(p):.4f}%" in text.output

    reached = run("advise", "2", "6", "--sheet", "twos=4", "--target", "3", "--data", data, "--json")
    assert {o["p_target"] for o in json.loads(reached.stdout)["options"]} == {1.0}  # already there


def test_advise_target_without_the_table_says_how_to_build_it(small_penta):
    _, data = small_penta
    result = run("advise", "2", "6", "--target", "100", "--data", data)
    assert result.exit_code == 1
    assert "pentadice solve --targets" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("bad", ["-5", "1000000", "many", "2.5", ""])
def test_advise_refuses_a_bad_target(small_penta, bad):
    _, data = small_penta
    result = run("advise", "2", "6", "--target", bad, "--data", data)
    assert result.exit_code == 2
    assert "--target" in result.output and "Traceback" not in result.output


def test_target_with_batch_is_refused(small_penta):
    _, data = small_penta
    result = run("advise", "--batch", "-", "--target", "100", "--data", data)
    assert result.exit_code == 2 and "--batch" in result.output


def test_distribution_target(small_penta):
    rs, data = small_penta
    missing = run("distribution", "--target", "100", "--data", data)
    assert missing.exit_code == 1 and "pentadice solve --targets" in missing.output
    assert run("solve", "--targets", "--data", data).exit_code == 0
    result = run("distribution", "--sheet", "twos=4", "--target", "100", "--data", data, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    tt = targets.load(rs, data)
    sheet = Sheet.parse("twos=4", rs)
    want = tt.p(0, sheet.open_mask(rs), sheet.upper_subtotal(rs), 100 - 4)
    assert out["target"] == 100 and out["p_target_max"] == pytest.approx(want, abs=1e-15)
    # The target strategy's chance is at least the expected-score strategy's (the distribution's tail).
    tail = dict(out["tail"])
    assert out["p_target_max"] >= tail.get(100, 0.0) - targets.PRECISION
    text = run("distribution", "2", "6", "--rolls-left", "0", "--target", "100", "--data", data)
    assert text.exit_code == 0, text.output
    assert "Target 100: at most" in text.output


def test_a_fifo_or_a_bad_header_is_refused_as_damaged_without_hanging(tmp_path, saved):
    import shutil

    rs = GAMES["penta, 2 dice, lower boxes"]
    for f in saved["penta, 2 dice, lower boxes"].directory.iterdir():
        shutil.copy(f, tmp_path / f.name)
    files = targets.TargetFiles(tmp_path, rs.name)
    files.index.unlink()
    os.mkfifo(files.index)  # opening it would block until a writer came
    with pytest.raises(rules_table_error(), match="not a regular file"):
        targets.load(rs, tmp_path)
    files.index.unlink()
    np.save(files.index, np.array([{}], dtype=object), allow_pickle=True)  # NumPy would ask to unpickle it
    with pytest.raises(rules_table_error(), match="damaged") as caught:
        targets.load(rs, tmp_path)
    assert "allow_pickle" not in str(caught.value)


def test_verify_checks_the_target_table_data(small_penta):
    _, data = small_penta
    assert run("solve", "--skip", "chances,win,win-end", "--data", data, "--json").exit_code == 0
    assert run("solve", "--targets", "--data", data, "--json").exit_code == 0
    ok = run("verify", "--data", data)
    assert ok.exit_code == 0, ok.output
    assert "penta.targets.npy" in ok.output and "target probabilities" in ok.output
    files = targets.TargetFiles(Path(data), "penta")
    raw = bytearray(files.data.read_bytes())
    raw[-1] ^= 0xFF
    files.data.write_bytes(bytes(raw))
    bad = run("verify", "--data", data)
    assert bad.exit_code == 1 and "does not match its checksum" in bad.output


# The wider family: Yatzy's table is built like Penta's; Maxi Yatzy's is refused, with the reason and the sizes.


def test_yatzy_is_built_and_maxi_yatzy_refused_by_size():
    assert kernel.refusal(rules.get_rules("penta")) is None
    assert kernel.refusal(rules.get_rules("yatzy")) is None
    reason = kernel.refusal(rules.get_rules("maxi-yatzy"))
    assert reason is not None and "too large" in reason
    assert "1,048,576 box masks" in reason and "76 upper subtotals" in reason and "GB" in reason


def test_solve_targets_refuses_maxi_yatzy_with_the_reason(tmp_path):
    result = run("solve", "--targets", "--rules", "maxi-yatzy", "--data", tmp_path)
    assert result.exit_code == 2, result.output
    assert "too large" in result.output and "1,048,576 box masks" in result.output
    assert "Traceback" not in result.output
    assert not list(tmp_path.iterdir())  # nothing written
    rs = rules.get_rules("maxi-yatzy")
    with pytest.raises(targets.TargetsRefused, match="too large"):
        targets.load(rs, tmp_path)
    with pytest.raises(ValueError, match="too large"):
        targets.timed_solve(rs, tmp_path)


@pytest.fixture
def small_yatzy(monkeypatch, tmp_path):
    rs = GAMES["yatzy, 2 dice"].reduced(upper_threshold=63)  # saved value tables of Yatzy: 64 subtotals
    monkeypatch.setitem(rules.REGISTRY, "yatzy", rs)
    return rs, tmp_path


def test_solve_targets_and_advise_target_under_yatzy(small_yatzy):
    rs, data = small_yatzy
    assert run("solve", "--skip", "chances,win,win-end", "--rules", "yatzy", "--data", data, "--json").exit_code == 0
    result = run("solve", "--targets", "--rules", "yatzy", "--data", data, "--json")
    assert result.exit_code == 0, result.output
    tt = targets.load(rs, data, verify=True)
    assert tt.first.shape == rs.table_shape == (1, 1 << 15, 64)
    out = run("advise", "--rules", "yatzy", "2", "2", "--rolls-left", "1", "--sheet", "twos=4", "--target", "30",
              "--data", data, "--json")  # fmt: skip
    assert out.exit_code == 0, out.output
    advice = json.loads(out.stdout)
    p = [o["p_target"] for o in advice["options"]]
    assert p == sorted(p, reverse=True) and all(0 <= x <= 1 for x in p)
    sheet = Sheet.parse("twos=4", rs)
    assert max(p) == pytest.approx(reach.p_target_max(rs, str(data), sheet, [2, 2], 1, 30), abs=1e-12)


def test_the_commands_refuse_the_targets_the_advice_refuses():
    """``--target`` is checked by click before anything loads (no Numba): the same bound as the advice's."""
    from pentadice.faces.cli import options

    assert options.MAX_TARGET == reach.MAX_TARGET
    with pytest.raises(ValueError, match="target"):
        reach.check_target(options.MAX_TARGET + 1)


def test_advise_target_says_a_build_is_in_progress(tmp_path):
    data = tmp_path / "tables"
    data.mkdir()
    with table.writer_lock(targets.TargetFiles(data, "penta").lock_files):  # as `solve --targets` holds it
        result = run("advise", "11346", "--target", "200", "--data", str(data))
    assert result.exit_code == 1 and "is being built" in result.stderr, result.output
    assert "run `pentadice solve --targets" not in result.stderr
    after = run("advise", "11346", "--target", "200", "--data", str(data))
    assert "run `pentadice solve --targets" in after.stderr and "being built" not in after.stderr


def test_kiriki_target_build_parts_are_small():
    """A part of a layer (between two checks for a signal) holds at most PART_LANES lanes but for one state."""
    import itertools

    from pentadice.solver import targets as kernel

    rs = rules.get_rules("kiriki")
    for flags, masks, subs in kernel.layers(rs)[:4]:
        alloc = np.array([kernel.bound(rs, f, m, s) + 1 for f, m, s in zip(flags, masks, subs, strict=True)])
        cuts = kernel.part_cuts(alloc, 2)
        assert cuts[0] == 0 and cuts[-1] == len(alloc) and np.all(np.diff(cuts) > 0)
        for a, b in itertools.pairwise(cuts):
            assert alloc[a:b].sum() <= kernel.PART_LANES + alloc.max() and b - a <= kernel.PART_STATES


@pytest.mark.slow
def test_sigterm_ends_a_kiriki_target_build_within_a_part_of_its_layer(tmp_path):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pentadice",
            "solve",
            "--targets",
            "--rules",
            "kiriki",
            "--data",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=unbuffered(),
    )
    # Past the value table (a few seconds of processor time) and into the targets' layers, however busy the machine.
    wait_for_work(proc, 15)
    before = cpu_seconds(proc.pid)
    interrupt(proc, signal.SIGTERM)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    assert code == 130, proc.stderr.read().decode()
    # The processor time it took to stop: a part of a layer or two per thread (about 0.3 s each), not the rest of
    # the layer (once many seconds). Processor time, not wall time: the same on a busy machine.
    spent = usage.ru_utime + usage.ru_stime - before
    assert spent < 5, f"the build went on for {spent:.1f} s of processor time after SIGTERM"
    assert not list(tmp_path.glob("kiriki.targets*"))
