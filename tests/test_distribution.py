"""The exact distribution of the final score (`pentadice distribution`): a slow expectimax over dice positions
that carries a whole distribution on reduced games, invariants on the full game, and the command."""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math

import numpy as np
import pyarrow.parquet as pq
import pytest
import reduced_games
from click.testing import CliRunner
from moments_reference import completions
from reference import brute_force
from solutions import with_second_moments  # the session's second moments of a registered rule set

from pentadice import solver
from pentadice.advisor import distribution, distribution_report
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.sheet import Sheet

TIE = 1e-9  # the reference's own values: values this close count as equal, ordered by the advisor's tie rule

GAMES = reduced_games.pick(
    *reduced_games.JOKERS,
    "yatzy, 3 dice",
    "yatzy, 4 dice, 2 rolls",
    "maxi-yatzy, 6 dice, 2 rolls, tower",
    "maxi-yatzy, 6 dice, threshold above 64",
)


def add(into: dict, dist: dict, shift: int, weight: float) -> None:
    for (x, *ended), p in dist.items():
        key = (x + shift, *ended)
        into[key] = into.get(key, 0.0) + weight * p


def brute_distribution(rs: rules.RuleSet):
    """``(R, turn_from)``: ``R(open_mask, subtotal, full)`` is ``{(points still to come, upper bonus earned at the
    end, Penta box at its points at the end): probability}`` from a state between turns; ``turn_from(open_mask,
    subtotal, full, dice, rerolls)`` the same from mid-turn.

    Every roll is one of the ``6**n`` equally likely ordered tuples; with rerolls left the player scores now or
    rerolls a non-empty set of positions. Each decision is the option of highest value (values within ``TIE``
    equal, then scoring first, boxes in sheet order, keeps with more dice first, then by their faces), the
    values from ``reference.brute_force``. Shares nothing with the fast code but the rules module. A reroll of
    ``m`` dice averages over the sorted outcomes, each weighted by the ordered ones that give it (six dice)."""
    V = brute_force(rs)
    n = rs.dice
    subsets = [s for k in range(1, n + 1) for s in itertools.combinations(range(n), k)]

    def best(open_mask: int, sub: int, full: int):
        @functools.cache
        def decide(dice: tuple[int, ...], rerolls: int) -> tuple[float, dict]:
            options = []  # (value, tie key, distribution of the points still to come)
            legal, bonus = rules.legal_scores(rs, dice, rs.boxes_of(open_mask), bool(full))
            for box, pts in legal.items():
                b = rs.box_index[box]
                added = pts if (rs.upper_mask >> b) & 1 else 0
                nxt = (
                    open_mask & ~(1 << b),
                    min(sub + added, rs.upper_threshold),
                    full if b != rs.penta_box else int(pts > 0),
                )
                gain = pts + bonus + rules.upper_bonus_earned(rs, sub, added)
                options.append((gain + V(*nxt), (0, b, ()), (R(*nxt), gain)))
            if rerolls > 0:
                for kept in {tuple(sorted(d for i, d in enumerate(dice) if i not in ps)) for ps in subsets}:
                    value, dist = reroll(kept, rerolls - 1)
                    options.append((value, (1, -len(kept), kept), (dist, 0)))
            top = max(o[0] for o in options)
            value, _, (dist, shift) = min((o for o in options if o[0] >= top - TIE), key=lambda o: o[1])
            return value, {(x + shift, *ended): p for (x, *ended), p in dist.items()}

        @functools.cache
        def reroll(kept: tuple[int, ...], rerolls: int) -> tuple[float, dict]:
            value, dist = 0.0, {}
            for faces, p in completions(n - len(kept)):
                v, d = decide(tuple(sorted(kept + faces)), rerolls)
                value += p * v
                add(dist, d, 0, p)
            return value, dist

        return decide

    @functools.cache
    def R(open_mask: int, sub: int, full: int) -> dict:
        if open_mask == 0:
            return {(0, int(sub >= rs.upper_threshold), full): 1.0}
        decide = best(open_mask, sub, full)
        out: dict = {}
        for faces, p in completions(n):  # the first roll: every ordered tuple, grouped by its sorted faces
            add(out, decide(faces, rs.rolls - 1)[1], 0, p)
        return out

    def turn_from(open_mask: int, sub: int, full: int, dice: tuple[int, ...], rerolls: int) -> dict:
        return best(open_mask, sub, full)(tuple(sorted(dice)), rerolls)[1]

    return R, turn_from


