"""The games database (pentadice/storage), in process: a schema 1 database migrated to the newest with its games
going on and its old results still counted, a database newer than the program (or no database at all) refused
in words, a move written only over the version it was played on, idle unfinished games removed and finished ones
kept, a coach game's undo kept with it, and a whole game played through the API read back as history and
statistics. What makes sense on both runs on SQLite and on a real PostgreSQL (tests/postgres.py)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from commands import one_line, pentadice
from fastapi.testclient import TestClient

from pentadice.faces.web.api import create_app
from pentadice.game import rules
from pentadice.game.moves import Keep
from pentadice.players.engine import Game, parse_players
from pentadice.players.review import review
from pentadice.storage import database, history
from pentadice.storage.database import StorageError, TooNew, Unreachable, open_database
from pentadice.storage.games import GameRecords, results_of
from pentadice.storage.schema import games

PENTA = rules.get_rules("penta")
BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def where(request, tmp_path):
    """Where a fresh games database is: a SQLite file's path, or a PostgreSQL database's URL."""
    if request.param == "sqlite":
        return str(tmp_path / "games.sqlite3")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def db(where):
    opened = open_database(where)
    yield opened
    opened.close()


def bare(where: str) -> database.Database:
    """The database at ``where`` as it is, no schema made or checked (what an older pentadice would open)."""
    url = sa.make_url(database.locate(where))
    if url.get_backend_name() == "sqlite":
        return database.Database(database._sqlite_engine(url))
    return database.Database(sa.create_engine(url))


def played_game(advisor, players="Ana", seed=1, steps=None, coach=False) -> Game:
    """A game of Penta played with the advisor's moves: ``steps`` of them, or to its end."""
    game = Game(PENTA, parse_players(players), seed=seed, auto_commit_seconds=None, coach=coach)
    done = 0
    while not game.over and (steps is None or done < steps):
        game.advance(advisor, now=0.0)
        if game.over:
            break
        if game.dice is None:
            game.start_turn()
        else:
            game.play(advisor.advise(game.situation()).best.move, advisor)
        done += 1
    return game


# Migrations.

GAMES_1 = sa.Table(  # the games table as schema 1 made it (migrations/versions/0001_games.py)
    "games",
    sa.MetaData(),
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("rules", sa.String(40)),
    sa.Column("created_at", sa.DateTime(timezone=True)),
    sa.Column("updated_at", sa.DateTime(timezone=True)),
    sa.Column("finished_at", sa.DateTime(timezone=True)),
    sa.Column("version", sa.Integer),
    sa.Column("coach", sa.Boolean),
    sa.Column("source", sa.String(16)),
    sa.Column("save", sa.Text),
)
RESULTS_1 = sa.Table(
    "results",
    sa.MetaData(),
    sa.Column("game_id", sa.String(32), primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(64)),
    sa.Column("computer", sa.Boolean),
    sa.Column("strategy", sa.String(16)),
    sa.Column("rules", sa.String(40)),
    sa.Column("finished_at", sa.DateTime(timezone=True)),
    sa.Column("score", sa.Integer),
    sa.Column("winner", sa.Boolean),
)


