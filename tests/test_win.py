"""The win strategy: exponential-utility tables against a brute force, its decisions, and the multiplayer
simulator (win rates, intervals, seats, seeds, bad --players)."""

import functools
import itertools
import json
import math
import types

import numpy as np
import pytest
import reduced_games
from click.testing import CliRunner
from family_reference import box_moves, holds_penta, turn_of

from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.moves import Keep, Score
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation
from pentadice.solver import utility
from pentadice.solver.induction import solve, solve_values

GAMES = reduced_games.pick(
    "penta, 3 dice",
    "penta, 2 dice, lower boxes",
    "yahtzee forced joker, 3 dice, 2 rolls",
    "kiriki, 2 dice",
    "yatzy, 3 dice, ones and threes",
    "maxi boxes, 6 dice, 2 rolls, twos",
)
# Maxi Yatzy's threshold, 75: 80 lanes, the kernels' other compiled build (on a small sheet of its boxes)
WIDE = reduced_games.pick("maxi boxes, 80 lanes, 4 boxes")
SMALL_NAME = "penta, 3 dice"
SMALL = GAMES[SMALL_NAME]
SLOW = ("maxi boxes, 6 dice, 2 rolls, twos",)  # the 6-dice brute force takes a minute: marked slow (CI runs it too)


def marked(names):
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in names]


def brute_utility(rs: rules.RuleSet, theta: float):
    """Expectimax over dice (:mod:`family_reference`) maximising ``sign(theta) * E[exp(theta * R)]``:
    ``U(open, subtotal, full)``. Shares only the rules module with the fast code; Kiriki's self-returning states
    by plain iteration."""
    sign = math.copysign(1.0, theta)

    def turn(open_mask, sub, full, U):
        def score_now(dice):
            return {
                ("box", box): math.exp(theta * gain) * U(*nxt)
                for box, gain, nxt in box_moves(rs, dice, open_mask, sub, full)
            }

        return turn_of(rs, score_now, max, lambda xs: sum(xs) / len(xs))[0]()

    @functools.cache
    def U(open_mask: int, sub: int, full: int) -> float:
        if open_mask == 0:
            return sign
        if not (rs.penta_repeat and holds_penta(rs, open_mask, full)):
            return turn(open_mask, sub, full, U)
        state = (open_mask, sub, full)
        x = U(open_mask, sub, 0)  # a lower bound, as the solver's
        for _ in range(100_000):
            nxt = turn(open_mask, sub, full, lambda m, s, f, x=x: x if (m, s, f) == state else U(m, s, f))
            if abs(nxt - x) < 1e-14 * max(1.0, abs(x)):
                return nxt
            x = nxt
        raise AssertionError("no fixed point")

    return U


def brute_endgame(rs: rules.RuleSet):
    """Expectimax over dice (:mod:`family_reference`) of the win credit against a finished opponent ``d`` points
    ahead (1 a win, 1/2 a tie): ``W(open, subtotal, full, d)``."""

    @functools.cache
    def W(open_mask: int, sub: int, full: int, d: int) -> float:
        if d < 0:
            return 1.0
        if open_mask == 0:
            return 0.5 if d == 0 else 0.0

        def score_now(dice):
            return {("box", box): W(*nxt, d - gain) for box, gain, nxt in box_moves(rs, dice, open_mask, sub, full)}

        return turn_of(rs, score_now, max, lambda xs: sum(xs) / len(xs))[0]()

    return W


@pytest.mark.parametrize(
    "name",
    marked(["penta, 2 dice, lower boxes", "yatzy, 3 dice, ones and threes", "maxi boxes, 6 dice, 2 rolls, twos"]),
)
def test_endgame_table_matches_brute_force(name):
    rs = GAMES[name]
    Wt, rowix = utility.solve_endgame(rs, 2)
    assert Wt.shape[1:] == (rs.n_flags, rs.upper_threshold + 1, utility.TARGET_LANES)
    slow = brute_endgame(rs)
    checked = 0
    for full, mask, sub in reachable_states(rs):
        if not 0 < bin(mask).count("1") <= 2:
            continue
        for d in (0, 1, 12, 55, 120):
            assert Wt[rowix[mask], full, sub, d] == pytest.approx(slow(mask, sub, full, d), abs=1e-12)
            checked += 1
    assert checked > 50