@functools.cache
def solved(name: str):
    return solver.solve(GAMES[name]).values


def as_dict(dist: distribution.Distribution) -> dict:
    return {int(s): float(p) for s, p in zip(dist.scores, dist.probs, strict=True) if p > 0}


def assert_same(fast: distribution.Distribution, slow: dict, so_far: int = 0) -> None:
    """The fast distribution is the reference's, and so are its chances of how the sheet ends."""
    points: dict = {}
    for (x, _, _), p in slow.items():
        points[x + so_far] = points.get(x + so_far, 0.0) + p
    points = {x: p for x, p in points.items() if p > 0}
    got = as_dict(fast)
    assert set(got) == set(points)
    worst = max(abs(got[x] - points[x]) for x in points)
    assert worst < 1e-12
    assert fast.p_upper_bonus == pytest.approx(sum(p for (_, bonus, _), p in slow.items() if bonus), abs=1e-12)
    penta = sum(p for (_, _, full), p in slow.items() if full)
    if fast.p_penta is None:  # no Penta box: the reference's flag never set
        assert penta == 0
    else:
        assert fast.p_penta == pytest.approx(penta, abs=1e-12)


@pytest.mark.parametrize("name", list(GAMES))
def test_matches_brute_force_from_the_start(name):
    rs = GAMES[name]
    R, _ = brute_distribution(rs)
    fast = distribution.final_distribution(rs, solved(name), threads=2)
    assert_same(fast, R(rs.box_mask, 0, 0))
    assert fast.mean() == pytest.approx(float(solved(name)[0, rs.box_mask, 0]), abs=1e-9)


@pytest.mark.parametrize("name", list(GAMES))
def test_matches_brute_force_from_a_sheet_and_mid_turn(name):
    rs = GAMES[name]
    R, turn_from = brute_distribution(rs)
    values = solved(name)
    # The first box filled with a five of a kind's points where it can: the Penta box at 50, bonuses after;
    # without a Penta box, the first box sacrificed.
    first = "penta" if "penta" in rs.boxes else rs.boxes[0]
    sheet = Sheet({first: rs.penta_points})
    mask = sheet.open_mask(rs)
    full = int(sheet.penta_scored(rs))
    fast = distribution.final_distribution(rs, values, sheet)
    assert_same(fast, R(mask, 0, full), sheet.score(rs))
    assert fast.mean() == pytest.approx(sheet.score(rs) + float(values[full, mask, 0]), abs=1e-9)
    for dice in [(6,) * rs.dice, tuple(range(1, rs.dice + 1)), (2,) * (rs.dice - 1) + (5,)]:
        for rerolls in range(rs.rolls):
            fast = distribution.final_distribution(rs, values, sheet, dice, rerolls)
            assert_same(fast, turn_from(mask, 0, full, dice, rerolls), sheet.score(rs))


def test_kiriki_is_refused_with_the_reason():
    rs = reduced_games.GAMES["kiriki, 2 dice, 3 boxes"]
    with pytest.raises(distribution.DistributionError, match="repeats the turn"):
        distribution.final_distribution(rs, np.zeros(rs.table_shape))


def test_sd_equals_the_second_moment_table():
    moments = pytest.importorskip("pentadice.solver.moments")
    for name in GAMES:
        rs = GAMES[name]
        values = solved(name)
        m2 = moments.second_moments(rs, values)
        fast = distribution.final_distribution(rs, values)
        assert fast.sd() == pytest.approx(moments.start_sd(rs, values, m2), abs=1e-9)


