"""The players a game is given: names that look the same (an invisible character, a full-width letter, a
no-break space) refused by the engine and the API, a name with no visible character refused by `play`, and a
list of players that holds other things than objects refused naming the entry."""

import json

import pytest
from commands import run
from saves import PLAY, a_save

from pentadice.players.engine import GameError, parse_players


def test_names_that_look_the_same_are_refused(client):
    for spec in ("Ana,Ana\u200b", "Ana,\u200bAna", "Ana,\uff21na", "Ana,Ana\ufe0f", "Bo Li,Bo\u00a0Li"):
        with pytest.raises(GameError, match="look the same"):
            parse_players(spec)
    assert [p.name for p in parse_players("Ana,ana")] == ["Ana", "ana"]  # they look different
    r = client.post("/api/games", json={"players": [{"name": "Ana"}, {"name": "Ana\u200b"}]})
    assert r.status_code == 422 and "look the same" in r.json()["error"]


def test_invisible_names_are_refused(penta_table_dir):
    result = run(*PLAY[:1], "--players", "\u200b", "--data", str(penta_table_dir), input="quit\n")
    assert result.exit_code == 2 and "no visible character" in result.output


def test_a_player_list_of_other_things_says_which_entry(client):
    for players, message in [
        (["Ana", "cpu"], "players[0] is a string 'Ana', not an object"),
        ([{"name": "Ana"}, 3], "players[1] is a number 3, not an object"),
        ([{"name": "Ana"}, {"name": "Bo", "age": 3}], "players[1]: unknown field 'age'"),
    ]:
        r = client.post("/api/games", json={"players": players})
        assert r.status_code == 422 and message in r.json()["error"], r.text
    save = json.loads(a_save())
    save["players"][1] = "cpu"
    r = client.post("/api/games", json={"save": save})
    assert r.status_code == 422 and "players[1] is 'cpu', not an object" in r.json()["error"], r.text
