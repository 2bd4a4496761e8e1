"""Computer strategies by name in the game engine, the terminal and the API (`cpu:win`), saved with the game;
and the live chances of winning in the terminal and the API."""

import json

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from solutions import solved

from pentadice.advisor import Advisor, chances
from pentadice.faces.cli import main
from pentadice.faces.web.api import create_app
from pentadice.game import rules
from pentadice.game.moves import Score
from pentadice.game.sheet import Sheet
from pentadice.players import strategies
from pentadice.players.engine import Game, GameError, computer_move, parse_players
from pentadice.tables import table

PENTA = rules.get_rules("penta")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("Ana,cpu:win,cpu", [("Ana", False, "optimal"), ("cpu 1", True, "win"), ("cpu 2", True, "optimal")]),
        ("cpu:win:Bob,cpu:Bo,cpu:OPTIMAL", [("Bob", True, "win"), ("Bo", True, "optimal"), ("cpu", True, "optimal")]),
        ("cpu:optimal:win", [("win", True, "optimal")]),  # a computer called "win" playing optimal
        ("Ana, CPU : Win : Bob ", [("Ana", False, "optimal"), ("Bob", True, "win")]),
        ("cpu,cpu", [("cpu 1", True, "optimal"), ("cpu 2", True, "optimal")]),
        ("cpu:", [("cpu", True, "optimal")]),
        ("cpu:win:", [("cpu", True, "win")]),  # an empty name: unnamed, as for cpu:
    ],
)
def test_the_players_grammar(spec, expected):
    assert [(p.name, p.computer, p.strategy) for p in parse_players(spec)] == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("Ana,cpu:bogus:Bob", "unknown strategy 'bogus' in 'cpu:bogus:Bob'"),
        ("robot:Bob", "a player is NAME, cpu, cpu:STRATEGY, cpu:NAME or cpu:STRATEGY:NAME"),
        ("cpu:win:Bob,cpu:Bob", "two players are called 'Bob'"),
    ],
)
def test_bad_players_are_refused_naming_the_problem(spec, message):
    with pytest.raises(GameError, match=message):
        parse_players(spec)


def test_the_strategy_is_saved_and_loaded_and_old_saves_play_optimal():
    game = Game(PENTA, parse_players("Ana,cpu:win:Bob,cpu"), seed=1)
    data = json.loads(game.to_json())
    assert [p.get("strategy") for p in data["players"]] == [None, "win", "optimal"]
    loaded = Game.from_json(game.to_json())
    assert [p.strategy for p in loaded.players] == ["optimal", "win", "optimal"]
    assert loaded.view()["players"][1]["strategy"] == "win" and loaded.view()["players"][0]["strategy"] is None
    for p in data["players"]:
        p.pop("strategy", None)  # a save of an earlier version
    assert [p.strategy for p in Game.from_json(json.dumps(data)).players] == ["optimal"] * 3
    data["players"][1]["strategy"] = "bogus"
    with pytest.raises(GameError, match="damaged: player 'Bob': unknown strategy 'bogus'"):
        Game.from_json(json.dumps(data))
    data["players"][1]["strategy"] = "win"
    data["players"][0]["strategy"] = "win"
    with pytest.raises(GameError, match="damaged: player 'Ana' is a person: a strategy"):
        Game.from_json(json.dumps(data))


class Recorder:
    """A stand-in win strategy: records what it is asked, plays the advisor's best option."""

    def __init__(self, advisor):
        self.advisor, self.calls = advisor, []

    def choose(self, situation, my_sheet, others):
        self.calls.append((situation, my_sheet, others))
        return self.advisor.advise(situation).best.move


def test_the_computer_plays_its_own_strategy(penta_advisor, monkeypatch):
    recorder = Recorder(penta_advisor)
    monkeypatch.setattr(strategies, "win_player", lambda advisor: recorder)
    game = Game(PENTA, parse_players("cpu:win:Wyn,cpu:Opti,Ana"), seed=5)
    moves_of = {"Wyn": 0, "Opti": 0}
    while game.player.name != "Ana" or game.turn_number < 3:
        if game.dice is None:
            game.start_turn()
            continue
        player = game.player
        if not player.computer:
            game.play(Score(penta_advisor.best_box(game.situation()).box), penta_advisor)
            continue
        calls = len(recorder.calls)
        played = computer_move(game, penta_advisor)
        moves_of[player.name] += 1
        assert played.computer
        assert len(recorder.calls) == calls + (player.strategy == "win")
    assert moves_of["Wyn"] >= 2 and moves_of["Opti"] >= 2
    for situation, mine, others in recorder.calls:
        assert situation.sheet == mine  # its own sheet at the moment of the decision
        assert len(others) == 2 and all(isinstance(s, Sheet) for s in others)
    # The others' sheets as they stood: at Wyn's second turn, Opti and Ana had filled one box each.
    second_turn = [c for c in recorder.calls if len(c[1].boxes) == 1]
    assert second_turn and all(sorted(len(s.boxes) for s in c[2]) == [1, 1] for c in second_turn)


