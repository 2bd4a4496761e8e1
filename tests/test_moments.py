"""The second-moment table (the spread of the final score) against a brute force and invariants."""

import hashlib
import itertools
import json
import math

import numpy as np
import pytest
import reduced_games
from click.testing import CliRunner
from moments_reference import brute_moments
from solutions import with_second_moments

from pentadice import solver
from pentadice.advisor import Advisor
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.rules import comes_back
from pentadice.game.sheet import Sheet
from pentadice.solver import moments
from pentadice.solver.turn_inputs import turn_inputs
from pentadice.tables import moment_files, table

# Reduced games (as tests/test_bruteforce.py): the joker, Kiriki's repeats and the upper bonus all occur.
GAMES = reduced_games.pick(
    "penta, 3 dice",
    "penta, 2 dice, lower boxes",
    "yahtzee free joker, 2 dice",
    "yahtzee forced joker, 3 dice, 2 rolls",
    "kiriki, 2 dice",
    "kiriki, 2 dice, 2 rolls, lower boxes",
    "penta, 4 dice, 1 roll",
    "yatzy, 3 dice",
    "yatzy, 4 dice, 2 rolls",
    "maxi-yatzy, 6 dice, 2 rolls, tower",
    "maxi-yatzy, 6 dice, threshold above 64",
    "penta, 1 die",
)


@pytest.mark.parametrize("name", list(GAMES))
def test_second_moment_matches_brute_force_on_every_state(name):
    rs = GAMES[name]
    values = solver.solve(rs).values
    m2 = moments.second_moments(rs, values)
    slow_value, slow = brute_moments(rs)
    states = np.argwhere(~np.isnan(values))
    assert len(states) > 20
    assert np.array_equal(np.isnan(m2), np.isnan(values))  # NaN exactly where a state cannot occur
    for full, mask, sub in states:
        assert m2[full, mask, sub] == pytest.approx(slow(int(mask), int(sub), int(full)), rel=1e-9, abs=1e-9), (
            f"state open={rs.boxes_of(int(mask))} subtotal={sub} penta_scored={full}"
        )
    # The mean under the same policy is the value table.
    assert values[0, rs.box_mask, 0] == pytest.approx(slow_value(rs.box_mask, 0, 0), abs=1e-9)


def one_state(rs, values, m2, penta_scored, mask, sub):
    """Value and E[R^2] of one state by the plain-Python, one-lane turn (the advisor's path), from the tables'
    entries of the states after it (and, in Kiriki, of the state itself: the fixed point must hold)."""
    t = turn_inputs(rs)
    work = moments.new_work(moments.work_rows(rs), 1)
    moments.turn_moments(values, m2, t.p, rs.dice, t.tables.counts, t.scores, t.tables.add, t.tables.subs, mask,
                         penta_scored, sub, 1, rs.rolls - 1, *work)  # fmt: skip
    w = t.tables.weight
    return float(w @ work[0][: len(w), 0] / 6**rs.dice), float(w @ work[1][: len(w), 0] / 6**rs.dice)


@pytest.mark.parametrize("name", ["penta", "kiriki"])
def test_wide_kernel_agrees_with_the_one_lane_turn_on_sampled_states(name):
    """The solver's blocks of lanes against the plain one-lane loops, state by state; in Kiriki the states that
    come back to themselves satisfy M2 = T(M2) with the table's own entry."""
    rs, values, m2, _ = with_second_moments(name)
    rng = np.random.default_rng(7)
    reachable = np.argwhere(~np.isnan(values))
    picks = [tuple(s) for s in reachable[rng.choice(len(reachable), 6, replace=False)]]
    if name == "kiriki":  # states whose Kiriki box holds points: they can come back to themselves
        held = reachable[(reachable[:, 0] == 1) & (np.bitwise_count(reachable[:, 1]) > 3)]
        picks += [tuple(s) for s in held[rng.choice(len(held), 3, replace=False)]]
    for full_flag, mask, sub in picks:
        v, m = one_state(rs, values, m2, int(full_flag), int(mask), int(sub))
        assert v == pytest.approx(values[full_flag, mask, sub], rel=1e-12)
        assert m == pytest.approx(m2[full_flag, mask, sub], rel=1e-11)


