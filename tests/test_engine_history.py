"""The engine's history of decisions (recorded, saved, loaded strictly), undo in coach games, and saves
without the generator's state."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.moves import Keep, Score
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation
from pentadice.players.engine import Game, GameError, Player, Step, parse_players

PENTA = rules.get_rules("penta")


def played_game(advisor, players="Ana,cpu", seed=5, steps=None) -> Game:
    """A game played by the advisor (people's keeps and boxes through ``play``, the computer's through
    ``advance``), whole or ``steps`` decisions in."""
    g = Game(advisor.rules, parse_players(players), seed=seed, auto_commit_seconds=None)
    while not g.over and (steps is None or len(g.history) < steps):
        if g.dice is None or g.player.computer:
            g.advance(advisor, now=0.0, limit=1)
        else:
            options = advisor.advise(g.situation()).options
            g.play(options[min(1, len(options) - 1)].move, advisor)  # second best: some loss
    return g


def coach_game() -> Game:
    return Game(PENTA, parse_players("Ana,Bo"), auto_commit_seconds=None, coach=True)


# Recording.


def test_every_kind_of_decision_is_recorded_and_first_rolls_are_not(penta_advisor):
    g = Game(PENTA, parse_players("Ana,cpu"), seed=3, auto_commit_seconds=2.0)
    g.start_turn()
    first = g.dice
    played = g.play(Keep(first[:2]), penta_advisor)
    assert len(g.history) == 1
    step = g.history[0]
    assert step == Step("Ana", 0, 1, first, 2, Sheet(), Keep(first[:2]), played.dice, False, False)
    assert step.situation() == Situation(first, 2, Sheet())
    g.play(Keep(()), penta_advisor)
    assert g.advance(penta_advisor, now=10.0) == []  # the countdown starts at the last roll
    last = g.dice
    (auto,) = g.advance(penta_advisor, now=12.5, limit=1)  # ...and fills the advisor's box when it runs out
    step = g.history[2]
    assert (step.move, step.dice, step.rolls_left, step.after, step.auto, step.computer) == (
        auto.move,
        last,
        0,
        None,
        True,
        False,
    )
    assert step.sheet == Sheet() and g.players[0].sheet == Sheet({auto.move.box: auto.scored.points})
    before = len(g.history)
    events = g.advance(penta_advisor, now=13.0)  # the first roll and whole turn of the computer
    cpu_steps = g.history[before:]
    assert len(cpu_steps) == sum(1 for e in events if not isinstance(e, tuple))
    assert cpu_steps and all(s.player == "cpu" and s.index == 1 and s.computer and not s.auto for s in cpu_steps)
    assert isinstance(cpu_steps[-1].move, Score) and all(isinstance(s.move, Keep) for s in cpu_steps[:-1])
    assert [s.rolls_left for s in cpu_steps] == list(range(2, 2 - len(cpu_steps), -1))
    assert g.history[-1].turn == 1 and g.player.name == "Ana" and g.turn_number == 2


def test_keeps_chain_and_turns_count_in_a_whole_game(penta_advisor):
    g = played_game(penta_advisor)
    for a, b in zip(g.history, g.history[1:], strict=False):
        if isinstance(a.move, Keep):
            assert (b.index, b.dice, b.rolls_left, b.turn) == (a.index, a.after, a.rolls_left - 1, a.turn)
    for i, p in enumerate(g.players):
        assert sum(isinstance(s.move, Score) and s.index == i for s in g.history) == p.turns == 13


def test_direct_roll_and_score_are_recorded_too():
    g = Game(PENTA, [Player("a")], seed=1)
    g.roll()
    g.roll(g.dice[:1])
    g.score("chance")
    assert [str(s.move) for s in g.history] == [f"keep {g.history[0].dice[0]}", "score chance"]


# Saving and loading.


def test_the_history_saves_and_loads_back_whole(penta_advisor):
    for steps in (0, 1, 5, 40, None):
        g = played_game(penta_advisor, "Ana,cpu,Bo", seed=8, steps=steps)
        text = g.to_json()
        copy = Game.from_json(text)
        assert copy.history == g.history and copy.to_json() == text
    assert '"history": [\n  {"index": 0' in text  # a step a line


def test_saves_of_earlier_versions_load_and_play_on_with_a_history_from_then(penta_advisor):
    g = played_game(penta_advisor, steps=10)
    old = {k: v for k, v in json.loads(g.to_json()).items() if k != "history"}
    resumed = Game.from_json(json.dumps(old))
    assert resumed.history == [] and resumed.history_from is None
    at_load = ((g.players[0].turns, g.players[1].turns), g.rolls_made)
    while len(resumed.history) < 12:
        if resumed.dice is None or resumed.player.computer:
            resumed.advance(penta_advisor, now=0.0, limit=1)
        else:
            resumed.play(penta_advisor.advise(resumed.situation()).best.move)
    again = Game.from_json(resumed.to_json())
    assert again.history == resumed.history and again.history[0].turn > 1
    assert again.history_from == resumed.history_from == at_load and again.to_json() == resumed.to_json()
    data = json.loads(resumed.to_json())
    del data["history_from"]  # the history must then begin with the game
    with pytest.raises(GameError, match=r"first decision is made with 2 rerolls left|the history holds"):
        Game.from_json(json.dumps(data))
    del data["history"]
    data["history_from"] = {"turns": [0, 0], "rolls_made": 0}
    with pytest.raises(GameError, match="history_from without a history"):
        Game.from_json(json.dumps(data))


def saved_with_history(advisor):
    return json.loads(played_game(advisor, "Ana,cpu", seed=2, steps=25).to_json())


def _other_points(data):
    """Another possible score in one of the first player's filled boxes."""
    from pentadice.game.sheet import possible_points

    sheet, possible = data["players"][0]["sheet"], possible_points(PENTA)
    box = next(b for b in sheet if b in possible and len(possible[b]) > 1)
    sheet[box] = next(v for v in sorted(possible[box]) if v != sheet[box])


