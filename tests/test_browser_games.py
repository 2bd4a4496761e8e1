"""Games with their own address, and the history, in a real headless Chromium: a game's page is
``/games/{id}``; a reload, a second tab, another browser and a server started again on the same games database
all open the same game and go on with it (the computer's turns and coach games too); an id the server does not
know says why, with a way to a new game; the history view lists the finished games, the players' statistics and
a player's points lost per decision over their games (an SVG plot whose ticks go in round steps; each column's
figures written one way), and opens a game's review.

The fixtures and the page driver are those of tests/test_browser.py; the server is ``pentadice serve`` on the
session's Penta table with a games database (``--db``) of this module's own, started once and started again by
the test of a restart. Screenshots of the history view (phone 390x844, desktop 1280x800) are written to the
folder named by ``PENTADICE_SCREENSHOTS``.
"""

from __future__ import annotations

import json
import math
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import serving
from test_browser import DESKTOP, PHONE, Page, _faces, _no_horizontal_scroll, _sheet_value, browser, shots  # noqa: F401

GAME_URL = re.compile(r"/games/([A-Za-z0-9_-]{1,64})\?")
NOT_FOUND = "console error: Failed to load resource: the server responded with a status of 404 (Not Found)"


class Served:
    """``pentadice serve`` with a games database, on one port, that can be stopped and started again."""

    def __init__(self, tables: Path, db: Path, logs: Path) -> None:
        self.port = serving.free_port()
        self.args = serving.quiet_serve(self.port, tables, "--db", str(db))
        self.logs = logs
        self.url = f"http://127.0.0.1:{self.port}"
        self.starts = 0
        self._running = None

    def start(self) -> None:
        self.starts += 1
        self._running = serving.started(self.args, self.port, self.logs / f"serve-{self.starts}.log")
        self._running.__enter__()

    def stop(self) -> None:
        running, self._running = self._running, None
        if running is not None:
            running.__exit__(None, None, None)

    def call(self, method: str, path: str, body: dict | bytes | None = None) -> dict:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(request, timeout=120) as answer:
            return json.loads(answer.read())


