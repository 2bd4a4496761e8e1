"""The games database under damage and careless operation: a stored game whose save, undo steps or seats are
damaged is a DamagedGame naming the game and the part (never a JSON error, never the stored text); a schema
that claims the newest version with the wrong tables, an alembic_version of two rows or of a forged line is
refused at start-up in one line that names a schema problem; `pentadice backup` copies the games a plain copy
misses (they sit in the WAL file) and replaces nothing but a previous backup; servers sharing a database with
different --keep-days never remove each other's games early. Real SQLite files (and a real PostgreSQL where
the behaviour is the backend's)."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from commands import one_line, pentadice

from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.players.engine import Game, parse_players
from pentadice.storage import database
from pentadice.storage.database import NotGames, open_database
from pentadice.storage.games import DamagedGame, GameRecords
from pentadice.storage.schema import expiry, games

PENTA = rules.get_rules("penta")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# A damaged game.


@pytest.mark.parametrize(
    "column, value",
    [
        ("save", '{"format": "pentadice-game"}'),
        ("save", "\x00garbage"),
        ("undo", "[{"),
        ("undo", '{"not": "a list"}'),
        ("undo", '[{"players": 3}]'),
        ("seats", "{not json"),
        ("seats", '["a", "b"]'),
        ("seats", '{"x": "hash"}'),
        ("seats", '{"0": 5}'),
    ],
)
def test_a_damaged_record_is_a_damaged_game_naming_the_part_and_the_others_are_read(tmp_path, column, value):
    db = open_database(tmp_path / "games.sqlite3")
    try:
        records = GameRecords(db, Game)
        game = Game(PENTA, parse_players("Ana,Bo"), seed=1, coach=column == "undo", auto_commit_seconds=None)
        damaged = records.add(game, seats={0: "a" * 64, 1: "b" * 64} if column == "seats" else None)
        other = records.add(Game(PENTA, parse_players("Cy"), seed=2))
        with db.begin(write=True) as conn:
            conn.execute(games.update().where(games.c.id == damaged).values(**{column: value, "version": 1}))
        for reader in (records, GameRecords(db, Game)):  # the cached copy is stale: read again; a fresh process
            with pytest.raises(DamagedGame) as e:
                reader.get(damaged)
            assert e.value.args == (damaged, column) and e.value.what == column and e.value.game_id == damaged
            assert str(e.value) == f"game {damaged}'s record is damaged ({column}): it cannot be read back"
            assert value not in str(e.value)
            assert reader.get(other).game.players[0].name == "Cy"
    finally:
        db.close()


def test_a_save_that_is_not_utf8_is_a_damaged_game(tmp_path):
    path = tmp_path / "games.sqlite3"
    db = open_database(path)
    try:
        records = GameRecords(db, Game)
        damaged = records.add(Game(PENTA, parse_players("Ana"), seed=1))
        with sqlite3.connect(path) as conn:
            conn.execute("update games set save = cast(x'7bff22' as text), version = 1 where id = ?", (damaged,))
        conn.close()
        with pytest.raises(DamagedGame) as e:
            GameRecords(db, Game).get(damaged)
        assert e.value.what == "save"
    finally:
        db.close()


# Schemas that lie.


def _serve(db: Path) -> subprocess.CompletedProcess:
    return pentadice("serve", "--no-prepare", "--port", "0", "--db", str(db))


def test_the_newest_version_with_the_wrong_columns_is_refused_at_start_up(tmp_path):
    path = tmp_path / "games.sqlite3"
    open_database(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("alter table games rename column seats to seats_gone")
    conn.close()
    before = digest(path)
    with pytest.raises(NotGames) as e:
        open_database(path)
    assert "no column seats" in e.value.message and "cannot be reached" not in e.value.message
    line = one_line(_serve(path), "is not a pentadice games database", "no column seats")
    assert "cannot be reached" not in line
    one_line(pentadice("history", "--db", str(path)), "no column seats")
    assert digest(path) == before


def test_a_games_table_missing_is_named_as_a_schema_problem(tmp_path):
    path = tmp_path / "games.sqlite3"
    open_database(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("drop table results")
    conn.close()
    one_line(_serve(path), "is not a pentadice games database: no table results")
    one_line(pentadice("history", "--db", str(path)), "no table results")


@pytest.mark.parametrize(
    "versions",
    [["0004", "0004"], ["0004\nError: forged line"], ["\x1b]0;owned\x07"]],
)
def test_a_forged_schema_version_is_refused_in_one_clean_line(tmp_path, versions):
    path = tmp_path / "games.sqlite3"
    open_database(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("drop table alembic_version")
        conn.execute("create table alembic_version (version_num varchar(32))")
        conn.executemany("insert into alembic_version values (?)", [(v,) for v in versions])
    conn.close()
    for done in (_serve(path), pentadice("history", "--db", str(path))):
        line = one_line(done)
        assert "MultipleResultsFound" not in line and "forged" not in done.stderr.splitlines()[-1][:20]
        assert "\x1b" not in done.stderr and "\x07" not in done.stderr


# Backups.


def test_backup_copies_the_games_a_plain_copy_misses_and_replaces_only_a_backup(tmp_path):
    path = tmp_path / "games.sqlite3"
    db = open_database(path)
    writer = sqlite3.connect(path)  # a server's connection, holding the WAL open: nothing checkpointed
    writer.execute("PRAGMA wal_autocheckpoint=0")
    try:
        records = GameRecords(db, Game, expire=False)
        ids = [records.add(Game(PENTA, parse_players("Ana"), seed=s)) for s in range(5)]
        assert Path(f"{path}-wal").stat().st_size > 0
        plain = tmp_path / "plain-copy.sqlite3"
        shutil.copy(path, plain)  # what `cp` gives while the server runs
        with sqlite3.connect(plain) as conn:
            tables = {r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")}
            assert "games" not in tables or conn.execute("select count(*) from games").fetchone()[0] < 5
        conn.close()
        out = tmp_path / "backup.sqlite3"
        done = pentadice("backup", "--db", str(path), str(out))
        assert done.returncode == 0 and "Backed up 5 games" in done.stdout, done.stderr
        assert not list(tmp_path.glob(".*.tmp"))
        copy = open_database(out, read_only=True)
        try:
            assert GameRecords(copy, Game, expire=False).count()["unfinished"] == 5
        finally:
            copy.close()
        assert out.read_bytes()[18:20] == b"\x01\x01"  # one file: no WAL of its own
        records.add(Game(PENTA, parse_players("Bo"), seed=9))
        again = pentadice("backup", "--db", str(path), str(out))  # a previous backup is replaced
        assert again.returncode == 0 and "Backed up 6 games" in again.stdout, again.stderr
        notes = tmp_path / "notes.txt"
        notes.write_text("mine\n")
        for target in (notes, path, plain):
            before = digest(target)
            one_line(pentadice("backup", "--db", str(path), str(target)), "left alone" if target != path else "itself")
            assert digest(target) == before
        assert len(ids) == 5
    finally:
        writer.close()
        db.close()


@pytest.mark.parametrize("suffix", ["-journal", "-wal", "-shm"])
def test_backup_refuses_the_databases_side_files_which_sqlite_would_reset_or_roll_back(tmp_path, suffix):
    path = tmp_path / "games.sqlite3"
    db = open_database(path)
    try:
        GameRecords(db, Game, expire=False).add(Game(PENTA, parse_players("Ana"), seed=1))
    finally:
        db.close()
    with sqlite3.connect(path) as conn:  # at rest: no side file there, every name free
        conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    (tmp_path / "link.sqlite3").symlink_to(path)
    for db_given, out in ((path, f"{path}{suffix}"), (tmp_path / "link.sqlite3", f"{tmp_path}/link.sqlite3{suffix}")):
        one_line(run_cli("backup", "--db", str(db_given), out), suffix, "another name")
        assert not Path(f"{path}{suffix}").exists() and not Path(out).exists()
    done = run_cli("history", "--db", str(path), "--json")  # a -journal there would have made it unreadable
    assert done.exit_code == 0, done.output


def run_cli(*args: str):
    return CliRunner().invoke(main, list(args))


DIES_MID_WRITE = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA cache_size=1")  # the changes spill into the file: its journal is hot
conn.execute("begin")
conn.execute("delete from games")
os._exit(0)
"""


