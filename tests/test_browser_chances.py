"""The page in a real headless Chromium: a computer that plays to win chosen at set-up, and the live chances of
winning, shown with every view from the chances table (the page driver is that of tests/test_browser.py; the
server is the real `pentadice serve` in a subprocess, with the small game that stands for Penta
(tests/reduced_pentadice.py) on its tables as `make table` leaves them: the server holds them from start-up)."""

from __future__ import annotations

import json

import pytest
import serving
from commands import SMALL_CLI
from test_browser import PHONE, Page, _free_port, _no_horizontal_scroll, browser, running  # noqa: F401
from test_browser import page as page_fixture  # noqa: F401


@pytest.fixture(scope="module")
def server(small_game_tables, tmp_path_factory):
    """The small game's ``pentadice serve`` on a free port, with every table a game reads (the session's); its
    base URL."""
    port = _free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    args = serving.quiet_serve(port, small_game_tables, cli=SMALL_CLI)
    yield from running(args, port, log, 120, "pentadice serve")


CHANCES_TIMEOUT = 60_000  # ms: a view carries its chances at once; a busy machine answers slower
PREPARE_TIMEOUT = 120_000  # ms: the server offers "plays to win" once it holds the tables (loaded at start-up)


def _choose_win(pg: Page, row: int = 1) -> None:
    """The computer of ``row`` plays to win: the option is offered (enabled) once the server holds the win
    player's tables (a server preparing them says so in the option meanwhile: tests/test_browser_prepare.py)."""
    strategy = pg.page.locator("#player-list li").nth(row).locator("select.strategy")
    option = f"#player-list li:nth-child({row + 1}) select.strategy option[value=win]:not([disabled])"
    pg.page.wait_for_selector(option, state="attached", timeout=PREPARE_TIMEOUT)
    strategy.select_option("win")


def _chances_answers(pg: Page) -> list[dict]:
    """Every set of chances the page receives, recorded as it comes: the answers of GET .../chances, and the
    chances a game's view carries when the server had them ready before the page asked (then the page shows
    them without asking)."""
    seen: list[dict] = []

    def on_response(response) -> None:
        if not response.ok or "/api/games" not in response.url:
            return
        if response.url.endswith("/chances"):
            seen.append(json.loads(response.text()))
            return
        try:
            view = json.loads(response.text())
        except ValueError:
            return
        if isinstance(view, dict) and isinstance(view.get("game"), dict):  # a move's answer: the game's view in it
            view = view["game"]
        if isinstance(view, dict) and isinstance(view.get("chances"), list) and isinstance(view.get("players"), list):
            seen.append({"sheets": [p["sheet"] for p in view["players"]], "chances": view["chances"]})

    pg.page.on("response", on_response)
    return seen


def _shown(pg: Page) -> list[int]:
    texts = pg.page.locator("#chances .chance").all_inner_texts()
    return [int(t.rsplit(" ", 2)[-2]) for t in texts]


def test_a_win_computer_and_the_chances_after_every_box(page_fixture):  # noqa: F811 (the fixture)
    pg = page_fixture()
    p = pg.page
    answers = _chances_answers(pg)
    # The set-up: a computer's strategy appears with its checkbox.
    row = p.locator("#player-list li").nth(1)
    assert row.locator("input[type=checkbox]").is_checked() and row.locator("select.strategy").is_visible()
    assert not p.locator("#player-list li").nth(0).locator("select.strategy").is_visible()
    _choose_win(pg)
    pg.start([("Ana", False), ("cpu", True)], seed=3)
    assert "plays to win" in p.locator("#sheet thead th.player").nth(1).inner_text()
    # The chances at the start: equal players, equal chances.
    p.wait_for_selector("#chances:not([hidden]):not(.stale)", timeout=CHANCES_TIMEOUT)
    assert p.inner_text("#chances") == "Chances of winning: Ana 50 %, cpu 50 %"
    # Three boxes each: after each, the chances of the new sheets replace those shown (stale meanwhile).
    for _ in range(3):
        pg.wait_state("roll", timeout=CHANCES_TIMEOUT)
        p.click("#roll")
        pg.wait_state("choose", "last")
        p.locator("#sheet button.score").first.click()
        pg.wait_state("computer", "busy", "roll", timeout=10_000)
    pg.wait_state("roll", timeout=CHANCES_TIMEOUT)
    p.wait_for_selector("#chances:not([hidden]):not(.stale)", timeout=CHANCES_TIMEOUT)
    last = answers[-1]
    assert len(last["sheets"]) == 2 and all(len(s) == 3 for s in last["sheets"])  # three boxes each
    assert _shown(pg) == [round(100 * c) for c in last["chances"]]
    assert 99 <= sum(_shown(pg)) <= 101


def test_chances_in_indonesian_on_a_phone(page_fixture):  # noqa: F811 (the fixture)
    pg = page_fixture(size=PHONE, lang="id")
    p = pg.page
    _choose_win(pg)
    _no_horizontal_scroll(pg)
    pg.start([("Ana", False), ("cpu", True)], seed=5)
    p.wait_for_selector("#chances:not([hidden]):not(.stale)", timeout=CHANCES_TIMEOUT)
    assert p.inner_text("#chances") == "Peluang menang: Ana 50 %, cpu 50 %"
    assert "bermain untuk menang" in p.locator("#sheet thead th.player").nth(1).inner_text()
    _no_horizontal_scroll(pg)