def test_endgame_credit_falls_with_the_points_to_beat():
    rs = GAMES["penta, 2 dice, lower boxes"]
    Wt, rowix = utility.solve_endgame(rs, 2)
    rows = Wt[rowix[rowix >= 0][1:]]  # every state with a box open
    assert (np.diff(rows, axis=-1) <= 1e-15).all() and (rows >= 0).all() and (rows <= 1).all()


def reachable_states(rs):
    from pentadice.game import states

    ok = states.reachable(rs)
    return [tuple(int(x) for x in s) for s in np.argwhere(ok[:, :, : rs.upper_threshold + 1])]


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("name", marked(GAMES))
def test_theta_table_matches_brute_force_on_every_state(name, sign):
    rs = GAMES[name]
    # Kiriki with 2 dice comes back to a state in 42 % of turns: E[exp(theta R)] is finite for small theta only.
    theta = sign * (0.005 if rs.penta_repeat else 0.03)
    fast = utility.solve_theta(rs, theta)
    assert fast.shape == (rs.n_flags, 1 << rs.n_boxes, rs.lanes)
    slow = brute_utility(rs, theta)
    checked = 0
    for full, mask, sub in reachable_states(rs):
        want = slow(mask, sub, full)
        assert fast[full, mask, sub] == pytest.approx(want, rel=1e-9), f"{rs.boxes_of(mask)} {sub} {full}"
        assert np.sign(fast[full, mask, sub]) == np.sign(theta)
        checked += 1
    assert checked > 20


def test_theta_near_zero_approaches_the_values():
    rs = GAMES["penta, 2 dice, lower boxes"]
    V = solve_values(rs)
    m = rs.box_mask
    errors = []
    for theta in (1e-3, 1e-5, 1e-7):
        U = utility.solve_theta(rs, theta)
        # log E[exp(theta R)] / theta = E[R] + theta Var(R) / 2 + ...: the certainty equivalent tends to the
        # value, the gap shrinking with theta.
        errors.append(abs(math.log(U[0, m, 0]) / theta - V[0, m, 0]))
    assert errors[1] < errors[0] / 50 and errors[2] < errors[1] / 50 and errors[2] < 1e-2


def test_risk_seeking_table_is_at_least_the_optimal_policys_utility():
    """The theta policy maximises E[exp(theta R)]: at least the expected-score policy's, which by Jensen is at
    least exp(theta * E[R])."""
    rs = SMALL
    V = solve_values(rs)
    m = rs.box_mask
    U = utility.solve_theta(rs, 0.02)
    assert U[0, m, 0] >= math.exp(0.02 * V[0, m, 0])
    D = utility.solve_theta(rs, -0.02)  # risk averse: certainty equivalent below the mean
    assert -math.log(-D[0, m, 0]) / 0.02 <= V[0, m, 0]


def test_kiriki_refuses_thetas_without_a_fixed_point():
    with pytest.raises(ValueError, match="at most"):
        utility.solve_theta(GAMES["kiriki, 2 dice"], 0.1)
    with pytest.raises(ValueError, match="between"):
        utility.solve_theta(SMALL, 1.0)


def small_table(rs):
    """A stand-in for a loaded table of a reduced game: the simulator reads ``rules`` and ``values``."""
    return types.SimpleNamespace(rules=rs, values=solve_values(rs))


def table_of(rs):
    """A loaded table of a reduced game (values as saved: threshold + 1 subtotals), for the advisor too."""
    from pentadice.tables import table

    return table.Table(rs, solve(rs).values, {}, None)


def test_variance_estimates_agree():
    from pentadice.players import win

    rs = SMALL
    V = solve_values(rs)
    exact = win.exact_variance(rs, V)
    if exact is None:
        pytest.skip("no second-moment table in this build")
    cumulant = win.cumulant_variance(rs)
    m = rs.box_mask
    assert cumulant[0, m, 0] == pytest.approx(exact[0, m, 0], rel=0.02)


def run(tbl, players, games, seed=5, **kw):
    from pentadice.simulator import multiplayer as mp

    return mp.simulate_players(tbl, tuple(players), games, seed, **kw)


@pytest.fixture(scope="module")
def small():
    return small_table(SMALL)


def test_win_rates_sum_to_one_and_intervals_hold_them(small):
    r = run(small, ["win", "optimal", "optimal"], 3000)
    assert sum(p["rate"] for p in r["players"]) == pytest.approx(1.0)
    w, o = r["win_rates"]["win"], r["win_rates"]["optimal"]
    assert w["rate"] + 2 * o["rate"] == pytest.approx(1.0)
    assert sum(r["seat_rates"]) == pytest.approx(1.0)
    for x in [w, o, *r["players"]]:
        assert x["ci95"][0] < x["rate"] < x["ci95"][1]
        assert 0 < x["ci95"][1] - x["ci95"][0] < 0.1


