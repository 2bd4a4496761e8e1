"""The throwaway PostgreSQL server of the tests (tests/postgres.py), checked with the ``psql`` of its own bindir only
(no Python driver): its databases answer, keep their rows across a stop and across a kill (crash recovery), and are
independent of one another. Skipped where PostgreSQL is not installed (``make postgres``)."""

from __future__ import annotations

import os
import subprocess
import urllib.parse

import postgres
import pytest


def psql(server: postgres.PostgresServer, url: str, sql: str) -> str:
    """``sql`` run by psql over TCP, at the host, port, user and database of ``url`` (the SQLAlchemy URL)."""
    parts = urllib.parse.urlsplit(url)
    assert parts.scheme == "postgresql+psycopg"
    database = urllib.parse.unquote(parts.path.lstrip("/"))
    cmd = [str(server.bindir / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
           "-h", parts.hostname, "-p", str(parts.port), "-U", parts.username, "-d", database, "-c", sql]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_created_database_answers(postgres_server, postgres_url):
    assert postgres_url.startswith(f"postgresql+psycopg://postgres@127.0.0.1:{postgres_server.port}/")
    assert psql(postgres_server, postgres_url, "select 1") == "1"
    name = urllib.parse.urlsplit(postgres_url).path.lstrip("/")
    assert postgres_server.psql("select current_database()", name).strip() == name  # the Unix socket too


def test_stop_then_start_keeps_the_rows(postgres_server, postgres_url):
    psql(postgres_server, postgres_url, "create table games (id int primary key, score int)")
    psql(postgres_server, postgres_url, "insert into games select i, i * 10 from generate_series(1, 100) i")
    postgres_server.stop()
    assert not postgres_server.running
    postgres_server.start()
    assert psql(postgres_server, postgres_url, "select count(*), sum(score) from games") == "100|50500"
    postgres_server.restart()
    assert psql(postgres_server, postgres_url, "select count(*) from games") == "100"


def test_kill_then_start_recovers(postgres_server, postgres_url):
    psql(postgres_server, postgres_url, "create table games (id int primary key, score int)")
    psql(postgres_server, postgres_url, "insert into games select i, i from generate_series(1, 1000) i")
    pid = postgres_server.process.pid
    postgres_server.kill()
    assert not postgres_server.running
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    # Down: a client cannot connect.
    parts = urllib.parse.urlsplit(postgres_url)
    cmd = [str(postgres_server.bindir / "psql"), "-X", "-h", "127.0.0.1", "-p", str(parts.port), "-U", "postgres",
           "-d", parts.path.lstrip("/"), "-c", "select 1"]  # fmt: skip
    assert subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL, timeout=60).returncode != 0
    postgres_server.start()
    assert "database system was interrupted" in postgres_server.log()  # crash recovery ran
    assert psql(postgres_server, postgres_url, "select count(*), sum(score) from games") == "1000|500500"
    psql(postgres_server, postgres_url, "insert into games values (1001, 1)")  # and writes again


def test_two_databases_are_independent(postgres_server, postgres_url):
    other = postgres_server.create_database("other_games")
    assert other == postgres_server.url("other_games")
    assert other != postgres_url
    psql(postgres_server, postgres_url, "create table games (id int)")
    psql(postgres_server, postgres_url, "insert into games values (1), (2)")
    psql(postgres_server, other, "create table games (id int)")
    psql(postgres_server, other, "insert into games values (3)")
    assert psql(postgres_server, postgres_url, "select string_agg(id::text, ',' order by id) from games") == "1,2"
    assert psql(postgres_server, other, "select string_agg(id::text, ',' order by id) from games") == "3"
    assert psql(postgres_server, other, "select count(*) from pg_tables where tablename = 'games'") == "1"


def test_the_server_runs_as_the_cluster_owner(postgres_server):
    """Run as root, the cluster and its processes belong to the postgres user (PostgreSQL refuses root)."""
    postgres_server.start()
    data = postgres_server.psql("select current_setting('data_directory')").strip()
    assert data == str(postgres_server.data)
    uid = os.stat(f"/proc/{postgres_server.process.pid}").st_uid
    if os.geteuid() == 0:
        import pwd

        assert uid == pwd.getpwnam("postgres").pw_uid
    else:
        assert uid == os.geteuid()


def test_cleanup_removes_everything():
    hint = postgres.available()
    if hint:
        pytest.skip(hint)
    with postgres.PostgresServer() as server:
        pid = server.process.pid
        assert server.create_database("x").endswith("/x")
    assert not server.directory.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_available_says_how_to_install_when_missing(monkeypatch, tmp_path):
    monkeypatch.setenv(postgres.BINDIR_VARIABLE, str(tmp_path))
    assert "make postgres" in postgres.available()
