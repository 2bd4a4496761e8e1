"""The HTTP API (`pentadice serve`): the advice is `advise --json`'s, a game played through it is the engine's
(the terminal's seeded games, move for move), every refusal is JSON with a 4xx, and nothing a client sends
gives a 500, reads a file or shows the dice generator."""

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse

import numpy as np
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sheets import random_sheet
from signals import interrupt
from solutions import solved

from pentadice.advisor import Advisor
from pentadice.advisor.explain import explain
from pentadice.faces.cli import main
from pentadice.faces.web import schemas
from pentadice.faces.web.api import create_app
from pentadice.faces.web.bodies import ADVISE_LIMIT, LARGE_LIMIT
from pentadice.game import rules
from pentadice.players.engine import Game, Played, parse_players
from pentadice.tables import table

PENTA = rules.get_rules("penta")
FAST_RULES = ("penta", "kiriki")  # the others are full-size solves too: marked slow
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def _advisor(name, tmp_path_factory, penta_table_dir):
    if name == "penta":
        return Advisor.load("penta", str(penta_table_dir), solve_missing=False)
    directory = tmp_path_factory.mktemp(name.replace("+", "_"))
    solution = solved(name)
    table.save(solution.rules, solution.values, directory)
    return Advisor.load(name, str(directory), solve_missing=False)


@pytest.fixture(scope="module")
def advisors(tmp_path_factory, penta_table_dir):
    return {name: _advisor(name, tmp_path_factory, penta_table_dir) for name in FAST_RULES}


@pytest.fixture(scope="module")
def client(advisors):
    with TestClient(create_app(advisors)) as c:
        yield c


def cli_json(advisor, *args, stdin=None):
    directory = str(advisor.table.files.directory)
    return CliRunner().invoke(main, ["advise", "--rules", advisor.rules.name, "--data", directory, *args], input=stdin)


def reference(advisor, situation, top=None):
    """What the `advise` command prints with --json, computed as it does (every option with its sd)."""
    advice = advisor.with_spread(advisor.advise(situation))
    why = explain(advisor, advice)
    return {**advice.as_dict(advisor.rules, top), "why": why.as_dict() if why else None}