def test_backup_over_a_backup_with_a_journal_of_an_unfinished_write_beside_it_is_refused(tmp_path):
    path = tmp_path / "games.sqlite3"
    db = open_database(path)
    try:
        records = GameRecords(db, Game, expire=False)
        for s in range(200):
            records.add(Game(PENTA, parse_players("Ana"), seed=s))
    finally:
        db.close()
    out = tmp_path / "backup.sqlite3"
    assert pentadice("backup", "--db", str(path), str(out)).returncode == 0
    subprocess.run([sys.executable, "-c", DIES_MID_WRITE, str(out)], check=True, timeout=60)
    journal = Path(f"{out}-journal")
    assert journal.stat().st_size > 0
    before = digest(out), digest(journal)
    one_line(run_cli("backup", "--db", str(path), str(out)), "backup.sqlite3-journal", "left alone")
    assert (digest(out), digest(journal)) == before and not list(tmp_path.glob(".*.tmp"))
    with sqlite3.connect(out) as conn:  # rolled back as SQLite does: the previous backup, whole
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
        assert conn.execute("select count(*) from games").fetchone()[0] == 200
    conn.close()


def test_backup_removes_what_a_backup_killed_mid_copy_left_and_nothing_else(tmp_path):
    path = tmp_path / "games.sqlite3"
    open_database(path).close()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = tmp_path / f".backup.sqlite3.{int(dead.stdout)}-abcd1234.tmp"  # kill -9 mid-copy leaves both
    left.write_bytes(b"SQLite format 3\x00" + bytes(100))
    journal = Path(f"{left}-journal")
    journal.write_bytes(bytes(512))
    other = tmp_path / ".backup.sqlite3.notes.tmp-journal"  # not a name a backup gives
    other.write_text("mine\n")
    done = run_cli("backup", "--db", str(path), str(tmp_path / "backup.sqlite3"))
    assert done.exit_code == 0, done.output
    assert not left.exists() and not journal.exists() and other.read_text() == "mine\n"


