"""`pentadice history` as a careless operator and a hostile database meet it: it only reads (a foreign file, an
empty one, an older or a read-only-mounted database are never changed by a byte), `--out` replaces only a
previous export, one damaged row does not hide the others, names from the database can neither forge a line nor
drive the terminal nor pass for another player, and every refusal is one line. The databases are real SQLite
files whose finished games are written as rows (no game is played here)."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from commands import one_line, pentadice

from pentadice.faces.cli import main
from pentadice.players.engine import Game
from pentadice.storage import database
from pentadice.storage.database import open_database
from pentadice.storage.games import DamagedGame, GameRecords
from pentadice.storage.schema import games, results


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def finished(path: Path, tables: list[list[str]], rules: str = "penta", version: str | None = None) -> Path:
    """A games database at ``path`` holding one finished game a list of names (scores 100, 101, ...; the last
    seat wins), at the newest schema or brought only to ``version``."""
    if version is None:
        db = open_database(path)
    else:
        url = database.sa.make_url(database.locate(path))
        db = database.Database(database._sqlite_engine(url))
        database.upgrade(db, to=version)
    now = datetime.now(UTC)
    prefix = secrets.token_hex(4)  # the ids of this call's games
    try:
        with db.begin(write=True) as conn:
            for i, names in enumerate(tables):
                when = now - timedelta(minutes=len(tables) - i)
                gid = f"{prefix}{i:03d}"
                game = dict(id=gid, rules=rules, created_at=when, updated_at=when, finished_at=when, version=9)
                conn.execute(games.insert().values(**game, coach=False, source="web", save="{}"))
                for seat, name in enumerate(names):
                    row = dict(game_id=gid, seat=seat, name=name, computer=False, strategy=None, rules=rules)
                    row.update(finished_at=when, score=100 + seat, winner=seat == len(names) - 1)
                    if version is None or version >= "0002":
                        row.update(decisions=13, loss=1.3)
                    conn.execute(results.insert().values(**row))
    finally:
        db.close()
    return path


def quiet(path: Path) -> None:
    """Checkpoint and leave the file in rollback mode with no side files (a state any write would change)."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()


# --out replaces only its own kind.


def test_out_replaces_only_a_previous_export_never_the_database_or_another_file(tmp_path):
    db = finished(tmp_path / "club.sqlite3", [["Ana", "Bo"], ["Cy", "Ana"]])
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    other = tmp_path / "penta.json"
    other.write_text('{"mine": true}\n')
    theirs = tmp_path / "other.parquet"  # a Parquet file of someone else's
    pq.write_table(pa.table({"x": [1, 2]}), theirs)
    for target in (db, notes, other, theirs):
        before = digest(target)
        line = one_line(pentadice("history", "--db", str(db), "--out", str(target)), "cannot write", "left alone")
        assert line.count(str(target)) == 1
        assert digest(target) == before
    export = tmp_path / "games.parquet"
    assert run("history", "--db", str(db), "--out", str(export)).exit_code == 0
    finished(tmp_path / "club.sqlite3", [["Di", "Ed"]])  # one game more: the export written again over the last
    again = run("history", "--db", str(db), "--out", str(export))
    assert again.exit_code == 0 and "Wrote 6 results" in again.output, again.output
    assert len(pq.read_table(export)) == 6
    older = tmp_path / "older.parquet"  # an export written before exports said what they are: its columns
    pq.write_table(pq.read_table(export).replace_schema_metadata({}), older)
    assert run("history", "--db", str(db), "--out", str(older)).exit_code == 0
    empty = run("history", "--db", str(db), "--out", "")
    assert empty.exit_code == 2 and "'--out'" in empty.output and "is empty" in empty.output
    assert "is a directory" not in empty.output


# history only reads.


@pytest.mark.parametrize("suffix", ["-journal", "-wal", "-shm"])
def test_out_refuses_the_databases_side_files_and_the_database_stays_readable(tmp_path, suffix):
    path = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"]])
    quiet(path)  # at rest: no side file there, every name free
    (tmp_path / "link.sqlite3").symlink_to(path)
    for out in (f"{path}{suffix}", f"{tmp_path}/link.sqlite3{suffix}"):
        one_line(run("history", "--db", str(tmp_path / "link.sqlite3"), "--out", out), "cannot write", suffix)
        assert not Path(f"{path}{suffix}").exists()
    listed = run("history", "--db", str(path), "--json")  # a -journal there would have kept it from being read
    assert listed.exit_code == 0 and json.loads(listed.output)["total"] == 1, listed.output