def test_totals_equal_the_sheets_sums(small):
    from pentadice.simulator import multiplayer as mp
    from pentadice.simulator.simulate import final_scores

    for _, totals, scores, bonus in mp.play_chunks(small, ("win", "optimal"), 500, 3):
        t, _ = final_scores(SMALL, scores.reshape(-1, SMALL.n_boxes), bonus.reshape(-1))
        assert (t.reshape(totals.shape) == totals).all()
        assert (scores[:, :, [SMALL.box_index[b] for b in SMALL.boxes]] >= 0).all()


def test_games_do_not_depend_on_the_chunk(small):
    from pentadice.simulator import multiplayer as mp

    whole = np.concatenate([t for _, t, _, _ in mp.play_chunks(small, ("win", "optimal", "optimal"), 301, 9)])
    cut = np.concatenate([t for _, t, _, _ in mp.play_chunks(small, ("win", "optimal", "optimal"), 301, 9, chunk=7)])
    assert (whole == cut).all()


def test_seats_rotate_and_matter_only_through_what_the_win_player_sees(small):
    """Optimal players ignore the others: a player's games are its own dice, whatever seat. The win player reads
    the sheets, so some of its games change when it moves from first to play to second."""
    from pentadice.simulator import multiplayer as mp

    a = next(mp.play_chunks(small, ("optimal", "optimal"), 400, 2))[1]
    b = next(mp.play_chunks(small, ("optimal", "optimal", "optimal"), 400, 2))[1]
    assert (a == b[:, :2]).all()  # adding a player (seats shift) changes no optimal player's game
    r = run(small, ["optimal", "optimal"], 400, seed=2)
    assert r["seat_rates"] != [p["rate"] for p in r["players"]]  # seats and players are different things
    assert [mp.seat_player(g, s, 3) for g in range(3) for s in range(3)] == [0, 1, 2, 1, 2, 0, 2, 0, 1]


def test_optimal_against_optimal_wins_half(small):
    r = run(small, ["optimal", "optimal"], 4000, seed=11)
    for p in r["players"]:
        half = (p["ci95"][1] - p["ci95"][0]) / 2
        assert abs(p["rate"] - 0.5) < 2 * half  # 0.5 within twice the 95 % interval (about 4 sigma)