def test_too_large_is_refused_with_the_sizes(monkeypatch):
    """A forward pass that would not fit in the memory allowed is refused before it allocates, naming the sizes;
    the same state asked again is refused at once (remembered), and states with fewer boxes open still work."""
    name = "yatzy, 3 dice"
    rs, values = GAMES[name], solved(name)
    # The table and its copy padded to the lanes, then a state's turn outcomes (boxes x Penta bonus or not x 51
    # points x lanes): the start's six states of a layer do not fit, one box open (one state) does; the process
    # itself left out.
    lanes = rs.lanes
    table = 8 * math.prod(rs.table_shape) + 8 * (1 << rs.n_boxes) * lanes
    outcomes = 8 * rs.n_boxes * 2 * 51 * (lanes + 1)
    monkeypatch.setattr(distribution, "MEMORY_LIMIT", table + int(3.5 * outcomes))
    monkeypatch.setattr(distribution, "PROCESS_MEMORY", 0)
    monkeypatch.setattr(distribution, "_refused", {})
    monkeypatch.setattr(distribution, "_cache", distribution.OrderedDict())  # not the result of an earlier test
    too_large = r"Yatzy \(Scandinavian\) from this sheet is not computed: it needs about .* GB \(16 states"
    with pytest.raises(distribution.DistributionTooLarge, match=too_large):
        distribution.final_distribution(rs, values)
    assert len(distribution._refused) == 1
    with pytest.raises(distribution.DistributionError, match="GB allowed"):
        distribution.final_distribution(rs, values, dice=(1, 2, 2), rolls_left=1)  # the same state
    sheet = Sheet({"threes": 6, "one_pair": 0, "three_of_a_kind": 0})
    dist = distribution.final_distribution(rs, values, sheet)  # one box open: small
    assert dist.mean() == pytest.approx(sheet.score(rs) + float(values[0, sheet.open_mask(rs), 6]), abs=1e-9)


@pytest.mark.slow
def test_maxi_yatzy_from_the_start_is_refused():
    """Maxi Yatzy from its first turn: a million states between turns, 76 subtotals, hundreds of scores each,
    tens of GB: refused with the reason (its value table is never read before the refusal: zeros serve)."""
    rs = rules.get_rules("maxi-yatzy")
    with pytest.raises(distribution.DistributionTooLarge) as e:
        distribution.final_distribution(rs, np.zeros(rs.table_shape), threads=1)
    message = str(e.value)
    assert "1,048,576 states between turns x up to 76 upper subtotals" in message
    assert float(message.split("about ")[1].split(" GB")[0]) > 10


def test_yatzy_full_game_from_the_start():
    """Scandinavian Yatzy: the exact distribution's mean is the table's 248.4399894, its SD the second-moment
    table's (two independent passes), and the probabilities add up to 1."""
    from solutions import solved as solved_full

    from pentadice.solver import moments

    sol = solved_full("yatzy")
    rs, values = sol.rules, sol.values
    dist = distribution.final_distribution(rs, values, threads=2)
    assert dist.mean() == pytest.approx(sol.expected_score, abs=1e-9)
    assert dist.mean() == pytest.approx(248.4399894, abs=1e-7)
    check_invariants(dist, dist.min_score)
    # moments.second_moments(rs, values, threads=2), computed once per session (tests/test_moments.py checks it)
    _, _, m2, _ = with_second_moments("yatzy")
    assert dist.sd() == pytest.approx(moments.start_sd(rs, values, m2), abs=1e-9)
    assert dist.max_score <= 374  # 15 boxes at their most: 5 + 10 + ... + 30, 12, 22, 18, 24, 15, 20, 28, 30, 50, 50


def check_invariants(dist: distribution.Distribution, floor: int) -> None:
    assert math.isclose(dist.total(), 1.0, abs_tol=1e-12)
    assert (dist.probs >= 0).all()
    tail = dist.tail()
    assert tail[0] == [0, 1.0]
    assert [t for t, _ in tail] == list(range(dist.max_score + 1))
    chances = [p for _, p in tail]
    assert all(a >= b for a, b in itertools.pairwise(chances))
    assert chances[floor] == 1.0 and chances[-1] > 0
    pct = [dist.percentile(q) for q in distribution.PERCENTILES]
    assert pct == sorted(pct) and dist.min_score <= pct[0] and pct[-1] <= dist.max_score
    assert dist.at_least(dist.percentile(50)) >= 0.5 - 1e-12


def test_full_game_from_the_start(penta_solution):
    rs, values = penta_solution.rules, penta_solution.values
    dist = distribution.final_distribution(rs, values, threads=2)
    assert dist.mean() == pytest.approx(penta_solution.expected_score, abs=1e-9)
    check_invariants(dist, dist.min_score)
    # Scores a Penta game cannot end on: the upper bonus alone is 35, a Penta bonus 100; odd scores exist.
    assert 0 < dist.sd() < dist.mean()
    assert dist.max_score > 1000  # twelve +100 bonuses are possible, however unlikely