def random_situations(rs, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        sheet = random_sheet(rs, rng, int(rng.integers(0, len(rs.boxes))))
        dice = [int(d) for d in rng.integers(1, 7, size=rs.dice)]
        out.append((dice, int(rng.integers(0, rs.rolls)), sheet))
    return out


# Advice: exactly `advise --json`.


def _check_advice_equals_cli(client, advisor, n, seed):
    rs = advisor.rules
    for i, (dice, rolls_left, sheet) in enumerate(random_situations(rs, n, seed)):
        top = [None, 1, 5][i % 3]
        body = {"dice": dice, "rolls_left": rolls_left, "sheet": sheet.as_dict(), "rules": rs.name}
        if top is not None:
            body["top"] = top
        r = client.post("/api/advise", json=body)
        assert r.status_code == 200, r.text
        assert r.json() == reference(advisor, advisor.situation(dice, rolls_left, sheet), top)
        schemas.AdviceOut.model_validate(r.json())
        if i < 8:  # and the command itself, on some of them
            text = " ".join(f"{b}={p}" for b, p in sheet.as_dict().items())
            args = [*map(str, dice), "--rolls-left", str(rolls_left), "--json", *(["--sheet", text] if text else [])]
            result = cli_json(advisor, *args, *(["--top", str(top)] if top else []))
            assert result.exit_code == 0, result.output
            assert json.loads(result.output) == r.json()


@pytest.mark.parametrize("name", FAST_RULES)
def test_advise_is_advise_json_on_random_situations(client, advisors, name):
    _check_advice_equals_cli(client, advisors[name], 250, seed=len(name))


@pytest.mark.slow  # Maxi Yatzy's 640 MB table: tests/test_advisor_family.py serves a small game of its sheet instead
@pytest.mark.parametrize("name", [n for n in rules.REGISTRY if n not in (*FAST_RULES, "maxi-yatzy")])
def test_advise_is_advise_json_under_every_rule_set(tmp_path_factory, penta_table_dir, name):
    advisor = _advisor(name, tmp_path_factory, penta_table_dir)
    with TestClient(create_app({name: advisor})) as c:
        _check_advice_equals_cli(c, advisor, 200, seed=len(name))


def test_advise_is_the_real_commands_output(client, penta_advisor):
    exe = os.path.join(os.path.dirname(sys.executable), "pentadice")
    directory = str(penta_advisor.table.files.directory)
    for args, body in [
        (["1", "1", "3", "4", "6"], {"dice": [1, 1, 3, 4, 6]}),
        (["13346", "--rolls-left", "0", "--sheet", "ones=3 full house=25 3k=20"],
         {"dice": [1, 3, 3, 4, 6], "rolls_left": 0, "sheet": {"ones": 3, "full house": 25, "3k": 20}}),
        (["6", "6", "6", "6", "6", "--rolls-left", "1", "--sheet", "penta=50 sixes=18"],
         {"dice": [6] * 5, "rolls_left": 1, "sheet": {"penta": 50, "sixes": 18}}),
    ]:  # fmt: skip
        out = subprocess.run([exe, "advise", *args, "--json", "--data", directory], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert client.post("/api/advise", json=body).json() == json.loads(out.stdout)


BAD_SITUATIONS = [
    {"dice": [1, 2, 3]},
    {"dice": [1, 2, 3, 4, 7]},
    {"dice": "12345"},
    {"rolls_left": 1},
    {"dice": [1, 2, 3, 4, 5], "rolls_left": 3},
    {"dice": [1, 2, 3, 4, 5], "rolls_left": True},
    {"dice": [1, 2, 3, 4, 5], "rolls_left": None},  # left out it is the first roll's; null is no number
    {"dice": [1, 2, 3, 4, 5], "sheet": {"fours": 7}},
    {"dice": [1, 2, 3, 4, 5], "sheet": {"sevens": 7}},
    {"dice": [1, 2, 3, 4, 5], "sheet": {"penta_bonus": 100}},
    {"dice": [1, 2, 3, 4, 5], "sheet": dict.fromkeys(PENTA.boxes, 0)},
    {"dice": [1, 2, 3, 4, 5], "colour": "red"},
    {"dice": [1.5, 2, 3, 4, 5]},
]


def test_bad_situations_get_the_batch_error_texts(client, penta_advisor):
    lines = "".join(json.dumps(b) + "\n" for b in BAD_SITUATIONS)
    batch = cli_json(penta_advisor, "--batch", "-", stdin=lines)
    expected = [json.loads(line)["error"] for line in batch.output.splitlines() if line.startswith("{")]
    assert len(expected) == len(BAD_SITUATIONS)
    for body, error in zip(BAD_SITUATIONS, expected, strict=True):
        r = client.post("/api/advise", json=body)
        assert (r.status_code, r.json()) == (422, {"error": error})


def test_batch_answers_like_advise_batch_with_bad_items(client, penta_advisor):
    items = [{"dice": [1, 1, 3, 4, 6]}, *BAD_SITUATIONS[:4], 17, "x", {"dice": [6] * 5, "rolls_left": 0}]
    r = client.post("/api/advise/batch", json={"items": items, "top": 3})
    assert r.status_code == 200
    lines = "".join(json.dumps(i) + "\n" for i in items)
    output = cli_json(penta_advisor, "--batch", "-", "--top", "3", stdin=lines).output
    expected = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert r.json() == {"results": expected}
    assert r.json()["results"][5] == {"line": 6, "error": expected[5]["error"]}
    schemas.BatchOut.model_validate(r.json())
    assert client.post("/api/advise/batch", json={"items": [{"dice": [1] * 5}] * 1001}).status_code == 422
    assert client.post("/api/advise/batch", json={"items": {}}).status_code == 422
    assert client.post("/api/advise/batch", json={"items": [], "rules": "kiriki"}).json() == {"results": []}


def test_advise_refusals(client):
    assert client.post("/api/advise", content=b"{").status_code == 400
    assert client.post("/api/advise", content=b"").status_code == 400
    assert client.post("/api/advise", content=b"\xff\xfe").status_code == 400
    assert client.post("/api/advise", content=b'{"dice": [1,2,3,4,5], "dice": [1,1,1,1,1]}').status_code == 400
    assert client.post("/api/advise", content=b"[" * 100 + b"]" * 100).status_code == 400
    assert client.post("/api/advise", content=b'{"dice": [1,2,3,4,5], "rolls_left": NaN}').status_code == 400
    assert client.post("/api/advise", json=[1, 2]).status_code == 422
    for body, message in [
        ({"dice": [1, 2, 3, 4, 5], "rules": "monopoly"}, "unknown rule set 'monopoly'; served: penta, kiriki"),
        ({"dice": [1, 2, 3, 4, 5], "rules": "yahtzee"}, "the yahtzee rule set is not served here"),
        ({"dice": [1, 2, 3, 4, 5], "top": 0}, "top must be 1 to"),
        ({"dice": [1, 2, 3, 4, 5], "top": "3"}, "top must be a whole number"),
    ]:
        r = client.post("/api/advise", json=body)
        assert r.status_code == 422 and message in r.json()["error"]
    r = client.get("/api/advise")
    assert r.status_code == 405 and r.json()["error"].startswith("GET is not allowed")
    assert r.headers["allow"] == "POST, OPTIONS"
    assert client.delete("/api/games").status_code == 405
    assert client.post("/api/nothing").status_code == 404 and "error" in client.get("/api/nothing").json()


def test_bodies_over_the_limit_are_refused_before_they_are_read(client):
    big = b'{"dice": [1,2,3,4,5], "sheet": {}, "x": "' + b"a" * ADVISE_LIMIT + b'"}'
    r = client.post("/api/advise", content=big)
    assert r.status_code == 413 and r.json() == {"error": f"the body is larger than {ADVISE_LIMIT:,} bytes"}

    def chunks():  # no Content-Length: counted as it comes
        for _ in range(100):
            yield b" " * 1024

    assert client.post("/api/advise", content=chunks()).status_code == 413
    assert client.post("/api/advise/batch", content=b" " * (LARGE_LIMIT + 1)).status_code == 413
    assert client.post("/api/games", content=b" " * (LARGE_LIMIT + 1)).status_code == 413
    assert client.post("/api/review", content=b" " * (LARGE_LIMIT + 1)).status_code == 413
    r = client.post("/api/advise", content=b"{}", headers={"content-length": str(10**12)})
    assert r.status_code == 413


# Games: the engine's rules behind HTTP.


def new_game(client, **body):
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    assert r.headers["location"] == f"/api/games/{r.json()['id']}"
    return r.json()


def post(client, game, action, body=None, status=200):
    r = client.post(f"/api/games/{game['id']}/{action}", json=body)
    assert r.status_code == status, r.text
    return r.json()


def test_a_game_view_and_its_moves(client, penta_advisor):
    game = new_game(client, players="Ana,cpu", seed=4)
    assert len(game["id"]) == 22 and game["current"] == 0 and game["dice"] is None and game["advice"] is None
    assert game["auto_commit_seconds"] == 3 and not game["coach"] and not game["can_undo"] and game["history"] == 0
    schemas.GameView.model_validate(game)
    first = post(client, game, "roll", {"keep": []})
    dice = first["played"]["rolled"]
    assert first["played"] == {"player": "Ana", "computer": False, "rolled": dice} and first["game"]["dice"] == dice
    situation = penta_advisor.situation(dice, 2)
    assert first["game"]["advice"] == reference(penta_advisor, situation)  # the hints: advise --json
    keep = first["game"]["advice"]["best"]["keep"]
    second = post(client, game, "roll", {"keep": keep})
    assert second["played"]["move"] == ("keep " + " ".join(map(str, keep)) if keep else "roll")
    assert second["played"]["loss"] == 0.0 and second["game"]["rolls_left"] == 1 and second["game"]["history"] == 1
    schemas.MoveOut.model_validate(second)
    scored = post(client, game, "score", {"box": "Chance"})  # names as people type them
    assert scored["played"]["box"] == "chance" and scored["played"]["points"] == sum(scored["played"]["dice"])
    assert scored["game"]["current"] == 1 and scored["game"]["advice"] is None
    assert client.get(f"/api/games/{game['id']}").json() == scored["game"]


def test_refusals_in_a_games_state(client):
    game = new_game(client, players="cpu,Ana", seed=2)
    assert "computer's" in post(client, game, "roll", {"keep": []}, 409)["error"]  # the computer's turn
    assert "computer's" in post(client, game, "score", {"box": "ones"}, 409)["error"]
    assert "computer's" in post(client, game, "auto-commit", None, 409)["error"]
    while client.get(f"/api/games/{game['id']}").json()["current"] == 0:
        post(client, game, "computer")
    assert "a person's" in post(client, game, "computer", None, 409)["error"]  # computer on a person's turn
    assert "no dice to keep" in post(client, game, "roll", {"keep": [1]}, 409)["error"]
    assert post(client, game, "score", {"box": "ones"}, 409)["error"] == "roll the dice first"
    dice = post(client, game, "roll", {"keep": []})["game"]["dice"]
    missing = next(f for f in range(1, 7) if f not in dice)
    assert post(client, game, "roll", {"keep": [missing]}, 409)["error"].startswith(f"cannot keep {missing}")
    assert "last roll" in post(client, game, "auto-commit", {}, 409)["error"]  # before the last roll
    assert "coach games" in post(client, game, "roll", {"keep": [], "dice": [1, 2, 3, 4, 5]}, 422)["error"]
    assert "undo" in post(client, game, "undo", None, 409)["error"]  # outside a coach game
    post(client, game, "roll", {"keep": []})
    last = post(client, game, "roll", {"keep": []})["game"]
    assert last["rolls_left"] == 0
    assert post(client, game, "roll", {"keep": []}, 409)["error"].startswith("no rolls left")
    post(client, game, "score", {"box": next(iter(last["legal"]))})
    while client.get(f"/api/games/{game['id']}").json()["current"] == 0:
        post(client, game, "computer")
    post(client, game, "roll", {"keep": []})
    filled = next(iter(client.get(f"/api/games/{game['id']}").json()["players"][1]["sheet"]))
    assert "already filled" in post(client, game, "score", {"box": filled}, 409)["error"]
    for action, body, message in [
        ("score", {"box": "sevens"}, "unknown box"),
        ("score", {"box": 3}, "box must be"),
        ("score", {}, "missing field 'box'"),
        ("roll", {"keep": [0]}, "a die shows 1 to 6"),
        ("roll", {"keep": "12"}, "keep must be a list"),
        ("roll", {"keep": [], "hold": []}, "unknown field 'hold'"),
        ("roll", [], "must be a JSON object"),
        ("computer", {"x": 1}, "unknown field 'x'"),
    ]:
        assert message in post(client, game, action, body, 422)["error"]


def test_the_auto_commit_fills_the_advisors_box(client, penta_advisor):
    game = new_game(client, players="Ana", seed=9)
    for _ in range(3):
        post(client, game, "roll", {"keep": []})
    view = client.get(f"/api/games/{game['id']}").json()
    best = penta_advisor.best_box(penta_advisor.situation(view["dice"], 0)).box
    played = post(client, game, "auto-commit")["played"]
    assert played["box"] == best and played["auto"] is True
    off = new_game(client, players="Ana", auto_commit=None)
    for _ in range(3):
        post(client, off, "roll", {"keep": []})
    assert post(client, off, "auto-commit", None, 409)["error"] == "the auto-commit is off in this game"


def test_new_game_refusals(client):
    for body, message in [
        ({"players": ""}, "empty player name"),
        ({"players": "Ana,Ana"}, "two players are called 'Ana'"),
        ({"players": ",".join(f"p{i}" for i in range(7))}, "1 to 6 players"),
        ({"players": [{"name": "Ana", "computer": "yes"}]}, "computer must be true or false"),
        ({"players": [{"name": "Ana", "age": 3}]}, "unknown field 'age'"),
        ({"players": [{"name": "\x1b[31mred"}]}, "control character"),
        ({"players": "Ana", "seed": -1}, "seed must be 0 to"),
        ({"players": "Ana", "seed": 1.5}, "seed must be a whole number"),
        ({"players": "Ana", "auto_commit": -3}, "auto-commit time"),
        ({"players": "Ana", "auto_commit": "soon"}, "auto-commit time"),
        ({"players": "Ana", "dice": "loaded"}, 'dice must be "random" or "manual"'),
        ({"players": "Ana,cpu", "dice": "manual"}, "coach game follows real dice"),
        ({"players": "Ana", "rules": "yahtzee"}, "not served here"),
        ({"players": "Ana", "save": {}}, "players: a saved game's players"),
        ({"save": []}, "save must be a saved game"),
        ({"save": {"format": "pentadice-game"}}, "the saved game is damaged"),
        ({"save": {"format": "x"}}, "not a saved pentadice game"),
        ({"colour": "red"}, "unknown field 'colour'"),
    ]:
        r = client.post("/api/games", json=body)
        assert r.status_code == 422 and message in r.json()["error"], (body, r.text)


def test_an_xss_name_stays_data(client):
    name = '<img src=x onerror=alert(1)>&"'
    game = new_game(client, players=[{"name": name}, {"name": "cpu", "computer": True}])
    r = client.get(f"/api/games/{game['id']}")
    assert r.json()["players"][0]["name"] == name  # the same text, read back
    assert b"<" not in r.content and b">" not in r.content  # and never markup, even if sniffed
    assert r.headers["content-type"] == "application/json" and r.headers["x-content-type-options"] == "nosniff"
    assert b"<" not in client.get(f"/api/games/{game['id']}/save").content


def test_coach_games_take_the_dice_and_undo(client, penta_advisor):
    game = new_game(client, players="Ana", dice="manual")
    assert game["coach"] and game["dice"] is None
    assert "coach game" in post(client, game, "roll", {"keep": []}, 422)["error"]
    view = post(client, game, "roll", {"keep": [], "dice": [6, 6, 2, 3, 6]})["game"]
    assert view["dice"] == [2, 3, 6, 6, 6] and view["can_undo"]
    kept = post(client, game, "roll", {"keep": [6, 6, 6], "dice": [6, 6]})
    assert kept["played"]["dice"] == [6] * 5 and kept["played"]["loss"] is not None
    post(client, game, "undo")
    back = client.get(f"/api/games/{game['id']}").json()
    assert back["dice"] == [2, 3, 6, 6, 6] and back["rolls_left"] == 2 and back["history"] == 0
    assert (
        "faces of the 2 dice rolled, not 1"
        in post(client, game, "roll", {"keep": [6, 6, 6], "dice": [1]}, 422)["error"]
    )
    post(client, game, "roll", {"keep": [6, 6, 6], "dice": [6, 6]})
    post(client, game, "score", {"box": "penta"})
    undone = post(client, game, "undo")["game"]
    assert undone["players"][0]["sheet"] == {} and undone["dice"] == [6] * 5
    post(client, game, "undo")
    post(client, game, "undo")
    assert "nothing to undo" in post(client, game, "undo", None, 409)["error"]


def test_coach_rolls_with_the_wrong_number_of_dice_are_422(client):
    """The dice given must be the dice rolled: none, too few or too many is a wrong value (422), not a move
    the game's state refuses (409); a keep the dice do not hold stays 409."""
    game = new_game(client, players="Ana", dice="manual")
    for dice, got in ((None, "none"), ([1, 2, 3, 4], "4"), ([], "0")):
        body = {"keep": []} if dice is None else {"dice": dice}
        assert f"faces of the 5 dice rolled, not {got}" in post(client, game, "roll", body, 422)["error"]
    post(client, game, "roll", {"dice": [1, 2, 3, 4, 5]})
    for keep, dice in (([1, 2], [6, 6]), ([1, 2], [6, 6, 6, 6]), ([1], None)):
        body = {"keep": keep} if dice is None else {"keep": keep, "dice": dice}
        assert "dice rolled, not" in post(client, game, "roll", body, 422)["error"]
    assert "cannot keep 6 6" in post(client, game, "roll", {"keep": [6, 6], "dice": [1, 1, 1]}, 409)["error"]
    assert "keeping all the dice" in post(client, game, "roll", {"keep": [1, 2, 3, 4, 5], "dice": []}, 409)["error"]
    post(client, game, "roll", {"keep": [1, 2], "dice": [1, 1, 1]})
    post(client, game, "roll", {"keep": [1, 1, 1, 1], "dice": [1]})
    assert "no rolls left" in post(client, game, "roll", {"keep": [1], "dice": [1, 1, 1, 1]}, 409)["error"]
    assert client.get(f"/api/games/{game['id']}").json()["dice"] == [1] * 5


def test_head_on_an_api_path_is_its_get_without_the_body(client):
    r = client.head("/api/health")
    assert r.status_code == 200 and r.content == b"" and r.headers["content-type"] == "application/json"
    assert int(r.headers["content-length"]) == len(client.get("/api/health").content)
    game = new_game(client, players="Ana")
    assert client.head(f"/api/games/{game['id']}/save").status_code == 200
    r = client.head("/api/games/nothing-here")
    assert r.status_code == 404 and r.content == b""
    r = client.head("/api/advise")
    assert r.status_code == 405 and r.headers["allow"] == "POST, OPTIONS"
    r = client.post("/api/health")
    assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD, OPTIONS" and "error" in r.json()


def test_a_body_that_does_not_arrive_in_time_is_408(advisors, monkeypatch):
    """A client announcing more than it sends (or trickling it) gets 408, not a request held open for ever."""
    import asyncio

    from pentadice.faces.web import bodies

    monkeypatch.setattr(bodies, "BODY_SECONDS", 0.05)
    app = create_app(advisors)

    async def call(path):
        sent = []
        chunks = [{"type": "http.request", "body": b'{"dice": [1, 2', "more_body": True}]

        async def receive():
            if chunks:
                return chunks.pop()
            await asyncio.Event().wait()  # the rest never comes

        async def send(message):
            sent.append(message)

        headers = [(b"host", b"testserver"), (b"content-length", b"100")]
        scope = {"type": "http", "method": "POST", "path": path, "raw_path": path.encode(), "query_string": b""}
        scope.update(headers=headers, http_version="1.1", scheme="http", server=("testserver", 80), root_path="")
        await app(scope, receive, send)
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        return sent[0]["status"], json.loads(body)

    for path in ("/api/advise", "/api/advise/batch", "/api/games", "/api/review"):
        status, out = asyncio.run(call(path))
        assert status == 408 and "did not arrive" in out["error"], path


def test_requests_from_another_sites_page_are_refused(client):
    """A page elsewhere cannot make the browser create games (pushing a player's game out) or spend the
    server's time: an Origin other than the server's, or Sec-Fetch-Site: cross-site, is 403 but for GET."""
    body = {"players": "Ana"}
    for headers in (
        {"origin": "http://evil.example"},
        {"origin": "http://testserver:8080"},
        {"origin": "null"},
        {"origin": "http://[::1"},
        {"sec-fetch-site": "cross-site"},
    ):
        for path in ("/api/games", "/api/advise", "/api/advise/batch", "/api/review"):
            r = client.post(path, json=body, headers=headers)
            assert r.status_code == 403 and "another site" in r.json()["error"], (path, headers)
            assert r.headers["cache-control"] == "no-store"
    assert client.get("/api/health", headers={"origin": "http://evil.example"}).status_code == 200
    for headers in (
        {},
        {"origin": "http://testserver"},
        {"origin": "http://TestServer:80"},
        {"sec-fetch-site": "same-origin"},
    ):
        assert client.post("/api/games", json=body, headers=headers).status_code == 201, headers


def test_an_allowed_origin_may_call_the_shared_routes_and_no_other(advisors):
    """``serve --allow-origin``: the page of https://my.app may ask for advice, the rule sets and the offline
    app's tables (preflight and answers marked for it, a browser's cross-site headers and all); another origin
    is refused as without the option, and the games stay this page's own."""
    app = create_app(advisors, allowed_origins=["https://my.app"])
    mine = {"origin": "https://my.app", "sec-fetch-site": "cross-site"}
    other = {"origin": "https://evil.example", "sec-fetch-site": "cross-site"}
    ask = {"access-control-request-method": "POST", "access-control-request-headers": "content-type"}
    body = {"dice": [1, 1, 3, 4, 6], "rolls_left": 2}
    with TestClient(app) as c:
        pre = c.options("/api/advise", headers={**mine, **ask})
        assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == "https://my.app"
        assert "POST" in pre.headers["access-control-allow-methods"] and pre.headers["access-control-max-age"]
        r = c.post("/api/advise", json=body, headers=mine)
        assert r.status_code == 200 and r.json()["options"]
        assert r.headers["access-control-allow-origin"] == "https://my.app" and "Origin" in r.headers["vary"]
        batch = c.post("/api/advise/batch", json={"items": [body]}, headers=mine)
        assert batch.status_code == 200 and batch.headers["access-control-allow-origin"] == "https://my.app"
        for path in ("/api/rules", "/app-tables/index.json"):
            got = c.get(path, headers=mine)
            assert got.status_code == 200 and got.headers["access-control-allow-origin"] == "https://my.app", path
        # Another origin: no preflight, no mark on an answer, a POST refused as before.
        assert c.options("/api/advise", headers={**other, **ask}).status_code == 400
        refused = c.post("/api/advise", json=body, headers=other)
        assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers
        assert "access-control-allow-origin" not in c.get("/api/rules", headers=other).headers
        # The allowed origin on a route that is not shared: the games stay this page's.
        games = c.post("/api/games", json={"players": "Ana"}, headers=mine)
        assert games.status_code == 403 and "access-control-allow-origin" not in games.headers
        assert "access-control-allow-origin" not in c.options("/api/games", headers={**mine, **ask}).headers
    with TestClient(create_app(advisors)) as c:  # the default: no origin allowed
        assert c.post("/api/advise", json=body, headers=mine).status_code == 403
        assert "access-control-allow-origin" not in c.options("/api/advise", headers={**mine, **ask}).headers


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ("https://my.app/path", "no path"),
        ("my.app", "give http:// or https://"),
        ("ftp://my.app", "give http:// or https://"),
        ("https://user@my.app", "no path, query or user"),
        ("https://my.app:99999", "is not an origin"),
    ],
)
def test_allow_origin_takes_an_origin_alone(given, words):
    result = CliRunner().invoke(main, ["serve", "--allow-origin", given])
    assert result.exit_code == 2 and "Invalid value for '--allow-origin'" in result.output and words in result.output