@pytest.mark.parametrize("name", ["penta", "kiriki"])
def test_blocks_of_lanes_give_the_bits_of_the_plain_loops(name):
    """The solver's build runs its blocks of lanes (vector code) for all 64 lanes and its plain lane loops for
    fewer: both must give every hand's value, second moment and (Kiriki) chance of coming back to the bit, on
    every lane of sampled states, ties between keeps included."""
    rs, values, m2, _ = with_second_moments(name)
    V = np.array(values)  # writable, as the solver passes them
    M = np.array(m2)
    k = moments.compiled()
    p, n_dice, counts, scores, add, subs, weight = turn_inputs(rs).layer()
    n_hands = len(weight)
    rng = np.random.default_rng(11)
    reachable = np.argwhere(~np.isnan(values[:, :, 0]))
    picks = [tuple(s) for s in reachable[rng.choice(len(reachable), 8, replace=False)]]
    # Every state with two open boxes: there exactly equal keeps of different spread first meet (the advisor's
    # order decides between them).
    picks += [tuple(s) for s in reachable[np.bitwise_count(reachable[:, 1]) == 2]]
    if name == "kiriki":  # states that can come back to themselves carry the chance of coming back
        held = reachable[(reachable[:, 0] == 1) & ((reachable[:, 1] >> rs.penta_box) & 1 == 0)]
        picks += [tuple(s) for s in held[rng.choice(len(held), 4, replace=False)]]
    repeating = 0
    for full_flag, mask in picks:
        rep = bool(comes_back(p, int(mask), int(full_flag)))
        repeating += rep
        runs = {}
        for lanes in (64, 63):  # 64: the blocks; 63 lanes, then the last one: the plain loops
            work = k.new_work(moments.work_rows(rs), moments.LANES_PER_PASS)
            k.turn_moments(V, M, p, n_dice, counts, scores, add, subs, np.int64(mask), np.int64(full_flag),
                           np.int64(0), np.int64(lanes), np.int64(rs.rolls - 1), *work)  # fmt: skip
            if lanes < 64:
                rest = k.new_work(moments.work_rows(rs), moments.LANES_PER_PASS)
                k.turn_moments(V, M, p, n_dice, counts, scores, add, subs, np.int64(mask), np.int64(full_flag),
                               np.int64(lanes), np.int64(1), np.int64(rs.rolls - 1), *rest)  # fmt: skip
                for a, b in zip(work, rest, strict=True):
                    a[:, lanes] = b[:, 0]
            runs[lanes] = [a[:n_hands] for a in work[:3]]
        for blocked, plain, what in zip(runs[64], runs[63], ("value", "second moment", "return chance"), strict=True):
            if what == "return chance" and not rep:
                continue  # not carried where a turn cannot come back
            assert np.array_equal(blocked, plain, equal_nan=True), f"{what}: state {rs.boxes_of(int(mask))}"
    if name == "kiriki":
        assert repeating > 0


@pytest.mark.parametrize("name", ["penta", "yahtzee", "kiriki", "yatzy"])
def test_first_moment_is_the_value_table_and_variances_are_not_negative(name):
    rs, values, m2, timings = with_second_moments(name)
    # The pass recomputes the values with the value kernel's operations: the same bits (Kiriki's fixed points to
    # their tolerance).
    assert timings["max_value_difference"] <= (1e-12 if rs.penta_repeat else 0.0)
    ok = ~np.isnan(values)
    assert np.array_equal(ok, ~np.isnan(m2))
    variance = m2[ok] - values[ok] ** 2
    assert variance.min() > -1e-9 * m2[ok].max()
    assert (m2[:, 0][ok[:, 0]] == 0).all()  # game over: nothing more to come
    assert 20 < moments.start_sd(rs, values, m2) < 100


def test_published_yahtzee_sd():
    """Verhoeff's optimal Yahtzee (free joker): mean 254.5896, SD 59.6117. The SD depends on how exact ties
    are broken; under the advisor's order it is 59.6114 (see docs/spread.md), within 5e-4 of the figure."""
    rs, values, m2, _ = with_second_moments("yahtzee")
    assert values[0, rs.box_mask, 0] == pytest.approx(254.5896, abs=1e-4)
    assert moments.start_sd(rs, values, m2) == pytest.approx(59.6117, abs=5e-4)


# SHA-256 of ``moments.second_moments(rs, solved(name).values)`` (C order, float64, NaN where no state), taken from
# the code before the sheets became data (commit 097e0e9): the pass made generic must keep these bits.
CHECKSUMS = {
    "penta": "d42c3af086ebe31b5579f44633effd34d43840b42e5eeca8b47af043f9390519",
    "yahtzee": "5c2eaeb1101f7439dbef501bce90279b06c594fbc11b694a0e374ff20207e335",
    "kiriki": "c2a2c107854a75b5decef38809df6b7925e53da7cceaff173725104c6bdb726c",
}


@pytest.mark.parametrize("name", list(CHECKSUMS))
def test_second_moments_are_the_same_bits_as_before(name):
    _, _, m2, _ = with_second_moments(name)
    assert m2.shape == (2, 8192, 64) and m2.dtype == np.float64
    assert hashlib.sha256(np.ascontiguousarray(m2).data).hexdigest() == CHECKSUMS[name]


