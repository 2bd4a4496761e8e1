"""A shared game played from two devices, in a real headless Chromium: two browser contexts (two
phones, each its own storage) play one game from two seats. The host starts it with "Play together" and its
Share panel gives the other seat's link (its secret in the fragment) and QR code; the guest opens the link (the
fragment kept in localStorage and removed from the address); a move on one screen appears on the other through
the game's events; a screen cannot move for the other seat (its buttons are off, and the API answers 403 to the
wrong seat's secret and to none); a device that reloads goes on; no request of either page carries a secret in
its request line or its ``Referer``; a device that loses the network a while, or whose stream is refused,
catches up by itself. The invite links: on a server that listens on loopback only (``share_base`` null) the
set-up's "Play together" and the Share panel say that only this computer opens them and what the host must run;
with ``share_base`` the links and their QR codes begin with it; the Share panel is at the top of the game, open
while the others join, and folds at the first move.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
import serving
from browser_axe import AXE, axe
from commands import SMALL_CLI
from test_browser import PHONE, Page, _faces, browser  # noqa: F401 (the module's browser)


@pytest.fixture(scope="module")
def server(small_game_tables, tmp_path_factory):
    """``pentadice serve`` of the small game that stands for Penta (tests/reduced_pentadice.py), on its tables as
    `make table` leaves them, with a games database of this module's; its base URL. Sharing a game does not
    depend on the sheet's size, and the full game's server would compute the live chances of every move."""
    folder = tmp_path_factory.mktemp("shared-serve")
    port = serving.free_port()
    args = serving.quiet_serve(port, small_game_tables, "--db", str(folder / "games.sqlite3"), cli=SMALL_CLI)
    with serving.started(args, port, folder / "serve.log"):
        yield f"http://127.0.0.1:{port}"


class Device(Page):
    """A phone of its own (a browser context: its own storage), recording every request it makes: the URL and
    the Referer, to look for secrets in them afterwards."""

    def __init__(self, browser, server: str, path: str, events_refused: int = 0, health: dict | None = None) -> None:  # noqa: F811
        # page.route does not see the requests a service worker makes: none where the health is changed
        workers = "block" if health else "allow"
        self.context = browser.new_context(viewport=PHONE, locale="en-US", service_workers=workers)
        self.page = self.context.new_page()
        self.refused: list[str] = []
        if health:  # GET /api/health answered with these fields changed (a server that listens elsewhere)

            def changed(route) -> None:
                answer = route.fetch()
                route.fulfill(response=answer, json={**answer.json(), **health})

            self.page.route("**/api/health", changed)
        if events_refused:  # the first streams answered 503 (a server busy or restarting): not a stream

            def refuse(route) -> None:
                if len(self.refused) < events_refused:
                    self.refused.append(route.request.url)
                    route.fulfill(status=503, json={"error": "busy"}, headers={"Retry-After": "1"})
                else:
                    route.continue_()

            self.page.route("**/events", refuse)
        self.problems: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("console", lambda m: self.problems.append(f"console: {m.text}") if m.type == "error" else None)
        self.page.on("request", lambda r: self.requests.append((r.url, r.headers.get("referer") or "")))
        self.page.set_default_timeout(20_000)
        self.page.goto(server + path)
        self.page.wait_for_selector("body[data-ready='1']")

    def seats(self, game: str) -> dict:
        return self.page.evaluate("id => JSON.parse(localStorage.getItem('pentadice.seats.' + id))", game)


def move(server: str, game: str, path: str, body: dict, secret: str | None) -> int:
    """The HTTP status of a move sent with ``secret`` in X-Pentadice-Seat (None: no header)."""
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["X-Pentadice-Seat"] = secret
    request = urllib.request.Request(
        f"{server}/api/games/{game}{path}", data=json.dumps(body).encode(), method="POST", headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as e:
        return e.code


def test_two_devices_play_one_game(browser, server):  # noqa: F811
    host = Device(browser, server, "/?fast=1")
    h = host.page
    h.check("#shared")
    Page.start(host, [("Ana", False), ("Budi", False), ("cpu", True)], seed=9, auto_commit=False)
    host.wait_state("roll")
    game = h.url.split("/games/")[1].split("?")[0].split("#")[0]
    held = host.seats(game)
    assert held["you"] == 0 and set(held["secrets"]) == {"0", "1"}
    ana, budi = held["secrets"]["0"], held["secrets"]["1"]
    assert "holds Ana" in h.inner_text("#seat-line")
    # The Share panel: Budi's link, with its secret in the fragment only, and its QR code.
    link = h.input_value("#share-seats li[data-seat='1'] .share-link")
    assert link == f"{server}/games/{game}#seat={budi}"
    h.wait_for_selector("#share-seats li[data-seat='1'] .qr svg path, #share-seats li[data-seat='1'] .qr svg rect")
    if AXE.is_file():
        axe(host, "the host's screen with its Share panel")

    guest = Device(browser, server, f"/games/{game}?fast=1#seat={budi}", events_refused=2)
    g = guest.page
    assert "#" not in g.url  # the fragment is removed at once
    assert guest.seats(game) == {"you": 1, "secrets": {"1": budi}}
    assert "holds Budi" in g.inner_text("#seat-line")
    assert guest.wait_state("waiting") == "waiting"  # Ana's turn: Budi's phone watches
    assert g.locator("#roll").is_disabled() and g.locator("#sheet button.score").count() == 0
    if AXE.is_file():
        axe(guest, "a seat's screen while another moves")

    # Its first two streams were refused (closed for good, as EventSource does on a 503): the page opened a
    # third by itself, and the seat line, which said it was reconnecting, no longer does.
    g.wait_for_selector("#seat-line[data-live='up']", timeout=30_000)
    assert len(guest.refused) == 2 and "Reconnecting" not in g.inner_text("#seat-line")
    guest.problems = [p for p in guest.problems if "503" not in p]  # the refused streams

    # Ana rolls on her phone: Budi's shows the same dice, through the events.
    h.click("#roll")
    host.wait_state("choose")
    g.wait_for_function(
        "want => JSON.stringify([...document.querySelectorAll('#dice .die')].map(d => Number(d.dataset.face)))"
        " === JSON.stringify(want)",
        arg=_faces(host),
    )
    # Budi's secret cannot move for Ana; no secret cannot move at all (the API without the page).
    assert move(server, game, "/score", {"box": "chance"}, budi) == 403
    assert move(server, game, "/score", {"box": "chance"}, None) == 403
    assert move(server, game, "/roll", {"keep": []}, "not-a-seat") == 403
    # Ana scores: Budi's phone shows her box, then it is Budi's turn there (and Ana's phone watches).
    h.locator("#sheet button.score[data-box='chance']").click()
    host.wait_state("waiting")
    guest.wait_state("roll")
    assert g.locator("#sheet tr[data-box='chance'] td").nth(0).inner_text().strip() != ""
    assert g.locator("#turn-cue").is_visible()
    assert move(server, game, "/roll", {"keep": []}, ana) == 403
    g.click("#roll")
    guest.wait_state("choose")
    h.wait_for_function(
        "want => JSON.stringify([...document.querySelectorAll('#dice .die')].map(d => Number(d.dataset.face)))"
        " === JSON.stringify(want)",
        arg=_faces(guest),
    )
    # Budi's phone drops (a reload) and comes back: it holds its seat and goes on.
    g.reload()
    g.wait_for_selector("body[data-ready='1']")
    assert guest.wait_state("choose") == "choose"
    g.locator("#sheet button.score[data-box='chance']").click()
    # The computer's turn (moved by the host's device), then Ana's again on her phone.
    host.wait_state("roll", timeout=30_000)
    guest.wait_state("waiting")
    assert h.locator("#sheet tr[data-box='chance'] td").nth(1).inner_text().strip() != ""
    assert h.locator("#sheet tr.box td:nth-child(4).filled").count() == 1  # the computer's box

    # Budi's phone loses the network while Ana plays her turn: back online, it catches up by itself (no reload)
    # and it is Budi's turn there.
    g.context.set_offline(True)
    h.click("#roll")
    host.wait_state("choose")
    h.locator("#sheet button.score").first.click()
    host.wait_state("waiting")
    g.wait_for_timeout(1500)  # the events said so meanwhile; the view could not be read
    g.context.set_offline(False)
    guest.wait_state("roll")
    assert g.locator("#turn-cue").is_visible()
    g.click("#roll")
    guest.wait_state("choose")
    guest.problems = [p for p in guest.problems if "Failed to load resource" not in p]  # while offline

    # No secret in any request line or Referer of either device.
    for device in (host, guest):
        for url, referer in device.requests:
            for secret in (ana, budi):
                assert secret not in url and secret not in referer, (url, referer)
        assert device.problems == [], device.problems
    assert any("/events" in url for url, _ in guest.requests)
    host.close()
    guest.close()


def test_loopback_links_say_what_the_host_must_do(browser, server):  # noqa: F811
    """On a server listening on loopback only (``share_base`` null, the default ``pentadice serve``): "Play
    together" is the set-up's first choice (before the players); ticked, it says that only this computer can open
    the links and what to run (``--host 0.0.0.0``, ``--tls``); the game's Share panel, above the dice, says it
    too; its links are this page's origin's. The panel is open while nothing is played, folds at the first roll,
    and stays as the host sets it afterwards. The seat line speaks to the default player "You" ("your seat", not
    "You's seat")."""
    host = Device(browser, server, "/?fast=1")
    h = host.page
    order = h.evaluate(
        "() => [...document.querySelectorAll('#setup-form #shared, #player-list, #start')].map(e => e.id)"
    )
    assert order == ["shared", "player-list", "start"]
    assert h.locator("#shared").is_visible() and not h.locator("#together-note").is_visible()
    h.check("#shared")
    note = h.inner_text("#together-note")
    assert "Only this computer can open these links" in note
    assert "pentadice serve --host 0.0.0.0" in note and "--tls" in note
    if AXE.is_file():
        axe(host, "the set-up with Play together ticked")
    Page.start(host, [("You", False), ("Budi", False)], seed=3, auto_commit=False)
    host.wait_state("roll")
    assert h.inner_text("#seat-line") == "This device holds your seat"
    game = h.url.split("/games/")[1].split("?")[0].split("#")[0]
    share = h.locator("#share")
    assert share.is_visible() and share.evaluate("d => d.open")
    assert h.evaluate("() => !!(document.getElementById('share').compareDocumentPosition("
                      "document.getElementById('dice')) & Node.DOCUMENT_POSITION_FOLLOWING)")  # fmt: skip
    assert share.bounding_box()["y"] < h.locator("#dice").bounding_box()["y"]
    local = h.inner_text("#share-local")
    assert "Only this computer can open these links" in local and "pentadice serve --host 0.0.0.0" in local
    assert h.input_value("#share-seats li[data-seat='1'] .share-link").startswith(f"{server}/games/{game}#seat=")
    # The first roll folds the panel to its line; opened by the host, it stays open through the next move.
    h.click("#roll")
    host.wait_state("choose")
    assert not share.evaluate("d => d.open") and h.locator("#share summary").is_visible()
    h.click("#share summary")
    assert share.evaluate("d => d.open")
    h.locator("#sheet button.score").first.click()
    host.wait_state("waiting")
    assert share.evaluate("d => d.open") and h.locator("#share-seats .share-link").is_visible()
    assert host.problems == [], host.problems
    host.close()


def test_links_and_codes_use_share_base(browser, server):  # noqa: F811
    """With ``share_base`` in GET /api/health (a server listening on the network: here the answer changed on its
    way, to a documentation address), the seat links and the text of their QR codes begin with it, and nothing
    says that only this computer can open them."""
    base = "http://192.0.2.7:8000"
    host = Device(browser, server, "/?fast=1", health={"share_base": base})
    h = host.page
    coded: list[str] = []
    h.on("request", lambda r: coded.append(json.loads(r.post_data)["text"]) if r.url.endswith("/api/qr") else None)
    h.check("#shared")
    assert h.locator("#together-note").is_visible() and "Only this computer" not in h.inner_text("#together-note")
    Page.start(host, [("Ana", False), ("Budi", False), ("Citra", False)], seed=4, auto_commit=False)
    host.wait_state("roll")
    game = h.url.split("/games/")[1].split("?")[0].split("#")[0]
    secrets = host.seats(game)["secrets"]
    links = [h.input_value(f"#share-seats li[data-seat='{i}'] .share-link") for i in (1, 2)]
    assert links == [f"{base}/games/{game}#seat={secrets[str(i)]}" for i in (1, 2)]
    h.wait_for_function("() => document.querySelectorAll('#share-seats .qr svg').length === 2")
    assert sorted(coded) == sorted(links)
    assert h.locator("#share-local").is_hidden() and "Only this computer" not in h.inner_text("#share")
    assert host.problems == [], host.problems
    host.close()