def test_a_person_asking_for_the_computers_choice_gets_the_advisors(penta_advisor):
    game = Game(PENTA, parse_players("Ana,cpu:win"), seed=2)
    game.start_turn()
    best = penta_advisor.advise(game.situation()).best.move
    assert computer_move(game, penta_advisor).move == best


def test_a_whole_game_against_the_real_win_strategy(small_game_tables, penta_is_small):
    # The small game standing for Penta, its real win tables as `pentadice solve` saved them (the session's, built
    # once): read, not built again in this process, as a game does with the tables of `make table`.
    small = penta_is_small
    advisor = Advisor.load("penta", str(small_game_tables), solve_missing=False)
    game = Game(small, parse_players("cpu:win,cpu"), seed=11)
    while not game.over:
        game.advance(advisor, now=0.0)
    assert game.over and all(len(p.boxes) == len(small.boxes) for p in game.players)
    assert {s.player for s in game.history} == {"cpu 1", "cpu 2"} and all(s.computer for s in game.history)
    assert {s.strategy for s in game.players} == {"win", "optimal"}
    assert Game.from_json(game.to_json()).players[0].strategy == "win"


def test_a_refused_strategy_is_refused_by_the_engine_the_api_and_the_cli(penta_table_dir, monkeypatch):
    from pentadice.players import win

    reason = "win is not played under Kiriki here: a test's reason"
    monkeypatch.setattr(win, "refusal", lambda rs, directory=None: reason if rs.penta_repeat else None)
    with pytest.raises(GameError, match=reason):
        Game(rules.get_rules("kiriki"), parse_players("Ana,cpu:win"))
    Game(rules.get_rules("kiriki"), parse_players("Ana,cpu"))  # optimal still plays
    Game(PENTA, parse_players("Ana,cpu:win"))
    result = CliRunner().invoke(main, ["play", "--rules", "kiriki", "--players", "Ana,cpu:win"], input="quit\n")
    assert result.exit_code == 2 and reason in result.output and "Traceback" not in result.output


@pytest.fixture(scope="module")
def client(penta_table_dir, tmp_path_factory):
    directory = tmp_path_factory.mktemp("kiriki")
    sol = solved("kiriki")
    table.save(sol.rules, sol.values, directory)
    advisors = {
        "penta": Advisor.load("penta", str(penta_table_dir), solve_missing=False),
        "kiriki": Advisor.load("kiriki", str(directory), solve_missing=False),
    }
    with TestClient(create_app(advisors)) as c:
        yield c


def test_the_api_takes_strategies_in_both_forms(client):
    r = client.post("/api/games", json={"players": "Ana,cpu:win:Bob", "seed": 1})
    assert r.status_code == 201, r.text
    assert [(p["name"], p["strategy"]) for p in r.json()["players"]] == [("Ana", None), ("Bob", "win")]
    body = {
        "players": [
            {"name": "Ana"},
            {"name": "Wyn", "computer": True, "strategy": "win"},
            {"name": "Opti", "computer": True},
        ]
    }
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    assert [p["strategy"] for p in r.json()["players"]] == [None, "win", "optimal"]
    saved = client.get(f"/api/games/{r.json()['id']}/save").json()
    assert [p.get("strategy") for p in saved["players"]] == [None, "win", "optimal"]
    for bad, message in [
        ({"players": "Ana,cpu:bogus:Bob"}, "unknown strategy 'bogus'"),
        ({"players": [{"name": "Bob", "computer": True, "strategy": "bogus"}]}, "strategy must be one of optimal, win"),
        ({"players": [{"name": "Ana", "strategy": "win"}]}, "is a person: a strategy is for computer players"),
    ]:
        r = client.post("/api/games", json=bad)
        assert r.status_code == 422 and message in r.json()["error"], r.text


@pytest.fixture
def small_penta(small_game_tables, penta_is_small):
    """``(client, advisor)``: the API serving the small game standing for Penta, registered as "penta", on the
    session's tables: its chances from the start take a second, not Penta's ten."""
    advisor = Advisor.load("penta", str(small_game_tables), solve_missing=False)
    with TestClient(create_app({"penta": advisor})) as client:
        yield client, advisor


