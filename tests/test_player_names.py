"""Player names where they enter: a name with a control or invisible character (a zero-width space, a joiner,
a soft hyphen, a filler, a variation selector on a letter) is refused wherever a name is given, 422 in the API
(new games, as text or a list, saved games posted, the history's player asked for) and a usage error in
``pentadice play``; what a screen shows stays one name (an emoji's own joiners pass)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse

import pytest

from pentadice.game import rules
from pentadice.players.engine import Game, GameError, name_key, parse_players, valid_name

DECEIVING = [
    "Ana\u200b",
    "An\u200da",
    "\u2060Ana",
    "Ana\u00ad",
    "\u3164Ana",
    "A\ufe0fna",
    "Ana\x1b[2J",
    "Ana\u202e",
    "Ana\u2800",
    "Ana\U000e0041",
    "An\u2028a",
    "Ana\U000e0100",  # a variation selector of the supplement
    "An\u17b4a",  # Khmer's inherent vowel, shown as nothing
    "Ana\u180b",  # a Mongolian free variation selector
    "❤\U000e0041\U000e006e\U000e0061",  # tag characters after a symbol: text no screen shows
    "❤\ufe0f\ufe0f\ufe0f",  # selectors beyond an emoji's one
    "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074",  # a flag's tags without their end
]
SCOTLAND = "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
SHOWN = ["Ana", "Zoë", "\uff22\uff4f", "👨\u200d👩\u200d👧", "❤\ufe0f", "1\ufe0f\u20e3", "👍🏽", "Jean-Luc",
         SCOTLAND, "🏳\ufe0f\u200d🌈", "🏴\u200d☠\ufe0f", "Ana \u203c\ufe0f", "\u2139\ufe0f",
         "\u2194\ufe0f"]  # fmt: skip


@pytest.mark.parametrize("name", DECEIVING)
def test_a_name_with_an_invisible_or_control_character_is_refused(name):
    with pytest.raises(GameError, match=r"invisible|control"):
        valid_name(name)
    with pytest.raises(GameError, match=r"invisible|control"):
        parse_players(f"{name},cpu")
    with pytest.raises(GameError, match=r"invisible|control"):
        parse_players(f"Bo,cpu:{name}")


@pytest.mark.parametrize("name", SHOWN)
def test_names_that_show_what_they_are_pass_emoji_included(name):
    assert valid_name(name) == name
    assert [p.name for p in parse_players(f"{name},cpu")] == [name, "cpu"]


def test_a_name_whose_ligatures_spell_out_past_twice_the_length_is_refused():
    assert valid_name("\u3315" * 12) == "\u3315" * 12  # twelve squared kiloguramu: 60 characters spelt out
    with pytest.raises(GameError, match="written out"):
        valid_name("\ufdfa" * 4)  # 72 characters spelt out


def test_a_letter_stacked_with_combining_marks_is_refused_a_pointed_letter_passes():
    assert valid_name("\u05e9\u05c1\u05b4\u0596t") and valid_name("Vie\u0323\u0302t")  # Hebrew, Vietnamese
    with pytest.raises(GameError, match="combining marks"):
        valid_name("Ana" + "\u0301" * 12)


def test_names_that_show_alike_are_one_player_however_they_are_stored():
    assert name_key("Ana\U000e0100") == name_key("An\u17b4a") == name_key("Ana\u180b") == "Ana"
    with pytest.raises(GameError, match="look the same"):
        parse_players("Ana,Ana\U000e0100")


@pytest.mark.parametrize("name", ["Ana\u200b", "Ana\u00ad", "Ana\x07", "Ana\U000e0100", "❤\U000e0041"])
def test_the_api_refuses_such_a_name_in_every_place_a_name_is_given(client, name):
    def refused(r) -> str:
        assert r.status_code == 422, r.text
        assert "invisible" in r.json()["error"] or "control" in r.json()["error"]
        return r.json()["error"]

    refused(client.post("/api/games", json={"players": f"{name},cpu"}))
    refused(client.post("/api/games", json={"players": f"Bo,cpu:{name}"}))
    refused(client.post("/api/games", json={"players": [{"name": "Bo"}, {"name": name}]}))
    refused(client.post("/api/games", json={"players": [{"name": name}], "shared": True}))
    save = json.loads(Game(rules.get_rules("penta"), parse_players("Ana,cpu"), 1).to_json())
    save["players"][0]["name"] = name
    refused(client.post("/api/games", json={"save": save}))
    refused(client.post("/api/games/resume", content=json.dumps(save)))
    refused(client.get("/api/history", params={"player": name}))
    refused(client.get(f"/api/players/{urllib.parse.quote(name)}"))


def test_the_api_takes_names_that_show_what_they_are(client):
    r = client.post("/api/games", json={"players": [{"name": "👨\u200d👩\u200d👧"}, {"name": "Zoë"}], "shared": True})
    assert r.status_code == 201, r.text
    assert [s["name"] for s in r.json()["seats"]] == ["👨\u200d👩\u200d👧", "Zoë"]
    assert client.get("/api/history", params={"player": "Zoë"}).status_code == 200


def test_play_refuses_such_a_name_with_a_usage_error():
    done = subprocess.run(
        [sys.executable, "-m", "pentadice", "play", "--players", "Ana\u200b,cpu"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "invisible character (U+200B)" in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("Error:")


def test_a_player_whose_name_holds_a_slash_has_their_page(client):
    game = client.post("/api/games", json={"players": "cpu:AC/DC,cpu:Bo", "seed": 4}).json()
    for _ in range(2 * 13 * 4):  # a computer's step at a time: up to three rolls, then its box
        view = client.post(f"/api/games/{game['id']}/computer", json={}).json()["game"]
        if view["over"]:
            break
    assert view["over"], view
    r = client.get(f"/api/players/{urllib.parse.quote('AC/DC', safe='')}")
    assert r.status_code == 200, r.text
    assert r.json()["name"] == "AC/DC" and r.json()["games"][0]["id"] == game["id"]