def test_backup_leaves_alone_a_target_that_became_another_file_while_it_copied(tmp_path, monkeypatch):
    from pentadice.storage import backup as backups

    path = tmp_path / "games.sqlite3"
    open_database(path).close()
    out = tmp_path / "backup.sqlite3"
    copy = backups._copy

    def copy_then_written_over(source, tmp):
        copy(source, tmp)
        out.write_text("notes written meanwhile\n")

    monkeypatch.setattr(backups, "_copy", copy_then_written_over)
    one_line(run_cli("backup", "--db", str(path), str(out)), "meanwhile", "left alone")
    assert out.read_text() == "notes written meanwhile\n" and not list(tmp_path.glob(".*.tmp*"))


def test_backup_names_paths_escaped_on_one_line_as_they_are(tmp_path):
    path = tmp_path / "club\x1b[31m.sqlite3"
    open_database(path).close()
    done = run_cli("backup", "--db", str(path), str(tmp_path / "copy\nError: forged"))
    assert done.exit_code == 0 and len(done.output.splitlines()) == 1, done.output
    assert "club\\x1b[31m.sqlite3" in done.output and "copy\\nError: forged" in done.output
    line = one_line(run_cli("backup", "--db", str(path), str(tmp_path / "no\nsuch" / "copy")), "does not exist")
    assert "no\\nsuch" in line


