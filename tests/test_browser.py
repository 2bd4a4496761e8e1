"""The page in a real headless Chromium: a whole game (holds, rolls, a box, the auto-commit, the computer's
turns, the winner), a coach game with undo, the review of a game and of a saved file, a hostile player name,
the phone width, the keyboard and the second language.

Playwright (the Python package) drives Debian's ``/usr/bin/chromium``: no browser is downloaded. Without it
the tests are skipped with the command that installs it (``make browser``). The server is the real one,
``pentadice serve`` in a subprocess on a free port. The page runs with ``?fast=1`` (short pauses for the
computer); the auto-commit keeps its real 3 seconds.

Screenshots (phone 390x844, desktop 1280x800) are written to a temporary folder, or to the folder named by
``PENTADICE_SCREENSHOTS`` (``PENTADICE_SCREENSHOTS=docs/screenshots`` refreshes the README's pictures).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import serving

CHROMIUM = os.environ.get("PENTADICE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
XSS = "<img src=x onerror=alert(1)>"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}

if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)) and not shutil.which("chromium"):
    pytest.skip("no chromium: install the browser: make browser", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="no playwright: make install")
pytest.importorskip("fastapi", reason="no fastapi: make install (the [web] extra)")
if not os.path.isfile(CHROMIUM):
    CHROMIUM = shutil.which("chromium")
_free_port = serving.free_port  # (imported from here by the other browser tests)


@pytest.fixture(scope="module")
def tables(penta_table_dir, tmp_path_factory) -> Path:
    """The session's Penta table, with Yahtzee's and Kiriki's (their sheets differ: the box's name, the bonus)."""
    from solutions import solved

    from pentadice.tables import table

    directory = tmp_path_factory.mktemp("browser-tables")
    for f in Path(penta_table_dir).iterdir():
        shutil.copy(f, directory / f.name)
    for name in ("yahtzee", "kiriki"):
        sol = solved(name)
        table.save(sol.rules, sol.values, directory)
    return directory


def running(args: list[str], port: int, log: Path, seconds: float, what: str):
    """Start the server ``args`` (logging to ``log``), wait until ``/api/health`` answers on ``port``, yield its
    base URL, and stop it afterwards: the body of a server fixture (``yield from``)."""
    with serving.started(args, port, log, seconds, what):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def server(tables, tmp_path_factory):
    """``pentadice serve`` on a free port, with the tables of ``tables``; its base URL."""
    port = _free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    # The tables the server holds are those saved (--no-prepare: nothing built in the background meanwhile).
    args = [sys.executable, "-m", "pentadice", "serve", "--port", str(port), "--data", str(tables), "--no-prepare"]
    yield from running(args, port, log, 120, "pentadice serve")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = os.environ.get("PENTADICE_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


class Page:
    """One browser page on the server, recording what must never happen: script errors, CSP violations,
    dialogs (an injected ``alert``), failed requests outside the server."""

    def __init__(self, browser, server: str, size=DESKTOP, lang="en", query="fast=1") -> None:
        # No service worker here: page.route does not see the requests a worker makes (Playwright), and these
        # tests are of the page online; tests/test_offline_app.py tests the worker.
        self.context = browser.new_context(
            viewport=size, locale="id-ID" if lang == "id" else "en-US", accept_downloads=True, service_workers="block"
        )
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("dialog", lambda d: (self.problems.append(f"dialog: {d.message}"), d.dismiss()))
        self.page.on(
            "console",
            lambda m: self.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
        )
        self.page.on(
            "request",
            lambda r: (
                None if r.url.startswith((server, "blob:", "data:")) else self.problems.append(f"request to {r.url}")
            ),
        )
        self.page.set_default_timeout(20_000)
        sep = "&" if query else ""
        self.page.goto(f"{server}/?{query}{sep}lang={lang}")
        self.page.wait_for_selector("body[data-ready='1']")
        self.page.evaluate(  # every announcement of the live region, kept: the next one may replace it at once
            """() => { const el = document.getElementById("live"); window.__announced = [];
                new MutationObserver(() => window.__announced.push(el.textContent))
                    .observe(el, {childList: true, characterData: true, subtree: true}); }"""
        )

    def state(self) -> str:
        return self.page.evaluate("document.body.dataset.state")

    def wait_state(self, *states: str, timeout: float = 30_000) -> str:
        expr = "states => states.includes(document.body.dataset.state)"
        self.page.wait_for_function(expr, arg=list(states), timeout=timeout)
        return self.state()

    def start(self, players: list[tuple[str, bool]], *, seed: int | None = None, hints=False, auto_commit=True) -> None:
        p = self.page
        while p.locator("#player-list li").count() < len(players):
            p.click("#add-player")
        while p.locator("#player-list li").count() > len(players):
            p.locator("#player-list li").last.locator("button").click()
        for i, (name, computer) in enumerate(players):
            row = p.locator("#player-list li").nth(i)
            row.locator("input[type=text]").fill(name)
            box = row.locator("input[type=checkbox]")
            if box.is_visible():
                box.set_checked(computer)
        if seed is not None and p.locator("#seed").is_visible():
            p.fill("#seed", str(seed))
        p.locator("#hints").set_checked(hints)
        if p.locator("#autocommit").is_visible():
            p.locator("#autocommit").set_checked(auto_commit)
        p.click("#start")
        p.wait_for_selector("#game:not([hidden])")

    def live(self) -> str:
        return self.page.text_content("#live") or ""

    def announced(self) -> list[str]:
        """Every text the live region has held since the page loaded, in order."""
        return self.page.evaluate("window.__announced")

    def close(self) -> None:
        self.context.close()

    def assert_clean(self) -> None:
        assert self.problems == []


@pytest.fixture
def page(browser, server):
    pages: list[Page] = []

    def make(**kw) -> Page:
        pages.append(Page(browser, server, **kw))
        return pages[-1]

    yield make
    for p in pages:
        p.close()
    for p in pages:
        p.assert_clean()


def _sheet_value(pg: Page, box: str, column: int) -> str:
    """The text of a box's cell in a player's column (0: the first player)."""
    return pg.page.locator(f"#sheet tr[data-box='{box}'] td").nth(column).inner_text().strip()


def _faces(pg: Page) -> list[int]:
    """The faces of the dice showing, read at once."""
    return pg.page.evaluate("[...document.querySelectorAll('#dice .die')].map(d => Number(d.dataset.face))")


def _wait_faces(pg: Page, faces: list[int]) -> None:
    faces_now = "[...document.querySelectorAll('#dice .die')].map(d => Number(d.dataset.face))"
    pg.page.wait_for_function(f"want => JSON.stringify({faces_now}) === JSON.stringify(want)", arg=faces)


def _no_horizontal_scroll(pg: Page) -> None:
    width = pg.page.evaluate("document.documentElement.scrollWidth")
    inner = pg.page.evaluate("window.innerWidth")
    assert width <= inner, f"the page is {width} px wide in a {inner} px window"


def test_whole_game_against_the_computer(page, shots):
    """Holds, rolls, the auto-commit after its countdown, boxes by click and by key, the computer's turns, the
    winner, the review, the save file and its review."""
    pg = page(size=DESKTOP)
    p = pg.page
    pg.start([("Ana", False), ("cpu", True)], seed=7, hints=True)
    assert pg.wait_state("roll") == "roll"
    assert p.inner_text("#roll") == "Roll 1/3"
    p.click("#roll")
    pg.wait_state("choose")
    dice = p.locator("#dice .die")
    assert dice.count() == 5
    assert p.inner_text("#roll") == "Roll 2/3"
    # Hold die 1 by a click, die 2 by its key: the labels say so, and the roll keeps their faces.
    first, second = dice.nth(0).get_attribute("data-face"), dice.nth(1).get_attribute("data-face")
    dice.nth(0).click()
    p.keyboard.press("2")
    assert dice.nth(0).get_attribute("aria-pressed") == "true"
    label = dice.nth(1).get_attribute("aria-label")
    assert label.startswith("Die 2: ") and label.endswith(", held"), label
    assert p.locator("#advice").is_visible()  # hints: the advisor's keep and each box's expected score
    assert "Best:" in p.inner_text("#advice")
    assert p.locator("#sheet th.hint").count() == 1
    if os.environ.get("PENTADICE_SCREENSHOTS"):
        p.screenshot(path=str(shots / "desktop-play.png"))
    p.keyboard.press("r")
    pg.wait_state("choose")
    faces = _faces(pg)
    kept = sorted([int(first), int(second)])
    assert all(faces.count(f) >= kept.count(f) for f in kept)
    assert p.inner_text("#roll") == "Roll 3/3"
    p.click("#roll")
    pg.wait_state("last")
    # The last roll: a visible countdown names the advisor's box, then fills it.
    assert p.locator("#countdown").is_visible()
    if os.environ.get("PENTADICE_SCREENSHOTS"):
        p.screenshot(path=str(shots / "desktop-countdown.png"))
    text = p.inner_text("#countdown-text")
    pending = p.locator("#sheet button.score.pending")
    assert pending.count() == 1
    box = pending.get_attribute("data-box")
    assert "filled for you in" in text
    started = time.monotonic()
    pg.wait_state("computer", "roll")
    assert time.monotonic() - started > 1.5  # it waited (3 s from the roll)
    assert any("filled for you" in text for text in pg.announced())  # the computer's turn may follow at once
    assert _sheet_value(pg, box, 0) != ""
    # The computer's turn, step by step, then Ana's.
    pg.wait_state("roll")
    cpu_filled = p.locator("#sheet tr.box td:nth-child(3).filled").count()
    assert cpu_filled == 1
    turn = 1
    while pg.state() != "over":
        turn += 1
        p.keyboard.press("r")
        pg.wait_state("choose", "last")
        if turn == 2:  # all three rolls (Enter with nothing in focus rolls); Esc stops the countdown
            for _ in range(2):
                p.evaluate("document.activeElement && document.activeElement.blur()")
                p.keyboard.press("Enter")
                pg.wait_state("choose", "last")
            assert pg.state() == "last" and p.locator("#countdown").is_visible()
            p.keyboard.press("Escape")
            assert not p.locator("#countdown").is_visible()
            p.wait_for_timeout(3500)
            assert pg.state() == "last"  # nothing was filled: the player chooses
        if turn % 2:  # a box by its button
            p.locator("#sheet button.score").first.click()
        else:  # a box by its letter key: the first box open and allowed
            key = p.locator("#sheet button.score").first.get_attribute("aria-keyshortcuts")
            p.keyboard.press(key.lower())
        assert pg.wait_state("computer", "busy", "roll", "over", timeout=10_000)
        pg.wait_state("roll", "over", timeout=60_000)
    assert turn == 13
    winner = p.inner_text("#winner")
    totals = [int(p.locator("#sheet tr.total td").nth(i).inner_text()) for i in range(2)]
    name = "Ana" if totals[0] > totals[1] else "cpu"
    assert winner == (
        f"A tie: Ana, cpu with {totals[0]} points"
        if totals[0] == totals[1]
        else f"{name} wins with {max(totals)} points"
    )
    assert p.locator("#sheet tr.box td.filled").count() == 26
    if os.environ.get("PENTADICE_SCREENSHOTS"):
        p.screenshot(path=str(shots / "desktop-over.png"), full_page=True)

    # Save: the download is the server's save, and loading it into the review shows the same figures.
    with p.expect_download() as info:
        p.click("#save")
    saved = Path(info.value.path()).read_text()
    assert json.loads(saved)["format"] == "pentadice-game"
    p.click("#review-game")
    p.wait_for_selector("#review:not([hidden]) .player-review")
    review = p.inner_text("#review-out")
    assert "Ana" in review and "Mean loss per decision" in review
    assert "below 0.2" in review
    means = p.locator(".player-review .stats dd").all_inner_texts()
    if os.environ.get("PENTADICE_SCREENSHOTS"):
        p.screenshot(path=str(shots / "desktop-review.png"), full_page=True)
    p.set_input_files(
        "#review-file", files=[{"name": "game.json", "mimeType": "application/json", "buffer": saved.encode()}]
    )
    p.wait_for_function("document.querySelectorAll('#review-out .player-review').length === 2")
    p.wait_for_timeout(200)
    assert p.locator(".player-review .stats dd").all_inner_texts() == means


def test_coach_game_with_undo(page, shots):
    """Real dice entered face by face, the advisor's best keep and box and every choice's cost, undo."""
    pg = page(size=PHONE)
    p = pg.page
    p.click("#mode-coach")
    pg.start([("Budi", False)])
    pg.wait_state("roll")
    assert p.locator("#pad").is_visible() and not p.locator("#roll").is_visible()

    def enter(*faces: int) -> None:
        for f in faces:
            p.click(f"#pad-faces button[data-face='{f}']")
        p.click("#pad-enter")

    enter(1, 1, 3, 4, 6)
    pg.wait_state("choose")
    assert _faces(pg) == [1, 1, 3, 4, 6]
    advice = p.inner_text("#advice")
    assert "Best: Keep 4 and reroll 4 dice" in advice  # as `pentadice advise 1 1 3 4 6`
    assert "Best box if you score now: Ones: 2 points" in advice
    p.click("#advice summary")
    assert p.locator("#advice table tbody tr").count() > 10  # every choice and its cost
    # Hold 3 4 and see what that keep costs, then enter the three rerolled dice.
    p.locator("#dice .die").nth(2).click()
    p.locator("#dice .die").nth(3).click()
    assert "Keeping 3 4 costs 0.003 points" in p.inner_text("#advice")  # 0.003 (advise 1 1 3 4 6)
    assert "3 dice" in p.inner_text("#pad-prompt")
    if os.environ.get("PENTADICE_SCREENSHOTS"):
        p.screenshot(path=str(shots / "phone-coach.png"))
    enter(2, 5, 6)
    _wait_faces(pg, [2, 3, 4, 5, 6])
    assert pg.state() == "choose"
    assert p.locator("#undo").is_enabled()
    p.click("#undo")
    _wait_faces(pg, [1, 1, 3, 4, 6])
    assert pg.state() == "choose"
    # Score Chance now; the sheet follows; undo takes it back.
    p.locator("#sheet tr[data-box='chance'] button.score").click()
    pg.wait_state("roll")
    assert _sheet_value(pg, "chance", 0) == "15"
    p.click("#undo")
    pg.wait_state("choose")
    p.wait_for_selector("#sheet tr[data-box='chance'] button.score")
    assert _sheet_value(pg, "chance", 0) == "15"  # the button again: what the dice would score there
    assert p.locator("#sheet tr[data-box='chance'] button.score").count() == 1
    _no_horizontal_scroll(pg)


def test_hostile_name_is_text(page):
    """A player's name is shown as text: no element is made of it, no script runs."""
    pg = page(size=PHONE)
    p = pg.page
    pg.start([(XSS, False)], auto_commit=False)
    pg.wait_state("roll")
    assert p.locator("#sheet thead th.player .name").inner_text() == XSS
    assert XSS in p.inner_text("#status")
    assert p.locator("img").count() == 0
    p.click("#roll")
    pg.wait_state("choose")
    p.wait_for_timeout(300)  # an injected onerror would have fired by now


