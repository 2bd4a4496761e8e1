"""A game whose record in the games database is damaged (its save, undo steps or seats changed on disk so that
they cannot be decoded): every read and move of it answers 500 with a JSON error saying the record is damaged,
logged once without a traceback; the other games are served as before. The record is damaged in a real SQLite
file, under an application reading it."""

from __future__ import annotations

import logging
import sqlite3

import pytest
from fastapi.testclient import TestClient

from pentadice.faces.web.api import create_app
from pentadice.storage.database import open_database

DAMAGE = {
    "seats": "{not json",
    "undo": "[{",
    "save": '{"format": "pentadice-game"}',
}


@pytest.fixture
def served(penta_advisor, tmp_path):
    path = tmp_path / "games.sqlite3"
    db = open_database(path)
    with TestClient(create_app({"penta": penta_advisor}, db=db)) as client:
        yield client, path
    db.close()


@pytest.mark.parametrize("column", DAMAGE)
def test_a_damaged_game_answers_that_its_record_is_damaged_and_the_others_play_on(served, column, caplog):
    client, path = served
    shared = column == "seats"
    body = {"players": "Ana,Bo", "shared": True} if shared else {"players": "Ana", "dice": "manual"}
    damaged = client.post("/api/games", json=body).json()["id"]
    other = client.post("/api/games", json={"players": "Ana,cpu", "seed": 3}).json()["id"]
    if column == "undo":
        assert client.post(f"/api/games/{damaged}/roll", json={"dice": [1, 2, 3, 4, 5]}).status_code == 200
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE games SET {column} = ?, version = version + 1 WHERE id = ?", (DAMAGE[column], damaged))
    caplog.set_level(logging.INFO, logger="pentadice")
    for _ in range(2):
        for method, path_ in [
            ("GET", ""),
            ("GET", "/chances"),
            ("GET", "/review"),
            ("GET", "/save"),
            ("GET", "/events"),
            ("POST", "/roll"),
            ("POST", "/score"),
            ("POST", "/undo"),
        ]:
            json_body = {"box": "chance"} if path_ == "/score" else {} if method == "POST" else None
            r = client.request(method, f"/api/games/{damaged}{path_}", json=json_body)
            assert r.status_code == 500, (path_, r.text)
            assert r.headers["content-type"] == "application/json"
            assert "is damaged" in r.json()["error"] and r.json()["damaged"] is True
            assert "internal error" not in r.text
    said = [rec for rec in caplog.records if "damaged" in rec.getMessage()]
    assert len(said) == 1 and damaged in said[0].getMessage()
    assert all(rec.exc_info is None for rec in caplog.records)
    assert not [rec for rec in caplog.records if "internal error" in rec.getMessage()]
    assert client.get(f"/api/games/{other}").status_code == 200
    assert client.post(f"/api/games/{other}/roll", json={"keep": []}).status_code == 200
    assert client.get("/api/health").status_code == 200


def test_the_damaged_status_is_documented_on_every_route_of_a_game(served):
    client, _ = served
    paths = client.get("/openapi.json").json()["paths"]
    games = [p for p in paths if p.startswith("/api/games/{game_id}")]
    assert len(games) >= 8
    for p in games:
        for method, operation in paths[p].items():
            doc = operation["responses"].get("500")
            assert doc is not None, (method, p)
            assert "damaged" in doc["description"]


def test_a_bug_met_in_a_real_server_is_logged_once_with_its_traceback(penta_table_dir, tmp_path):
    """A bug met while a move is played (planted: the game's roll raises) answers 500 "internal error", and the
    server's log holds the traceback once (uvicorn does not log it again); the server serves on."""
    import http.client
    import json
    import sys

    import serving

    planted = (
        "import sys\n"
        "from pentadice.players import engine\n"
        "def roll(self, *args, **kwargs):\n"
        "    raise RuntimeError('a planted bug')\n"
        "engine.Game.roll = roll\n"
        "from pentadice.faces.cli import entry\n"
        "sys.argv[0] = 'pentadice'\n"
        "entry()\n"
    )
    port, path, log = serving.free_port(), tmp_path / "games.sqlite3", tmp_path / "serve.log"
    command = serving.quiet_serve(port, penta_table_dir, "--db", str(path))
    command = [sys.executable, "-c", planted, *command[command.index("serve") :]]
    with serving.started(command, port, log):

        def post(where: str, body: dict) -> tuple[int, dict]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                conn.request("POST", where, json.dumps(body), {"content-type": "application/json"})
                r = conn.getresponse()
                return r.status, json.loads(r.read())
            finally:
                conn.close()

        game = post("/api/games", {"players": "Ana,cpu", "seed": 3})[1]["id"]
        status, body = post(f"/api/games/{game}/roll", {"keep": []})
        assert (status, body) == (500, {"error": "internal error"})
        assert post("/api/games", {"players": "Bo,cpu"})[0] == 201
    text = log.read_text()
    assert text.count("Traceback") == 1 and "Exception in ASGI application" not in text, text


def test_a_game_of_house_rules_not_given_is_not_called_damaged(served):
    """A game kept by a server started with a house-rules file, read by one started without it: 422 naming the
    rule set and the option that serves it, not a damaged record; the other games play on."""
    client, path = served
    kept = client.post("/api/games", json={"players": "Ana", "dice": "manual"}).json()["id"]
    other = client.post("/api/games", json={"players": "Ana,cpu", "seed": 3}).json()["id"]
    with sqlite3.connect(path) as conn:
        (save,) = conn.execute("SELECT save FROM games WHERE id = ?", (kept,)).fetchone()
        house = save.replace('"rules": "penta"', '"rules": "our-house"')
        assert house != save
        conn.execute("UPDATE games SET save = ?, version = version + 1 WHERE id = ?", (house, kept))
    r = client.get(f"/api/games/{kept}")
    assert r.status_code == 422 and "'our-house'" in r.json()["error"] and "--rules FILE" in r.json()["error"]
    assert "damaged" not in r.json()
    assert client.get(f"/api/games/{other}").status_code == 200