def _step(data, n):
    return data["history"][n]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(history={}), "history must be a list"),
        (lambda d: d["history"].append(3), "history step 26 must be an object"),
        (lambda d: _step(d, 0).update(extra=1), "history step 1 has an unknown field 'extra'"),
        (lambda d: _step(d, 0).pop("after"), "history step 1 has no 'after'"),
        (lambda d: _step(d, 0).update(index=2), "history step 1: index must be 0 to 1"),
        (lambda d: _step(d, 0).update(index=True), "index must be a whole number"),
        (lambda d: _step(d, 0).update(turn=0), "turn must be 1 to"),
        (lambda d: _step(d, 0).update(dice=[1, 2, 3]), "history step 1: dice: 5 dice"),
        (lambda d: _step(d, 0).update(dice=[1, 2, 3, 4, 7]), "a die must be 1 to 6"),
        (lambda d: _step(d, 0).update(rolls_left=3), "rolls_left must be 0 to 2"),
        (lambda d: _step(d, 0).update(sheet=[]), "the sheet must be an object"),
        (lambda d: _step(d, 0).update(sheet={"fours": 7}), "history step 1: fours=7 is impossible"),
        (lambda d: _step(d, 0).update(sheet={"fours": 1.5}), "must be a whole number"),
        (lambda d: _step(d, 0).update(move="jump"), "history step 1: not a move"),
        (lambda d: _step(d, 0).update(move=7), "the move is 'keep 1 3 4'"),
        (lambda d: _step(d, 0).update(move="keep  1"), "the move is 'keep 1 3 4'"),  # not as saved
        (lambda d: _step(d, 0).update(move="score nothing"), "unknown box id"),
        (lambda d: _step(d, 0).update(move="keep 1 1 1 1 1 1"), "cannot keep"),
        (lambda d: _step(d, 0).update(after=None), "a keep gives the dice after it"),
        (lambda d: _step(d, 0).update(auto=1), "auto and computer must be true or false"),
        (lambda d: _step(d, 0).update(computer=True), "'Ana' is not a computer player"),
        (lambda d: d["players"][1].update(computer=False), "'cpu' is not a computer player"),
        (lambda d: d["history"].pop(0), "a turn's first decision is made with 2 rerolls left"),
        (lambda d: d["history"].pop(), "last keep|holds no keep|not the turn|the history holds"),
        (lambda d: d["history"].insert(0, d["history"][0]), "does not follow the keep before it"),
        (lambda d: d["history"].reverse(), "history step"),
        (_other_points, "does not give the sheet saved"),
        (lambda d: d.update(history_from={"turns": [1, 0], "rolls_made": 0}), "holds 5 boxes of 'Ana', who played 5"),
        (lambda d: d.update(history_from={"turns": [9, 0], "rolls_made": 0}), "history_from: turns must be 0 to 5"),
        (lambda d: d.update(history_from=[]), "history_from must be an object"),
    ],
)
def test_damaged_histories_are_refused_naming_what(penta_advisor, mutate, message):
    data = saved_with_history(penta_advisor)
    mutate(data)
    with pytest.raises(GameError, match=f"damaged: .*({message})"):
        Game.from_json(json.dumps(data))