def test_a_schema_1_database_is_migrated_and_its_games_go_on(where, penta_advisor):
    old = bare(where)
    try:
        database.upgrade(old, to="0001")
        assert database.current_version(old) == "0001"
        going = played_game(penta_advisor, steps=7, seed=3)
        ended = played_game(penta_advisor, seed=4)
        then = datetime.now(UTC) - timedelta(days=3)
        score = ended.players[0].sheet.score(PENTA)
        with old.begin() as conn:
            for game_id, game in (("going-on", going), ("ended", ended)):
                conn.execute(
                    GAMES_1.insert().values(
                        id=game_id, rules="penta", created_at=then, updated_at=then, version=7, coach=False,
                        source="terminal", save=game.to_json(), finished_at=then if game.over else None,
                    )
                )  # fmt: skip
            conn.execute(
                RESULTS_1.insert().values(
                    game_id="ended", seat=0, name="Ana", computer=False, strategy=None, rules="penta",
                    finished_at=then, score=score, winner=True,
                )
            )  # fmt: skip
    finally:
        old.close()

    db = open_database(where)
    try:
        assert database.current_version(db) == database.head()
        records = GameRecords(db, Game)
        held = records.get("going-on")
        assert held.game.to_json() == going.to_json() and held.version == 7 and not held.finished
        assert not held.game.can_undo
        for _ in range(3):  # play goes on
            if held.game.dice is None:
                held.game.start_turn()
            else:
                held.game.play(penta_advisor.advise(held.game.situation()).best.move, penta_advisor)
            assert records.commit(held)
        assert GameRecords(db, Game).get("going-on").version == 10
        assert records.count() == {"unfinished": 1, "finished": 1}

        # The old result keeps its score, without a review: counted in the games and scores, not the mean loss.
        found = history.finished_games(db)
        assert found["total"] == 1
        (shown,) = found["games"]
        assert shown["id"] == "ended" and shown["winners"] == ["Ana"] and shown["source"] == "terminal"
        assert shown["players"] == [
            {"name": "Ana", "computer": False, "strategy": None, "score": score, "winner": True,
             "decisions": None, "mean_loss": None}
        ]  # fmt: skip
        (ana,) = history.player_stats(db, "Ana")
        assert (ana["games"], ana["wins"], ana["best_score"], ana["decisions"]) == (1, 1, score, 0)
        assert ana["mean_score"] == score and ana["mean_loss"] is None and not ana["expert"]

        # A game finished now, reviewed, counts in the mean loss alongside the old one.
        now_ended = played_game(penta_advisor, seed=5)
        reviewed = review(now_ended, penta_advisor)
        records.add(now_ended, "terminal", results_of(now_ended, reviewed))
        (ana,) = history.player_stats(db, "Ana")
        decisions = len(reviewed.players[0].decisions)
        assert ana["games"] == 2 and ana["decisions"] == decisions > 0
        assert ana["mean_loss"] == pytest.approx(0.0, abs=1e-9) and ana["expert"]
        series = history.player_series(db, "Ana")
        assert series[0]["id"] == "ended" and series[0]["decisions"] is None
        assert series[1]["decisions"] == decisions
    finally:
        db.close()


GAMES_2 = sa.Table(  # the games table as schema 2 made it (migrations/versions/0002_review_and_undo.py)
    "games",
    sa.MetaData(),
    *(sa.Column(c.name, c.type, primary_key=c.primary_key) for c in GAMES_1.columns),
    sa.Column("undo", sa.Text),
)


def test_a_schema_2_database_is_migrated_and_its_games_go_on_unshared(where, penta_advisor):
    old = bare(where)
    try:
        database.upgrade(old, to="0002")
        going = played_game(penta_advisor, players="Ana,Bo", steps=5, seed=3)
        then = datetime.now(UTC) - timedelta(days=1)
        with old.begin() as conn:
            conn.execute(
                GAMES_2.insert().values(
                    id="going-on", rules="penta", created_at=then, updated_at=then, version=5, coach=False,
                    source="web", save=going.to_json(), finished_at=None, undo=None,
                )
            )  # fmt: skip
    finally:
        old.close()

    db = open_database(where)
    try:
        assert database.current_version(db) == database.head() == "0004"
        records = GameRecords(db, Game)
        held = records.get("going-on")
        assert held.game.to_json() == going.to_json() and held.version == 5 and held.seats is None
        held.game.advance(penta_advisor, now=0.0)
        if held.game.dice is None:
            held.game.start_turn()
        assert records.commit(held)
        assert records.versions(["going-on", "no-such-game"]) == {"going-on": (6, False)}

        # A shared game made now keeps its seats' digests, read back by another process (a fresh cache).
        seats = {0: "a" * 64, 1: "b" * 64}
        shared_id = records.add(played_game(penta_advisor, players="Ana,Bo", steps=0), "web", seats=seats)
        assert GameRecords(db, Game).get(shared_id).seats == seats
        assert GameRecords(db, Game).get("going-on").seats is None
    finally:
        db.close()