def test_phone_width_and_keys(page, shots):
    """At 390 px nothing scrolls sideways, with six players on the sheet; the help lists the keys."""
    pg = page(size=PHONE)
    p = pg.page
    _no_horizontal_scroll(pg)
    if os.environ.get("PENTADICE_SCREENSHOTS"):
        p.screenshot(path=str(shots / "phone-setup.png"))
    pg.start(
        [("Ana", False), ("Budi", False), ("Citra", False), ("cpu 1", True), ("cpu 2", True), ("cpu 3", True)],
        seed=3,
        hints=True,
        auto_commit=False,
    )
    pg.wait_state("roll")
    p.keyboard.press("r")
    pg.wait_state("choose")
    _no_horizontal_scroll(pg)
    p.keyboard.press("?")
    assert p.locator("#help").is_visible()
    assert "Hold or release a die by its number (1 to 5; 6 with six dice)" in p.inner_text("#help")
    p.keyboard.press("Escape")
    assert not p.locator("#help").is_visible()
    # Screen reader: every die and every box button has a label; messages go to a live region.
    for d in p.locator("#dice .die").all():
        assert d.get_attribute("aria-label").startswith("Die ")
    for b in p.locator("#sheet button.score").all():
        assert ": score " in b.get_attribute("aria-label")
    assert p.get_attribute("#live", "aria-live") == "polite"