def test_a_range_request_for_the_page_gets_the_whole_file(client):
    """Ranges are not served (the files are small): one out of bounds cannot give a non-JSON 416."""
    whole = client.get("/").content
    for value in ("bytes=99999999999-", "bytes=0-10", "bytes=0-1,5-1000000000", "bytes=x"):
        r = client.get("/", headers={"range": value})
        assert r.status_code == 200 and r.content == whole, value


def test_unknown_and_long_idle_games_are_404(advisors, tmp_path):
    """Games are kept in the database, not capped in memory: only an unfinished game idle for longer than the
    policy's days is removed, and an unknown id says what is kept."""
    from datetime import UTC, datetime, timedelta

    from pentadice.storage.database import open_database
    from pentadice.storage.schema import games

    db = open_database(tmp_path / "games.sqlite3")
    app = create_app(advisors, db=db, keep_days=1)
    with TestClient(app) as c:
        ids = [new_game(c, players="Ana")["id"] for _ in range(3)]
        records = app.state.web.store.records  # beyond the former cap of 1,000 games held: none is dropped
        game = records.get(ids[2]).game
        for _ in range(998):
            records.add(game)
        assert c.get(f"/api/games/{ids[0]}").status_code == 200
        with db.begin() as conn:
            old = datetime.now(UTC) - timedelta(days=2)
            conn.execute(games.update().where(games.c.id.in_(ids[:2])).values(updated_at=old))
        assert app.state.web.store.records.expire() == 2
        r = c.post(f"/api/games/{ids[0]}/roll", json={"keep": []})
        assert r.status_code == 404 and "not played for 1 days is removed" in r.json()["error"]
        assert c.get(f"/api/games/{ids[2]}").status_code == 200
        health = c.get("/api/health").json()
        assert health["games"] == 999 and health["finished_games"] == 0 and health["database"] == "sqlite"
        assert c.get("/api/games/nope/save").status_code == 404
        assert c.get("/api/games/" + "x" * 5000).status_code == 404