def test_the_api_game_view_carries_the_chances(small_penta):
    client, advisor = small_penta
    game = client.post("/api/games", json={"players": "Ana,Bo", "seed": 3}).json()
    assert "chances" in game and "chances_pending" in game
    asked = client.get(f"/api/games/{game['id']}/chances").json()  # waits for them
    assert asked["chances"] == pytest.approx([0.5, 0.5], abs=1e-12) and asked["reason"] is None
    assert asked["sheets"] == [{}, {}]
    view = client.get(f"/api/games/{game['id']}").json()
    assert view["chances"] == asked["chances"] and view["chances_pending"] is False  # at hand now
    # A box filled: the view has them once computed; they are those of the sheets as they stand.
    client.post(f"/api/games/{game['id']}/roll", json={"keep": []})
    after = client.post(f"/api/games/{game['id']}/score", json={"box": "chance"}).json()["game"]
    assert after["chances"] is None and after["chances_pending"] is True
    asked = client.get(f"/api/games/{game['id']}/chances").json()
    sheets = [Sheet.from_mapping(s) for s in asked["sheets"]]
    assert sheets == [Sheet.from_mapping(p["sheet"]) for p in after["players"]]
    assert asked["chances"] == pytest.approx(chances.win_chances(advisor.rules, advisor.values, sheets), abs=1e-12)
    assert sum(asked["chances"]) == pytest.approx(1.0, abs=1e-12) and asked["chances"][0] != 0.5
    assert client.get(f"/api/games/{game['id']}").json()["chances"] == asked["chances"]


def test_kiriki_has_no_chances_and_says_why(client):
    game = client.post("/api/games", json={"players": "Ana,cpu", "rules": "kiriki"}).json()
    assert game["chances"] is None and game["chances_pending"] is False
    asked = client.get(f"/api/games/{game['id']}/chances").json()
    assert asked["chances"] is None and "Kiriki" in asked["reason"]
    assert client.get("/api/games/nosuchgame/chances").status_code == 404


def test_the_terminal_shows_the_chances_after_every_box(small_game_tables, penta_is_small):
    # The small game standing for Penta, with the chances table that `play --chances` reads (the session's).
    game_tables = small_game_tables
    script = "best\n" * 9 + "chances\nquit\n"
    args = ["play", "--data", str(game_tables), "--players", "Ana,cpu:Bob", "--seed", "4", "--chances"]
    result = CliRunner().invoke(main, args, input=script)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    scored = [i for i, line in enumerate(lines) if " scores " in line]
    assert len(scored) >= 3
    for i in scored:
        line = lines[i + 1]
        assert line.startswith("Chances: Ana ") and ", Bob " in line and line.endswith(" %"), lines[i : i + 2]
        shares = [int(w) for w in line.replace(",", " ").split() if w.isdigit()]
        assert len(shares) == 2 and 98 <= sum(shares) <= 102
    assert sum(line.startswith("Chances: ") for line in lines) == len(scored) + 1  # and the command's
    without = CliRunner().invoke(main, args[:-1], input=script)  # not a terminal: off unless asked
    assert sum(line.startswith("Chances: ") for line in without.output.splitlines()) == 1


def test_chances_in_indonesian(small_game_tables, penta_is_small):
    from pentadice.support import i18n

    # The small game standing for Penta: its chances from the start in a second, not Penta's five.
    args = ["play", "--data", str(small_game_tables), "--players", "Ana,Bo", "--seed", "4", "--lang", "id"]
    try:
        result = CliRunner().invoke(main, args, input="chances\nquit\n")
    finally:
        i18n.use("en")  # --lang chose the process's language: the other tests expect English
    assert "Peluang: Ana 50 %, Bo 50 %" in result.output, result.output


def test_api_list_form_strategies_take_any_case_and_null_is_the_default(client):
    players = [
        {"name": "Ana"},
        {"name": "Bob", "computer": True, "strategy": "WIN"},
        {"name": "Cy", "computer": True, "strategy": None},
    ]
    made = client.post("/api/games", json={"players": players, "seed": 1})
    assert made.status_code == 201, made.text
    assert [p["strategy"] for p in made.json()["players"]] == [None, "win", "optimal"]
    bad = client.post("/api/games", json={"players": [{"name": "Bob", "computer": True, "strategy": False}]})
    assert bad.status_code == 422
