"""Every table a game reads, ready before it is needed: which tables a rule set has, ``solve --only/--skip``,
building and holding them (:mod:`pentadice.players.prepared`), and the server's background preparation
(:mod:`pentadice.faces.web.preparing`): its progress on /api/health, a game with a ``win`` computer refused with 503
and the progress while its tables are built, the chances said to be preparing meanwhile, and served at once from the
chances table afterwards (the dice showing included); and `serve` naming a solved table it leaves out."""

from __future__ import annotations

import json
import shutil
import threading

import numpy as np
import pytest
import reduced_games
from click.testing import CliRunner

from pentadice import solver
from pentadice.advisor import chances
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.sheet import Sheet
from pentadice.players import prepared
from pentadice.tables import table

SMALL = reduced_games.GAMES["penta, 2 dice, lower boxes, threshold 63"]


def test_each_rule_set_has_the_tables_that_fit_it():
    assert prepared.chosen(rules.get_rules("penta")) == list(prepared.TABLES)
    kiriki = prepared.applicable(rules.get_rules("kiriki"))
    assert kiriki["chances"] and kiriki["win-end"] and kiriki["win"] is None
    maxi = prepared.applicable(rules.get_rules("maxi-yatzy"))
    assert "too large" in maxi["win"] and maxi["chances"] and maxi["moments"]
    assert prepared.chosen(rules.get_rules("maxi-yatzy")) == ["values"]
    assert prepared.chosen(rules.get_rules("maxi-yatzy"), only=["moments"]) == ["values", "moments"]


def test_only_and_skip_choose_and_the_values_always_come():
    rs = rules.get_rules("penta")
    assert prepared.chosen(rs, only=["win"]) == ["values", "win"]
    assert prepared.chosen(rs, skip=["win", "win-end"]) == ["values", "moments", "chances"]
    with pytest.raises(ValueError, match="cannot be skipped"):
        prepared.chosen(rs, skip=["values"])
    with pytest.raises(ValueError, match="no table 'odds'"):
        prepared.chosen(rs, only=["odds"])


def test_solve_refuses_an_unknown_table_name(tmp_path):
    result = CliRunner().invoke(main, ["solve", "--only", "values,odds", "--data", str(tmp_path)])
    assert result.exit_code == 2 and "no table 'odds'" in result.output
    assert not list(tmp_path.iterdir())


@pytest.fixture()
def small(monkeypatch, tmp_path):
    """The small game registered as "penta", its table directory empty, the process's win caches fresh."""
    from pentadice.players import lastturns, win

    monkeypatch.setitem(rules.REGISTRY, "penta", SMALL)
    caches = (win._cache, win._endgames, lastturns._opponents)
    saved = [dict(c) for c in caches]
    for c in caches:
        c.clear()
    yield tmp_path
    for c, old in zip(caches, saved, strict=True):
        c.clear()
        c.update(old)