def _play_through_api(client, players, seed):
    game = new_game(client, players=players, seed=seed, auto_commit=0)
    moves, seen = [], []
    while True:
        view = client.get(f"/api/games/{game['id']}").json()
        if view["over"]:
            return view, moves, seen
        if view["players"][view["current"]]["computer"]:
            played = post(client, game, "computer")["played"]
        elif view["dice"] is None:
            played = post(client, game, "roll", {"keep": []})["played"]
        else:
            best = view["advice"]["best"]
            if best["action"] == "keep":
                played = post(client, game, "roll", {"keep": best["keep"]})["played"]
            else:
                played = post(client, game, "score", {"box": best["box"]})["played"]
        seen.append(played)
        if "move" in played:
            moves.append((played["player"], played["move"]))


@pytest.mark.parametrize(("seed", "totals"), [(1, [246, 240, 264]), (2, [233, 282, 257]), (3, [225, 375, 294])])
def test_the_terminals_seeded_games_played_through_the_api(client, penta_advisor, seed, totals):
    """The games of tests/test_moves_engine.py: the same moves, step for step, and the same totals."""
    g = Game(PENTA, parse_players("Ana,cpu,Bo"), seed=seed, auto_commit_seconds=0.0)
    moves = []
    while not g.over:
        for h in g.advance(penta_advisor, now=0.0):
            if isinstance(h, Played):
                moves.append((h.player, str(h.move)))
        if not g.over:
            played = g.play(penta_advisor.advise(g.situation()).best.move, penta_advisor)
            moves.append((played.player, str(played.move)))
    view, api_moves, _ = _play_through_api(client, "Ana,cpu,Bo", seed)
    assert api_moves == moves
    assert [p["totals"]["total"] for p in view["players"]] == totals
    assert view["winners"] == [p.name for p in g.winners()]


