"""Live win chances: the combination of independent final-score distributions (ties split evenly) against a
brute-force enumeration, and the whole computation on a reduced game against a brute force over dice positions
that plays the advisor's choices."""

import functools
import itertools
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import reduced_games

from pentadice import solver
from pentadice.advisor import Advisor, chances
from pentadice.game import rules
from pentadice.game.moves import Score
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation
from pentadice.tables import table

SMALL = reduced_games.GAMES["penta, 2 dice, 2 rolls, 3 boxes"]
YATZY_SMALL = reduced_games.GAMES["yatzy, 2 dice, 2 rolls, 3 boxes"]  # no Penta box: one flag, Yatzy's own boxes


def enumerate_wins(spreads):
    """P(each wins) by going through every combination of final scores, ties split evenly (exact fractions)."""
    n = len(spreads)
    wins = [Fraction(0)] * n
    supports = [[(o + k, Fraction(float(p))) for k, p in enumerate(probs) if p > 0] for o, probs in spreads]
    for combo in itertools.product(*supports):
        weight = np.prod([w for _, w in combo], dtype=object)
        best = max(s for s, _ in combo)
        top = [i for i, (s, _) in enumerate(combo) if s == best]
        for i in top:
            wins[i] += weight / len(top)
    return [float(w) for w in wins]


def random_spread(rng, width):
    probs = rng.random(width) * (rng.random(width) < 0.7)
    probs[0] += 0.1
    return int(rng.integers(0, 6)), probs / probs.sum()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_combine_matches_enumeration_ties_included(players):
    rng = np.random.default_rng(players)
    for _ in range(5):
        spreads = [random_spread(rng, int(rng.integers(1, 6))) for _ in range(players)]
        got = chances.combine(spreads)
        assert got == pytest.approx(enumerate_wins(spreads), abs=1e-12)
        assert sum(got) == pytest.approx(1.0, abs=1e-12)


def test_equal_players_have_equal_chances_and_a_player_out_of_reach_has_one():
    spread = (100, np.array([0.2, 0.0, 0.5, 0.3]))
    for n in (2, 3, 6):
        assert chances.combine([spread] * n) == pytest.approx([1 / n] * n, abs=1e-12)
    # Ahead by more than the others can make up: certain; a certain tie on top: halves.
    assert chances.combine([(200, np.ones(1)), spread, spread]) == [1.0, 0.0, 0.0]
    assert chances.combine([(104, np.ones(1)), (104, np.ones(1)), spread]) == pytest.approx([0.5, 0.5, 0.0])


@functools.cache
def small_advisor(rs: rules.RuleSet = SMALL) -> Advisor:
    values = solver.solve(rs).values
    tbl = table.Table(rs, values, {}, table.TableFiles(Path("."), rs.name))
    return Advisor(tbl, compiled=False)


def brute_final(rs, advisor, sheet: Sheet) -> tuple[int, np.ndarray]:
    """The final-score distribution of ``sheet``: every roll of the dice in order, each decision the advisor's
    best move (the computer's choice in a game)."""
    rolls_of = {k: list(itertools.product(range(1, 7), repeat=k)) for k in range(rs.dice + 1)}

    @functools.cache
    def final(boxes: frozenset, bonus: int) -> dict[int, float]:
        sheet = Sheet(dict(boxes), bonus)
        if len(sheet.boxes) == len(rs.boxes):
            return {sheet.score(rs): 1.0}
        return average([decide(boxes, bonus, tuple(sorted(d)), rs.rolls - 1) for d in rolls_of[rs.dice]])

    @functools.cache
    def decide(boxes: frozenset, bonus: int, dice: tuple, rolls_left: int) -> dict[int, float]:
        sheet = Sheet(dict(boxes), bonus)
        move = advisor.advise(Situation(dice, rolls_left, sheet)).best.move
        if isinstance(move, Score):
            legal, extra = rules.legal_scores(rs, dice, rs.boxes_of(sheet.open_mask(rs)), sheet.penta_scored(rs))
            after = sheet.with_score(move.box, legal[move.box], extra)
            return final(frozenset(after.boxes.items()), after.penta_bonus)
        n = rs.dice - len(move.dice)
        return average([decide(boxes, bonus, tuple(sorted(move.dice + r)), rolls_left - 1) for r in rolls_of[n]])

    def average(outcomes):
        out: dict[int, float] = {}
        for o in outcomes:
            for s, p in o.items():
                out[s] = out.get(s, 0.0) + p / len(outcomes)
        return out

    dist = final(frozenset(sheet.boxes.items()), sheet.penta_bonus)
    lo, hi = min(dist), max(dist)
    probs = np.zeros(hi - lo + 1)
    for s, p in dist.items():
        probs[s - lo] = p
    return lo, probs


SHEETS = [Sheet(), Sheet({"twos": 4}), Sheet({"chance": 9}), Sheet({"penta": 50}), Sheet({"twos": 0, "chance": 12})]