def test_backup_of_postgresql_says_to_use_pg_dump(tmp_path):
    one_line(pentadice("backup", "--db", "postgresql://nobody@127.0.0.1:1/none", str(tmp_path / "x")), "pg_dump")
    assert not (tmp_path / "x").exists()


def test_backup_of_what_is_no_games_database_is_refused(tmp_path):
    foreign = tmp_path / "foreign.sqlite3"
    with sqlite3.connect(foreign) as conn:
        conn.execute("create table contacts (name text)")
    conn.close()
    one_line(pentadice("backup", "--db", str(foreign), str(tmp_path / "copy")), "is not a pentadice games database")
    assert not (tmp_path / "copy").exists()
    done = CliRunner().invoke(main, ["backup", "--db", str(tmp_path / "missing.sqlite3"), str(tmp_path / "copy")])
    assert done.exit_code == 1 and "there is no games database" in done.output


# Servers sharing a database.


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "games.sqlite3")
    return request.getfixturevalue("postgres_url")


def test_servers_sharing_a_database_remove_a_game_only_when_all_would(where):
    db = open_database(where)
    try:
        month, day = GameRecords(db, Game, keep_days=30), GameRecords(db, Game, keep_days=1)
        idle = month.add(Game(PENTA, parse_players("Ana")))
        with db.begin(write=True) as conn:
            conn.execute(games.update().values(updated_at=datetime.now(UTC) - timedelta(days=5)))
        assert month.expire() == 0  # the first server says its 30 days
        assert day.expire() == 0  # the second keeps what the first keeps
        assert day.get(idle) is not None
        month.release()  # the first stops: its days are withdrawn
        assert day.expire() == 1 and day.get(idle) is None
        again = month.add(Game(PENTA, parse_players("Bo")))
        assert month.expire() == 0  # the first server back: its 30 days said again
        with db.begin(write=True) as conn:
            conn.execute(games.update().values(updated_at=datetime.now(UTC) - timedelta(days=5)))
        assert day.expire() == 0
        with db.begin(write=True) as conn:  # the first server killed 3 days ago, never withdrawing its days
            lapsed = datetime.now(UTC) - timedelta(days=3)
            conn.execute(expiry.update().where(expiry.c.server == month._server).values(seen_at=lapsed))
        assert day.expire() == 1 and day.get(again) is None
    finally:
        db.close()


def test_a_schema_3_database_is_brought_to_the_expiry_table_by_a_server(tmp_path):
    path = tmp_path / "games.sqlite3"
    old = database.Database(database._sqlite_engine(sa.make_url(database.locate(path))))
    database.upgrade(old, to="0003")
    old.close()
    db = open_database(path)
    try:
        assert database.current_version(db) == database.head()
        assert GameRecords(db, Game).expire() == 0
    finally:
        db.close()


def test_player_statistics_group_names_alike_on_each_backend(where):
    from pentadice.storage import history
    from pentadice.storage.schema import results

    db = open_database(where)
    try:
        now = datetime.now(UTC)
        with db.begin(write=True) as conn:
            for i, names in enumerate([["Ana", "Bo"], ["Ana\u200b", "Bo"], ["\uff21na", "Bo\u2060"], ["Cy", "Di"]]):
                gid = f"game{i}"
                conn.execute(
                    games.insert().values(
                        id=gid, rules="penta", created_at=now, updated_at=now, finished_at=now, version=1,
                        coach=False, source="web", save="{}",
                    )
                )  # fmt: skip
                for seat, name in enumerate(names):
                    conn.execute(
                        results.insert().values(
                            game_id=gid, seat=seat, name=name, computer=False, rules="penta", finished_at=now,
                            score=100 + 10 * i + seat, winner=seat == 1, decisions=10, loss=1.0 * (i + 1),
                        )
                    )  # fmt: skip
        stats = {s["name"]: s for s in history.player_stats(db)}
        assert set(stats) == {"Ana", "Bo", "Cy", "Di"}
        assert stats["Ana"]["games"] == 3 and stats["Ana"]["best_score"] == 120 and stats["Ana"]["wins"] == 0
        assert stats["Ana"]["mean_score"] == pytest.approx(110.0) and stats["Ana"]["decisions"] == 30
        assert stats["Ana"]["mean_loss"] == pytest.approx(6.0 / 30)
        assert stats["Bo"]["games"] == 3 and stats["Bo"]["wins"] == 3
        assert [s["name"] for s in history.player_stats(db, "Ana\u200b")] == ["Ana"]
        assert len(history.player_series(db, "\uff21na")) == 3
        assert history.finished_games(db, player="Bo")["total"] == 3
        page = history.players_page(db, limit=2, offset=1)
        assert page["total"] == 4 and len(page["players"]) == 2
    finally:
        db.close()