def test_moves_that_were_not_legal_at_their_moment_are_refused(penta_advisor):
    data = saved_with_history(penta_advisor)
    scores = [s for s in data["history"] if s["move"].startswith("score")]
    keeps = [s for s in data["history"] if s["move"].startswith("keep")]
    filled = next(b for b in scores[-1]["sheet"] if b != "penta_bonus")
    for step, changes, message in [
        (scores[-1], {"move": f"score {filled}"}, "may not take"),
        (scores[-1], {"after": scores[-1]["dice"]}, "a box has no dice after it"),
        (keeps[0], {"rolls_left": 0}, "a keep with no rolls left"),
        (keeps[0], {"auto": True}, "never the auto-commit"),
        (keeps[0], {"after": [7 - d for d in keeps[0]["after"]]}, "do not hold the dice kept|does not follow"),
    ]:
        copy = json.loads(json.dumps(data))
        copy["history"][data["history"].index(step)].update(changes)
        with pytest.raises(GameError, match=message):
            Game.from_json(json.dumps(copy))
    mid = next(s for s in scores if s["rolls_left"] > 0)
    mid["auto"] = True
    with pytest.raises(GameError, match="only fills a box after the last roll"):
        Game.from_json(json.dumps(data))


def test_a_game_set_up_in_the_middle_keeps_a_history_from_there():
    g = Game(PENTA, [Player("Ana"), Player("Bo")], seed=2)
    for p in g.players:
        p.sheet, p.turns = Sheet({"chance": 20, "ones": 3}), 2
    g.dice, g.rolls_made = (1, 1, 3, 4, 6), 2
    assert Game.from_json(g.to_json()).to_json() == g.to_json()
    g.play(Keep((1, 1)))
    g.play(Score("twos"))
    g.roll()
    copy = Game.from_json(g.to_json())
    assert copy.history == g.history and copy.history_from == ((2, 2), 2)
    assert copy.to_json() == g.to_json()


def test_kiriki_extra_turns_are_in_the_history():
    kiriki = rules.get_rules("kiriki")
    g = Game(kiriki, [Player("a"), Player("b")], seed=1)
    for box in ["penta", "chance", "penta", "sixes", "penta", "ones"]:
        g.dice, g.rolls_made = (6,) * 5, 1
        g.score(box)
    assert [s.turn for s in g.history] == [1, 1, 2, 2, 3, 3]
    assert Game.from_json(g.to_json()).history == g.history


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LEAVES = (
    st.none() | st.booleans() | st.integers(-3, 8) | st.text(max_size=8) | st.sampled_from(["score chance", "roll"])
)


def test_fuzzed_histories_load_whole_or_are_refused(penta_advisor):
    base = saved_with_history(penta_advisor)

    @FUZZ
    @given(st.data())
    def run(data):
        saved = json.loads(json.dumps(base))
        for _ in range(data.draw(st.integers(1, 3))):
            n = data.draw(st.integers(0, len(saved["history"]) - 1))
            step = saved["history"][n]
            key = data.draw(st.sampled_from(sorted(step)))
            how = data.draw(st.sampled_from(["leaf", "die", "delete", "swap", "copy"]))
            if how == "leaf":
                step[key] = data.draw(LEAVES)
            elif how == "die" and isinstance(step[key], list) and step[key]:
                step[key][data.draw(st.integers(0, len(step[key]) - 1))] = data.draw(st.integers(0, 7))
            elif how == "delete":
                del step[key]
            elif how == "swap":
                m = data.draw(st.integers(0, len(saved["history"]) - 1))
                saved["history"][n], saved["history"][m] = saved["history"][m], saved["history"][n]
            else:
                saved["history"][n][key] = saved["history"][data.draw(st.integers(0, len(saved["history"]) - 1))].get(
                    key
                )
        try:
            game = Game.from_json(json.dumps(saved))
        except GameError:
            return
        assert Game.from_json(game.to_json()).to_json() == game.to_json()

    run()


# Undo (coach games).


