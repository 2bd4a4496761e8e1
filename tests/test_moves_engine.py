"""The engine owns the game: one move type with one notation, play(move) with what happened, advance(now)
with the time passed in, a JSON-ready view, and the same game whichever front end plays it."""

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.moves import Keep, MoveError, Score, parse_move
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation
from pentadice.players.engine import Game, GameError, Played, parse_players

PENTA = rules.get_rules("penta")


@given(st.lists(st.integers(1, 6), max_size=4))
def test_keep_notation_reads_back(dice):
    move = Keep(tuple(dice))
    assert parse_move(str(move)) == move
    assert str(move) == ("keep " + " ".join(map(str, sorted(dice))) if dice else "roll")


@pytest.mark.parametrize("box", rules.BOX_IDS)  # every sheet's ids
def test_score_notation_reads_back(box):
    assert parse_move(str(Score(box))) == Score(box) and str(Score(box)) == f"score {box}"


def test_notation_errors_and_names_as_typed():
    assert parse_move("score fh", PENTA) == Score("full_house")
    for bad in ("keep 7x", "score", "jump", "roll 3", "score sevens"):
        with pytest.raises(MoveError):
            parse_move(bad, PENTA)


def test_advisor_options_carry_moves(penta_advisor):
    advice = penta_advisor.advise(penta_advisor.situation((1, 1, 3, 4, 6), 2))
    assert all(isinstance(o.move, Keep | Score) for o in advice.options)
    assert advice.option_of(advice.best.move) is advice.best
    assert parse_move(str(advice.best.move)) == advice.best.move


def test_play_reports_what_happened_and_its_loss(penta_advisor):
    g = Game(PENTA, parse_players("Ana"), seed=5)
    g.advance(penta_advisor, now=0.0)
    advice = penta_advisor.advise(g.situation())
    played = g.play(Keep(()), penta_advisor)
    assert isinstance(played, Played) and played.move == Keep(()) and played.kept == ()
    assert played.loss == advice.option_of(Keep(())).loss  # the advisor's own figure for that move
    chance = g.play(Score("chance"), penta_advisor)
    assert chance.scored.box == "chance" and chance.scored.points == sum(chance.dice)
    assert g.players[0].sheet.boxes == {"chance": sum(chance.dice)}
    with pytest.raises(GameError):
        g.play(Score("chance"))  # no dice yet: the next turn has not been rolled


def test_advance_plays_computers_and_the_auto_commit_with_the_time_passed_in(penta_advisor):
    g = Game(PENTA, parse_players("cpu,Ana"), seed=3, auto_commit_seconds=3.0)
    happened = g.advance(penta_advisor, now=100.0)
    assert happened[0] == ("rolled", "cpu", happened[0][2])
    assert any(isinstance(h, Played) and h.scored is not None and h.player == "cpu" for h in happened)
    assert g.player.name == "Ana" and g.dice is not None  # a person must act now
    g.play(Keep(g.dice[:0]))
    g.play(Keep(g.dice[:0]))
    assert g.rolls_left == 0
    assert g.advance(penta_advisor, now=200.0) == [] and g.deadline == 203.0  # the countdown starts
    assert g.advance(penta_advisor, now=202.9) == [] and g.player.name == "Ana"
    auto = g.advance(penta_advisor, now=203.0)[0]
    assert auto.player == "Ana" and auto.scored.auto
    assert auto.scored.box == penta_advisor.best_box(Situation(auto.dice, 0, Sheet())).box


def test_view_is_json_ready(penta_advisor):
    g = Game(PENTA, parse_players("Ana,cpu"), seed=8)
    g.advance(penta_advisor, now=0.0)
    view = g.view()
    assert json.loads(json.dumps(view)) == view
    assert view["players"][0]["name"] == "Ana" and view["current"] == 0 and len(view["dice"]) == 5
    assert set(view["legal"]) == set(PENTA.boxes) and view["warning"] is None
    assert view["players"][0]["totals"]["total"] == 0