def _contents(path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return list(conn.iterdump())


def _serve_says(*args: str) -> subprocess.CompletedProcess:
    return pentadice("serve", "--no-prepare", "--port", "0", *args)


def test_a_database_newer_than_the_program_is_refused(tmp_path):
    path = tmp_path / "newer.sqlite3"
    db = open_database(path)
    GameRecords(db, Game).add(Game(PENTA, parse_players("Ana")))
    with db.begin() as conn:
        conn.execute(sa.text("update alembic_version set version_num = '9999'"))
    db.close()
    before = _contents(path)
    with pytest.raises(TooNew) as e:
        open_database(path)
    assert "9999" in e.value.message and "newer" in e.value.message and "nothing was changed" in e.value.message
    with pytest.raises(TooNew):
        open_database(path, migrate=False)
    assert _contents(path) == before
    one_line(_serve_says("--db", str(path)), "newer", str(path))
    one_line(pentadice("history", "--db", str(path)), "newer", str(path))
    assert _contents(path) == before


def test_what_is_no_games_database_is_refused_in_words(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("my dice notes\n" * 100)
    with pytest.raises(Unreachable) as e:
        open_database(text)
    assert "not a games database" in e.value.message
    assert text.read_text() == "my dice notes\n" * 100
    with pytest.raises(Unreachable) as e:
        open_database(tmp_path)
    assert "not a regular file" in e.value.message
    with pytest.raises(Unreachable) as e:
        open_database("mysql://somewhere/games")
    assert "unsupported database" in e.value.message
    one_line(_serve_says("--db", str(text)), "not a games database")
    one_line(_serve_says("--db", str(tmp_path)), "not a regular file")
    one_line(pentadice("history", "--db", str(text)), "not a games database")
    one_line(pentadice("history", "--db", str(tmp_path)), "not a regular file")
    assert text.read_text() == "my dice notes\n" * 100


# The games' records.


def test_a_move_over_a_stale_version_is_not_written(db, penta_advisor):
    mine, theirs = GameRecords(db, Game), GameRecords(db, Game)  # two server processes, say
    game_id = mine.add(Game(PENTA, parse_players("Ana,Bo"), seed=8))
    first, second = mine.get(game_id), theirs.get(game_id)
    assert first.game is not second.game and first.version == second.version == 0
    first.game.start_turn()
    second.game.start_turn()
    second.game.play(Keep(()), penta_advisor)
    assert theirs.commit(second)
    written = second.game.to_json()
    assert not mine.commit(first)  # read at version 0, written over by the other
    assert mine.get(game_id).game.to_json() == written and mine.get(game_id).version == 1
    with db.begin() as conn:
        row = conn.execute(sa.select(games.c.version, games.c.save).where(games.c.id == game_id)).one()
    assert (row.version, row.save) == (1, written)
    again = mine.get(game_id)  # read again, the move played on the game as it is
    again.game.play(Keep(()), penta_advisor)
    assert mine.commit(again) and theirs.get(game_id).version == 2
    assert not theirs.commit(second)  # its copy is stale now
    assert theirs.get(game_id).game.to_json() == again.game.to_json()


def test_expire_removes_only_the_long_idle_unfinished_games(db, penta_advisor):
    records = GameRecords(db, Game, keep_days=2)
    fresh = records.add(Game(PENTA, parse_players("Ana")))
    idle = records.add(Game(PENTA, parse_players("Bo")))
    nearly = records.add(Game(PENTA, parse_players("Cy")))
    ended = played_game(penta_advisor, "Di", seed=2)
    old_finished = records.add(ended, "terminal", results_of(ended))
    now = datetime.now(UTC)
    with db.begin() as conn:
        for game_id, days in ((idle, 3), (nearly, 1.5), (old_finished, 400)):
            when = now - timedelta(days=days)
            finished = {"finished_at": when, "created_at": when} if game_id == old_finished else {}
            conn.execute(games.update().where(games.c.id == game_id).values(updated_at=when, **finished))
    assert records.expire() == 1
    assert records.get(idle) is None
    assert all(records.get(g) is not None for g in (fresh, nearly, old_finished))
    assert records.count() == {"unfinished": 2, "finished": 1}
    assert records.expire() == 0
    assert history.finished_games(db)["games"][0]["id"] == old_finished


def test_a_coach_games_undo_survives_another_process(db, penta_advisor):
    records = GameRecords(db, Game)
    game = Game(PENTA, parse_players("Ana"), coach=True)
    game_id = records.add(game)
    held = records.get(game_id)
    held.game.start_turn([6, 6, 2, 3, 6])
    assert records.commit(held)
    held.game.play(Keep((6, 6, 6)), penta_advisor, rolled=[6, 6])
    assert records.commit(held)
    other = GameRecords(db, Game).get(game_id)  # nothing in memory: all from the database
    assert other.game.can_undo and other.game.dice == (6, 6, 6, 6, 6)
    other.game.undo()
    assert other.game.dice == (2, 3, 6, 6, 6) and other.game.rolls_left == 2 and not other.game.history
    assert GameRecords(db, Game).commit(other)
    third = GameRecords(db, Game).get(game_id)
    assert third.game.dice == (2, 3, 6, 6, 6) and third.game.can_undo
    third.game.undo()
    assert third.game.dice is None and not third.game.can_undo
    assert records.commit(third)
    assert not records.get(game_id).game.can_undo


def test_a_closed_database_fails_in_words(tmp_path):
    path = tmp_path / "games.sqlite3"
    db = open_database(path)
    records = GameRecords(db, Game)
    game_id = records.add(Game(PENTA, parse_players("Ana")))
    db.close()
    path.unlink()
    (tmp_path / "games.sqlite3-wal").unlink(missing_ok=True)
    path.mkdir()  # the file replaced by a folder: nothing can open it
    with pytest.raises(StorageError) as e:
        records.get(game_id)
    assert str(path) in e.value.message and e.value.status == 503


# A whole game through the API, read back as history and statistics.


def _play(client, players, seed):
    r = client.post("/api/games", json={"players": players, "seed": seed, "auto_commit": 0})
    assert r.status_code == 201, r.text
    game_id = r.json()["id"]
    while True:
        view = client.get(f"/api/games/{game_id}").json()
        if view["over"]:
            return view
        if view["players"][view["current"]]["computer"]:
            action, body = "computer", None
        elif view["dice"] is None:
            action, body = "roll", {"keep": []}
        elif view["advice"]["best"]["action"] == "keep":
            action, body = "roll", {"keep": view["advice"]["best"]["keep"]}
        else:
            action, body = "score", {"box": view["advice"]["best"]["box"]}
        r = client.post(f"/api/games/{game_id}/{action}", json=body)
        assert r.status_code == 200, r.text


def test_a_game_played_through_the_api_is_in_the_history(where, penta_advisor):
    db = open_database(where)
    with TestClient(create_app({"penta": penta_advisor}, db=db, keep_days=5)) as client:
        assert client.get("/api/history").json()["games"] == []
        assert client.get("/api/players/Ana").status_code == 404
        view = _play(client, "Ana,cpu", 11)
        game_id = view["id"]
        totals = {p["name"]: p["totals"]["total"] for p in view["players"]}
        rev = client.get(f"/api/games/{game_id}/review")
        assert rev.status_code == 200
        decisions = {p["name"]: p["decisions"] for p in rev.json()["players"]}
        assert all(n > 0 for n in decisions.values())

        found = client.get("/api/history").json()
        assert found["total"] == 1 and found["expert_mean_loss"] == history.EXPERT_MEAN_LOSS
        (shown,) = found["games"]
        assert shown["id"] == game_id and shown["rules"] == "penta" and shown["source"] == "web"
        assert shown["winners"] == view["winners"] and shown["finished"].endswith("Z")
        for p in shown["players"]:
            assert p["score"] == totals[p["name"]] and p["decisions"] == decisions[p["name"]]
            assert p["mean_loss"] == pytest.approx(0.0, abs=1e-9)  # the advisor's moves, both
            assert p["winner"] == (p["name"] in view["winners"])
        assert client.get("/api/history", params={"player": "Ana"}).json()["total"] == 1
        assert client.get("/api/history", params={"player": "Zed"}).json()["total"] == 0

        stats = {s["name"]: s for s in client.get("/api/players").json()["players"]}
        assert set(stats) == {"Ana", "cpu"} and stats["cpu"]["computer"] and not stats["Ana"]["computer"]
        for name, s in stats.items():
            assert (s["games"], s["best_score"], s["decisions"]) == (1, totals[name], decisions[name])
            assert s["wins"] == (name in view["winners"]) and s["expert"] and s["rules"] == "penta"
        one = client.get("/api/players/Ana").json()
        assert one["stats"] == [stats["Ana"]]
        assert [(g["id"], g["score"], g["decisions"]) for g in one["games"]] == [
            (game_id, totals["Ana"], decisions["Ana"])
        ]
        assert client.get("/api/health").json()["finished_games"] == 1
        # The finished game is read back from the database by another server on it.
    with TestClient(create_app({"penta": penta_advisor}, db=open_database(where))) as other:
        assert other.get(f"/api/games/{game_id}/review").json() == rev.json()
        assert other.get(f"/api/games/{game_id}").json()["over"]
        r = other.post(f"/api/games/{game_id}/roll", json={"keep": []})
        assert r.status_code == 409 and "over" in r.json()["error"]
        assert other.get("/api/history").json()["games"] == found["games"]
    db.close()


def test_the_api_undoes_a_coach_step_made_through_another_server(where, penta_advisor):
    one = TestClient(create_app({"penta": penta_advisor}, db=open_database(where)))
    two = TestClient(create_app({"penta": penta_advisor}, db=open_database(where)))
    with one, two:
        game_id = one.post("/api/games", json={"players": "Ana", "dice": "manual"}).json()["id"]
        assert one.post(f"/api/games/{game_id}/roll", json={"dice": [1, 2, 3, 4, 5]}).status_code == 200
        r = two.post(f"/api/games/{game_id}/roll", json={"keep": [1, 2], "dice": [6, 6, 6]})
        assert r.status_code == 200 and r.json()["game"]["can_undo"]
        undone = one.post(f"/api/games/{game_id}/undo")
        assert undone.status_code == 200, undone.text
        assert undone.json()["game"]["dice"] == [1, 2, 3, 4, 5]
        assert two.get(f"/api/games/{game_id}").json() == one.get(f"/api/games/{game_id}").json()
        saved = json.loads(two.get(f"/api/games/{game_id}/save").content)
        assert saved["players"][0]["sheet"] == {}


def test_a_move_on_a_read_only_database_is_refused_as_such(tmp_path):
    path = tmp_path / "games.sqlite3"
    db = open_database(path)
    game_id = GameRecords(db, Game).add(Game(PENTA, parse_players("Ana"), seed=1))
    db.close()
    before = _contents(path)
    readonly = open_database(f"sqlite:///file:{path}?mode=ro&uri=true")  # opened so: every write refused
    try:
        records = GameRecords(readonly, Game)
        held = records.get(game_id)
        held.game.start_turn()
        with pytest.raises(database.ReadOnly) as e:
            records.commit(held)
        assert "read-only" in e.value.message and e.value.status == 503
        assert records.get(game_id).game.dice is None  # read again, as the database has it
    finally:
        readonly.close()
    assert _contents(path) == before


def test_a_coach_games_last_box_undone_takes_its_result_back(where, penta_advisor):
    """A coach game's last box entered wrong: the result it wrote leaves the history with the undo, and the
    right box writes the game's result once; a finished save posted again is not counted again."""
    with TestClient(create_app({"penta": penta_advisor}, db=open_database(where))) as c:
        game_id = c.post("/api/games", json={"players": "Ana", "dice": "manual"}).json()["id"]
        view = None
        for _ in range(13):
            view = c.post(f"/api/games/{game_id}/roll", json={"dice": [2, 2, 3, 3, 3]}).json()["game"]
            box = next(iter(view["legal"]))
            view = c.post(f"/api/games/{game_id}/score", json={"box": box}).json()["game"]
        assert view["over"]
        first = c.get("/api/history").json()
        assert first["total"] == 1 and first["games"][0]["players"][0]["score"] == view["players"][0]["totals"]["total"]
        undone = c.post(f"/api/games/{game_id}/undo").json()["game"]
        assert not undone["over"] and c.get("/api/history").json()["total"] == 0
        legal = undone["legal"]
        other = sorted(legal, key=lambda b: -legal[b])[0]
        again = c.post(f"/api/games/{game_id}/score", json={"box": other}).json()["game"]
        history = c.get("/api/history").json()
        assert again["over"] and history["total"] == 1
        assert history["games"][0]["players"][0]["score"] == again["players"][0]["totals"]["total"]
        save = json.loads(c.get(f"/api/games/{game_id}/save").content)
        assert c.post("/api/games", json={"save": save}).status_code == 201
        assert c.get("/api/history").json()["total"] == 1  # a finished save posted: not counted again