def test_yatzy_sd_at_the_start():
    """Scandinavian Yatzy under the advisor's policy: mean 248.4399894 (the published optimum) and SD 38.4964
    (the exact distribution's, an independent forward pass: tests/test_distribution.py)."""
    rs, values, m2, _ = with_second_moments("yatzy")
    assert values.shape == rs.table_shape == (1, 1 << 15, 64)
    assert values[0, rs.box_mask, 0] == pytest.approx(248.4399894, abs=1e-7)
    assert moments.start_sd(rs, values, m2) == pytest.approx(38.4964, abs=1e-4)


def test_maxi_yatzy_is_built_only_on_request():
    """Maxi Yatzy's pass (a million states of 924 keeps) is too long to run unasked: refused with the reason
    and the command that builds it; forced on a reduced game it runs (the 80-lane build)."""
    rs = rules.get_rules("maxi-yatzy")
    assert not moments.automatic(rs)
    assert all(moments.automatic(rules.get_rules(n)) for n in rules.REGISTRY if n != "maxi-yatzy")
    with pytest.raises(moments.MomentsOnDemand, match=r"solve --rules maxi-yatzy --moments") as e:
        moments.second_moments(rs, np.zeros(rs.table_shape))
    assert isinstance(e.value, NotImplementedError)  # what the advisor treats as "no SDs for this rule set"
    assert "1,048,575 states" in str(e.value)


def test_chance_alone_has_the_sd_of_the_best_strategy_for_a_sum():
    """Only Chance open, one roll: the points are the sum of five dice, variance 5 x 35/12 exactly."""
    rs = rules.get_rules("penta").reduced(rolls=1, boxes=("chance",))
    values = solver.solve(rs).values
    m2 = moments.second_moments(rs, values)
    assert values[0, rs.box_mask, 0] == pytest.approx(17.5)
    assert moments.start_sd(rs, values, m2) == pytest.approx(math.sqrt(5 * 35 / 12), rel=1e-12)


# The advisor: every option's SD.


@pytest.fixture(scope="module")
def spread_advisor(tmp_path_factory):
    rs, values, m2, _ = with_second_moments("penta")
    directory = tmp_path_factory.mktemp("spread")
    table.save(rs, values, directory)
    moment_files.save_moments(rs, directory, m2, values)
    return Advisor.load("penta", str(directory), solve_missing=False, compiled=False), directory


def test_box_option_sd_is_the_next_states_spread(spread_advisor):
    advisor, _ = spread_advisor
    advisor.spread = True
    rs = advisor.rules
    sheet = Sheet({"ones": 3, "fives": 15, "chance": 22})
    advice = advisor.advise(advisor.situation((4, 4, 4, 6, 6), 0, sheet))
    V, M = advisor.values, advisor.moments
    open_mask, sub = sheet.open_mask(rs), sheet.upper_subtotal(rs)
    for o in advice.options:
        b = rs.box_index[o.box]
        added = o.points if (rs.upper_mask >> b) & 1 else 0
        nxt = (0, open_mask & ~(1 << b), min(sub + added, rs.upper_threshold))
        assert o.sd == pytest.approx(math.sqrt(M[nxt] - V[nxt] ** 2), rel=1e-12)
        assert o.sd >= 0


@pytest.mark.parametrize(
    ("dice", "rolls_left", "keep"), [((2, 3, 3, 5, 6), 1, (3, 3, 5)), ((1, 2, 4, 4, 6), 2, (4, 4))]
)
def test_keep_option_sd_from_the_outcomes(spread_advisor, dice, rolls_left, keep):
    """A keep's SD by the law of total variance over every reroll, each followed by the advisor's first option
    (its value and SD from the advisor itself, one roll later)."""
    advisor, _ = spread_advisor
    advisor.spread = True
    sheet = Sheet({"twos": 6, "full_house": 25})
    option = advisor.advise(advisor.situation(dice, rolls_left, sheet)).option_for(keep=keep)
    n = 5 - len(keep)
    first = second = 0.0
    for faces in itertools.product(range(1, 7), repeat=n):
        best = advisor.advise(advisor.situation(tuple(sorted(keep + faces)), rolls_left - 1, sheet)).best
        first += best.value
        second += best.sd**2 + best.value**2
    first, second = first / 6**n, second / 6**n
    assert first == pytest.approx(option.value, rel=1e-12)
    assert option.sd == pytest.approx(math.sqrt(second - first**2), rel=1e-9)


def test_compiled_advice_has_the_same_sds(spread_advisor):
    _, directory = spread_advisor
    plain = Advisor.load("penta", str(directory), solve_missing=False, compiled=False, spread=True)
    fast = Advisor.load("penta", str(directory), solve_missing=False, compiled=True, spread=True)
    situation = plain.situation((1, 1, 3, 4, 6), 2, Sheet({"sixes": 18}))
    a, b = plain.advise(situation).options, fast.advise(situation).options
    assert [o.sd for o in a] == pytest.approx([o.sd for o in b], rel=1e-12)


