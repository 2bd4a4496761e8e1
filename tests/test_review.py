"""The review of a game (`pentadice.players.review`) and `pentadice review SAVE.json`."""

import json
import re

import pytest
from click.testing import CliRunner
from commands import run
from saves import a_save

from pentadice.faces.cli import main
from pentadice.faces.review_text import review_lines
from pentadice.game import rules
from pentadice.game.moves import Keep, Score
from pentadice.game.situation import Situation
from pentadice.players.engine import Game, GameError, Player, parse_players
from pentadice.players.review import EXPERT_MEAN_LOSS, review

PENTA = rules.get_rules("penta")


def game_played(advisor, players="Ana,cpu", seed=11, choice=lambda i, options: options[i % len(options)]):
    """A whole game: computers by ``advance``, people by ``choice`` among the options (by decision number)."""
    g = Game(advisor.rules, parse_players(players), seed=seed, auto_commit_seconds=None)
    while not g.over:
        if g.dice is None or g.player.computer:
            g.advance(advisor, now=0.0, limit=1)
        else:
            g.play(choice(len(g.history), advisor.advise(g.situation()).options).move)
    return g


def test_each_loss_is_the_advisors_loss_of_the_move(penta_advisor):
    g = game_played(penta_advisor)
    r = review(g, penta_advisor)
    assert len(r.decisions) == len(g.history)
    for d, step in zip(r.decisions, g.history, strict=True):
        situation = Situation.make(PENTA, step.dice, step.rolls_left, step.sheet)
        if isinstance(step.move, Keep):
            expected = penta_advisor.loss(situation, keep=step.move.dice)
            assert d.chosen["keep"] == list(step.move.dice)
        else:
            expected = penta_advisor.loss(situation, box=step.move.box)
            assert d.chosen["box"] == step.move.box
        assert d.loss == expected >= 0
        assert d.best == penta_advisor.advise(situation).best.as_dict() and d.best["loss"] == 0
    assert any(d.loss > 0 for d in r.decisions)


def test_totals_means_and_the_worst_three(penta_advisor):
    g = game_played(penta_advisor, "Ana,Bo,cpu", seed=3)
    out = review(g, penta_advisor).as_dict()
    assert json.loads(json.dumps(out)) == out  # JSON-ready
    assert [p["name"] for p in out["players"]] == ["Ana", "Bo", "cpu"]
    for i, p in enumerate(out["players"]):
        mine = [d for d in out["decisions"] if d["index"] == i]
        assert p["decisions"] == len(mine) >= 13
        assert p["total_loss"] == pytest.approx(sum(d["loss"] for d in mine), abs=1e-9)
        assert p["mean_loss"] == pytest.approx(p["total_loss"] / p["decisions"])
        assert p["expert"] == (p["mean_loss"] < EXPERT_MEAN_LOSS)
        worst = sorted((d["loss"] for d in mine if d["loss"] > 1e-9), reverse=True)[:3]
        assert [d["loss"] for d in p["worst"]] == worst
    assert out["players"][2]["total_loss"] == 0 and out["players"][2]["worst"] == []
    d = out["decisions"][0]
    assert set(d) >= {"player", "turn", "dice", "rolls_left", "sheet", "chosen", "best", "loss"}


def test_an_optimal_game_loses_nothing(penta_advisor):
    g = game_played(penta_advisor, "cpu,cpu", seed=9)
    assert all(s.computer for s in g.history)
    r = review(g, penta_advisor)
    assert all(p.total_loss == pytest.approx(0, abs=1e-9) for p in r.players)
    assert all(p.expert and p.worst == [] for p in r.players)
    assert len(r.decisions) >= 26


def test_the_review_carries_scores_winners_and_strategies(penta_advisor):
    g = game_played(penta_advisor, "Ana,cpu", seed=5)
    out = review(g, penta_advisor).as_dict()
    totals = [g.totals(p)["total"] for p in g.players]
    assert out["over"] is True
    assert [p["score"] for p in out["players"]] == totals
    assert [p["winner"] for p in out["players"]] == [t == max(totals) for t in totals]
    unfinished = Game(PENTA, parse_players("Ana,cpu:win"), seed=1, auto_commit_seconds=None)
    dice = unfinished.roll()
    unfinished.play(Score("chance"))  # a box filled: a score so far, no winner yet
    out = review(unfinished, penta_advisor).as_dict()
    assert out["over"] is False and [p["winner"] for p in out["players"]] == [False, False]
    assert [p["score"] for p in out["players"]] == [sum(dice), 0]
    assert [p["strategy"] for p in out["players"]] == ["optimal", "win"]  # a win player's risks are labelled so


def test_a_finished_game_loaded_from_its_save_reviews_the_same(penta_advisor):
    g = game_played(penta_advisor, seed=4)
    loaded = Game.from_json(g.to_json(rng=False))
    assert loaded.over
    assert review(loaded, penta_advisor).as_dict() == review(g, penta_advisor).as_dict()


def test_keeping_every_die_and_the_auto_commit_are_reviewed(penta_advisor):
    g = Game(PENTA, [Player("Ana")], seed=2, auto_commit_seconds=0)
    g.roll()
    dice = g.dice
    g.roll(dice)  # keeping all: rerolls nothing, a roll spent
    g.roll(())
    g.advance(penta_advisor, now=0.0)  # the auto-commit
    first, _, third = review(g, penta_advisor).decisions
    later = penta_advisor.advise(Situation(dice, 1, g.history[0].sheet)).best.value
    assert first.chosen == {"action": "keep", "keep": list(dice), "value": later, "loss": first.loss}
    assert first.loss == pytest.approx(penta_advisor.advise(g.history[0].situation()).best.value - later)
    assert third.step.auto and third.loss == 0
    lines = review_lines(review(g, penta_advisor), PENTA)
    assert any("chose keep all" in line for line in lines) or first.loss <= 1e-9


