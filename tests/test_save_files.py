"""Save files: one reader for the terminal, `review`, the API and the page, which posts the file's bytes as they
are (a byte-order mark accepted, bytes that are not UTF-8 refused alike, any damage a GameError and never another
exception); a save with its generator's state goes on with that generator on the server; and where `play` writes
a save (a folder that cannot be written refused before the game, never over a file that is not a saved game,
saved when its output goes away)."""

import codecs
import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from commands import CLI, run  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from saves import PLAY, a_save  # noqa: E402

from pentadice.players.engine import Game, GameError, save_text  # noqa: E402

API_PAGE = Path(__file__).resolve().parent.parent / "docs" / "api.md"  # where the resumed games are documented
BOM = codecs.BOM_UTF8


def test_a_save_with_a_bom_is_accepted_and_a_latin1_one_refused_by_cli_and_api(tmp_path, penta_table_dir, client):
    save = a_save().encode()
    with_bom, latin1 = BOM + save, save.replace(b'"Ana"', b'"An\xe9"')
    (tmp_path / "bom.json").write_bytes(with_bom)
    (tmp_path / "latin1.json").write_bytes(latin1)
    data = str(penta_table_dir)
    review = run("review", str(tmp_path / "bom.json"), "--json", "--data", data)
    assert review.exit_code == 0, review.output
    plain = run("review", "-", "--json", "--data", data, stdin=save)
    assert json.loads(review.stdout) == json.loads(plain.stdout)
    refused = run("review", str(tmp_path / "latin1.json"), "--data", data)
    assert refused.exit_code == 2 and "not UTF-8" in refused.stderr and "Traceback" not in refused.output
    # The page posts the file's bytes as they are to /api/games/resume and /api/review: the same reader.
    assert client.post("/api/games/resume", content=with_bom).status_code == 201
    assert client.post("/api/review", content=with_bom).status_code == 200
    for path in ("/api/games/resume", "/api/review"):
        r = client.post(path, content=latin1)
        assert r.status_code == 400 and "not UTF-8" in r.json()["error"], r.text
    assert "\ufffd" not in json.dumps(client.post("/api/games/resume", content=save).json())
    # play --resume reads it too, and saves back over it (a save with a BOM is still a save to replace).
    played = run("play", "--resume", str(tmp_path / "bom.json"), "--data", data, stdin="quit\n")
    assert played.exit_code == 0 and "Game saved to" in played.output, played.output
    assert Game.from_json((tmp_path / "bom.json").read_bytes()).players[0].name == "Ana"


def test_the_page_sends_the_save_file_bytes_to_the_server():
    """The page decodes nothing itself: it reads the file's bytes and posts them as they are."""
    app = (Path(__file__).resolve().parent.parent / "pentadice/faces/web/static/app.js").read_text()
    assert "file.arrayBuffer()" in app and '"/api/games/resume"' in app
    assert "file.text()" not in app


def test_a_save_with_its_generator_goes_on_with_it_on_the_server(client):
    save = a_save(seed=11, cpu=False)
    local = Game.from_json(save)
    local.roll()
    for r in (
        client.post("/api/games", json={"save": json.loads(save)}),
        client.post("/api/games/resume", content=save.encode()),
    ):
        assert r.status_code == 201, r.text
        rolled = client.post(f"/api/games/{r.json()['id']}/roll", json={"keep": []})
        assert rolled.status_code == 200, rolled.text
        assert tuple(rolled.json()["game"]["dice"]) == local.dice  # the same generator, the same dice
    text = " ".join(API_PAGE.read_text().split())
    assert "a resumed game draws fresh dice)" not in text  # the pages said so of every resumed web game
    assert "goes on with that generator" in text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400), st.booleans())
def test_the_one_save_reader_raises_only_its_own_error(data, bom):
    data = BOM + data if bom else data
    for given_ in (data, save_text(data) if _utf8(data) else data):
        with contextlib.suppress(GameError):
            Game.from_json(given_)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.integers(0, 60), st.binary(max_size=4), st.booleans())
def test_a_real_save_damaged_at_one_place_gives_a_game_or_a_game_error(seed, at, junk, bom):
    save = a_save(seed=seed).encode()
    data = (BOM if bom else b"") + save[:at] + junk + save[at + len(junk) :]
    with contextlib.suppress(GameError):
        Game.from_json(data)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_a_save_file_in_an_unwritable_directory_is_refused_before_the_game(penta_table_dir, tmp_path, monkeypatch):
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(tmp_path) else real_access(p, mode))
    result = run(*PLAY, "--data", str(penta_table_dir), "--save", str(tmp_path / "g.json"), input="best\n")
    assert result.exit_code == 2 and "is not writable" in result.output
    assert "== Ana, turn 1" not in result.output


def test_saving_never_replaces_a_file_that_is_not_a_saved_game(penta_table_dir, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    result = run(*PLAY, "--data", str(penta_table_dir), "--save", str(notes), input="quit\n")
    assert result.exit_code == 2 and "is left alone" in result.output
    save = tmp_path / "g.json"
    result = run(*PLAY, "--data", str(penta_table_dir), "--save", str(save), input=f"save {notes}\nquit\n")
    assert "Not allowed: cannot save the game" in result.output and notes.read_text() == "my notes"
    assert json.loads(save.read_text())["format"] == "pentadice-game"  # and a saved game may be replaced
    again = run(*PLAY, "--data", str(penta_table_dir), "--save", str(save), input="best\nquit\n")
    assert again.exit_code == 0, again.output


def test_play_whose_output_goes_away_still_saves(penta_table_dir, tmp_path):
    save = tmp_path / "g.json"
    cmd = [*CLI, *PLAY, "--data", str(penta_table_dir), "--save", str(save)]
    proc = subprocess.run(
        ["bash", "-c", '"$@" | head -c 100 > /dev/null; exit "${PIPESTATUS[0]}"', "_", *cmd],
        input=b"best\n" * 200,
        capture_output=True,
    )
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert json.loads(save.read_text())["format"] == "pentadice-game"