def test_full_game_is_the_same_bits_as_before(penta_solution):
    """Penta's distribution from the start, as the code before the sheets became data (commit 097e0e9) gave it:
    the same probabilities to the bit (their SHA-256), from score 10."""
    rs, values = penta_solution.rules, penta_solution.values
    dist = distribution.final_distribution(rs, values)  # cached by the test above when it ran
    assert dist.offset == 10 and len(dist.probs) == 1566
    digest = hashlib.sha256(np.ascontiguousarray(dist.probs).data).hexdigest()
    assert digest == "4c73c7ae6b65895d976cfa362bcfd00a52e626271865fbbb923473b7cbb9d247"


def test_full_game_sd_equals_the_second_moment_table(penta_solution):
    moments = pytest.importorskip("pentadice.solver.moments")
    rs, values = penta_solution.rules, penta_solution.values
    _, shared, m2, _ = with_second_moments("penta")  # moments.second_moments(rs, values, threads=2), once a session
    assert shared is values
    dist = distribution.final_distribution(rs, values)  # cached by the test above when it ran
    assert dist.sd() == pytest.approx(moments.start_sd(rs, values, m2), abs=1e-9)


def test_full_game_from_a_sheet_and_mid_turn(penta_solution, penta_advisor):
    rs, values = penta_solution.rules, penta_solution.values
    sheet = Sheet.parse("ones=3 twos=6 threes=9 fours=12 fives=15 chance=20 penta=50 full_house=25", rs)
    dist = distribution.final_distribution(rs, values, sheet)
    state_value = float(values[1, sheet.open_mask(rs), sheet.upper_subtotal(rs)])
    assert dist.mean() == pytest.approx(sheet.score(rs) + state_value, abs=1e-9)
    check_invariants(dist, sheet.score(rs))
    for dice, rerolls in [((6, 6, 6, 6, 1), 1), ((1, 2, 3, 4, 6), 2), ((5, 5, 5, 5, 5), 0)]:
        mid = distribution.final_distribution(rs, values, sheet, dice, rerolls)
        best = penta_advisor.advise(penta_advisor.situation(dice, rerolls, sheet)).best
        assert mid.mean() == pytest.approx(best.value, abs=1e-9)
        check_invariants(mid, sheet.score(rs))


def test_between_turns_results_are_cached(penta_solution):
    rs, values = penta_solution.rules, penta_solution.values
    sheet = Sheet.parse("ones=3 twos=6 threes=9 fours=12 fives=15 sixes=18 chance=20 penta=50", rs)
    first = distribution.final_distribution(rs, values, sheet)
    other = Sheet.parse("ones=4 twos=6 threes=9 fours=12 fives=15 sixes=18 chance=20 penta=50", rs)
    again = distribution.final_distribution(rs, values, other)  # the same state (subtotal capped at 63)
    assert again.probs is first.probs  # the cached points to come, shifted by the score so far
    assert again.offset == first.offset + 1


def test_a_finished_sheet_is_its_score():
    rs = GAMES["penta, 3 dice"]
    sheet = Sheet({"ones": 3, "threes": 9, "full_house": 25, "penta": 50})
    dist = distribution.final_distribution(rs, solved("penta, 3 dice"), sheet)
    assert dist.offset == sheet.score(rs) and list(dist.probs) == [1.0]
    assert dist.sd() == 0.0 and dist.tail()[-1] == [sheet.score(rs), 1.0]
    assert rs.upper_threshold == 8 and (dist.p_upper_bonus, dist.p_penta) == (1.0, 1.0)  # 3 + 9 upper points


# The command.

SHEET = "ones=3 twos=6 threes=9 fours=12 fives=15 chance=20 penta=50 full_house=25 small_straight=30"


@pytest.fixture
def run(penta_table_dir):
    def invoke(*args, stdin=None):
        return CliRunner().invoke(main, ["distribution", "--data", str(penta_table_dir), *args], input=stdin)

    return invoke


def test_command_human(run, penta_solution):
    result = run("--sheet", SHEET)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("Penta: 9 boxes filled, 170 points so far")
    dist = distribution.final_distribution(penta_solution.rules, penta_solution.values, Sheet.parse(SHEET))
    assert f"Mean:          {dist.mean():.4f}" in lines
    assert any(line.startswith("Percentiles:   1%: ") for line in lines)


