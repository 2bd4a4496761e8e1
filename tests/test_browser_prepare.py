"""The page never looks stuck, in a real headless Chromium: a computer's step in flight says "cpu is thinking…";
chances being computed say "updating…" and a chances table being prepared says so with its progress, never old
numbers; "plays to win" is not offered where the rule set refuses it (Maxi Yatzy) and is disabled, with the
progress, while its tables are prepared; a Start answered 503 says why and lets the player start again.

No test waits for a table to be built: one test starts ``pentadice serve`` (which prepares its tables in the
background) on a directory holding Penta's value table alone, looks at the page while the win player's tables
are being built, and stops it; the others run on a quiet server (``serve --no-prepare``) and make the states
they look at with Playwright's ``page.route`` (a request held until the test lets it go, or an answer
changed). The browser, the page driver and its checks are those of tests/test_browser.py (skipped as they are).
"""

from __future__ import annotations

import json
import re
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from test_browser import PHONE, Page, _free_port, _no_horizontal_scroll, browser, running  # noqa: F401
from test_browser import page as page_fixture  # noqa: F401

from pentadice.tables import table


def _penta_tables(penta_solution, directory: Path) -> Path:
    """A table directory holding Penta's value table alone (none of the tables a server prepares)."""
    directory.mkdir(parents=True, exist_ok=True)
    table.save(penta_solution.rules, penta_solution.values, directory)
    return directory


def _serve(directory: Path, log: Path, *extra: str):
    port = _free_port()
    args = [sys.executable, "-m", "pentadice", "serve", "--port", str(port), "--data", str(directory), *extra]
    yield from running(args, port, log, 120, "pentadice serve")


@pytest.fixture(scope="module")
def server(penta_solution, tmp_path_factory):
    """A quiet server (``--no-prepare``: nothing built in the background) on Penta's value table; its URL."""
    root = tmp_path_factory.mktemp("prepare-quiet")
    yield from _serve(_penta_tables(penta_solution, root / "tables"), root / "serve.log", "--no-prepare")


@pytest.fixture
def preparing_server(penta_solution, tmp_path):
    """A server preparing Penta's chances and win tables in the background (they are missing); stopped after the
    test, long before they are built."""
    yield from _serve(_penta_tables(penta_solution, tmp_path / "tables"), tmp_path / "serve.log")


def _until(pg: Page, done, what: str, seconds: float = 10) -> None:
    """Wait (the browser's events handled meanwhile: a route's handler runs) until ``done()``."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        pg.page.wait_for_timeout(50)


def _reload(pg: Page) -> None:
    """Load the page again (after routes that change what it reads at load), its live region watched again."""
    pg.page.reload()
    pg.page.wait_for_selector("body[data-ready='1']")
    pg.page.evaluate(
        """() => { const el = document.getElementById("live"); window.__announced = [];
            new MutationObserver(() => window.__announced.push(el.textContent))
                .observe(el, {childList: true, characterData: true, subtree: true}); }"""
    )


def _forgive_503(pg: Page) -> None:
    """The browser's console says a 503 it was answered: expected here, the page's own errors still count."""
    pg.problems[:] = [x for x in pg.problems if "status of 503" not in x]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def _json_of(route) -> tuple[object, dict]:
    """The real answer of a routed request, and its JSON."""
    response = route.fetch()
    return response, response.json()


def _fake_health(pg: Page, tables: dict | None) -> dict:
    """GET /api/health answered with ``tables`` (rule set -> its entry; None: every rule set ready) until
    changed: the returned dict's "tables" and "preparing" may be replaced by the test."""
    fake = {"tables": tables}

    def handle(route) -> None:
        response, health = _json_of(route)
        if fake["tables"] is None:
            health["tables"] = {name: dict(READY) for name in health["rules"]}
            health["preparing"] = False
        else:
            health["tables"] = fake["tables"]
            health["preparing"] = any(not t["ready"] and not t["failed"] for t in fake["tables"].values())
        route.fulfill(response=response, json=health)

    pg.page.route("**/api/health", handle)
    return fake


def _strategy(pg: Page, row: int = 1):
    return pg.page.locator("#player-list li").nth(row).locator("select.strategy")


def _win_option(pg: Page, row: int = 1):
    return _strategy(pg, row).locator("option[value=win]")


READY = {"ready": True, "win": "ready", "chances": "ready", "building": None, "failed": None, "win_refusal": None}
BUILDING = {
    "table": "win-end",
    "what": "the win player's end-game table",
    "done": 3,
    "total": 4,
    "progress": 0.42,
}


def _preparing_penta(building: dict | None = BUILDING) -> dict:
    return {"penta": {**READY, "ready": False, "win": "preparing", "building": building}}


# ---------- against a server that is preparing its tables ----------