def test_a_server_adds_no_table_to_another_programs_sqlite_file_but_shares_a_postgresql_database(
    tmp_path, postgres_url
):
    foreign = tmp_path / "foreign.sqlite3"
    with sqlite3.connect(foreign) as conn:
        conn.execute("create table contacts (name text)")
    conn.close()
    before = digest(foreign)
    with pytest.raises(NotGames) as e:
        open_database(foreign)
    assert "no table games (it holds contacts)" in e.value.message
    assert digest(foreign) == before
    engine = sa.create_engine(postgres_url)
    with engine.begin() as conn:
        conn.execute(sa.text("create table contacts (name text)"))
    engine.dispose()
    db = open_database(postgres_url)  # a database of several applications: pentadice's tables beside theirs
    try:
        assert database.current_version(db) == database.head()
    finally:
        db.close()


@pytest.mark.parametrize("damaged", ["1e300", "9e999", "'many'", "x'00'", "-5"])
def test_a_keep_days_no_server_could_say_is_left_out_and_the_others_agree(tmp_path, damaged):
    path = tmp_path / "games.sqlite3"
    db = open_database(path)
    try:
        records = GameRecords(db, Game, keep_days=30)
        idle = records.add(Game(PENTA, parse_players("Ana"), seed=1), started=datetime.now(UTC) - timedelta(days=90))
        later = datetime.now(UTC) + timedelta(days=1)  # said just now by servers that still run
        with db.begin(write=True) as conn:
            conn.execute(expiry.insert().values(server="another", keep_days=60, seen_at=later))
            conn.execute(games.update().values(updated_at=datetime.now(UTC) - timedelta(days=90)))
        with sqlite3.connect(path) as raw:  # what SQLite keeps whatever it is given (a damaged row, an attack)
            raw.execute(f"insert into expiry values ('damaged', {damaged}, ?)", (later.isoformat(sep=" "),))
        raw.close()
        assert records.expire() == 1  # 60 days agreed: the game idle for 90 is removed, the damaged row ignored
        assert records.get(idle) is None
    finally:
        db.close()


def test_a_server_that_stops_withdraws_its_keep_days(tmp_path, penta_advisor):
    """The app's shutdown withdraws its keep-days: a server restarted with fewer days has them at once, not after
    the two days an entry of a server that was killed takes to lapse."""
    from fastapi.testclient import TestClient

    from pentadice.faces.web.api import create_app

    db = open_database(tmp_path / "games.sqlite3")
    try:
        app = create_app({"penta": penta_advisor}, static_dir=None, db=db, keep_days=30)
        with TestClient(app):
            assert app.state.web.store.records.expire() == 0  # the server says its 30 days
            with db.begin() as conn:
                assert conn.execute(sa.select(expiry.c.keep_days)).scalars().all() == [30]
        with db.begin() as conn:
            assert conn.execute(sa.select(expiry.c.keep_days)).scalars().all() == []
    finally:
        db.close()