@pytest.fixture(scope="module")
def served(penta_table_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("games-db")
    server = Served(penta_table_dir, folder / "games.sqlite3", folder)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def page(browser, served):  # noqa: F811 (the fixture of test_browser)
    """A browser page of its own (a context of its own) on the server, at ``path`` when given; its problems
    (script errors, failed requests) checked at the end, but for those a test expects (``pg.expected``)."""
    pages: list[Page] = []

    def make(path: str | None = None, **kw) -> Page:
        pg = Page(browser, served.url, **kw)
        pg.expected = []
        pages.append(pg)
        if path is not None:
            visit(pg, served.url + path)
        return pg

    yield make
    for pg in pages:
        pg.close()
    for pg in pages:
        assert [p for p in pg.problems if p not in pg.expected] == []


def visit(pg: Page, url: str) -> None:
    """The page at ``url`` (with ?fast=1), loaded whole."""
    sep = "&" if "?" in url else "?"
    pg.page.goto(f"{url}{sep}fast=1")
    pg.page.wait_for_selector("body[data-ready='1']")


def second_tab(pg: Page) -> Page:
    """Another page of the same browser context (the same cookies and storage), recorded as the first."""
    other = Page.__new__(Page)
    other.context, other.page, other.problems, other.expected = pg.context, pg.context.new_page(), pg.problems, []
    other.page.on("pageerror", lambda e: other.problems.append(f"page error: {e}"))
    other.page.set_default_timeout(20_000)
    return other


def game_id(pg: Page) -> str:
    found = GAME_URL.search(pg.page.url)
    assert found, pg.page.url
    return found.group(1)


def snapshot(pg: Page) -> dict:
    """What a player sees of the game: the status line, the dice, every cell of the sheet."""
    p = pg.page
    return {
        "status": p.inner_text("#status"),
        "dice": _faces(pg),
        "sheet": p.locator("#sheet tbody").inner_text(),
        "names": p.locator("#sheet thead th.player .name").all_inner_texts(),
    }


def reload(pg: Page) -> None:
    pg.page.reload()
    pg.page.wait_for_selector("body[data-ready='1']")


def test_a_reload_keeps_the_game_and_it_goes_on(page):
    """The address of a new game is /games/{id}; a reload in the middle of a turn shows the same sheets, dice and
    roll, and the game goes on (a box, the computer's turn, the next roll); New game goes back to /."""
    pg = page()
    p = pg.page
    pg.start([("Ana", False), ("cpu", True)], seed=21, auto_commit=False)
    pg.wait_state("roll")
    gid = game_id(pg)
    assert p.url.startswith(f"{pg_base(pg)}/games/{gid}?")
    p.click("#roll")
    pg.wait_state("choose")
    p.locator("#dice .die").nth(0).click()
    p.click("#roll")
    pg.wait_state("choose")
    before = snapshot(pg)
    assert p.inner_text("#roll") == "Roll 3/3"
    reload(pg)
    assert pg.wait_state("choose") == "choose"
    assert game_id(pg) == gid
    assert snapshot(pg) == before
    assert p.inner_text("#roll") == "Roll 3/3"
    assert p.get_attribute("#mode-play", "aria-current") == "page"
    # It goes on: a box, then the computer's whole turn, then Ana's next roll.
    box = p.locator("#sheet button.score").first.get_attribute("data-box")
    p.locator("#sheet button.score").first.click()
    pg.wait_state("roll", timeout=60_000)
    assert _sheet_value(pg, box, 0) != ""
    assert p.locator("#sheet tr.box td:nth-child(3).filled").count() == 1  # the computer's box
    assert "turn 2 of 13" in p.inner_text("#status")
    # The browser's Back goes to the set-up, Forward to the game again (asked of the server).
    p.go_back()
    p.wait_for_selector("#setup:not([hidden])")
    assert p.url.startswith(pg_base(pg) + "/?")
    p.go_forward()
    pg.wait_state("roll")
    assert game_id(pg) == gid and "turn 2 of 13" in p.inner_text("#status")
    p.click("#new-game")
    p.click("#confirm-new-leave")  # the game is not finished: the page asks first
    p.wait_for_selector("#setup:not([hidden])")
    assert p.url.startswith(pg_base(pg) + "/?")


def pg_base(pg: Page) -> str:
    return re.match(r"https?://[^/]+", pg.page.url).group(0)


def test_the_computer_and_a_coach_game_go_on_at_their_address(page, served):
    """A game whose computer plays first, opened by its address, has the page play the computer's turn; a
    coach game opened by its address shows its dice and takes the next roll entered."""
    cpu_first = served.call("POST", "/api/games", {"players": "cpu,Budi", "seed": 5, "auto_commit": None})
    pg = page(f"/games/{cpu_first['id']}")
    p = pg.page
    assert pg.wait_state("roll", timeout=60_000) == "roll"
    assert p.locator("#sheet tr.box td:nth-child(2).filled").count() == 1  # the computer's box
    assert "Budi's turn 1 of 13" in p.inner_text("#status")

    coach = served.call("POST", "/api/games", {"players": "Citra", "dice": "manual", "auto_commit": None})
    served.call("POST", f"/api/games/{coach['id']}/roll", {"keep": [], "dice": [1, 1, 3, 4, 6]})
    visit(pg, f"{served.url}/games/{coach['id']}")
    assert pg.wait_state("choose") == "choose"
    assert p.get_attribute("#mode-coach", "aria-current") == "page"
    assert _faces(pg) == [1, 1, 3, 4, 6]
    assert "Best: Keep 4 and reroll 4 dice" in p.inner_text("#advice")
    p.locator("#dice .die").nth(3).click()  # keep the 4
    for f in (2, 3, 5, 6):
        p.click(f"#pad-faces button[data-face='{f}']")
    p.click("#pad-enter")
    shown = "[...document.querySelectorAll('#dice .die')].map(d => Number(d.dataset.face)).sort().join(' ')"
    p.wait_for_function(f"() => {shown} === '2 3 4 5 6'")
    assert pg.wait_state("choose") == "choose"
    assert served.call("GET", f"/api/games/{coach['id']}")["rolls_left"] == 1


def test_a_second_tab_and_another_browser_show_the_same_game(page, browser):  # noqa: F811
    """The address opened in a second tab of the same browser and in another browser (a context of its own)
    shows the same game; a move made in one shows in the other after a reload."""
    pg = page()
    p = pg.page
    pg.start([("Dewi", False), ("Eko", False)], seed=8, auto_commit=False)
    pg.wait_state("roll")
    p.click("#roll")
    pg.wait_state("choose")
    url = p.url
    here = snapshot(pg)
    tab = second_tab(pg)
    visit(tab, url)
    assert tab.wait_state("choose") == "choose"
    assert snapshot(tab) == here
    elsewhere = page()
    visit(elsewhere, url)
    assert elsewhere.wait_state("choose") == "choose"
    assert snapshot(elsewhere) == here
    # Dewi scores in the other browser; the first tab, reloaded, shows it: Eko's turn.
    box = elsewhere.page.locator("#sheet button.score").first.get_attribute("data-box")
    points = elsewhere.page.locator("#sheet button.score").first.inner_text()
    elsewhere.page.locator("#sheet button.score").first.click()
    elsewhere.wait_state("roll")
    reload(pg)
    pg.wait_state("roll")
    assert _sheet_value(pg, box, 0) == points
    assert "Eko's turn 1 of 13" in p.inner_text("#status")
    # Eko rolls in the first tab; the second tab, reloaded, shows his dice.
    p.click("#roll")
    pg.wait_state("choose")
    dice = _faces(pg)
    reload(tab)
    tab.wait_state("choose")
    assert _faces(tab) == dice and snapshot(tab) == snapshot(pg)


def test_the_game_goes_on_after_the_server_starts_again(page, served):
    """The server stopped and started again on the same database: a reload of the page goes on with the game (of
    one player: no chances of winning being computed when the server stops)."""
    pg = page()
    p = pg.page
    pg.start([("Fitri", False)], seed=13, auto_commit=False)
    pg.wait_state("roll")
    p.click("#roll")
    pg.wait_state("choose")
    gid = game_id(pg)
    before = snapshot(pg)
    served.stop()
    served.start()
    reload(pg)
    assert pg.wait_state("choose") == "choose"
    assert game_id(pg) == gid
    assert snapshot(pg) == before
    p.click("#roll")
    pg.wait_state("choose")
    assert p.inner_text("#roll") == "Roll 3/3"


def test_an_unknown_game_says_why_and_offers_a_new_one(page):
    """/games/xyz: the server's words (what it keeps, and for how long), a working way to a new game; no page
    of disabled controls."""
    pg = page("/games/xyz")
    p = pg.page
    pg.expected.append(NOT_FOUND)
    assert pg.state() == "gone"
    assert p.inner_text("#gone-title") == "This game is not here"
    text = p.inner_text("#gone-text")
    assert "no such game 'xyz'" in text and "not played for" in text and "days is removed" in text
    assert p.locator("#setup").is_hidden() and p.locator("#game").is_hidden()
    assert p.locator("#gone-retry").is_hidden()
    p.click("#gone-new")
    p.wait_for_selector("#setup:not([hidden])")
    assert p.url.startswith(pg_base(pg) + "/?")
    pg.start([("Gita", False)], seed=2, auto_commit=False)
    pg.wait_state("roll")
    assert GAME_URL.search(p.url)
    # The server answers a game's address with the page (its headers, its ETag), and no other path under /games/.
    with urllib.request.urlopen(pg_base(pg) + "/games/xyz") as answer:
        assert answer.status == 200 and b'src="/app.js"' in answer.read()
        assert "default-src 'self'" in answer.headers["Content-Security-Policy"]
        tag = answer.headers["ETag"]
    with urllib.request.urlopen(pg_base(pg) + "/") as answer:
        assert answer.headers["ETag"] == tag
    again = urllib.request.Request(pg_base(pg) + "/history", headers={"If-None-Match": tag})
    for path, code in (("/history", 304), ("/games/x.y", 404), ("/games/xyz/more", 404), ("/games/" + "a" * 65, 404)):
        request = again if path == "/history" else pg_base(pg) + path
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        assert refused.value.code == code, path


def play_whole_game(served: Served, players: str, seed: int, slips: bool) -> dict:
    """A whole game through the API: a person plays the advisor's best moves (with ``slips``, the worst box at
    every third turn's end), a computer its own; the last view."""
    game = served.call("POST", "/api/games", {"players": players, "seed": seed, "auto_commit": None})
    gid = game["id"]
    while not game["over"]:
        if game["players"][game["current"]]["computer"]:
            game = served.call("POST", f"/api/games/{gid}/computer")["game"]
            continue
        if game["dice"] is None:
            game = served.call("POST", f"/api/games/{gid}/roll", {"keep": []})["game"]
            continue
        advice = game["advice"]
        boxes = [o for o in advice["options"] if o["action"] == "score"]
        if slips and game["turn"] % 3 == 0 and game["rolls_left"] == 0:
            move = min(boxes, key=lambda o: o["value"])
        else:
            move = advice["best"]
        if move["action"] == "keep":
            game = served.call("POST", f"/api/games/{gid}/roll", {"keep": move["keep"]})["game"]
        else:
            game = served.call("POST", f"/api/games/{gid}/score", {"box": move["box"]})["game"]
    return game


def finish_from_save(served: Served, name: str) -> str:
    """A game of one player at the last roll of the last turn (a save posted), finished by one box: its id."""
    filled = {
        "ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18, "three_of_a_kind": 20,
        "four_of_a_kind": 0, "full_house": 25, "small_straight": 30, "large_straight": 40, "penta": 0,
    }  # fmt: skip
    save = {
        "format": "pentadice-game",
        "rules": "penta",
        "players": [{"name": name, "computer": False, "turns": 12, "sheet": filled}],
        "current": 0,
        "dice": [2, 3, 4, 5, 6],
        "rolls_made": 3,
        "auto_commit_seconds": None,
        "coach": True,
    }
    game = served.call("POST", "/api/games/resume", json.dumps(save).encode())
    assert served.call("POST", f"/api/games/{game['id']}/score", {"box": "chance"})["game"]["over"]
    return game["id"]


def test_the_history_lists_the_games_players_and_plot(page, served, shots):  # noqa: F811
    """Finished games in the history (the latest first, 20 at a time, "More games"), the players' statistics with
    the expert marker, a player's plot of their loss per decision over their games, and a game's review."""
    first = play_whole_game(served, "Hana,cpu", seed=31, slips=True)
    last = play_whole_game(served, "Hana,cpu", seed=32, slips=False)
    for _ in range(20):
        finish_from_save(served, "Pager")
    total = served.call("GET", "/api/history?limit=1")["total"]
    assert total >= 22
    hana = served.call("GET", "/api/players/Hana")
    assert [g["id"] for g in hana["games"]] == [first["id"], last["id"]]

    pg = page(size=PHONE)
    p = pg.page
    p.click("#mode-history")
    p.wait_for_selector("#games-table tbody tr")
    assert p.url.startswith(pg_base(pg) + "/history?")
    assert p.locator("#history-empty").is_hidden()
    assert p.inner_text("#history-count") == f"Finished games: {total}"
    rows = p.locator("#games-table tbody tr")
    assert rows.count() == 20
    assert p.locator("#history-more").is_visible()
    p.click("#history-more")
    p.wait_for_function(f"() => document.querySelectorAll('#games-table tbody tr').length === {total}")
    assert p.locator("#history-more").is_hidden()
    # Hana's two games, with both players' scores and the winner.
    for game in (first, last):
        row = p.locator(f"#games-table tbody tr[data-game='{game['id']}']")
        cells = row.locator("td")
        assert cells.nth(1).inner_text() == "Penta"
        who = cells.nth(2).inner_text()
        for player in game["players"]:
            name = player["name"] + (" (computer)" if player["computer"] else "")
            assert f"{name} {player['totals']['total']}" in who
        winners = game["winners"]
        said = ", ".join(winners)
        assert cells.nth(3).inner_text() == (said if len(winners) == 1 else f"A tie: {said}")
    # The players' statistics: Hana's row says what the API says.
    stats = next(s for s in served.call("GET", "/api/players")["players"] if s["name"] == "Hana")
    row = p.locator("#players-table tbody tr[data-player='Hana']")
    cells = row.locator("td").all_inner_texts()
    assert cells[:4] == ["Penta", "2", str(stats["wins"]), f"{stats['mean_score']:.1f}"]
    assert cells[4] == str(stats["best_score"])
    assert ("expert" in cells[5]) == stats["expert"]
    cpu = p.locator("#players-table tbody tr[data-player='cpu']")
    assert "computer" in cpu.inner_text() and "expert" in cpu.locator("td").last.inner_text()  # the optimal player
    # Hana's plot: her two games, the expert line, the axes' labels; her scores in the table under it.
    row.locator("button.link").click()
    p.wait_for_selector("#player-plot svg.loss-plot")
    svg = p.locator("#player-plot svg")
    assert svg.locator("circle.dot").count() == 2
    assert svg.locator("line.expert-line").count() == 1
    labels = svg.locator("text.axis-label").all_text_contents()
    assert labels == ["Games, in the order played", "Points lost per decision"]
    assert "expert play below 0.2" in svg.locator("text.expert-label").text_content()
    assert p.inner_text("#player-title") == "Hana under Penta"
    scores = p.locator("#player-games tbody tr td:nth-child(3)").all_inner_texts()
    assert scores == [str(last["players"][0]["totals"]["total"]), str(first["players"][0]["totals"]["total"])]
    _no_horizontal_scroll(pg)
    if os.environ.get("PENTADICE_SCREENSHOTS"):
        p.screenshot(path=str(shots / "phone-history.png"), full_page=True)
    # The review of her first game, in the review view, and back.
    p.locator(f"#player-games tbody tr[data-game='{first['id']}'] button").click()
    p.wait_for_selector("#review:not([hidden]) .player-review")
    assert p.locator(".player-review h3").all_inner_texts() == ["Hana", "cpu (computer)"]
    assert "Mean loss per decision" in p.inner_text("#review-out")
    p.click("#review-back")
    p.wait_for_selector("#games-table tbody tr")
    assert p.url.startswith(pg_base(pg) + "/history?")

    # /history is the view's address; at a desktop's width, with the plot of Hana's games.
    wide = page("/history", size=DESKTOP)
    w = wide.page
    w.wait_for_selector("#games-table tbody tr")
    assert w.get_attribute("#mode-history", "aria-current") == "page"
    w.locator("#players-table tbody tr[data-player='Hana'] button.link").click()
    w.wait_for_selector("#player-plot svg.loss-plot")
    if os.environ.get("PENTADICE_SCREENSHOTS"):
        w.screenshot(path=str(shots / "desktop-history.png"), full_page=True)


LOSS_CELL = re.compile(r"(\d+\.\d\d|< 0\.01|\u2013)( expert)?")  # \u2013: the dash of no figure


def y_ticks(pg: Page) -> list[str]:
    """The labels of the plot's figures up its side (those along the bottom are the games' numbers)."""
    return pg.page.locator("#player-plot svg text.tick[text-anchor='end']").all_text_contents()


def assert_round_steps(labels: list[str]) -> None:
    """Ticks from 0 in equal steps of 1, 2, 2.5 or 5 times a power of ten, all written with the decimals of the
    step and no more (0.0, 0.1, 0.2; 0, 1, 2; 0.00, 0.25, 0.50)."""
    assert len(labels) >= 3, labels
    values = [float(x) for x in labels]
    step = values[1] - values[0]
    assert values[0] == 0 and all(abs(v - i * step) < 1e-9 for i, v in enumerate(values)), labels
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert any(abs(mantissa - m) < 1e-9 for m in (1, 2, 2.5, 5)), labels
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) + (1 if abs(mantissa - 2.5) < 1e-9 else 0)
    assert {len(x.partition(".")[2]) for x in labels} == {decimals}, labels