def test_undo_takes_back_each_kind_of_step_exactly():
    g = coach_game()
    moments = [(g.view(), g.to_json())]

    def step(action):
        action()
        moments.append((g.view(), g.to_json()))

    step(lambda: g.start_turn((1, 2, 2, 5, 6)))  # a first roll
    step(lambda: g.play(Keep((2, 2)), rolled=(2, 3, 4)))  # a keep, with its roll
    step(lambda: g.play(Keep((2, 2, 2)), rolled=(6, 6)))
    step(lambda: g.play(Score("twos")))  # a box
    step(lambda: g.start_turn((5, 5, 5, 5, 5)))  # Bo
    step(lambda: g.play(Score("penta")))
    assert len(g.history) == 4 and g.can_undo
    while len(moments) > 1:
        moments.pop()
        g.undo()
        assert (g.view(), g.to_json()) == moments[-1]
    assert not g.can_undo and g.history == []
    with pytest.raises(GameError, match="nothing to undo"):
        g.undo()
    g.start_turn((1, 1, 1, 1, 1))  # and the game goes on from there
    assert g.play(Score("ones")).scored.points == 5


def test_undo_after_the_last_box_reopens_the_game():
    g = coach_game()
    g.players = [Player("Ana")]
    for box in PENTA.boxes:
        g.start_turn((1, 2, 3, 4, 6))
        before = g.to_json()
        g.play(Score(box))
    assert g.over
    g.undo()
    assert not g.over and g.to_json() == before and g.dice == (1, 2, 3, 4, 6)


def test_undo_is_refused_outside_coach_games_and_for_steps_before_a_load():
    g = Game(PENTA, parse_players("Ana,Bo"), seed=1)
    g.roll()
    assert not g.can_undo
    with pytest.raises(GameError, match="only a coach game takes a step back"):
        g.undo()
    c = coach_game()
    c.start_turn((1, 2, 3, 4, 5))
    loaded = Game.from_json(c.to_json())
    assert loaded.coach and not loaded.can_undo
    with pytest.raises(GameError, match="nothing to undo"):
        loaded.undo()
    loaded.play(Keep((1,)), rolled=(1, 1, 1, 1))
    loaded.undo()
    assert loaded.to_json() == c.to_json()


# The generator's state.


def test_saves_without_the_generator_draw_fresh_dice():
    g = Game(PENTA, parse_players("Ana,Bo"), seed=1)
    g.roll()
    text = g.to_json(rng=False)
    assert "rng" not in json.loads(text) and '"rng"' in g.to_json()
    a, b = Game.from_json(text), Game.from_json(text)
    assert a.rng.bit_generator.state != b.rng.bit_generator.state
    assert a.to_json(rng=False) == text
    assert len(a.roll(a.dice[:2])) == 5  # it plays on


def test_play_resumes_a_save_without_the_generator(penta_table_dir, tmp_path):
    save = tmp_path / "game.json"
    first = CliRunner().invoke(
        main,
        ["play", "--data", str(penta_table_dir), "--players", "Ana,cpu", "--seed", "4", "--save", str(save)],
        input="best\n" * 6 + "quit\n",
    )
    assert first.exit_code == 0, first.output
    data = json.loads(save.read_text())
    del data["rng"]
    save.write_text(json.dumps(data))
    rest = CliRunner().invoke(
        main, ["play", "--data", str(penta_table_dir), "--resume", str(save)], input="best\n" * 120
    )
    assert rest.exit_code == 0, rest.output
    assert "wins with" in rest.output or "Tie at" in rest.output
    done = Game.from_json(save.read_text())
    assert done.over and "rng" in json.loads(save.read_text())
    assert sum(isinstance(s.move, Score) for s in done.history) == 26  # the history went on across the resume


def test_random_games_of_every_rule_set_keep_a_loadable_history():
    for name in ("penta", "kiriki", "yahtzee"):
        rs = rules.get_rules(name)
        rng = np.random.default_rng(7)
        g = Game(rs, [Player(f"p{i}") for i in range(3)], seed=2)
        while not g.over:
            if g.dice is None or (g.rolls_left and rng.random() < 0.6):
                keep = tuple(d for d in (g.dice or ()) if rng.random() < 0.5)
                g.roll(keep)
                continue
            legal, _ = g.legal_boxes()
            g.score(str(rng.choice(sorted(legal))))
            if rng.random() < 0.2:
                copy = Game.from_json(g.to_json())
                assert copy.history == g.history
        assert Game.from_json(g.to_json()).to_json() == g.to_json()