def test_saves_go_between_the_api_and_the_terminal(client, penta_table_dir, tmp_path):
    game = new_game(client, players="Ana,cpu", seed=5)
    post(client, game, "roll", {"keep": []})
    post(client, game, "score", {"box": "chance"})
    saved = client.get(f"/api/games/{game['id']}/save").json()
    assert "rng" not in saved and saved["players"][0]["sheet"]["chance"] > 0
    path = tmp_path / "api.json"
    path.write_text(json.dumps(saved))
    args = ["play", "--resume", str(path), "--data", str(penta_table_dir), "--pause", "0"]
    result = CliRunner().invoke(main, args, input="best\nquit\n")
    assert result.exit_code == 0 and "Resumed" in result.output, result.output
    # A terminal's save goes on in the API: its sheets, its turn.
    path = tmp_path / "terminal.json"
    args = ["play", "--players", "Ana,cpu", "--seed", "3", "--pause", "0", "--save", str(path)]
    CliRunner().invoke(main, [*args, "--data", str(penta_table_dir)], input="best\n" * 6 + "quit\n")
    terminal = json.loads(path.read_text())
    assert "rng" in terminal
    resumed = new_game(client, save=terminal)
    assert [p["sheet"] for p in resumed["players"]] == [p["sheet"] for p in terminal["players"]]
    assert resumed["current"] == terminal["current"] and resumed["history"] == len(terminal.get("history", []))
    again = client.get(f"/api/games/{resumed['id']}/save").json()
    assert "rng" not in again and again["save_path"] is None
    assert new_game(client, save=again, auto_commit=None)["auto_commit_seconds"] is None