def test_an_option_the_advisor_does_not_know_does_not_stop_the_review(penta_advisor):
    g = Game(PENTA, [Player("Ana")], seed=2)
    g.dice, g.rolls_made = (1, 2, 3, 4, 5), 1
    g.score("chance")
    g.history[0] = type(g.history[0])(**{**g.history[0].__dict__, "move": Keep((6,))})  # not among the dice
    (d,) = review(g, penta_advisor).decisions
    assert d.loss is None and d.chosen == {"action": "keep", "keep": [6], "value": None, "loss": None}
    assert review(g, penta_advisor).players[0].total_loss == 0
    assert any("not an option here" in line for line in review_lines(review(g, penta_advisor), PENTA))


def test_the_advisor_must_be_of_the_games_rules(penta_advisor):
    g = Game(rules.get_rules("yahtzee"), [Player("Ana")], seed=1)
    with pytest.raises(GameError, match="needs the yahtzee advisor"):
        review(g, penta_advisor)


def test_the_text_fits_80_columns_and_says_what_matters(penta_advisor):
    g = game_played(penta_advisor, "Ana Maria Oktaviani Putri Lestar,cpu", seed=6)
    r = review(g, penta_advisor)
    lines = review_lines(r, PENTA)
    assert max(map(len, lines)) <= 80
    text = "\n".join(lines)
    ana = r.players[0]
    assert f"Ana Maria Oktaviani Putri Lestar: {len(ana.decisions)} decisions, {ana.total_loss:.2f} points lost" in text
    assert "cpu (computer): " in text and "expert play (under 0.2)" in text
    worst = ana.worst[0]
    assert f"{worst.loss:6.2f}  turn {worst.step.turn}," in text
    costly = sum(d.loss > 1e-9 for d in r.decisions)
    assert text.count("  chose ") == costly
    perfect = review_lines(review(game_played(penta_advisor, "cpu", seed=1), penta_advisor), PENTA)
    assert "Every decision was the best one." in perfect


def test_a_game_without_a_history_reviews_to_nothing(penta_advisor):
    g = Game(PENTA, parse_players("Ana,Bo"), seed=1)
    r = review(g, penta_advisor)
    assert r.as_dict()["decisions"] == [] and r.players[0].mean_loss == 0 and not r.players[0].expert
    assert "holds no decisions" in review_lines(r, PENTA)[-1]


# The command.


def saved_game(advisor, tmp_path, **kw):
    path = tmp_path / "game.json"
    path.write_text(game_played(advisor, **kw).to_json())
    return path


def test_review_command_prints_the_review(penta_advisor, penta_table_dir, tmp_path):
    path = saved_game(penta_advisor, tmp_path)
    result = CliRunner().invoke(main, ["review", str(path), "--data", str(penta_table_dir)])
    assert result.exit_code == 0, result.output
    expected = review_lines(review(Game.from_json(path.read_text()), penta_advisor), PENTA)
    assert result.output.splitlines() == expected
    as_json = CliRunner().invoke(main, ["review", str(path), "--json", "--data", str(penta_table_dir)])
    assert as_json.exit_code == 0
    assert json.loads(as_json.output) == review(Game.from_json(path.read_text()), penta_advisor).as_dict()


def test_review_command_reads_a_game_saved_by_play(penta_table_dir, tmp_path):
    save = tmp_path / "played.json"
    runner = CliRunner()
    args = ["play", "--data", str(penta_table_dir), "--players", "Ana,cpu", "--seed", "8", "--save", str(save)]
    assert runner.invoke(main, args, input="best\n" * 120).exit_code == 0
    result = runner.invoke(main, ["review", str(save), "--json", "--data", str(penta_table_dir)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert [p["decisions"] > 13 for p in out["players"]] == [True, True]
    assert all(p["total_loss"] == pytest.approx(0, abs=1e-9) for p in out["players"])  # 'best' every time


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read the saved game .*No such file"),
        ("{}", "this is not a saved pentadice game"),
        ("not json", "not valid JSON"),
    ],
)
def test_review_command_refuses_bad_saves_in_one_line(penta_table_dir, tmp_path, content, message):
    path = tmp_path / "game.json"
    if content is not None:
        path.write_text(content)
    result = CliRunner().invoke(main, ["review", str(path), "--data", str(penta_table_dir)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and result.output.startswith("Error: ")
    assert "Traceback" not in result.output and "Usage" not in result.output
    assert re.search(message, result.output)


def test_review_command_refuses_a_damaged_history(penta_advisor, penta_table_dir, tmp_path):
    path = saved_game(penta_advisor, tmp_path)
    data = json.loads(path.read_text())
    data["history"][0]["move"] = "score nothing"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["review", str(path), "--data", str(penta_table_dir)])
    assert result.exit_code == 2
    assert result.output.startswith("Error: ") and "history step 1" in result.output
    missing = CliRunner().invoke(main, ["review", "--data", str(penta_table_dir)])
    assert missing.exit_code == 2 and "Usage" in missing.output


def test_the_review_changes_nothing_in_the_game(penta_advisor):
    g = game_played(penta_advisor, seed=2)
    before = g.to_json()
    review(g, penta_advisor)
    assert g.to_json() == before


def test_review_reads_standard_input(penta_table_dir):
    result = run("review", "-", "--json", "--data", str(penta_table_dir), stdin=a_save())
    assert result.exit_code == 0, result.output
    assert [p["name"] for p in json.loads(result.stdout)["players"]] == ["Ana", "cpu"]