def test_solve_builds_every_table_a_game_reads_then_keeps_them(small):
    result = CliRunner().invoke(main, ["solve", "--data", str(small), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert set(summary["tables"]) == {"chances", "win", "win-end"}
    for name, built in summary["tables"].items():
        assert built["built"] and built["bytes"] > 0, name
        assert all((small / f.split("/")[-1]).is_file() for f in built["files"])
    values = table.load(SMALL, small).values
    assert all(prepared.present(SMALL, small, values).values())
    again = json.loads(CliRunner().invoke(main, ["solve", "--data", str(small), "--json"]).stdout)
    assert not any(b["built"] for b in again["tables"].values())  # the same values: kept
    human = CliRunner().invoke(main, ["solve", "--data", str(small)]).output
    assert "The chances table: kept (saved already for these values)" in human


def test_hold_puts_the_saved_tables_where_games_find_them(small):
    from pentadice.players import lastturns, win

    assert CliRunner().invoke(main, ["solve", "--data", str(small), "--json"]).exit_code == 0
    values = table.load(SMALL, small).values
    held = prepared.hold(SMALL, small, values)
    assert set(held) == {"chances", "win", "win-end"}  # (the values and moments: the advisor's own)
    assert chances.table_of(SMALL, values) is not None
    assert (SMALL, win.ENDGAME_BOXES) in win._endgames
    assert any(k[0] == SMALL for k in lastturns._opponents)
    # The win player's tables now come from the cache: a game's first move builds nothing.
    built = win.build(SMALL, values, threads=1, directory=small)
    assert built.origin == "file"


def test_chances_from_the_table_equal_the_forward_pass(small):
    assert CliRunner().invoke(main, ["solve", "--data", str(small), "--json"]).exit_code == 0
    values = table.load(SMALL, small).values
    prepared.hold(SMALL, small, values, ["chances"])
    fast = chances.chances_of(SMALL, values)
    slow = chances.Chances(SMALL, values)  # the forward pass, state by state
    assert fast.table is not None and slow.table is None
    rng = np.random.default_rng(4)
    from sheets import random_sheet

    for _ in range(6):
        sheets = [random_sheet(SMALL, rng, int(rng.integers(0, 4))) for _ in range(3)]
        assert fast.win_chances(sheets) == pytest.approx(slow.win_chances(sheets), abs=1e-7)


def test_chances_during_a_turn_equal_the_exact_distribution_of_that_turn(small):
    from pentadice.advisor import distribution

    assert CliRunner().invoke(main, ["solve", "--data", str(small), "--json"]).exit_code == 0
    values = table.load(SMALL, small).values
    prepared.hold(SMALL, small, values, ["chances"])
    fast = chances.chances_of(SMALL, values)
    rng = np.random.default_rng(9)
    from sheets import random_sheet

    for _ in range(8):
        sheets = [random_sheet(SMALL, rng, int(rng.integers(0, 4))) for _ in range(2)]
        dice = sorted(int(d) for d in rng.integers(1, 7, SMALL.dice))
        rolls_left = int(rng.integers(0, SMALL.rolls))
        exact = distribution.final_distribution(SMALL, values, sheets[0], dice=dice, rolls_left=rolls_left)
        other = distribution.final_distribution(SMALL, values, sheets[1])
        want = chances.combine([(exact.offset, np.asarray(exact.probs)), (other.offset, np.asarray(other.probs))])
        assert fast.during_turn(sheets, 0, dice, rolls_left) == pytest.approx(want, abs=1e-7)


# The server's preparation ------------------------------------------------------------------------------------


def _advisor(directory):
    from pentadice.advisor import Advisor

    return Advisor(table.load(SMALL, directory))


def _client(preparation, advisor):
    fastapi = pytest.importorskip("fastapi")  # noqa: F841
    from fastapi.testclient import TestClient

    from pentadice.faces.web.api import create_app

    return TestClient(create_app({advisor.rules.name: advisor}, static_dir=None, preparation=preparation))


def test_the_server_says_it_prepares_and_refuses_a_win_game_until_ready(small, monkeypatch):
    from pentadice.faces.web.preparing import Preparation

    sol = solver.solve(SMALL)
    table.save(SMALL, sol.values, small)
    advisor = _advisor(small)
    values = advisor.values
    go = threading.Event()
    real_hold = prepared.hold

    def held_back(*args, **kwargs):  # each build waits until the test lets it go
        if kwargs.get("build"):
            go.wait(60)
        return real_hold(*args, **kwargs)

    monkeypatch.setattr(prepared, "hold", held_back)
    prep = Preparation({"penta": advisor}, lambda name: small, build=True, threads=1).start()
    client = _client(prep, advisor)
    health = client.get("/api/health").json()
    assert health["preparing"] is True
    status = health["tables"]["penta"]
    assert status["ready"] is False and status["win"] == "preparing" and status["chances"] == "preparing"
    refused = client.post("/api/games", json={"players": "Ana,cpu:win", "seed": 1})
    assert refused.status_code == 503 and refused.headers["retry-after"]
    assert "being prepared" in refused.json()["error"] and "progress" in refused.json()["preparing"]
    game = client.post("/api/games", json={"players": "Ana,cpu", "seed": 1})  # no win computer: plays now
    assert game.status_code == 201
    view = game.json()
    assert view["chances"] is None and view["chances_pending"] and view["preparing"]["what"]
    waiting = client.get(f"/api/games/{view['id']}/chances").json()
    assert waiting["chances"] is None and "being prepared" in waiting["reason"]
    go.set()
    assert prep.wait(120)
    health = client.get("/api/health").json()
    assert health["preparing"] is False and health["tables"]["penta"]["ready"], health
    assert client.post("/api/games", json={"players": "Ana,cpu:win", "seed": 1}).status_code == 201
    rolled = client.post(f"/api/games/{view['id']}/roll", json={"keep": []}).json()["game"]
    assert rolled["preparing"] is None and rolled["chances_pending"] is False
    assert sum(rolled["chances"]) == pytest.approx(1.0)
    sheets = [Sheet.from_mapping(p["sheet"], SMALL) for p in rolled["players"]]
    want = chances.chances_of(SMALL, values).during_turn(sheets, 0, rolled["dice"], rolled["rolls_left"])
    assert rolled["chances"] == pytest.approx(want, abs=1e-12)


def test_without_preparing_a_win_game_is_refused_with_the_command_that_builds_its_tables(small):
    from pentadice.faces.web.preparing import Preparation

    sol = solver.solve(SMALL)
    table.save(SMALL, sol.values, small)
    advisor = _advisor(small)
    prep = Preparation({"penta": advisor}, lambda name: small, build=False).start()
    assert prep.wait(60)
    client = _client(prep, advisor)
    status = client.get("/api/health").json()["tables"]["penta"]
    assert status["win"] == "unavailable" and status["chances"] == "forward"
    refused = client.post("/api/games", json={"players": "Ana,cpu:win", "seed": 1})
    assert refused.status_code == 503 and "pentadice solve --rules penta" in refused.json()["error"]


def test_rules_say_where_win_cannot_play(penta_table_dir):
    pytest.importorskip("fastapi")
    from pentadice.faces.web.routes_rules import rules_answer

    class A:
        def __init__(self, name):
            self.rules = rules.get_rules(name)

    answer = json.loads(rules_answer([A("penta"), A("maxi-yatzy")]))
    by_name = {r["name"]: r for r in answer["rules"]}
    assert by_name["penta"]["win_refusal"] is None
    assert "too large" in by_name["maxi-yatzy"]["win_refusal"]


def test_tables_that_cannot_be_saved_are_held_in_memory_and_one_failure_spares_the_others(small, monkeypatch):
    """A table directory that cannot be written: the server builds the tables all the same and holds them (a
    win game plays); a table whose build fails is said on /api/health and the others are still built."""
    from pentadice.faces.web.preparing import Preparation
    from pentadice.solver import remaining
    from pentadice.tables import chance_tables, win_tables

    sol = solver.solve(SMALL)
    table.save(SMALL, sol.values, small)
    advisor = _advisor(small)

    def no_room(*args, **kwargs):
        raise table.TableError(f"cannot write to {small}: No space left on device")

    monkeypatch.setattr(chance_tables, "save", no_room)
    monkeypatch.setattr(win_tables, "save_tables", no_room)
    prep = Preparation({"penta": advisor}, lambda name: small, build=True, threads=1).start()
    assert prep.wait(120)
    status = _client(prep, advisor).get("/api/health").json()["tables"]["penta"]
    assert status["ready"] and status["win"] == "ready" and status["chances"] == "ready", status
    assert not list(small.glob("penta.chances*")) and not list(small.glob("penta.win*"))
    game = _client(prep, advisor).post("/api/games", json={"players": "Ana,cpu:win", "seed": 2})
    assert game.status_code == 201 and game.json()["chances"] is not None

    def broken(*args, **kwargs):
        raise RuntimeError("a kernel failed")

    monkeypatch.setattr(remaining, "solve", broken)
    from pentadice.players import win

    for module, name in ((chances, "_tables"), (chances, "_instances"), (win, "_cache"), (win, "_endgames")):
        monkeypatch.setattr(module, name, {})  # a fresh process's caches (the session's come back afterwards)
    again = Preparation({"penta": advisor}, lambda name: small, build=True, threads=1).start()
    assert again.wait(120)
    status = _client(again, advisor).get("/api/health").json()["tables"]["penta"]
    assert "the chances table: RuntimeError: a kernel failed" in status["failed"]
    assert status["win"] == "ready" and status["chances"] == "forward" and not status["ready"]


def test_several_workers_report_one_state_and_each_holds_what_the_first_built(small, monkeypatch):
    """`serve --workers 2`: the first worker builds, the other loads each table once it is saved; both answer
    /api/health and a win game's start from their states together, so they say the same at every moment."""
    from pentadice.faces.web.preparing import Preparation, SharedStatus

    sol = solver.solve(SMALL)
    table.save(SMALL, sol.values, small)
    advisor = _advisor(small)
    go = threading.Event()
    real_hold = prepared.hold

    def held_back(*args, **kwargs):  # the first worker's builds wait until the test lets them go
        if kwargs.get("build"):
            go.wait(60)
        return real_hold(*args, **kwargs)

    monkeypatch.setattr(prepared, "hold", held_back)
    shared = SharedStatus(2)
    builder = Preparation({"penta": advisor}, lambda name: small, build=True, threads=1, shared=shared, worker=0)
    follower = Preparation({"penta": advisor}, lambda name: small, build=True, threads=1, shared=shared, worker=1)
    assert builder.build and not follower.build  # only the first worker builds
    builder.start()
    follower.start()
    clients = [_client(builder, advisor), _client(follower, advisor)]
    for client in clients:
        status = client.get("/api/health").json()["tables"]["penta"]
        assert status["ready"] is False and status["win"] == "preparing", status
        assert client.post("/api/games", json={"players": "Ana,cpu:win", "seed": 1}).status_code == 503
    assert builder.status("penta") == follower.status("penta")
    go.set()
    assert builder.wait(120) and follower.wait(120)
    answers = [client.get("/api/health").json()["tables"] for client in clients]
    assert answers[0] == answers[1] and answers[0]["penta"]["ready"], answers
    assert builder._held["penta"] == follower._held["penta"] == set(prepared.GAME_TABLES)
    for client in clients:
        assert client.post("/api/games", json={"players": "Ana,cpu:win", "seed": 1}).status_code == 201


def test_a_worker_builds_what_the_first_could_not_save(small, monkeypatch):
    """The table directory cannot be written: the first worker builds and holds its tables in memory, and the
    other, finding no file to load once the first is done, builds them too; neither waits for ever."""
    from pentadice.faces.web.preparing import Preparation, SharedStatus
    from pentadice.tables import chance_tables, win_tables

    sol = solver.solve(SMALL)
    table.save(SMALL, sol.values, small)
    advisor = _advisor(small)

    def no_room(*args, **kwargs):
        raise table.TableError(f"cannot write to {small}: No space left on device")

    monkeypatch.setattr(chance_tables, "save", no_room)
    monkeypatch.setattr(win_tables, "save_tables", no_room)
    shared = SharedStatus(2)
    builder = Preparation({"penta": advisor}, lambda name: small, build=True, threads=1, shared=shared, worker=0)
    follower = Preparation({"penta": advisor}, lambda name: small, build=True, threads=1, shared=shared, worker=1)
    builder.start()
    follower.start()
    assert builder.wait(180) and follower.wait(180)
    assert follower.status("penta")["ready"] and builder.status("penta") == follower.status("penta")


def test_the_shared_status_survives_a_write_cut_short_and_a_state_too_large():
    from pentadice.faces.web.preparing import HEADER, SLOT_BYTES, SharedStatus

    shared = SharedStatus(2)
    shared.write(1, {"penta": {"held": ["chances"]}})
    HEADER.pack_into(shared.memory, SLOT_BYTES, 3, 0)  # a worker killed in the middle of a write
    assert shared.read(1) is None
    shared.write(1, {"penta": {"held": []}})  # the worker started again writes over it
    assert shared.read(1) == {"penta": {"held": []}}
    shared.write(0, {"penta": {"failed": "x" * SLOT_BYTES}})  # cut at the slot's size: read as nothing
    assert shared.read(0) is None


def test_serve_says_which_tables_it_leaves_out(tmp_path, penta_table_dir, capsys):
    """Without --rules, `serve` serves Penta and every rule set solved there; one whose table cannot be used
    (damaged, of other rules) is left out with a line that says why, not silently."""
    from pentadice.faces.cli.serve import _served_rules

    for name in ("penta.npy", "penta.json"):
        shutil.copy(penta_table_dir / name, tmp_path / name)
        shutil.copy(penta_table_dir / name, tmp_path / name.replace("penta", "kiriki"))  # Penta's, named Kiriki's
    assert _served_rules((), str(tmp_path)) == ["penta"]
    assert "Not serving kiriki: " in (err := capsys.readouterr().err) and "holds the 'penta' rule set" in err