def test_a_parquet_file_claiming_a_huge_footer_is_refused_without_reading_it(tmp_path, monkeypatch):
    from pentadice.storage import history as kept

    claim = tmp_path / "claims.parquet"  # sparse: 40 MiB of nothing, a 32 MiB footer claimed (an export's is KiB)
    with open(claim, "wb") as fh:
        fh.write(b"PAR1")
        fh.seek(40 * 2**20)
        fh.write((32 * 2**20).to_bytes(4, "little") + b"PAR1")

    def never(*args, **kwargs):
        raise AssertionError("the footer was read")

    monkeypatch.setattr(pq, "read_schema", never)
    assert not kept.is_history_export(claim)
    before = digest(claim)
    monkeypatch.undo()
    path = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"]])
    one_line(run("history", "--db", str(path), "--out", str(claim)), "is not an export of the history")
    assert digest(claim) == before


def test_a_database_with_a_journal_of_an_unfinished_write_is_refused_naming_it_and_left_as_it_is(tmp_path):
    path = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"]] * 50)
    quiet(path)
    dies = (
        "import os, sqlite3, sys; conn = sqlite3.connect(sys.argv[1], isolation_level=None); "
        "conn.execute('PRAGMA cache_size=1'); conn.execute('begin'); conn.execute('delete from results'); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", dies, str(path)], check=True, timeout=60)
    journal = Path(f"{path}-journal")
    before = digest(path), digest(journal)
    one_line(run("history", "--db", str(path)), "games.sqlite3-journal", "did not finish", "only reads")
    assert (digest(path), digest(journal)) == before


def test_history_changes_no_byte_of_a_foreign_an_empty_or_an_older_database(tmp_path):
    foreign = tmp_path / "foreign.sqlite3"
    with sqlite3.connect(foreign) as conn:
        conn.execute("create table contacts (name text)")
        conn.execute("insert into contacts values ('Ana')")
    conn.close()
    before = digest(foreign)
    one_line(pentadice("history", "--db", str(foreign)), "is not a pentadice games database", "no table games")
    assert digest(foreign) == before
    with sqlite3.connect(foreign) as conn:
        assert [r[0] for r in conn.execute("select name from sqlite_master where type='table'")] == ["contacts"]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()

    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    one_line(pentadice("history", "--db", str(empty)), "is not a pentadice games database")
    assert empty.stat().st_size == 0

    older = finished(tmp_path / "older.sqlite3", [["Ana", "Bo"]], version="0003")
    quiet(older)
    before = digest(older)
    listed = run("history", "--db", str(older), "--json")
    assert listed.exit_code == 0 and json.loads(listed.output)["total"] == 1  # read as it is
    assert digest(older) == before

    oldest = finished(tmp_path / "oldest.sqlite3", [["Ana", "Bo"]], version="0001")
    quiet(oldest)
    before = digest(oldest)
    one_line(pentadice("history", "--db", str(oldest)), "older schema version 0001", "pentadice serve --db")
    assert digest(oldest) == before

    current = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"]])
    quiet(current)
    before = digest(current)
    assert run("history", "--db", str(current)).exit_code == 0
    assert run("history", "--db", str(current), "--out", str(tmp_path / "x.parquet")).exit_code == 0
    assert digest(current) == before