def test_while_the_server_prepares_plays_to_win_waits_and_a_start_is_refused(browser, preparing_server):  # noqa: F811
    """The real preparation: "plays to win" disabled with the progress, the line under the set-up, a Start with a
    win computer answered 503 (said in the page, which stays usable), and the chances saying they are prepared."""
    health = _get(f"{preparing_server}/api/health")
    assert health["preparing"] is True and health["tables"]["penta"]["win"] == "preparing", health
    pg = Page(browser, preparing_server)
    p = pg.page
    try:
        asked = []
        p.on("request", lambda r: asked.append(r.url) if r.url.endswith("/api/health") else None)
        # The computer's "plays to win": disabled, labelled with the progress (or "preparing…" while it loads).
        assert _win_option(pg).is_disabled()
        label = _win_option(pg).inner_text()
        assert re.fullmatch(r"plays to win \(preparing( \d+ %|…)\)", label), label
        assert "prepared" in (_win_option(pg).get_attribute("title") or "")
        # The line on the set-up screen, asked about every second.
        p.wait_for_selector("#prep[data-on]")
        assert p.inner_text("#prep-text").startswith("Preparing the tables of Penta")
        _until(pg, lambda: len(asked) >= 2, "the page to ask again how the tables stand")
        # A win computer all the same (as a page that knew no better would send it): 503, said, and the page
        # stays on the set-up, ready to start again.
        _strategy(pg).evaluate("select => { select.value = 'win'; }")
        with p.expect_response(lambda r: r.url.endswith("/api/games") and r.request.method == "POST") as info:
            p.click("#start")
        assert info.value.status == 503 and info.value.header_value("retry-after")
        p.wait_for_selector("#error:not([hidden])")
        error = p.inner_text("#error")
        assert "being prepared" in error and error.endswith("Start again when it is ready."), error
        assert re.search(r"Preparing .+: \d+ %\.", error), error
        assert p.is_visible("#setup") and p.is_enabled("#start")
        # Start again with a computer that plays for points: the game starts; its chances wait for their table.
        _strategy(pg).select_option("optimal")
        with p.expect_response(lambda r: r.url.endswith("/api/games") and r.request.method == "POST") as info:
            p.click("#start")
        view = info.value.json()
        p.wait_for_selector("#game:not([hidden])")
        assert p.is_hidden("#error")
        if view["preparing"] is not None:  # (the chances table is built first: it is, a few seconds in)
            assert view["chances"] is None and view["chances_pending"] is True
            p.wait_for_selector("#chances[data-state=preparing]")
            text = p.inner_text("#chances")
            assert re.fullmatch(r"Chances of winning: preparing( \(\d+ %\)|…)", text), text
            assert p.locator("#chances .chance").count() == 0
    finally:
        pg.close()
    _forgive_503(pg)
    pg.assert_clean()


# ---------- a quiet server, the states made with page.route ----------


def test_a_computer_step_in_flight_says_it_is_thinking(page_fixture):  # noqa: F811 (the fixture)
    pg = page_fixture()
    p = pg.page
    held: list = []

    def hold_the_first(route) -> None:  # the computer's first step held until the test lets it go
        if held:
            route.continue_()
        else:
            held.append(route)

    p.route("**/api/games/*/computer", hold_the_first)
    pg.start([("Ana", False), ("cpu", True)], seed=3, auto_commit=False)
    assert p.inner_text("#thinking") == ""
    assert p.get_attribute("#status", "data-state") is None
    pg.wait_state("roll")
    p.click("#roll")
    pg.wait_state("choose")
    p.locator("#sheet button.score").first.click()
    # The computer's first step is in flight (held): the page says so, beside the greyed Roll button.
    p.wait_for_selector("#status[data-state=thinking]")
    assert p.inner_text("#thinking") == "cpu is thinking…" and p.is_visible("#thinking")
    assert p.get_attribute("#thinking", "role") == "status"
    assert p.is_disabled("#roll") and pg.state() == "busy"
    assert len(held) == 1
    held[0].continue_()
    # Its steps go on (not held any more) and the thinking ends with each; then it is Ana's turn again.
    pg.wait_state("roll", timeout=60_000)
    assert p.inner_text("#thinking") == ""
    assert p.get_attribute("#status", "data-state") is None
    assert any(text.startswith("cpu ") for text in pg.announced())


def _observe_chances(pg: Page) -> None:
    """Every state of #chances from now on, kept in window.__chances as [state, text]."""
    pg.page.evaluate(
        """() => { const el = document.getElementById("chances"); window.__chances = [];
            const keep = () => window.__chances.push([el.hidden ? "hidden" : (el.dataset.state || ""), el.textContent]);
            new MutationObserver(keep).observe(el, {childList: true, characterData: true, subtree: true,
                                                    attributes: true}); }"""
    )