def test_command_json_and_out(run, tmp_path, penta_solution):
    out = tmp_path / "d.json"
    result = run("--sheet", SHEET, "--json", "--out", str(out))
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {"rules", "sheet", "score_so_far", "mean", "sd", "percentiles", "tail"} <= set(data)
    assert data["score_so_far"] == 170 and data["rules"] == "penta"
    sheet = Sheet.parse(SHEET)
    state = float(penta_solution.values[1, sheet.open_mask(penta_solution.rules), sheet.upper_total])
    assert data["mean"] == pytest.approx(170 + state, abs=1e-9)
    assert list(data["percentiles"]) == ["1", "5", "10", "25", "50", "75", "90", "95", "99"]
    assert data["tail"][0] == [0, 1.0] and data["tail"][-1][0] == data["max"] and data["tail"][-1][1] > 0
    written = json.loads(out.read_text())
    assert written["format"] == "pentadice-distribution" and written["mean"] == data["mean"]
    assert math.isclose(math.fsum(written["probability"]), 1.0, abs_tol=1e-12)
    assert written["scores"][0] == written["offset"]
    pq_out = tmp_path / "d.parquet"
    result = run("6", "6", "6", "6", "1", "--rolls-left", "1", "--sheet", SHEET, "--json", "--out", str(pq_out))
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["dice"] == [1, 6, 6, 6, 6] and data["rolls_left"] == 1
    arrow = pq.read_table(pq_out)
    assert arrow.column_names == ["score", "probability", "p_at_least"]
    assert math.isclose(math.fsum(arrow.column("probability").to_pylist()), 1.0, abs_tol=1e-12)
    assert distribution_report.is_distribution_file(pq_out) and distribution_report.is_distribution_file(out)
    # Written again over its own file: allowed.
    assert run("--sheet", SHEET, "--out", str(pq_out)).exit_code == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sheet", "ones=7"], "ones"),
        (["--sheet", "nonsense=3"], "unknown box"),
        (["1", "2", "3"], "5 dice"),
        (["1", "2", "3", "4", "9"], "1 to 6"),
        (["--rolls-left", "1"], "--rolls-left goes with the DICE"),
        (["--sheet", "ones=3", "--sheet-file", "x"], "not both"),
        (["--out", "d.csv"], ".parquet"),
        (["--out", "no/such/dir/d.json"], "does not exist"),
    ],
)
def test_bad_input_is_a_usage_error_without_traceback(run, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert list(tmp_path.iterdir()) == []  # nothing written, not even half


def test_out_refuses_to_overwrite_another_file_or_a_directory(run, tmp_path):
    other = tmp_path / "notes.json"
    other.write_text('{"mine": 1}')
    result = run("--sheet", SHEET, "--out", str(other))
    assert result.exit_code == 2 and "left alone" in result.output
    assert other.read_text() == '{"mine": 1}'
    folder = tmp_path / "folder.json"
    folder.mkdir()
    result = run("--sheet", SHEET, "--out", str(folder))
    assert result.exit_code == 2 and "directory" in result.output


def test_kiriki_refused_by_the_command(tmp_path):
    from pentadice.tables import table

    rs = rules.get_rules("kiriki")
    table.save(rs, np.zeros(rs.table_shape), tmp_path)  # never read: the refusal comes first
    result = CliRunner().invoke(main, ["distribution", "--rules", "kiriki", "--data", str(tmp_path)])
    assert result.exit_code == 2 and "repeats the turn" in result.output
    assert "Traceback" not in result.output


def test_too_large_refused_by_the_command(run, monkeypatch):
    """The command refuses a distribution too large for the memory allowed as it refuses Kiriki: exit 2, the
    reason with the sizes, no traceback."""
    monkeypatch.setattr(distribution, "MEMORY_LIMIT", 1)
    monkeypatch.setattr(distribution, "_refused", {})
    monkeypatch.setattr(distribution, "_cache", distribution.OrderedDict())
    result = run("--sheet", SHEET)
    assert result.exit_code == 2, result.output
    assert "states between turns x up to 64 upper subtotals" in result.output and "GB allowed" in result.output
    assert "Traceback" not in result.output


def test_a_distribution_checked_first_is_the_same(penta_solution):
    from pentadice.advisor import distribution as dist

    rs = penta_solution.rules
    sheet = Sheet.parse("ones=3 twos=6 threes=9 fours=12 fives=15 sixes=18 chance=22 penta=50", rs)
    dist.check_size(rs, sheet)  # planned here, and the plan used again by the pass
    checked = dist.final_distribution(rs, penta_solution.values, sheet)
    dist._cache.clear()
    dist._plan_cached.cache_clear()
    plain = dist.final_distribution(rs, penta_solution.values, sheet)
    assert checked.offset == plain.offset and np.array_equal(checked.probs, plain.probs)