def read_only_mount(tmp_path: Path, files: list[Path], commands: list[str]) -> subprocess.CompletedProcess:
    """``commands`` (``{mnt}`` the mount) run in a mount namespace of its own, where a tmpfs holding copies of
    ``files`` is mounted read-only (root, as CI runs; skipped where unshare or mount is not permitted)."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m is not permitted here: {probe.stderr.strip()}")
    mount = tmp_path / "ro"
    mount.mkdir(exist_ok=True)
    copies = " ".join(str(f) for f in files)
    script = f"mount -t tmpfs -o size=8m tmpfs {mount} && cp {copies} {mount}/ && mount -o remount,ro {mount} && "
    script += "; ".join(f"{c.format(mnt=mount)}; echo rc=$?" for c in commands)
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    if "rc=" not in done.stdout and "mount" in done.stderr.lower():
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    return done


def test_history_reads_a_database_on_a_read_only_mount(tmp_path):
    """A tmpfs mounted read-only in a mount namespace of its own: history reads the database there, in WAL mode
    and with no side files (only immutable=1 can read it then)."""
    db = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"], ["Cy", "Ana"]])
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    for side in ("-wal", "-shm"):
        Path(f"{db}{side}").unlink(missing_ok=True)
    me = f"{sys.executable} -m pentadice"
    done = read_only_mount(
        tmp_path,
        [db],
        [
            f"{me} history --db {{mnt}}/games.sqlite3 --json",
            f"{me} history --db {{mnt}}/games.sqlite3 --player Ana",
            f"{me} backup --db {{mnt}}/games.sqlite3 {tmp_path}/copy.sqlite3",
        ],
    )
    assert done.stdout.count("rc=0") == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "cannot be written" not in done.stdout + done.stderr
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["total"] == 2
    assert "Finished games in" in done.stdout
    assert json.loads(run("history", "--db", str(tmp_path / "copy.sqlite3"), "--json").output)["total"] == 2


def test_a_read_only_snapshot_of_a_database_in_use_is_read_whole_or_refused(tmp_path):
    """A database whose latest games are still in its WAL file, frozen on a read-only mount: with its -shm file
    too it is read whole (mode=ro); without it, refused in one line, never read without those games."""
    db = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"]])
    writer = sqlite3.connect(db)  # a server's connection: nothing checkpointed
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("select count(*) from games").fetchone()  # attached to the WAL: the last close keeps it
    try:
        finished(db, [["Cy", "Di"], ["Ed", "Flo"]])
        snap = tmp_path / "snap"
        snap.mkdir()
        for name in ("games.sqlite3", "games.sqlite3-wal", "games.sqlite3-shm"):
            shutil.copy(tmp_path / name, snap / name)
    finally:
        writer.close()
    me = f"{sys.executable} -m pentadice"
    whole = read_only_mount(tmp_path, sorted(snap.iterdir()), [f"{me} history --db {{mnt}}/games.sqlite3 --json"])
    assert "rc=0" in whole.stdout, whole.stdout + whole.stderr
    assert json.loads(whole.stdout.splitlines()[0])["total"] == 3
    (snap / "games.sqlite3-shm").unlink()
    (tmp_path / "ro").rmdir()
    part = read_only_mount(tmp_path, sorted(snap.iterdir()), [f"{me} history --db {{mnt}}/games.sqlite3"])
    assert "rc=1" in part.stdout, part.stdout + part.stderr
    lines = part.stderr.strip().splitlines()
    assert len(lines) == 1 and "read-only file system" in lines[0] and "WAL file" in lines[0], part.stderr


# One damaged row.


def test_a_name_that_is_not_utf8_is_shown_damaged_and_the_other_rows_still_show(tmp_path):
    db = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"], ["Cy", "Di"]])
    with sqlite3.connect(db) as conn:
        conn.execute("update results set name = cast(x'426fff' as text) where name = 'Bo'")
    conn.close()
    text = run("history", "--db", str(db))
    assert text.exit_code == 0, text.output
    assert "Cy 100, Di 101" in text.output and "Bo\ufffd 101" in text.output
    answer = json.loads(run("history", "--db", str(db), "--json").output)
    assert answer["total"] == 2 and {p["name"] for g in answer["games"] for p in g["players"]} >= {"Cy", "Di"}
    out = tmp_path / "all.parquet"
    assert run("history", "--db", str(db), "--out", str(out)).exit_code == 0
    assert len(pq.read_table(out)) == 4


@pytest.mark.parametrize(
    "damage",
    [
        "update results set score = 'lots' where name = 'Bo'",
        "update results set finished_at = 'yesterday' where name = 'Bo'",
        "update results set winner = 'yes' where name = 'Bo'",
        "update results set loss = 'a lot' where name = 'Bo'",
        "update results set loss = 9e999 where name = 'Bo'",
        "update results set name = cast(name as blob) where name = 'Bo'",
    ],
    ids=["score", "finished_at", "winner", "loss", "infinite-loss", "name-as-blob"],
)
def test_a_result_with_a_value_not_of_its_type_is_left_out_and_the_others_show(tmp_path, penta_advisor, damage):
    """SQLite keeps whatever a column is given: one result holding text where a number or a time belongs is left
    out of the history, the statistics and the export, and every other row still shows, in the command and in the
    API alike."""
    from fastapi.testclient import TestClient

    from pentadice.faces.web.api import create_app

    db = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"], ["Cy", "Di"]])
    with sqlite3.connect(db) as conn:
        conn.execute(damage)
    conn.close()
    text = run("history", "--db", str(db))
    assert text.exit_code == 0, text.output
    assert "Cy 100, Di 101" in text.output and "Bo" not in text.output
    answer = json.loads(run("history", "--db", str(db), "--json").output)
    names = {p["name"] for g in answer["games"] for p in g["players"]}
    assert answer["total"] == 2 and names == {"Ana", "Cy", "Di"}
    assert {s["name"] for s in answer["players"]} == {"Ana", "Cy", "Di"}
    out = tmp_path / "all.parquet"
    assert run("history", "--db", str(db), "--out", str(out)).exit_code == 0
    assert len(pq.read_table(out)) == 3
    opened = open_database(db)
    try:
        with TestClient(create_app({"penta": penta_advisor}, db=opened)) as client:
            assert client.get("/api/history").status_code == 200
            assert {p["name"] for p in client.get("/api/players").json()["players"]} == {"Ana", "Cy", "Di"}
            assert client.get("/api/players/Cy").status_code == 200
    finally:
        opened.close()


def test_a_game_whose_number_of_moves_is_not_a_number_is_a_damaged_game(tmp_path):
    db = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"], ["Cy", "Di"]])
    with sqlite3.connect(db) as conn:
        damaged, sound = [r[0] for r in conn.execute("select id from games order by id")]
        conn.execute("update games set version = 'nine' where id = ?", (damaged,))
    conn.close()
    opened = open_database(db)
    try:
        records = GameRecords(opened, Game)
        with pytest.raises(DamagedGame) as e:
            records.get(damaged)
        assert e.value.what == "version" and "nine" not in str(e.value)
        answer = json.loads(run("history", "--db", str(db), "--json").output)
        assert [g["id"] for g in answer["games"]] == [sound]  # the damaged game left out, the other shown
    finally:
        opened.close()


# Names that deceive.


def test_names_from_the_database_neither_forge_lines_nor_reach_the_terminal_raw(tmp_path):
    forged = "Cy\nFinished games in X: 999"
    db = finished(tmp_path / "games.sqlite3", [["\x1b[2JAna", forged], ["\x1b]0;owned\x07Bo", "Ed\u202eevil"]])
    done = pentadice("history", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\u202e" not in done.stdout
    assert not any(line.startswith("Finished games in X") for line in done.stdout.splitlines())
    assert "Cy\\nFinished games in X: 999" in done.stdout and "\\x1b[2JAna" in done.stdout


def test_names_that_look_alike_are_one_player_in_the_statistics(tmp_path):
    db = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"], ["Ana\u200b", "Bo"], ["\uff21na", "Cy"]])
    answer = json.loads(run("history", "--db", str(db), "--json").output)
    ana = [s for s in answer["players"] if s["name"].startswith(("A", "\uff21"))]
    assert len(ana) == 1 and ana[0]["name"] == "Ana" and ana[0]["games"] == 3
    mine = json.loads(run("history", "--db", str(db), "--json", "--player", "Ana").output)
    assert mine["total"] == 3 and len(mine["player_games"]) == 3 and len(mine["players"]) == 1
    text = run("history", "--db", str(db)).output
    assert "Ana\\u200b 100" in text  # the game's own line shows the name as stored, its invisible character seen


def test_the_players_api_is_paged_and_groups_names_alike(tmp_path, penta_advisor):
    from fastapi.testclient import TestClient

    from pentadice.faces.web.api import create_app

    db = finished(tmp_path / "games.sqlite3", [["Ana", f"P{i:02d}"] for i in range(12)] + [["Ana\u200b", "Bo"]])
    opened = open_database(db)
    try:
        with TestClient(create_app({"penta": penta_advisor}, db=opened)) as client:
            whole = client.get("/api/players?limit=1000").json()
            assert whole["total"] == 14 and len(whole["players"]) == 14
            assert whole["players"][0]["name"] == "Ana" and whole["players"][0]["games"] == 13
            page = client.get("/api/players?limit=5&offset=5").json()
            assert page["total"] == 14 and [p["name"] for p in page["players"]] == [
                p["name"] for p in whole["players"][5:10]
            ]
            assert len(client.get("/api/players").json()["players"]) == 14  # under the default page
            assert client.get("/api/players?limit=0").status_code == 422
            assert client.get("/api/players?offset=-1").status_code == 422
            assert client.get("/api/players/Ana").json()["stats"][0]["games"] == 13
    finally:
        opened.close()


# --db and the smaller refusals.


@pytest.mark.parametrize(
    "command", [["history"], ["serve", "--no-prepare", "--port", "0"], ["backup"]], ids=["history", "serve", "backup"]
)
@pytest.mark.parametrize("value", ["", "sqlite://", "sqlite:///:memory:", "   "])
def test_a_db_that_keeps_nothing_is_a_usage_error(command, value, tmp_path):
    extra = [str(tmp_path / "copy.sqlite3")] if command == ["backup"] else []
    done = run(*command, "--db", value, *extra)
    one_line(done, "--db", code=2)
    assert ("empty" if not value.strip() else "in-memory") in done.output


def test_a_db_in_the_environment_that_keeps_nothing_is_refused_in_one_line(tmp_path):
    env = {**os.environ, "PENTADICE_DB": "sqlite://"}
    one_line(pentadice("history", env=env), "in-memory")


def test_no_games_of_a_player_says_so_not_play_one(tmp_path):
    db = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"]])
    said = run("history", "--db", str(db), "--player", "Zed")
    assert said.exit_code == 0 and said.output.strip() == f"No finished game in {db} has a player named Zed."
    assert "play one" not in said.output


def test_a_read_only_sqlite_url_is_read_without_a_warning(tmp_path):
    db = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"]])
    for url in (f"sqlite:///{db}?mode=ro", f"sqlite:///file:{db}?mode=ro&uri=true"):
        done = pentadice("history", "--db", url, "--json")
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert json.loads(done.stdout)["total"] == 1
    one_line(pentadice("history", "--db", f"sqlite:///{db}?cache=shared"), "options this program does not take")


def test_a_database_from_a_newer_pentadice_says_so_in_one_line(tmp_path):
    db = finished(tmp_path / "games.sqlite3", [["Ana", "Bo"]])
    with sqlite3.connect(db) as conn:
        conn.execute("update alembic_version set version_num = '5'")
    conn.close()
    line = one_line(pentadice("history", "--db", str(db)), "newer than this pentadice", "'5'", "upgrade pentadice")
    assert "now 0" not in line


def refuses_writes(url: str, sql: str) -> None:
    """The database at ``url``, opened read-only as `history` opens it, refuses the write ``sql``, saying that
    it is read-only."""
    import sqlalchemy as sa

    db = open_database(url, read_only=True)
    try:
        with pytest.raises(database.StorageError) as e, db.begin() as conn:
            conn.execute(sa.text(sql))
        assert "read-only" in e.value.message
    finally:
        db.close()


def test_history_makes_nothing_in_an_empty_postgresql_database_and_reads_a_full_one(postgres_url):
    import sqlalchemy as sa

    one_line(run("history", "--db", postgres_url), "is not a pentadice games database", "no tables")
    engine = sa.create_engine(postgres_url)
    try:
        with engine.connect() as conn:
            assert sa.inspect(conn).get_table_names() == []
        open_database(postgres_url).close()
        with engine.begin() as conn:
            conn.execute(sa.text("create table history_probe (x int)"))  # a write a read-only session refuses
        refuses_writes(postgres_url, "insert into history_probe values (1)")
        listed = run("history", "--db", postgres_url, "--json")
        assert listed.exit_code == 0 and json.loads(listed.output)["total"] == 0
    finally:
        engine.dispose()


def test_history_on_postgresql_keeps_the_urls_options_and_stays_read_only_whatever_they_say(postgres_url):
    import urllib.parse

    import sqlalchemy as sa

    engine = sa.create_engine(postgres_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("create schema club"))
        club = postgres_url + "?options=" + urllib.parse.quote("-c search_path=club")
        open_database(club).close()  # the games' tables in a schema of their own, as a server given this URL
        listed = run("history", "--db", club, "--json")
        assert listed.exit_code == 0 and json.loads(listed.output)["total"] == 0, listed.output
        for options in (
            "-c search_path=club -c default_transaction_read_only=off",
            "-c search_path=club -c application_name=x\\",
        ):
            refuses_writes(
                postgres_url + "?options=" + urllib.parse.quote(options), "create table history_probe (x int)"
            )
    finally:
        engine.dispose()


def test_a_path_with_a_newline_is_named_escaped_in_one_line(tmp_path):
    line = one_line(pentadice("history", "--db", str(tmp_path / "club\nError: forged.sqlite3")), "no games database")
    assert "club\\nError: forged.sqlite3" in line