def test_chances_being_computed_are_shown_as_pending_never_as_the_old_numbers(page_fixture):  # noqa: F811
    pg = page_fixture()
    p = pg.page
    views: list[dict] = []

    def pending(route) -> None:  # a game's answer as the server gives it while it computes the chances
        response, data = _json_of(route)
        view = data.get("game", data) if isinstance(data, dict) else data
        if isinstance(view, dict) and "players" in view:
            view.update(chances=None, chances_pending=True, preparing=None)
            views.append(view)
        route.fulfill(response=response, json=data)

    p.route(re.compile(r"/api/games(/[^/?]+/(roll|score))?$"), pending)
    asked: list = []
    p.route("**/api/games/*/chances", lambda route: asked.append(route))  # answered by the test

    def answer(values: list[float]) -> None:
        sheets = [player["sheet"] for player in views[-1]["players"]]
        asked.pop(0).fulfill(json={"sheets": sheets, "chances": values, "reason": None})

    pg.start([("Ana", False), ("Bo", False)], seed=4, auto_commit=False)
    p.wait_for_selector("#chances[data-state=updating]")
    assert p.inner_text("#chances") == "Chances of winning: updating…"
    assert p.get_attribute("#chances", "class") == "chances stale"
    assert p.get_attribute("#chances", "aria-busy") == "true"
    _until(pg, lambda: len(asked) == 1, "the page to ask for the chances")
    answer([0.5, 0.5])
    p.wait_for_selector("#chances[data-state=known]:not(.stale)")
    assert p.inner_text("#chances") == "Chances of winning: Ana 50 %, Bo 50 %"
    # Ana fills a box: the new sheets' chances are pending; the old ones are not shown meanwhile.
    p.click("#roll")
    pg.wait_state("choose")
    _observe_chances(pg)
    p.locator("#sheet button.score").first.click()
    pg.wait_state("roll")
    p.wait_for_selector("#chances[data-state=updating]")
    assert p.inner_text("#chances") == "Chances of winning: updating…"
    assert p.locator("#chances .chance").count() == 0
    _until(pg, lambda: len(asked) == 1, "the page to ask for the new chances")
    answer([0.25, 0.75])
    p.wait_for_selector("#chances[data-state=known]")
    assert p.inner_text("#chances") == "Chances of winning: Ana 25 %, Bo 75 %"
    seen = p.evaluate("window.__chances")
    after = [text for _, text in seen[next(i for i, (state, _) in enumerate(seen) if state == "updating") :]]
    assert not any("50 %" in text for text in after), seen  # from the new view on, never the old numbers


def test_a_chances_table_being_prepared_shows_its_progress(page_fixture):  # noqa: F811 (the fixture)
    pg = page_fixture(lang="en")
    p = pg.page
    progress = [0.42, 0.57, None]  # the start's view, then the views the page asks for about every second

    def preparing(route) -> None:
        response, data = _json_of(route)
        view = data.get("game", data)
        step = progress.pop(0) if len(progress) > 1 else progress[0]
        if step is None:
            view.update(chances=[0.5, 0.5], chances_pending=False, preparing=None)
        else:
            prep = {"table": "chances", "what": "the chances table", "progress": step}
            view.update(chances=None, chances_pending=True, preparing=prep)
        route.fulfill(response=response, json=data)

    p.route(re.compile(r"/api/games(/[^/?]+)?$"), preparing)  # the new game, and GET of its view
    p.route("**/api/games/*/chances", lambda route: pytest.fail("the chances asked while their table is prepared"))
    pg.start([("Ana", False), ("Bo", False)], seed=5, auto_commit=False)
    p.wait_for_selector("#chances[data-state=preparing]")
    assert p.inner_text("#chances") == "Chances of winning: preparing (42 %)"
    p.wait_for_function("() => document.getElementById('chances').textContent.includes('57 %')", timeout=5_000)
    assert p.get_attribute("#chances", "data-state") == "preparing"
    p.wait_for_selector("#chances[data-state=known]", timeout=5_000)
    assert p.inner_text("#chances") == "Chances of winning: Ana 50 %, Bo 50 %"