def test_review_of_a_game_and_of_a_posted_save(client, penta_advisor):
    from pentadice.players.review import review

    view, _, _ = _play_through_api(client, "Ana,cpu", 7)
    r = client.get(f"/api/games/{view['id']}/review")
    assert r.status_code == 200
    schemas.ReviewOut.model_validate(r.json())
    saved = client.get(f"/api/games/{view['id']}/save").content
    assert client.post("/api/review", content=saved).json() == r.json()
    assert r.json() == review(Game.from_json(saved), penta_advisor).as_dict()
    assert r.json()["players"][0]["total_loss"] == pytest.approx(0.0, abs=1e-9)  # it played the advisor's moves
    assert client.post("/api/review", content=b"{").status_code == 400
    assert client.post("/api/review", json={"format": "x"}).status_code == 422


def test_the_generator_never_reaches_a_client(client):
    _, _, seen = _play_through_api(client, "Ana,cpu", 11)
    game = new_game(client, players="Ana,cpu", seed=1)
    texts = [client.get(f"/api/games/{game['id']}{p}").text for p in ("", "/save", "/review")] + [json.dumps(seen)]
    assert not any(word in t for t in texts for word in ('"rng"', "bit_generator", "PCG64"))


# The server around the API.


def test_health_rules_messages_and_openapi(client):
    from pentadice.support import i18n

    health = client.get("/api/health").json()
    assert health["status"] == "ok" and health["rules"] == ["penta", "kiriki"] and isinstance(health["games"], int)
    assert isinstance(health["finished_games"], int) and "finished games are kept" in health["kept"]
    rs = client.get("/api/rules").json()
    schemas.RulesOut.model_validate(rs)
    kiriki = rs["rules"][1]
    assert kiriki["name"] == "kiriki" and kiriki["boxes"][12] == {"id": "penta", "name": "Kiriki", "section": "lower"}
    for served in rs["rules"]:  # the rules' numbers, so that a page shows only the bonuses a rule set pays
        definition = rules.get_rules(served["name"])
        for key in ("upper_threshold", "upper_bonus", "penta_points", "penta_bonus", "penta_repeat"):
            assert served[key] == getattr(definition, key), (served["name"], key)
        assert served["joker"] == definition.joker.value
    assert client.get("/api/messages?lang=id").json() == {"lang": "id", "messages": i18n.catalogue("id")}
    assert client.get("/api/messages", headers={"accept-language": "id-ID,en;q=0.5"}).json()["lang"] == "id"
    assert client.get("/api/messages?lang=fr").status_code == 422
    spec = client.get("/openapi.json").json()
    for path, method in [
        ("/api/health", "get"), ("/api/rules", "get"), ("/api/advise", "post"), ("/api/advise/batch", "post"),
        ("/api/games", "post"), ("/api/games/{game_id}", "get"), ("/api/games/{game_id}/roll", "post"),
        ("/api/games/{game_id}/score", "post"), ("/api/games/{game_id}/auto-commit", "post"),
        ("/api/games/{game_id}/computer", "post"), ("/api/games/{game_id}/undo", "post"),
        ("/api/games/{game_id}/review", "get"), ("/api/games/{game_id}/save", "get"), ("/api/review", "post"),
        ("/api/messages", "get"), ("/api/games/resume", "post"),
    ]:  # fmt: skip
        assert method in spec["paths"][path], path
    advise = spec["paths"]["/api/advise"]["post"]
    assert advise["requestBody"]["content"]["application/json"]["example"]["dice"] == [1, 1, 3, 4, 6]
    assert {"AdviseIn", "AdviceOut", "GameView", "NewGameIn"} <= set(spec["components"]["schemas"])