def box_value(rs, p, hand_counts, mask, full, rows, sub, b):
    """The expected points still to come of filling box ``b`` (successor row plus points)."""
    from pentadice.solver import kernels

    points = np.empty(rs.n_boxes, dtype=np.int64)
    bonus = kernels.wide.score_options(p, hand_counts, mask, full, points)
    pts = int(points[b])
    box = rs.sheet[b]
    first = int(p[rules.P_BOX_DATA + rules.BOX_FIELDS * b + rules.F_ROW])
    row = first + (pts // box.a if box.kind == rules.K_FACE else int(pts > 0) if b == rs.penta_box else 0)
    return rows[row, sub] + pts + bonus


def test_win_is_optimal_as_theta_vanishes(small):
    """With a tiny theta every choice of the theta policy (keep or box) is one the value policy rates best, to
    within rounding: where the two pick differently, the values of their picks tie."""
    from pentadice.game import states
    from pentadice.players.win import best_box
    from pentadice.solver.turn_inputs import turn_inputs

    rs = SMALL
    V = small.values
    theta = 1e-9
    U = utility.solve_theta(rs, theta)
    ti = turn_inputs(rs)
    tab = ti.tables
    p, n_dice, _, counts, scores, add, subs = ti.turn()
    lanes = rs.lanes
    kernel = utility.wide_for(lanes)
    work = [np.empty((rs.rolls, tab.n_keeps, lanes)), np.zeros((rs.n_rows, lanes)), np.empty((tab.n_keeps, lanes))]
    work.append(np.empty((tab.n_keeps, lanes)))
    points = np.empty(rs.n_boxes, dtype=np.int64)
    differ = decisions = 0
    reach = states.reachable(rs)
    for full, mask, sub in np.argwhere(reach[:, :, : rs.upper_threshold + 1]):
        full, mask, sub = int(full), int(mask), int(sub)
        if mask == 0:
            continue
        Lv, rows_v, K, B = (w.copy() for w in work)
        kernel.theta_turn_values(V, 0.0, p, n_dice, counts, scores, add, subs, mask, full, Lv, rows_v, K, B)
        Lu, rows_u, K, B = (w.copy() for w in work)
        kernel.theta_turn_values(U, theta, p, n_dice, counts, scores, add, subs, mask, full, Lu, rows_u, K, B)
        for hand in range(tab.n_hands):
            bv = best_box(p, counts[hand], mask, full, 0.0, rows_v, sub, points)
            bu = best_box(p, counts[hand], mask, full, theta, rows_u, sub, points)
            decisions += 1
            if bv != bu:
                differ += 1
                assert box_value(rs, p, counts[hand], mask, full, rows_v, sub, bu) == pytest.approx(
                    box_value(rs, p, counts[hand], mask, full, rows_v, sub, bv), abs=1e-6
                )
            for r in range(1, rs.rolls):
                kept = [k for k in tab.subkeeps[hand] if k >= 0]
                pick_v = max(kept, key=lambda k: Lv[r, k, sub])
                pick_u = max(kept, key=lambda k: Lu[r, k, sub])
                decisions += 1
                if pick_v != pick_u:
                    differ += 1
                    assert Lv[r, pick_u, sub] == pytest.approx(Lv[r, pick_v, sub], abs=1e-6)
    assert decisions > 1000 and differ < decisions / 10


def test_strategy_choose_gives_legal_moves_and_plays_optimal_alone(small):
    from pentadice.advisor import Advisor
    from pentadice.players.win import WinStrategy

    rs = SMALL
    ws = WinStrategy(rs, small.values)
    advisor = Advisor(small, compiled=False)
    sheet = Sheet({"ones": 2})
    ahead = Sheet({"ones": 3, "threes": 9, "full_house": 25})
    rng = np.random.default_rng(0)
    for _ in range(40):
        dice = [int(x) for x in rng.integers(1, 7, rs.dice)]
        for rolls_left in range(rs.rolls):
            sit = Situation.make(rs, dice, rolls_left, sheet)
            move = ws.choose(sit, sheet, [ahead])
            assert ws.choose(sit, sheet, []) == advisor.advise(sit).best.move  # alone: theta 0, the advisor's move
            assert isinstance(move, Keep | Score)
            if isinstance(move, Keep):
                assert rolls_left > 0 and all(move.dice.count(f) <= dice.count(f) for f in set(move.dice))
            else:
                assert move.box in rs.boxes and move.box not in sheet.boxes
    assert ws.theta(sheet, [ahead]) > 0  # far behind: seek risk
    assert ws.theta(ahead, [sheet]) < 0


def test_cli_players_json_is_deterministic_with_a_seed():
    runner = CliRunner()
    args = ["simulate", "-n", "300", "--players", "optimal,optimal", "--seed", "3", "--json"]
    a = runner.invoke(main, args)
    b = runner.invoke(main, args)
    assert a.exit_code == 0, a.output
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    for key in ("seconds", "tables_seconds"):
        ja.pop(key), jb.pop(key)
    assert ja == jb
    assert set(ja["win_rates"]["optimal"]) >= {"rate", "ci95", "mean_score"}
    assert ja["games"] == 300 and ja["seed"] == 3 and ja["rules"] == "penta"


@pytest.mark.parametrize(
    ("players", "message"),
    [
        ("", "strategy names"),
        ("optimal,", "strategy names"),
        ("optimal,bogus", "unknown strategy 'bogus'"),
        ("win", "2 to 6"),
        ("optimal," * 6 + "win", "2 to 6"),
    ],
)
def test_bad_players_say_what_is_wrong(players, message):
    result = CliRunner().invoke(main, ["simulate", "-n", "5", "--players", players])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_players_refuses_strategy_and_out():
    r = CliRunner().invoke(main, ["simulate", "-n", "5", "--players", "optimal,optimal", "--strategy", "greedy"])
    assert r.exit_code == 2 and "--strategy" in r.output


@pytest.mark.parametrize(
    ("game", "players", "max_open"),
    [
        *((SMALL_NAME, players, k) for players in [("win", "optimal"), ("optimal", "win", "optimal")] for k in (1, 2)),
        ("yatzy, 3 dice, ones and threes", ("optimal", "win"), 2),  # Yatzy's sheet: 15 boxes, no Penta box
        ("maxi boxes, 80 lanes, 4 boxes", ("win", "optimal"), 1),  # 6 dice, 80 lanes
    ],
)  # the small games have 4 or 5 boxes: theta turns, then the last turns
def test_simulated_games_replay_through_the_strategy_api(small, game, players, max_open):
    """The simulator's games, replayed move by move with the same dice through ``WinStrategy.choose`` (and the
    advisor for optimal players), seats in the simulator's order, end with the same totals."""
    from pentadice.advisor import Advisor
    from pentadice.players.win import WinStrategy
    from pentadice.simulator import multiplayer as mp
    from pentadice.simulator.simulate import game_dice

    rs, seed, n_games = {**GAMES, **WIDE}[game], 8, 25
    if rs is not SMALL:
        small = table_of(rs)
    ws = WinStrategy(rs, small.values)
    ws.max_open = max_open
    advisor = Advisor(small, compiled=False)
    simulated = next(mp.play_chunks(small, players, n_games, seed, endgame=max_open))[1]
    n = len(players)
    for g in range(n_games):
        sheets = [Sheet() for _ in players]
        for t in range(len(rs.boxes)):
            for s in range(n):
                j = mp.seat_player(g, s, n)
                dice_t = game_dice(seed, g * mp.MAX_PLAYERS + j, t + 1, rs.rolls, rs.dice)[t]
                dice = [int(x) for x in dice_t[0]]
                for r in range(rs.rolls - 1, -1, -1):
                    sit = Situation.make(rs, dice, r, sheets[j])
                    if players[j] == "win":
                        others = [sheets[k] for k in range(n) if k != j]
                        move = ws.choose(sit, sheets[j], others)
                    else:
                        move = advisor.advise(sit).best.move
                    if isinstance(move, Score):
                        break
                    new = dice_t[rs.rolls - r, : rs.dice - len(move.dice)]
                    dice = [*move.dice, *(int(x) for x in new)]
                legal, bonus = rules.legal_scores(
                    rs, tuple(dice), [b for b in rs.boxes if b not in sheets[j].boxes], sheets[j].penta_scored(rs)
                )
                sheets[j] = sheets[j].with_score(move.box, legal[move.box], bonus)
        assert [sh.score(rs) for sh in sheets] == list(simulated[g]), f"game {g}"


def _fresh_win_caches():
    from pentadice.players import win

    win._cache.clear()
    win._endgames.clear()


def test_win_tables_are_saved_read_back_and_tied_to_their_values(tmp_path):
    from pentadice.players import win
    from pentadice.tables import table, win_tables

    rs = SMALL
    V = solve(rs).values  # as saved: threshold + 1 subtotals
    table.save(rs, V, tmp_path)
    _fresh_win_caches()
    built = win.build(rs, V, directory=tmp_path)
    assert built.origin == "built"
    _, meta_path = win_tables.saved_paths(rs, tmp_path, win_tables.THETA_KIND)
    meta = json.loads(meta_path.read_text())
    assert meta["values_checksum"] == table.checksum(V)
    assert meta["params"]["thetas"] == [float(x) for x in built.thetas[1:]]
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary left behind
    _fresh_win_caches()
    again = win.build(rs, V, directory=tmp_path)
    assert again.origin == "file"
    assert np.array_equal(again.tables, built.tables, equal_nan=True)
    assert np.array_equal(again.variance, built.variance, equal_nan=True)
    # other values, other thetas: not read (stale)
    other = V.copy()
    other[0, rs.box_mask, 0] += 1.0
    params = {"thetas": meta["params"]["thetas"]}
    assert win_tables.load_saved(rs, tmp_path, win_tables.THETA_KIND, other, params) is None
    assert win_tables.load_saved(rs, tmp_path, win_tables.THETA_KIND, V, {"thetas": [0.01, -0.01]}) is None
    assert win_tables.load_saved(rs, tmp_path, win_tables.THETA_KIND, V, params) is not None
    _fresh_win_caches()
    coarse = win.build(rs, V, grid=(0.01,), directory=tmp_path)  # a new grid: built and saved over the old
    assert coarse.origin == "built"
    assert json.loads(meta_path.read_text())["params"]["thetas"] == [0.01, -0.01]
    _fresh_win_caches()
    assert win.build(rs, V, grid=(0.01,), directory=tmp_path).origin == "file"
    _fresh_win_caches()


def test_damaged_win_tables_are_built_again(tmp_path):
    from pentadice.players import win
    from pentadice.tables import table, win_tables

    rs = SMALL
    V = solve(rs).values  # as saved: threshold + 1 subtotals
    table.save(rs, V, tmp_path)
    _fresh_win_caches()
    good = win.build(rs, V, grid=(0.01,), directory=tmp_path)
    npy, _ = win_tables.saved_paths(rs, tmp_path, win_tables.THETA_KIND)
    raw = bytearray(npy.read_bytes())
    raw[-8:] = b"\x00" * 8 if raw[-8:] != b"\x00" * 8 else b"\x01" * 8
    npy.write_bytes(bytes(raw))
    assert win_tables.load_saved(rs, tmp_path, win_tables.THETA_KIND, V, {"thetas": [0.01, -0.01]}) is None
    npy.write_bytes(bytes(raw[:-100]))  # cut short
    assert win_tables.load_saved(rs, tmp_path, win_tables.THETA_KIND, V, {"thetas": [0.01, -0.01]}) is None
    _fresh_win_caches()
    rebuilt = win.build(rs, V, grid=(0.01,), directory=tmp_path)
    assert rebuilt.origin == "built"
    assert np.array_equal(rebuilt.tables, good.tables, equal_nan=True)
    assert win_tables.load_saved(rs, tmp_path, win_tables.THETA_KIND, V, {"thetas": [0.01, -0.01]}) is not None
    _fresh_win_caches()


def test_win_tables_without_a_writable_table_directory_stay_in_memory(tmp_path, monkeypatch):
    from pentadice.players import win
    from pentadice.tables import table, win_tables

    rs = SMALL
    V = solve(rs).values
    _fresh_win_caches()
    alone = win.build(rs, V, grid=(0.01,), directory=tmp_path)  # no value table there: nothing tied to write
    assert alone.origin == "built"
    assert not win_tables.saved_paths(rs, tmp_path, win_tables.THETA_KIND)[0].exists()
    table.save(rs, V, tmp_path)

    def read_only(files, wait=None):
        raise table.TableError(f"cannot lock the {files.rules} table in {files.directory}: Read-only file system")

    monkeypatch.setattr(table, "writer_lock", read_only)
    _fresh_win_caches()
    built = win.build(rs, V, grid=(0.01,), directory=tmp_path)
    assert built.origin == "built"
    assert np.array_equal(built.tables, alone.tables, equal_nan=True)
    assert not win_tables.saved_paths(rs, tmp_path, win_tables.THETA_KIND)[0].exists()
    assert not win_tables.save_quietly(
        rs, tmp_path, win_tables.THETA_KIND, built.tables[1:], V, {"thetas": [0.01, -0.01]}
    )
    _fresh_win_caches()


def test_endgame_table_is_saved_and_read_back(tmp_path):
    from pentadice.players import win
    from pentadice.tables import table, win_tables

    rs = SMALL
    V = solve(rs).values  # as saved: threshold + 1 subtotals
    table.save(rs, V, tmp_path)
    _fresh_win_caches()
    _, rowix = win.endgame(rs, 2, 1, tmp_path, V)
    assert (
        win_tables.saved_paths(rs, tmp_path, win_tables.ENDGAME_KIND, {"max_open": 2})[0].name == "penta.win-end-2.npy"
    )
    assert win_tables.saved_paths(rs, tmp_path, win_tables.ENDGAME_KIND, {"max_open": 2})[0].exists()
    direct = utility.solve_endgame(rs, 2)
    assert np.array_equal(rowix, direct[1])
    from pentadice.players import lastturns

    assert np.array_equal(lastturns.endgame_rows(rs, 2), direct[1])
    _fresh_win_caches()
    params = {"max_open": 2, "lanes": utility.TARGET_LANES}
    assert win_tables.load_saved(rs, tmp_path, win_tables.ENDGAME_KIND, V, params) is not None
    assert win_tables.load_saved(rs, tmp_path, win_tables.ENDGAME_KIND, V, {**params, "max_open": 1}) is None
    Wt2, rowix2 = win.endgame(rs, 2, 1, tmp_path, V)
    assert np.array_equal(Wt2, direct[0]) and np.array_equal(rowix2, direct[1])
    _fresh_win_caches()


def test_last_turns_mixture_is_the_distribution_of_the_best_other_final_total():
    """``mixture`` against a brute force over every combination of the other players' points to come."""
    from pentadice.players import lastturns

    rng = np.random.default_rng(3)
    n_lanes = 40
    probs = rng.random((4, 12)) * (rng.random((4, 12)) < 0.6)
    probs[:, 0] += 0.01
    probs /= probs.sum(axis=1, keepdims=True)
    C = np.minimum(np.cumsum(np.pad(probs, ((0, 0), (0, n_lanes - 12))), axis=1), 1.0)
    for rows, shifts in (([1], [0]), ([0, 2], [3, -5]), ([3, 1, 1], [-2, 4, 0]), ([2, 0], [20, 25])):
        q = np.empty(n_lanes)
        reach = lastturns.mixture(C, np.array(rows), np.array(shifts), len(rows), q)
        expect = np.zeros(n_lanes)
        below = 0.0
        for combo in itertools.product(range(12), repeat=len(rows)):
            pr = math.prod(probs[r, x] for r, x in zip(rows, combo, strict=True))
            d = max(x - s for x, s in zip(combo, shifts, strict=True))  # their final minus mine
            if d < 0:
                below += pr
            else:
                expect[d] += pr
        assert q == pytest.approx(expect, abs=1e-12)
        assert reach == pytest.approx(1 - below, abs=1e-12)
        q2 = np.empty(n_lanes)  # the players' order does not change a bit
        lastturns.mixture(C, np.array(rows[::-1]), np.array(shifts[::-1]), len(rows), q2)
        assert np.array_equal(q, q2)


def test_last_turns_opponent_rows_are_the_final_score_distributions(small):
    """Each row's mean is the value table's expected points to come (rows of every state with at most two
    boxes open), and a finished player's row is 0 points for sure."""
    from pentadice.game import states
    from pentadice.players import lastturns

    rs = SMALL
    opp = lastturns.Opponents(rs, small.values, 2)
    reach = states.reachable(rs)
    keys = [
        (f, m, u) for f, m, u in np.argwhere(reach[:, :, : rs.upper_threshold + 1]) if 0 < bin(int(m)).count("1") <= 2
    ]
    f, m, u = (np.array(x) for x in zip(*keys, strict=True))
    rows = opp.rows(f, m, u)
    assert len(set(rows.tolist())) == len(keys)
    C = opp.C[rows]
    assert (np.diff(C, axis=1) >= -1e-15).all() and np.allclose(C[:, -1], 1.0)
    means = (1.0 - C).sum(axis=1)
    assert means == pytest.approx(small.values[f, m, u], abs=1e-9)
    top = opp.top[rows]
    assert C[np.arange(len(rows)), top] == pytest.approx(1.0)  # the most points it may still score
    assert (C[np.arange(len(rows)), top - 1][top > 0] < 1.0).all()
    assert np.array_equal(opp.C[opp.rows(np.array([0]), np.array([0]), np.array([5]))], np.ones((1, opp.C.shape[1])))
    from pentadice.advisor import distribution  # the forward pass, another path to the same distributions

    V = distribution._padded(small.values, rs)
    for i in range(0, len(keys), 7):
        dist = distribution._propagate(rs, V, int(f[i]), int(m[i]), int(u[i]), -1, -1, 1)
        probs = np.zeros(opp.C.shape[1])
        probs[dist.offset : dist.offset + len(dist.probs)] = dist.probs
        assert C[i] == pytest.approx(np.minimum(np.cumsum(probs), 1.0), abs=1e-12)


def test_last_turns_against_finished_players_is_the_exact_end_game(small):
    """Against players who have finished, the weights are one point at the points to beat (so each option is
    credited with the end-game table's own chance), for every state with one box open; None when already
    ahead."""
    from pentadice.game import states
    from pentadice.players import win

    rs = SMALL
    reach = states.reachable(rs)
    them = Sheet().with_score("ones", 3, 0).with_score("threes", 9, 0).with_score("full_house", 25, 0)
    them = them.with_score("penta", 50, 0)
    checked = 0
    for f, m, u in np.argwhere(reach[:, :, : rs.upper_threshold + 1]):
        if bin(int(m)).count("1") != 1:
            continue
        for mine in (0, 40, 80):
            sheet = types.SimpleNamespace(
                open_mask=lambda rs, m=int(m): m, penta_scored=lambda rs, f=int(f): bool(f),
                upper_subtotal=lambda rs, u=int(u): u, score=lambda rs, s=mine: s,
            )  # fmt: skip
            q = win.last_turns_weights(rs, small.values, sheet, [them], 1)
            d = them.score(rs) - mine
            if q is None:
                assert d < 0
                continue
            assert q[d] == 1.0 and q.sum() == 1.0
            checked += 1
    assert checked > 5


def test_last_turns_rule_wins_more_than_optimal_and_than_theta_alone(small):
    """On the 4-box game, playing every turn by the last-turns rule beats the optimal player clearly (the 95 %
    interval above one half) and does better than the theta rule alone on the same games."""
    by_rule = {k: run(small, ["win", "optimal"], 20000, seed=11, endgame=k)["win_rates"]["win"] for k in (0, 4)}
    assert by_rule[4]["ci95"][0] > 0.5
    assert by_rule[4]["rate"] > by_rule[0]["rate"]


def test_confidence_intervals_stay_within_0_and_1_for_a_few_games():
    from pentadice.simulator.multiplayer import WinTally

    tally = WinTally(("win", "optimal"))
    tally.add(np.array([[250, 200], [180, 240], [300, 100]]), 0)  # 2 wins of 3: the normal interval passes 1
    out = tally.summary()
    for entry in [*out["win_rates"].values(), *out["players"]]:
        lo, hi = entry["ci95"]
        assert 0.0 <= lo <= entry["rate"] <= hi <= 1.0
    assert out["players"][0]["ci95"][1] == 1.0


# The wider family: Yatzy's win strategy plays (its tables fit); Maxi Yatzy's is refused, with the sizes.


def test_win_refuses_maxi_yatzy_with_the_sizes_and_plays_yatzy():
    from pentadice.players import win
    from pentadice.simulator import multiplayer as mp

    assert win.refusal(rules.get_rules("penta")) is None and win.refusal(rules.get_rules("yatzy")) is None
    theta_bytes, end_bytes = win.table_bytes(rules.get_rules("penta"))
    assert theta_bytes == 16 * 2 * 8192 * 64 * 8  # the sizes the docs give for Penta: 134 MB and 573 MB
    assert end_bytes == sum(math.comb(13, k) for k in range(5)) * 2 * 64 * 512 * 8
    maxi = rules.get_rules("maxi-yatzy")
    reason = win.refusal(maxi)
    assert reason is not None and "too large" in reason and "1,048,576 box masks x 80 subtotals" in reason
    with pytest.raises(mp.PlayersError, match="too large"):
        mp.parse_players("win,optimal", maxi)
    assert mp.parse_players("optimal,optimal", maxi) == ("optimal", "optimal")
    result = CliRunner().invoke(main, ["simulate", "-n", "5", "--players", "win,optimal", "--rules", "maxi-yatzy"])
    assert result.exit_code == 2 and "too large" in result.output and "Traceback" not in result.output


@pytest.fixture
def small_yatzy(monkeypatch, tmp_path):
    rs = GAMES["yatzy, 3 dice, ones and threes"].reduced(
        upper_threshold=63
    )  # saved value tables of Yatzy: 64 subtotals
    monkeypatch.setitem(rules.REGISTRY, "yatzy", rs)
    return rs, tmp_path


def test_simulate_players_win_under_yatzy(small_yatzy):
    """``simulate --players win,optimal --rules yatzy``: the win tables built and saved beside Yatzy's table, the
    games' totals the sheets' sums, and the win player ahead of the optimal one over many games."""
    from pentadice.players import win
    from pentadice.simulator import multiplayer as mp
    from pentadice.simulator.simulate import final_scores
    from pentadice.tables import win_tables

    rs, data = small_yatzy
    runner = CliRunner()
    assert (
        runner.invoke(
            main, ["solve", "--skip", "chances,win,win-end", "--rules", "yatzy", "--data", str(data), "--json"]
        ).exit_code
        == 0
    )
    _fresh_win_caches()
    args = ["simulate", "-n", "4000", "--players", "win,optimal", "--rules", "yatzy", "--seed", "4", "--json"]
    result = runner.invoke(main, [*args, "--data", str(data)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["rules"] == "yatzy" and out["games"] == 4000
    w, o = out["win_rates"]["win"], out["win_rates"]["optimal"]
    assert w["rate"] + o["rate"] == pytest.approx(1.0)
    assert w["rate"] > 0.5 and w["mean_score"] < o["mean_score"]  # it wins more while scoring less
    assert win_tables.saved_paths(rs, data, win_tables.THETA_KIND)[0].exists()
    assert win_tables.saved_paths(rs, data, win_tables.ENDGAME_KIND, {"max_open": win.ENDGAME_BOXES})[0].exists()
    tbl = types.SimpleNamespace(rules=rs, values=solve(rs).values)
    for _, totals, scores, bonus in mp.play_chunks(tbl, ("win", "optimal"), 300, 3):
        assert scores.shape[2] == rs.n_boxes == 15
        t, _ = final_scores(rs, scores.reshape(-1, rs.n_boxes), bonus.reshape(-1))
        assert (t.reshape(totals.shape) == totals).all()
    _fresh_win_caches()
