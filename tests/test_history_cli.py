"""`pentadice history` and the history `play` keeps: finished terminal games recorded in the games database with
their reviews, listed, filtered, as JSON and exported to Parquet; bad databases and targets refused in one line."""

import json

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from pentadice.faces.cli import main

BEST = "best\n" * 120


def run(*args, script=None):
    return CliRunner().invoke(main, list(args), input=script)


@pytest.fixture(scope="module")
def played(penta_table_dir, tmp_path_factory):
    """A database holding two finished terminal games: Ana against Bo (Ana follows the advisor), then two
    computers."""
    db = tmp_path_factory.mktemp("history") / "games.sqlite3"
    people = run("play", "--data", str(penta_table_dir), "--db", str(db), "--players", "Ana,Bo", "--seed", "7",
                 script=BEST)  # fmt: skip
    assert people.exit_code == 0, people.output
    computers = run("play", "--data", str(penta_table_dir), "--db", str(db), "--players", "cpu,cpu", "--seed", "3")
    assert computers.exit_code == 0, computers.output
    totals = [int(x) for x in next(ln for ln in people.output.splitlines() if ln.startswith("TOTAL")).split()[1:]]
    return db, totals


def test_finished_terminal_games_are_listed_with_scores_winners_and_reviews(played):
    db, (ana, bo) = played
    answer = json.loads(run("history", "--db", str(db), "--json").output)
    assert answer["total"] == 2 and len(answer["games"]) == 2
    first = answer["games"][1]  # the latest first: Ana's game was played first
    assert first["source"] == "terminal" and first["rules"] == "penta"
    scores = {p["name"]: p["score"] for p in first["players"]}
    assert scores == {"Ana": ana, "Bo": bo}
    assert first["winners"] == [n for n, s in scores.items() if s == max(ana, bo)]
    assert first["started"] <= first["finished"]
    ana_row = next(p for p in first["players"] if p["name"] == "Ana")
    assert ana_row["decisions"] >= 13 and ana_row["mean_loss"] == pytest.approx(0.0, abs=1e-9)  # "best" each time
    stats = {(s["name"], s["rules"]): s for s in answer["players"]}
    assert stats["Ana", "penta"]["games"] == 1 and stats["Ana", "penta"]["expert"]
    assert stats["Ana", "penta"]["best_score"] == ana and stats["Ana", "penta"]["wins"] == int(ana >= bo)
    assert {s["name"] for s in answer["players"]} == {"Ana", "Bo", "cpu 1", "cpu 2"}


def test_a_player_and_the_text_listing(played):
    db, (ana, _) = played
    mine = json.loads(run("history", "--db", str(db), "--json", "--player", "Ana").output)
    assert mine["total"] == 1 and [g["score"] for g in mine["player_games"]] == [ana]
    text = run("history", "--db", str(db))
    assert text.exit_code == 0 and "Finished games in" in text.output and f"Ana {ana}" in text.output
    assert "expert" in text.output and "(computer)" in text.output
    assert run("history", "--db", str(db), "--rules", "yatzy").output.startswith("No finished yatzy games in")


def test_export_to_parquet_one_row_a_player(played, tmp_path):
    db, (ana, _) = played
    out = tmp_path / "games.parquet"
    result = run("history", "--db", str(db), "--out", str(out))
    assert result.exit_code == 0 and "Wrote 4 results" in result.output
    table = pq.read_table(out).to_pylist()
    assert len(table) == 4 and {r["name"] for r in table} == {"Ana", "Bo", "cpu 1", "cpu 2"}
    ana_row = next(r for r in table if r["name"] == "Ana")
    assert ana_row["score"] == ana and ana_row["source"] == "terminal" and ana_row["finished"].tzinfo is not None
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically: no temporary left


def test_bad_targets_and_databases_are_one_line_errors(played, tmp_path):
    db, _ = played
    result = run("history", "--db", str(db), "--out", str(tmp_path))  # a directory
    assert result.exit_code == 1 and result.output.startswith("Error: cannot write")
    assert "Traceback" not in result.output
    junk = tmp_path / "junk.sqlite3"
    junk.write_text("not a database\n")
    result = run("history", "--db", str(junk))
    assert result.exit_code == 1 and "is not a games database" in result.output
    result = run("history", "--db", "postgresql://nobody@127.0.0.1:1/none")
    assert result.exit_code == 1 and "cannot be reached" in result.output and result.output.count("\n") == 1


def test_play_says_when_the_history_cannot_keep_the_game(penta_table_dir, tmp_path):
    junk = tmp_path / "junk.sqlite3"
    junk.write_text("not a database\n")
    result = run("play", "--data", str(penta_table_dir), "--db", str(junk), "--players", "cpu", "--seed", "1")
    assert result.exit_code == 0  # the game itself was played to its end
    assert "the game was not kept in the history" in result.output and "not a games database" in result.output


def test_a_database_that_is_not_there_is_said_not_made(tmp_path):
    missing = tmp_path / "typo.sqlite3"
    result = run("history", "--db", str(missing))
    assert result.exit_code == 1 and "there is no games database at" in result.output
    assert not missing.exists()


def test_a_finished_save_resumed_is_not_counted_again(played, penta_table_dir, tmp_path):
    db, _ = played
    save = tmp_path / "done.json"
    first = run("play", "--data", str(penta_table_dir), "--db", str(db), "--players", "Zoe", "--seed", "2",
                "--save", str(save), script=BEST)  # fmt: skip
    assert first.exit_code == 0, first.output
    count = json.loads(run("history", "--db", str(db), "--json").output)["total"]
    again = run("play", "--data", str(penta_table_dir), "--db", str(db), "--resume", str(save))
    assert again.exit_code == 0, again.output
    assert json.loads(run("history", "--db", str(db), "--json").output)["total"] == count