def test_the_page_is_served_safely(client, tmp_path):
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert r.headers["content-security-policy"].startswith("default-src 'self'")
    assert r.headers["referrer-policy"] == "no-referrer" and r.headers["x-content-type-options"] == "nosniff"
    for path in ("/../pyproject.toml", "/%2e%2e/api.py", "/..%2fapi.py", "/static/../../cli.py", "/nothing.js"):
        r = client.get(path)
        assert r.status_code == 404 and "def " not in r.text, path
    r = client.post("/")
    assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD" and "error" in r.json()


def test_no_page_folder_still_serves_the_api(advisors, tmp_path):
    with TestClient(create_app(advisors, static_dir=tmp_path / "missing")) as c:
        assert c.get("/").status_code == 404 and c.get("/api/health").status_code == 200
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("a")
    with TestClient(create_app(advisors, static_dir=tmp_path)) as c:
        assert c.get("/sub/").status_code == 404  # no listing of a folder
        assert c.get("/sub/a.txt").text == "a"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=12), inner, max_size=6),
    max_leaves=20,
)
fields = st.sampled_from(["dice", "rolls_left", "sheet", "rules", "top", "items", "players", "seed", "auto_commit",
                          "save", "keep", "box", "format", "current"])  # fmt: skip
bodies = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(fields, json_values, max_size=5).map(lambda v: json.dumps(v).encode()),
)
ENDPOINTS = ["advise", "advise/batch", "games", "review", "games/{id}/roll", "games/{id}/score",
             "games/{id}/auto-commit", "games/{id}/computer", "games/{id}/undo"]  # fmt: skip


@FUZZ
@given(st.sampled_from(ENDPOINTS), bodies, st.sampled_from(["Ana,cpu", "cpu,Ana", "Ana"]))
def test_nothing_a_client_sends_gives_a_500(client, endpoint, body, players):
    game = client.post("/api/games", json={"players": players}).json()
    r = client.post("/api/" + endpoint.replace("{id}", game["id"]), content=body)
    assert r.status_code < 500 and ("error" in r.json()) == (r.status_code >= 400), r.text


@FUZZ
@given(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]), st.text(max_size=40))
def test_any_method_and_path_gives_json_or_the_page(client, method, path):
    r = client.request(method, "/api/" + urllib.parse.quote(path, safe="/"))
    assert r.status_code < 500


actions = st.one_of(
    st.tuples(st.just("roll"), st.fixed_dictionaries({"keep": st.just([]) | st.lists(st.integers(1, 6), max_size=5)})),
    st.tuples(st.just("score"), st.fixed_dictionaries({"box": st.sampled_from(rules.BOX_IDS)})),
    st.tuples(st.sampled_from(["computer", "auto-commit", "undo"]), st.just({})),
)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["Ana,cpu", "cpu,Bo", "Ana,Bo"]), st.integers(0, 5), st.lists(actions, max_size=12))
def test_any_sequence_of_moves_is_answered_by_the_rules(client, players, seed, moves):
    game = new_game(client, players=players, seed=seed)
    for action, body in moves:
        r = client.post(f"/api/games/{game['id']}/{action}", json=body)
        foreign = body.get("box") not in (None, *rules.get_rules("penta").box_ids)  # another sheet's box
        assert r.status_code in ((422,) if foreign else (200, 409)), r.text
        if r.status_code == 200:
            model = schemas.MoveOut if "played" in r.json() else schemas.GameOut
            model.model_validate(r.json())
    view = client.get(f"/api/games/{game['id']}").json()
    assert sum(p["turns"] for p in view["players"]) == sum(len(p["sheet"]) for p in view["players"])


# The command.


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_answers_and_stops_on_ctrl_c(penta_table_dir, tmp_path):
    exe = os.path.join(os.path.dirname(sys.executable), "pentadice")
    port = _free_port()
    args = [exe, "serve", "--port", str(port), "--rules", "penta", "--data", str(penta_table_dir), "--no-prepare"]
    args += ["--db", str(tmp_path / "games.sqlite3")]  # a database of its own: it counts the games
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line, line + proc.stderr.read()
        import httpx

        for _ in range(100):
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=5)
                break
            except httpx.ConnectError:
                time.sleep(0.1)
        assert {k: r.json()[k] for k in ("status", "rules", "games")} == {
            "status": "ok",
            "rules": ["penta"],
            "games": 0,
        }
        # A second server on the same port: a clear error, no traceback.
        busy = subprocess.run(args, capture_output=True, text=True, timeout=60)
        assert busy.returncode == 1 and busy.stderr.startswith("Error: cannot listen on"), busy.stderr
        assert "Traceback" not in busy.stderr
        interrupt(proc)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130 and err.startswith("Interrupted: the server stopped"), err
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()


def test_serve_refuses_a_host_it_cannot_listen_on(penta_table_dir):
    result = CliRunner().invoke(main, ["serve", "--host", "no-such-host.invalid", "--data", str(penta_table_dir)])
    assert result.exit_code == 2 and "cannot listen on 'no-such-host.invalid'" in result.output
    result = CliRunner().invoke(main, ["serve", "--host", "192.0.2.1", "--port", "0", "--data", str(penta_table_dir)])
    assert result.exit_code == 2 and "cannot listen on http://192.0.2.1:0/" in result.output


def test_serve_network_words():
    from pentadice.faces.web import addresses

    assert addresses.is_local("127.0.0.1") and addresses.is_local("::1") and addresses.is_local("localhost")
    assert not addresses.is_local("0.0.0.0") and not addresses.is_local("192.168.1.5")
    assert addresses.url_of("::1", 80) == "http://[::1]:80/"
    assert addresses.network_address("192.168.1.5") == "192.168.1.5"
    assert re.fullmatch(r"[0-9a-f.:]+", addresses.network_address("0.0.0.0"))