def test_phone_game_screenshot(page, shots):
    """The page at phone size, one player against the computer with hints, after a roll."""
    pg = page(size=PHONE)
    p = pg.page
    pg.start([("Ana", False), ("cpu", True)], seed=11, hints=True, auto_commit=False)
    pg.wait_state("roll")
    p.click("#roll")
    pg.wait_state("choose")
    p.locator("#dice .die").nth(4).click()
    _no_horizontal_scroll(pg)
    if os.environ.get("PENTADICE_SCREENSHOTS"):
        p.screenshot(path=str(shots / "phone-play.png"), full_page=True)


def test_second_language(page, shots):
    """``?lang=id`` loads the Indonesian catalogue (box names included); a message it lacks falls back to its
    English msgid; the language can be switched."""
    pg = page(size=PHONE, lang="id")
    p = pg.page
    assert p.evaluate("document.documentElement.lang") == "id"
    assert p.input_value("#lang") == "id"
    messages = p.evaluate("fetch('/api/messages?lang=id').then(r => r.json())")["messages"]
    assert p.inner_text("#mode-play") == messages.get("Play", "Play")
    pg.start([("Ana", False), ("cpu", True)], seed=5, hints=True, auto_commit=False)
    pg.wait_state("roll")
    p.click("#roll")
    pg.wait_state("choose")
    name = p.locator("#sheet tr[data-box='full_house'] th span").inner_text()
    assert name == messages.get("Full house", "Full house")
    if os.environ.get("PENTADICE_SCREENSHOTS"):
        p.screenshot(path=str(shots / "phone-id.png"), full_page=True)
    p.select_option("#lang", "en")
    p.wait_for_function("document.documentElement.lang === 'en'")
    assert p.inner_text("#mode-play") == "Play"