def test_brute_force_source_gives_chances_that_enumeration_agrees_with():
    advisor = small_advisor()
    source = functools.partial(brute_final, SMALL, advisor)
    calc = chances.Chances(SMALL, advisor.values, lambda rs, values, sheet: source(sheet))
    for sheets in itertools.combinations(SHEETS, 2):
        got = calc.win_chances(sheets)
        assert got == pytest.approx(enumerate_wins([source(s) for s in sheets]), abs=1e-12)
    assert calc.computed == len(SHEETS)  # one distribution per state
    # A sheet of a state seen, with another score: the distribution is reused, shifted by the score.
    other = [Sheet({"chance": 12}), Sheet({"chance": 9})]
    assert calc.win_chances(other) == pytest.approx(enumerate_wins([source(s) for s in other]), abs=1e-12)
    assert calc.computed == len(SHEETS)
    # Equal sheets: equal chances; a finished sheet far ahead: certain.
    assert calc.win_chances([Sheet({"twos": 4})] * 3) == pytest.approx([1 / 3] * 3, abs=1e-12)


YATZY_SHEETS = [
    Sheet(),
    Sheet({"twos": 4}),
    Sheet({"one_pair": 12}),
    Sheet({"yatzy": 50}),
    Sheet({"twos": 2, "one_pair": 0}),
]


@pytest.mark.parametrize(("rs", "sheets"), [(SMALL, SHEETS), (YATZY_SMALL, YATZY_SHEETS)], ids=["penta", "yatzy"])
def test_exact_distribution_agrees_with_brute_force_on_a_reduced_game(rs, sheets):
    pytest.importorskip("pentadice.advisor.distribution")
    advisor = small_advisor(rs)
    for chosen in itertools.combinations(sheets, 3):
        got = chances.Chances(rs, advisor.values).win_chances(chosen)
        want = enumerate_wins([brute_final(rs, advisor, s) for s in chosen])
        assert got == pytest.approx(want, abs=1e-9)
        assert sum(got) == pytest.approx(1.0, abs=1e-12)


def test_a_refused_distribution_leaves_no_chances_and_is_not_asked_again():
    """Where the exact distribution is refused (Maxi Yatzy's early states: too large), the chances are
    unavailable with the reason, at once when asked again (no pending computation to wait for); states whose
    distribution can be computed still give chances."""
    advisor = small_advisor()
    calls = []

    def source(rs, values, sheet):
        calls.append(sheet)
        if not sheet.boxes:
            raise chances.ChancesUnavailable("too large: 12.3 GB")
        return brute_final(rs, advisor, sheet)

    calc = chances.Chances(SMALL, advisor.values, source)
    with pytest.raises(chances.ChancesUnavailable, match="too large"):
        calc.win_chances([Sheet(), Sheet({"twos": 4})])
    n = len(calls)
    for _ in range(3):
        with pytest.raises(chances.ChancesUnavailable, match="too large"):
            calc.known([Sheet(), Sheet({"twos": 4})], queue=False)
        with pytest.raises(chances.ChancesUnavailable, match="too large"):
            calc.known([Sheet(), Sheet({"twos": 4})])
    assert len(calls) == n  # the refused state is not computed again
    got = calc.win_chances([Sheet({"chance": 9}), Sheet({"twos": 4})])
    assert sum(got) == pytest.approx(1.0, abs=1e-12)


def test_calibration_on_a_small_sample(penta_advisor):
    """Predicted chances against outcomes played out (benchmarks/calibration.py): the sum of outcome minus
    prediction within 4 standard deviations of 0, and the predictions far better than always saying 50 %."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import calibration

    s = calibration.sample(penta_advisor, 60, seed=7, turns=(9, 12))
    assert len(s.predicted) == 60 and ((s.predicted >= 0) & (s.predicted <= 1)).all()
    assert set(np.unique(s.outcome)) <= {0.0, 0.5, 1.0}
    assert abs(s.z) < 4, (s.z, calibration.table(s))
    assert s.brier < 0.2
    assert sum(row[-1] for row in calibration.table(s)) == 60


LATE = {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18, "three_of_a_kind": 20}


def test_the_full_game_equal_sheets_and_a_player_out_of_reach(penta_advisor):
    rs, values = penta_advisor.rules, penta_advisor.values
    sheet = Sheet({**LATE, "full_house": 25, "small_straight": 30})
    assert chances.win_chances(rs, values, [sheet, sheet, sheet]) == pytest.approx([1 / 3] * 3, abs=1e-12)
    # Finished far ahead of what the other can still make (one box open: Chance, at most 30): certain.
    done = Sheet(
        {
            **LATE,
            "four_of_a_kind": 30,
            "full_house": 25,
            "small_straight": 30,
            "large_straight": 40,
            "chance": 30,
            "penta": 50,
        }
    )
    behind = Sheet({**LATE, "four_of_a_kind": 0, "full_house": 0, "small_straight": 0, "large_straight": 0, "penta": 0})
    assert done.score(rs) > behind.score(rs) + 30
    assert chances.win_chances(rs, values, [behind, done]) == [0.0, 1.0]
    # The same boxes left, 30 points behind: the same distribution of points to come, shifted: a lower chance.
    other = Sheet({**LATE, "full_house": 25, "small_straight": 0})
    shares = chances.win_chances(rs, values, [sheet, other])
    assert sum(shares) == pytest.approx(1.0, abs=1e-12) and 0.5 < shares[0] < 1