def test_advise_shows_the_sd(spread_advisor):
    _, directory = spread_advisor
    run = CliRunner()
    out = run.invoke(main, ["advise", "1", "1", "3", "4", "6", "--json", "--data", str(directory)])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert all(o["sd"] > 0 for o in data["options"]) and data["best"]["sd"] == data["options"][0]["sd"]
    human = run.invoke(main, ["advise", "1", "1", "3", "4", "6", "--data", str(directory)])
    assert human.exit_code == 0 and "SD" in human.output
    row = next(line for line in human.output.splitlines() if line.strip().startswith("1 "))
    assert row.split()[-1] == f"{data['options'][0]['sd']:.2f}"


def test_advise_on_a_table_without_second_moments_computes_and_saves_them(tmp_path):
    """A table solved before the second moments existed (or on demand): advise computes them once, saves them
    beside the table, and every option has its sd."""
    rs, values, m2, _ = with_second_moments("penta")
    table.save(rs, values, tmp_path)
    out = CliRunner().invoke(main, ["advise", "1", "1", "3", "4", "6", "--json", "--data", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["best"]["sd"] > 0
    assert np.array_equal(moment_files.load_moments(rs, tmp_path), m2, equal_nan=True)


# The file beside the table.


def test_second_moments_file_is_checked(tmp_path):
    rs, values, m2, _ = with_second_moments("penta")
    table.save(rs, values, tmp_path)
    with pytest.raises(table.TableMissing):
        moment_files.load_moments(rs, tmp_path)
    moment_files.save_moments(rs, tmp_path, m2, values)
    loaded = moment_files.load_moments(rs, tmp_path)
    assert np.array_equal(loaded, m2, equal_nan=True)
    assert moment_files.verify_moments(table.load(rs, tmp_path))["sd_at_start"] == moments.start_sd(rs, values, m2)
    verified = CliRunner().invoke(main, ["verify", "--data", str(tmp_path)])
    assert verified.exit_code == 0 and "penta.m2.npy" in verified.output, verified.output
    # A damaged file is refused with its name; verify fails.
    path = tmp_path / "penta.m2.npy"
    data = bytearray(path.read_bytes())
    data[-100] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(table.TableError, match=r"penta\.m2\.npy \(the second moments\) does not match its checksum"):
        moment_files.load_moments(rs, tmp_path)
    verified = CliRunner().invoke(main, ["verify", "--data", str(tmp_path)])
    assert verified.exit_code == 1 and "checksum" in verified.output and "Traceback" not in verified.output
    # Second moments of other values (an older table): treated as missing, never used.
    moment_files.save_moments(rs, tmp_path, m2, values)
    other = values.copy()
    other[0, rs.box_mask, 0] += 1.0
    with pytest.raises(table.TableMissing, match="older table"):
        moment_files.load_moments(rs, tmp_path, other)


def test_solve_writes_the_second_moments_and_reports_the_sd(tmp_path):
    rs = rules.get_rules("yahtzee")
    result = CliRunner().invoke(
        main, ["solve", "--skip", "chances,win,win-end", "--rules", "yahtzee", "--out", str(tmp_path), "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.splitlines()[-1])
    assert summary["sd"] == pytest.approx(59.6117, abs=5e-4)
    assert summary["files"]["m2"] == str(tmp_path / "yahtzee.m2.npy")
    assert summary["seconds"] > 0 and summary["moments_seconds"] == 0.0  # one pass for both: in "seconds"
    m2 = moment_files.load_moments(rs, tmp_path)
    assert moments.start_sd(rs, table.load(rs, tmp_path).values, m2) == summary["sd"]


# --- the values and the second moments in one pass (solve) ---------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(rules.REGISTRY) - {"maxi-yatzy"}))
def test_one_pass_gives_the_bits_of_the_value_pass_and_the_moment_pass(name):
    """`solve` computes both tables in one traversal (Kiriki's returning states by the value pass's secant steps
    first): each is the same bits as its own pass gives it."""
    rs, values, m2, _ = with_second_moments(name)
    both = solver.solve(rs, threads=2, moments=True)
    assert both.values.tobytes() == values.tobytes()
    assert both.m2.tobytes() == m2.tobytes()


@pytest.mark.parametrize("name", list(GAMES))
def test_one_pass_on_reduced_games(name):
    """Reduced games (64 lanes, or 80 with a threshold above 64): the bits of the passes run alone."""
    rs = GAMES[name]
    both = solver.solve(rs, threads=2, moments=True)
    values = solver.solve(rs, threads=1).values
    assert both.values.tobytes() == values.tobytes()
    assert both.m2.tobytes() == moments.second_moments(rs, values).tobytes()