def _save(sheet: dict, dice: list[int], turns: int, coach=True, rules="penta") -> bytes:
    """A save file (no generator: a coach game) of one player, Ana, at her last roll."""
    game = {
        "format": "pentadice-game",
        "rules": rules,
        "players": [{"name": "Ana", "computer": False, "turns": turns, "sheet": sheet}],
        "current": 0,
        "dice": dice,
        "rolls_made": 3,
        "auto_commit_seconds": None,
        "coach": coach,
    }
    return json.dumps(game).encode()


def test_saved_game_goes_on_with_the_rules_messages(page):
    """A save file continues in the page; the joker's message and the sacrifice warning show as in the rules."""
    pg = page(size=DESKTOP)
    p = pg.page
    joker = _save({"fives": 15, "penta": 50}, [5, 5, 5, 5, 5], 2)
    p.set_input_files("#resume-file", files=[{"name": "joker.json", "mimeType": "application/json", "buffer": joker}])
    pg.wait_state("last")
    note = p.inner_text("#note")
    assert note == (
        "Joker: a new Penta with the Penta box at 50; Fives is filled, so any open lower box takes it "
        "(Full house 25, Small straight 30, Large straight 40)"
    )
    assert _sheet_value(pg, "large_straight", 0) == "40"
    assert p.locator("#sheet tr[data-box='ones'] button").count() == 0  # the joker allows the lower boxes only
    p.locator("#sheet tr[data-box='large_straight'] button").click()
    pg.wait_state("roll")
    assert "+100 Penta bonus" in pg.live()
    assert p.locator("#sheet tr.sum.bonus td").nth(1).inner_text() == "100"

    p.click("#new-game")
    p.click("#confirm-new-leave")  # the game is not finished: the page asks first
    filled = {
        "ones": 2, "twos": 4, "threes": 9, "fours": 12, "fives": 15, "sixes": 18, "three_of_a_kind": 20,
        "four_of_a_kind": 0, "small_straight": 30, "chance": 20, "penta": 0,
    }  # fmt: skip
    sacrifice = _save(filled, [1, 1, 3, 4, 6], 11)
    p.set_input_files(
        "#resume-file", files=[{"name": "last.json", "mimeType": "application/json", "buffer": sacrifice}]
    )
    pg.wait_state("last")
    assert p.inner_text("#note") == "No open box scores: you must sacrifice one"
    assert p.locator("#sheet button.score").count() == 2
    # A file that is not a save is refused with a message.
    p.click("#new-game")
    p.click("#confirm-new-leave")
    p.set_input_files("#resume-file", files=[{"name": "x.json", "mimeType": "application/json", "buffer": b"[1]"}])
    p.wait_for_selector("#error:not([hidden])")
    assert "not a saved" in p.inner_text("#error") or "save" in p.inner_text("#error")
    # The server read it (its one reader of saves) and refused it: the browser logs the 422 it answered.
    refused = "console error: Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)"
    assert pg.problems == [refused]
    pg.problems.clear()