def test_a_game_of_a_rule_set_not_served_here_is_refused_in_words(advisors, tmp_path):
    """One database, several servers or `play`: a game whose rule set this server does not serve is named, not
    a 500."""
    from pentadice.game import rules
    from pentadice.players.engine import Game, Player
    from pentadice.storage.database import open_database
    from pentadice.storage.games import GameRecords

    db = open_database(tmp_path / "games.sqlite3")
    game_id = GameRecords(db, Game).add(Game(rules.get_rules("yatzy"), [Player("Ana", False)], seed=1))
    with TestClient(create_app(advisors, db=db)) as c:
        for path in ("", "/review", "/save", "/chances"):
            r = c.get(f"/api/games/{game_id}{path}")
            assert r.status_code == 422 and "the yatzy rule set is not served here" in r.json()["error"], path
        r = c.post(f"/api/games/{game_id}/roll", json={"keep": []})
        assert r.status_code == 422 and "pentadice serve --rules yatzy" in r.json()["error"]


def test_a_games_advice_by_the_compiled_path_is_the_commands(advisors):
    """The advice in a game's view comes from the compiled path once it is ready: the same bytes as the object
    path's (`advise --json`), on every moment of whole games of each rule set served."""
    import json

    from pentadice.faces.web.advising import AdviceCache, advice_object, quick_of
    from pentadice.players.engine import Game, Player, computer_move

    for advisor in advisors.values():
        quick_of(advisor)
        cache, seen = AdviceCache(), 0
        for seed in range(4):
            game = Game(advisor.rules, [Player("x", True)], seed=seed, auto_commit_seconds=None)
            while not game.over:
                if game.dice is None:
                    game.start_turn()
                    continue
                situation = game.situation()
                assert cache.get(advisor, situation) == json.dumps(advice_object(advisor, situation)).encode()
                seen += 1
                computer_move(game, advisor)
        assert seen >= 4 * 26, advisor.rules.name


def test_a_move_sent_twice_with_its_view_s_version_is_played_once(advisors, tmp_path):
    """Two servers on one database (two worker processes), the same move sent to each with the version of the
    view it was played from: one plays it, the other is refused with 409, whatever the move (a roll would
    otherwise roll twice)."""
    from pentadice.storage.database import open_database

    db = open_database(tmp_path / "games.sqlite3")
    with TestClient(create_app(advisors, db=db)) as one, TestClient(create_app(advisors, db=db)) as two:
        view = new_game(one, players="Ana", seed=4)
        game_id, version = view["id"], view["version"]
        first = one.post(f"/api/games/{game_id}/roll", json={"keep": [], "version": version})
        assert first.status_code == 200 and first.json()["game"]["version"] == version + 1
        again = two.post(f"/api/games/{game_id}/roll", json={"keep": [], "version": version})
        assert again.status_code == 409 and "has moved on" in again.json()["error"]
        now = first.json()["game"]
        keep = now["dice"][:2]
        rolled = two.post(f"/api/games/{game_id}/roll", json={"keep": keep, "version": now["version"]})
        assert rolled.status_code == 200  # the other process reads the move made through the first
        stale = one.post(f"/api/games/{game_id}/roll", json={"keep": keep, "version": now["version"]})
        assert stale.status_code == 409
        assert one.get(f"/api/games/{game_id}").json()["rolls_left"] == rolled.json()["game"]["rolls_left"]
        for bad in (-1, "1", True, 2**40):
            r = one.post(f"/api/games/{game_id}/computer", json={"version": bad})
            assert r.status_code == 422 and "version" in r.json()["error"]


def test_a_move_with_a_version_the_game_never_had_says_so(client):
    """A version ahead of the game's (a client counting on its own, a view of another game) is not "moved on"."""
    view = new_game(client, players="Ana", seed=4)
    ahead = client.post(f"/api/games/{view['id']}/roll", json={"keep": [], "version": view["version"] + 5})
    message = ahead.json()["error"]
    assert ahead.status_code == 409 and "has moved on" not in message
    assert f"version {view['version'] + 5}, but this game is at version {view['version']}" in message
    assert client.get(f"/api/games/{view['id']}").json()["version"] == view["version"]  # nothing played


def test_ids_and_names_a_database_cannot_hold_are_not_found(client):
    """A NUL or a character no id has: 404 or 422 in words, never a database error."""
    assert client.get("/api/games/abc%00def").status_code == 404
    assert client.get("/api/games/abc.def").status_code == 404
    assert client.get("/api/players/An%00a").status_code == 422
    assert client.get("/api/history", params={"player": "An\x00a"}).status_code == 422


def test_a_full_disk_is_507_and_a_lost_database_503_nothing_written(advisors, tmp_path, monkeypatch):
    """The database's failures reach the client as JSON errors with a Retry-After, the game as before the move
    (the real full disk and outages: tests/test_storage_server.py)."""
    from pentadice.storage import games as kept
    from pentadice.storage.database import Full, Unreachable, open_database

    db = open_database(tmp_path / "games.sqlite3")
    with TestClient(create_app(advisors, db=db)) as c:
        view = new_game(c, players="Ana", seed=3)
        real = kept.GameRecords.commit
        for error, status in ((Full("the disk is full"), 507), (Unreachable("cannot be reached"), 503)):

            def failing(self, held, finished=(), reopened=False, error=error):
                raise error

            monkeypatch.setattr(kept.GameRecords, "commit", failing)
            r = c.post(f"/api/games/{view['id']}/roll", json={"keep": []})
            assert r.status_code == status and r.json()["error"] == error.message and r.headers["retry-after"]
            monkeypatch.setattr(kept.GameRecords, "commit", real)
            assert c.get(f"/api/games/{view['id']}").json()["dice"] is None  # the game as before the move
