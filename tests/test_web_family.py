"""The game API on the Yatzy family's sheets: a game of each rule set, its dice, its boxes and its threshold."""

import re
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="no fastapi: make install (the [web] extra)")
from family_server import advisor, loaded, saved_yatzy, six_dice_game
from fastapi.testclient import TestClient

from pentadice.faces.web.api import create_app
from pentadice.game import rules


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    # Yatzy's table and second moments: the session's, saved once (tests/family_server.py), not solved again here.
    yatzy = loaded(rules.get_rules("yatzy"), saved_yatzy(tmp_path_factory))
    app = create_app({"yatzy": yatzy, "maxi-yatzy": advisor(six_dice_game())})
    with TestClient(app) as c:
        yield c


def test_the_rules_describe_each_sheet(client):
    described = {r["name"]: r for r in client.get("/api/rules").json()["rules"]}
    yatzy, six = described["yatzy"], described["maxi-yatzy"]
    assert [b["id"] for b in yatzy["boxes"]] == [b.id for b in rules.YATZY_SHEET]
    assert yatzy["dice"] == 5 and yatzy["upper_threshold"] == 63 and yatzy["upper_bonus"] == 50
    assert six["dice"] == 6 and six["upper_threshold"] == 75
    assert [b["section"] for b in six["boxes"]] == ["upper"] * 6 + ["lower"] * 3


@pytest.mark.parametrize(("name", "dice", "boxes"), [("yatzy", 5, 15), ("maxi-yatzy", 6, 9)])
def test_a_game_rolls_the_sheets_dice_and_plays_to_the_end(client, name, dice, boxes):
    made = client.post("/api/games", json={"players": "Ana", "rules": name, "seed": 3, "auto_commit": None})
    assert made.status_code == 201, made.text
    gid = made.json()["id"]
    for turn in range(boxes):
        first = client.post(f"/api/games/{gid}/roll", json={"keep": []}).json()["played"]
        assert len(first["rolled"]) == dice
        kept = client.post(f"/api/games/{gid}/roll", json={"keep": sorted(first["rolled"])[:2]}).json()["played"]
        assert len(kept["dice"]) == dice
        view = client.get(f"/api/games/{gid}").json()
        assert len(view["dice"]) == dice and len(view["legal"]) == boxes - turn
        box = min(view["legal"], key=lambda b: (view["legal"][b], b))
        scored = client.post(f"/api/games/{gid}/score", json={"box": box})
        assert scored.status_code == 200, scored.text
    final = client.get(f"/api/games/{gid}").json()
    assert final["over"] and len(final["players"][0]["sheet"]) == boxes


def test_a_box_of_another_sheet_is_refused(client):
    gid = client.post("/api/games", json={"players": "Ana", "rules": "yatzy", "seed": 1}).json()["id"]
    answer = client.post(f"/api/games/{gid}/score", json={"box": "penta"})
    assert answer.status_code == 422 and "has no Penta box" in answer.json()["error"]


def test_the_page_has_a_shortcut_letter_for_each_box_of_the_largest_sheet():
    """The page and the rules agree on the largest sheet: a letter for each of ``rules.MAX_BOXES`` boxes (never
    r, which rolls), and the largest registered sheet is that large."""
    source = (Path(rules.__file__).parents[1] / "faces" / "web" / "static" / "app.js").read_text()
    keys = re.search(r'const BOX_KEYS = "([a-z]+)"', source).group(1)
    assert len(set(keys)) == len(keys) == rules.MAX_BOXES and "r" not in keys
    assert max(rs.n_boxes for rs in rules.REGISTRY.values()) == rules.MAX_BOXES