def _hide(pg: Page, hidden: bool) -> None:
    """The tab goes to the background (or comes back), as far as the page can tell."""
    pg.page.evaluate(
        """hidden => {
            Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
            Object.defineProperty(document, "visibilityState", {
                configurable: true, get: () => (hidden ? "hidden" : "visible") });
            document.dispatchEvent(new Event("visibilitychange"));
        }""",
        hidden,
    )


def test_terminal_save_loads_whole(page, tmp_path, tables):
    """A save from ``pentadice play`` holds the generator's state, a 128-bit integer: the page sends the file as
    it is (JSON.parse would round it to a float, and the server refused the file as damaged)."""
    save = tmp_path / "g.json"
    play = [sys.executable, "-m", "pentadice", "play"]
    played = subprocess.run(
        [*play, "--players", "Ana,cpu", "--seed", "1", "--save", str(save), "--data", str(tables)],
        input="best\n" * 60,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert played.returncode == 0, played.stderr
    assert '"rng"' in save.read_text()
    pg = page(size=PHONE)
    p = pg.page
    p.click("#mode-review")
    p.set_input_files("#review-file", str(save))
    p.wait_for_selector("#review-out .player-review")
    assert p.locator("#error").is_hidden()
    assert p.locator(".player-review h3").all_inner_texts() == ["Ana", "cpu (computer)"]
    # Loaded again (the same file: the input is emptied after each), and continued in the play mode.
    p.set_input_files("#review-file", str(save))
    p.click("#mode-play")
    p.set_input_files("#resume-file", str(save))
    pg.wait_state("over")
    assert p.locator("#error").is_hidden()
    assert "wins with" in p.inner_text("#winner") or "A tie" in p.inner_text("#winner")


def test_kiriki_adds_to_its_filled_box(page):
    """Kiriki: a further five of a kind may go into the Kiriki box that holds 50 already; the box offers a
    button for it (only the key M did), and the sheet has no bonus row (Kiriki pays none)."""
    pg = page(size=DESKTOP)
    p = pg.page
    kiriki = _save({"fives": 15, "penta": 50}, [5, 5, 5, 5, 5], 2, rules="kiriki")
    p.set_input_files("#resume-file", files=[{"name": "k.json", "mimeType": "application/json", "buffer": kiriki}])
    pg.wait_state("last")
    row = p.locator("#sheet tr[data-box='penta']")
    assert row.locator("th span").inner_text() == "Kiriki"
    button = row.locator("button.score")
    assert button.inner_text() == "+50"
    assert button.get_attribute("aria-label").startswith("Kiriki: score 50 points + 50")
    rows = p.locator("#sheet tbody th").all_inner_texts()
    assert not any("bonus" in r and "Upper" not in r for r in rows), rows
    button.click()
    pg.wait_state("roll")
    assert _sheet_value(pg, "penta", 0) == "100"


def test_yahtzee_sheet_names_its_bonus(page):
    """The Yahtzee rule sets call the bonus row and the bonus message after their box: "Yahtzee bonus"; the rule
    sets are listed by their titles."""
    pg = page(size=DESKTOP)
    p = pg.page
    titles = p.locator("#rules option").all_inner_texts()
    assert "Yahtzee, free joker" in titles and "Kiriki" in titles and "penta" not in titles
    yahtzee = _save({"fives": 15, "penta": 50}, [5, 5, 5, 5, 5], 2, rules="yahtzee")
    p.set_input_files("#resume-file", files=[{"name": "y.json", "mimeType": "application/json", "buffer": yahtzee}])
    pg.wait_state("last")
    rows = p.locator("#sheet tbody th").all_inner_texts()
    assert "Yahtzee bonus" in rows and "Penta bonus" not in rows
    p.locator("#sheet tr[data-box='chance'] button").click()
    pg.wait_state("roll")
    assert "+100 Yahtzee bonus" in pg.live()


def test_countdown_waits_for_a_hidden_tab_and_is_announced(page):
    """The countdown does not fill a box while the page is hidden: it starts again, in full, when the page
    shows; screen readers hear it (the live region); its Stop button keeps its word whole on a phone."""
    pg = page(size=PHONE)
    p = pg.page
    pg.start([("Ana", False)], seed=4)
    pg.wait_state("roll")
    for _ in range(2):
        p.click("#roll")
        pg.wait_state("choose")
    p.click("#roll")
    pg.wait_state("last")
    assert "is filled for you in 3 s" in pg.live()
    stop = p.locator("#countdown-stop").bounding_box()
    assert stop["height"] < 60, stop  # one line (44 px targets): "Stop", not "Sto" over "p"
    _hide(pg, True)
    assert not p.locator("#countdown").is_visible()
    p.wait_for_timeout(3800)
    assert pg.state() == "last"  # nothing was filled behind the player's back
    _hide(pg, False)
    assert p.locator("#countdown").is_visible()
    assert "in 3 s" in p.inner_text("#countdown-text")
    assert pg.live().count("is filled for you in") == 1
    pg.wait_state("roll", timeout=6000)
    assert "(filled for you: time was up)" in pg.live()