@pytest.mark.parametrize(("seed", "totals"), [(1, [246, 240, 264]), (2, [233, 282, 257]), (3, [225, 375, 294])])
def test_the_engine_alone_plays_the_terminals_seeded_games(penta_advisor, seed, totals):
    """`yes best | pentadice play --players Ana,cpu,Bo --seed S --auto-commit 0`, played through the engine
    with no front end: the same moves, the same totals."""
    g = Game(PENTA, parse_players("Ana,cpu,Bo"), seed=seed, auto_commit_seconds=0.0)
    moves = []
    while not g.over:
        for h in g.advance(penta_advisor, now=0.0):
            if isinstance(h, Played):  # (the first rolls of turns are not moves)
                moves.append((h.player, str(h.move)))
        if not g.over:
            played = g.play(penta_advisor.advise(g.situation()).best.move, penta_advisor)
            moves.append((played.player, str(played.move)))
    assert [g.totals(p)["total"] for p in g.players] == totals
    # And the terminal shows the very same scoring moves, in the same order.
    args = ["play", "--players", "Ana,cpu,Bo", "--seed", str(seed), "--pause", "0", "--auto-commit", "0"]
    directory = str(penta_advisor.table.files.directory)
    out = CliRunner().invoke(main, [*args, "--data", directory], input="best\n" * 200).output
    shown = re.findall(r"^(Ana|cpu|Bo) scores (.+?):", out, flags=re.M)
    engine_scores = [(p, PENTA.box_name(m.split()[1])) for p, m in moves if m.startswith("score")]
    assert shown == engine_scores


def test_the_simulators_totals_are_the_sheets(penta_advisor):
    from pentadice.simulator.simulate import simulate

    sim = simulate(penta_advisor.table, 200, seed=4)
    for g in range(200):
        boxes = {b: int(sim.scores[g, PENTA.box_index[b]]) for b in PENTA.boxes}
        sheet = Sheet(boxes, int(sim.penta_bonus[g]))
        assert sheet.totals(PENTA)["total"] == int(sim.totals[g])
        assert sheet.totals(PENTA)["upper_bonus"] == int(sim.upper_bonus[g])
    assert np.all(sim.totals >= 0)


def test_a_coach_game_takes_its_dice_from_the_caller(penta_advisor):
    g = Game(PENTA, parse_players("Ana"), coach=True)
    assert g.advance(penta_advisor, now=0.0) == [] and g.dice is None  # waiting for the real dice
    with pytest.raises(GameError, match="coach game"):
        g.roll()
    g.start_turn(rolled=[6, 6, 2, 3, 6])
    assert g.dice == (2, 3, 6, 6, 6)
    with pytest.raises(GameError, match="give the faces of the 2 dice"):
        g.play(Keep((6, 6, 6)), rolled=[1])
    played = g.play(Keep((6, 6, 6)), penta_advisor, rolled=[6, 6])
    assert played.dice == (6, 6, 6, 6, 6) and played.loss is not None


def test_a_coach_game_stays_one_when_saved():
    g = Game(PENTA, parse_players("Ana"), coach=True)
    assert Game.from_json(g.to_json()).coach and not Game.from_json(Game(PENTA, parse_players("Ana")).to_json()).coach


def test_the_deadline_belongs_to_one_players_last_roll(penta_advisor):
    """A countdown left from one person's last roll never fires at once on the next person's."""
    g = Game(PENTA, parse_players("Ana,Bo"), seed=2, auto_commit_seconds=3.0)
    g.advance(penta_advisor, now=0.0)
    g.play(Keep(()))
    g.play(Keep(()))
    assert g.advance(penta_advisor, now=10.0) == [] and g.deadline == 13.0
    g.score(next(iter(g.legal_boxes()[0])))  # the step underneath play: Ana scores before her deadline
    assert g.deadline is None
    g.advance(penta_advisor, now=20.0)
    g.play(Keep(()))
    g.play(Keep(()))
    assert g.advance(penta_advisor, now=20.0) == [] and g.player.name == "Bo" and g.deadline == 23.0


def test_a_coach_save_is_refused_by_the_terminal(penta_table_dir, tmp_path):
    path = tmp_path / "coach.json"
    path.write_text(Game(PENTA, parse_players("Ana"), coach=True).to_json())
    result = CliRunner().invoke(main, ["play", "--resume", str(path), "--data", str(penta_table_dir)])
    assert result.exit_code == 2 and "coach game" in result.output