def test_the_history_writes_each_figure_one_way_and_its_plot_in_round_steps(page, served):
    """The history's points lost per decision (its header says so) are written one way down the column: two
    decimals (0.00 and 1.63, never 0.000 beside 0.40); the plot's figures go up in round steps (0.0, 0.1, 0.2, 0.3
    for a player who plays the advisor's moves, whose ticks fell on 0.08, 0.15 and 0.23; whole points for one who
    slips), each tick with the same decimals."""
    best = play_whole_game(served, "Nina", seed=41, slips=False)
    slips = play_whole_game(served, "Omar", seed=42, slips=True)
    assert best["over"] and slips["over"]
    pg = page("/history", size=PHONE)
    p = pg.page
    p.wait_for_selector("#players-table tbody tr[data-player='Nina']")
    header = p.locator("#players-table thead th").all_inner_texts()
    assert header[-1] == "Points lost per decision", header
    cells = p.locator("#players-table tbody tr td:last-child").all_inner_texts()
    assert cells and all(LOSS_CELL.fullmatch(c.strip()) for c in cells), cells
    nina = p.locator("#players-table tbody tr[data-player='Nina'] td:last-child").inner_text()
    assert nina.startswith("0.00"), nina  # the advisor's moves lose nothing
    for name in ("Nina", "Omar"):
        p.locator(f"#players-table tbody tr[data-player='{name}'] button.link").click()
        p.wait_for_function("n => document.getElementById('player-title').textContent.startsWith(n)", arg=name)
        p.wait_for_selector("#player-plot svg.loss-plot")
        ticks = y_ticks(pg)
        assert_round_steps(ticks)
        if name == "Nina":
            assert ticks == ["0.0", "0.1", "0.2", "0.3"], ticks  # up to 1.5 times the expert line, 0.2
        games = p.locator("#player-games tbody tr td:nth-child(5)").all_inner_texts()
        assert games and all(LOSS_CELL.fullmatch(c.strip()) for c in games), games
        assert p.locator("#player-games thead th").nth(4).inner_text() == "Points lost per decision"


def test_an_empty_history_says_so(browser, tmp_path, penta_table_dir):  # noqa: F811
    """A server with no finished game: the history says so in a sentence, in the page's language."""
    server = Served(penta_table_dir, tmp_path / "empty.sqlite3", tmp_path)
    server.start()
    try:
        pg = Page(browser, server.url, size=PHONE, lang="id")
        try:
            visit(pg, server.url + "/history?lang=id")
            p = pg.page
            p.wait_for_selector("#history-empty:not([hidden])")
            messages = server.call("GET", "/api/messages?lang=id")["messages"]
            key = "No finished games yet. Play one to the end and it shows here, with its review."
            assert p.inner_text("#history-empty") == messages[key] != key
            assert p.locator("#history-games").is_hidden() and p.locator("#history-players").is_hidden()
            assert pg.problems == []
        finally:
            pg.close()
    finally:
        server.stop()