def test_plays_to_win_is_not_offered_where_the_rules_refuse_it(page_fixture):  # noqa: F811 (the fixture)
    """Maxi Yatzy (its win tables are too large): its entry in /api/rules, added by the test (serving Maxi Yatzy
    takes its solve), carries the server's refusal; the option is disabled with the reason, said under the
    players, and a choice made before falls back to "plays for points"."""
    from pentadice.game import rules
    from pentadice.players import win

    maxi = rules.get_rules("maxi-yatzy")
    refusal = win.refusal(maxi)
    assert refusal

    def with_maxi(route) -> None:
        response, data = _json_of(route)
        penta = data["rules"][0]
        data["rules"].append({**penta, "name": "maxi-yatzy", "title": maxi.title, "dice": 6, "win_refusal": refusal})
        route.fulfill(response=response, json=data)

    pg = page_fixture()
    p = pg.page
    p.route("**/api/rules", with_maxi)
    _fake_health(pg, None)  # Penta's win tables ready (the quiet server has none)
    _reload(pg)
    option = _win_option(pg)
    assert option.is_enabled() and option.inner_text() == "plays to win"
    assert p.is_hidden("#win-note")
    _strategy(pg).select_option("win")
    p.select_option("#rules", "maxi-yatzy")
    assert option.is_disabled() and option.inner_text() == "plays to win (not available)"
    assert option.get_attribute("title") == refusal
    assert _strategy(pg).input_value() == "optimal"  # a refused choice falls back
    note = p.inner_text("#win-note")
    assert note.startswith("Plays to win is not offered under Maxi Yatzy: the win strategy's tables of Maxi Yatzy")
    assert "build them out of core first with `pentadice build --rules maxi-yatzy" in note  # how to build them
    # A computer added under Maxi Yatzy is not offered it either; back to Penta, the choice made stands again.
    p.click("#add-player")
    p.locator("#player-list li").nth(2).locator("input[type=checkbox]").check()
    assert _win_option(pg, 2).is_disabled()
    p.select_option("#rules", "penta")
    assert option.is_enabled() and _strategy(pg).input_value() == "win"
    assert _win_option(pg, 2).is_enabled()
    assert p.is_hidden("#win-note")


def test_a_start_refused_while_tables_are_prepared_says_so_and_can_start_again(page_fixture):  # noqa: F811
    """On a phone: the 503 of a Start with a win computer (made here: the quiet server has no win tables to
    prepare) is said with its progress; the option then waits for the tables, with the progress, and comes back
    when they are ready; the player starts again."""
    pg = page_fixture(size=PHONE)
    p = pg.page
    fake = _fake_health(pg, None)  # ready, until the 503 says otherwise
    _reload(pg)
    assert _win_option(pg).is_enabled()
    assert p.get_attribute("#prep", "data-on") is None
    _strategy(pg).select_option("win")

    refused = {
        "error": "the win player's tables of penta are being prepared (the win player's end-game table, 42 % of what "
        "is left): start a game with a computer that plays to win once they are ready (GET /api/health says when)",
        "preparing": BUILDING,
    }

    def refuse(route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        fake["tables"] = _preparing_penta()  # what the server says from now on
        route.fulfill(status=503, json=refused, headers={"Retry-After": "5"})

    p.route(re.compile(r"/api/games$"), refuse)
    p.click("#start")
    p.wait_for_selector("#error:not([hidden])")
    error = p.inner_text("#error")
    assert error.startswith("The win player's tables of penta are being prepared")  # the API's words, capitalised
    assert error.endswith(
        "Preparing the computer that plays to win, for the last turns: 42 %. Start again when it is ready."
    ), error
    assert p.is_visible("#setup") and p.is_enabled("#start")
    _forgive_503(pg)
    # The page asks how the tables stand: the option waits, with the progress; the line says what is built.
    p.wait_for_selector("#prep[data-on]")
    line = "Preparing the tables of Penta: the computer that plays to win, for the last turns (3 of 4 tables ready)"
    assert p.inner_text("#prep-text") == line
    assert p.inner_text("#prep-percent") == "42 %" and p.is_visible("#prep-bar")
    assert _win_option(pg).is_disabled() and _win_option(pg).inner_text() == "plays to win (preparing 42 %)"
    assert _strategy(pg).input_value() == "win"  # the player's choice stays shown, waiting
    _no_horizontal_scroll(pg)
    fake["tables"] = _preparing_penta({**BUILDING, "progress": 0.9})
    p.wait_for_function("() => document.getElementById('prep-percent').textContent === '90 %'", timeout=5_000)
    assert _win_option(pg).inner_text() == "plays to win (preparing 90 %)"
    # Ready: offered again, the line gone, said in the live region.
    fake["tables"] = None
    p.wait_for_function("() => !document.querySelector('#player-list li:nth-child(2) option[value=win]').disabled",
                        timeout=5_000)  # fmt: skip
    assert _win_option(pg).inner_text() == "plays to win"
    assert p.get_attribute("#prep", "data-on") is None and p.inner_text("#prep-text") == ""
    assert "The tables are ready" in pg.announced()
    # Start again (the quiet server holds no win tables: a computer that plays for points).
    p.unroute(re.compile(r"/api/games$"))
    _strategy(pg).select_option("optimal")
    p.click("#start")
    p.wait_for_selector("#game:not([hidden])")
    assert p.is_hidden("#error")
