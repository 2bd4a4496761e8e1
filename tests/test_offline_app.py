"""The offline app in a real headless Chromium: the manifest and the service worker meet Chromium's installability
criteria (the DevTools protocol's ``Page.getInstallabilityErrors`` is empty); then, the server stopped and the
browser offline, a reload opens the app, and a coach situation and a solo game against the computer are played in
the browser on the exported tables (advisor.js, offline.js), and the history says it is kept on the server. The
same from the files of ``pentadice export-app`` served over HTTPS (a self-signed certificate; Chromium told to
take it), with no server at all.

One browser for the module; the server (``pentadice serve`` on the session's Penta table) and the HTTPS folder are
started by the tests that use them.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import serving
from click.testing import CliRunner

from pentadice.faces.cli import main

CHROMIUM = os.environ.get("PENTADICE_CHROMIUM", "/usr/bin/chromium")
if not os.access(CHROMIUM, os.X_OK):
    CHROMIUM = shutil.which("chromium")
if not CHROMIUM:
    pytest.skip("no chromium: install the browser: make browser", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="no playwright: make install")
pytest.importorskip("fastapi", reason="no fastapi: make install (the [web] extra)")
from test_browser import Page  # noqa: E402 (the page's driver: start, state; after the skips)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
        "--disable-sync", "--disable-component-update", "--ignore-certificate-errors"]  # fmt: skip
PHONE = {"width": 390, "height": 844}
SW_READY = """async () => {
    const reg = await navigator.serviceWorker.ready;
    for (let i = 0; i < 200 && !navigator.serviceWorker.controller; i++) await new Promise(r => setTimeout(r, 50));
    const keys = await (await caches.open("pentadice-tables-v1")).keys();
    return {active: !!reg.active, controlled: !!navigator.serviceWorker.controller, tables: keys.map(k => k.url)};
}"""


@pytest.fixture(scope="module")
def playwright():
    with sync_api.sync_playwright() as pw:
        yield pw


class App(Page):
    """A browser with a profile of its own (Chromium installs no app from an incognito context, which a plain
    Playwright context is) on the app at ``url``, recording script errors."""

    def __init__(self, playwright, url: str, profile: Path) -> None:
        self.url = url
        self.context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=ARGS, headless=True, viewport=PHONE, locale="en-US",
            ignore_https_errors=True,
        )  # fmt: skip
        self.page = self.context.pages[0] if self.context.pages else self.context.new_page()
        self.page.set_default_timeout(30_000)
        self.problems: list[str] = []
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))

    def open(self) -> None:
        self.page.goto(self.url + "/?fast=1")
        self.page.wait_for_selector("body[data-ready='1']")

    def start(self, players: list[tuple[str, bool]]) -> None:
        Page.start(self, players, auto_commit=False)

    def installable(self) -> list:
        """Chromium's reasons the page cannot be installed (none: it can), through the DevTools protocol."""
        cdp = self.context.new_cdp_session(self.page)
        try:
            return cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
        finally:
            cdp.detach()

    def close(self) -> None:
        self.context.close()


def first_visit(app: App) -> None:
    """Open the app online: the service worker installs (the shell and Penta's tables stored) and takes the
    page; the manifest and the worker make it installable."""
    app.open()
    ready = app.page.evaluate(SW_READY)
    assert ready["active"] and ready["controlled"], ready
    assert any("/app-tables/penta.f64?sha256=" in url for url in ready["tables"]), ready
    assert app.installable() == []
    manifest = app.page.evaluate("fetch('/manifest.webmanifest').then(r => r.json())")
    assert manifest["display"] == "standalone" and {i["sizes"] for i in manifest["icons"]} >= {"192x192", "512x512"}


def go_offline(app: App) -> None:
    """The network off and the page reloaded: the service worker opens it, offline.js answers its API."""
    app.context.set_offline(True)
    app.page.reload()
    app.page.wait_for_selector("body[data-ready='1']")
    assert app.page.evaluate("PentaOffline.ready()") == "offline"
    assert app.page.evaluate("navigator.onLine") is False


def coach_offline(app: App) -> None:
    """A coach situation: the dice entered, the advisor's answer (as `pentadice advise 1 1 3 4 6` says), a box
    filled, undo."""
    p = app.page
    p.click("#mode-coach")
    app.start([("Budi", False)])
    app.wait_state("roll")
    for f in (1, 1, 3, 4, 6):
        p.click(f"#pad-faces button[data-face='{f}']")
    p.click("#pad-enter")
    app.wait_state("choose")
    advice = p.inner_text("#advice")
    assert "Best: Keep 4 and reroll 4 dice" in advice
    assert "Best box if you score now: Ones: 2 points" in advice
    p.locator("#sheet tr[data-box='chance'] button.score").click()
    app.wait_state("roll")
    assert p.locator("#sheet tr[data-box='chance'] td").nth(0).inner_text().strip() == "15"
    p.click("#undo")
    app.wait_state("choose")
    assert p.locator("#sheet tr[data-box='chance'] button.score").count() == 1


def solo_offline(app: App) -> dict:
    """A whole game against the computer, the person taking the advisor's choice each time; returns the final
    view (from offline.js: the game kept in localStorage)."""
    p = app.page
    p.click("#mode-play")
    app.start([("Ana", False), ("cpu", True)])
    for _ in range(200):
        state = app.wait_state("roll", "choose", "last", "over")
        if state == "over":
            break
        p.click("#roll" if state == "roll" else "#best")
    assert app.state() == "over"
    game_id = p.evaluate("location.pathname.split('/').pop()")
    assert game_id.startswith("off-")
    view = p.evaluate("id => PentaOffline.api('GET', '/api/games/' + id)", game_id)
    assert view["over"] and view["offline"]
    for player in view["players"]:  # every box filled, the totals the sheet's sums
        assert len(player["sheet"]) >= 13 and player["totals"]["total"] >= sum(
            v for k, v in player["sheet"].items() if k != "penta_bonus"
        )
    assert view["winners"]
    # Refusals as the server words them: {"error": ...} with its status.
    refusals = p.evaluate(
        """async (id) => {
            const out = [];
            for (const [method, path, body] of [["POST", "/api/games/" + id + "/roll", {}],
                    ["POST", "/api/games", {players: "Ana,cpu", dice: "manual"}],
                    ["POST", "/api/games", {players: "Ana,cpu:win"}],
                    ["GET", "/api/games/off-nothing", undefined]]) {
                try { await PentaOffline.api(method, path, body); out.push(null); }
                catch (e) { out.push([e.status, e.data.error]); }
            }
            return out;
        }""",
        game_id,
    )
    assert [r[0] for r in refusals] == [409, 422, 422, 404], refusals
    assert refusals[0][1] == "the game is over"
    # A reload goes on with the game: kept on the device.
    p.reload()
    p.wait_for_selector("body[data-ready='1']")
    app.wait_state("over")
    return view


def start_with_the_server_gone(app: App) -> None:
    """The server stopped while the page is online (it last saw the server): the first Start makes a game on
    this device, and the page says it is offline and what needs the server."""
    p = app.page
    app.start([("Ana", False), ("cpu", True)])
    app.wait_state("roll")
    assert p.evaluate("location.pathname").startswith("/games/off-")
    assert p.is_visible("#offline-note") and "need the server" in p.inner_text("#offline-note")
    assert p.is_hidden("#error")


def start_with_the_server_back(app: App) -> None:
    """The network and the server back: the next new game is the server's again, and the note goes."""
    p = app.page
    p.click("#new-game")
    if p.locator("#confirm-new").is_visible():
        p.click("#confirm-new-leave")
    app.start([("Ana", False), ("cpu", True)])
    app.wait_state("roll")
    assert not p.evaluate("location.pathname").startswith("/games/off-")
    assert p.is_hidden("#offline-note")


def test_installable_and_offline_after_serve(playwright, penta_table_dir, tmp_path):
    port = serving.free_port()
    args = serving.quiet_serve(port, penta_table_dir, "--db", str(tmp_path / "games.sqlite3"))
    app = App(playwright, f"http://127.0.0.1:{port}", tmp_path / "profile")
    try:
        with serving.started(args, port, tmp_path / "serve.log"):
            first_visit(app)
            assert app.page.evaluate("PentaOffline.ready()") == "server"
        start_with_the_server_gone(app)  # the server stopped, the network on
        go_offline(app)  # the network off too
        coach_offline(app)
        solo_offline(app)
        app.context.set_offline(False)
        with serving.started(args, port, tmp_path / "serve-again.log"):
            start_with_the_server_back(app)
        assert app.problems == []
    finally:
        app.close()


def test_offline_the_history_says_the_server_keeps_it(playwright, penta_table_dir, tmp_path):
    """Offline, the history view says plainly that the history is kept on the server and shows when the page is
    online again: a note, not a red error beside "Finished games: 0"; once the network and the server are back,
    the view asks again and shows the history (here: none finished yet)."""
    port = serving.free_port()
    args = serving.quiet_serve(port, penta_table_dir, "--db", str(tmp_path / "games.sqlite3"))
    app = App(playwright, f"http://127.0.0.1:{port}", tmp_path / "profile")
    p = app.page
    try:
        with serving.started(args, port, tmp_path / "serve.log"):
            first_visit(app)
        go_offline(app)
        p.click("#mode-history")
        p.wait_for_selector("#history-away:not([hidden])")
        assert p.inner_text("#history-away") == (
            "The history is kept on the server. It shows here when you are online again."
        )
        assert p.is_hidden("#error"), p.inner_text("#error")
        assert p.is_hidden("#history-games") and p.is_hidden("#history-players") and p.is_hidden("#history-empty")
        with serving.started(args, port, tmp_path / "serve-again.log"):
            app.context.set_offline(False)
            p.wait_for_selector("#history-empty:not([hidden])")
            assert p.is_hidden("#history-away") and p.is_hidden("#error")
        assert app.problems == []
    finally:
        app.close()


def test_the_first_rule_set_served_is_stored_and_played_offline_when_it_is_not_penta(playwright, tmp_path):
    """A server of Yatzy alone (the small game standing for it): the service worker stores Yatzy's tables at
    install, and offline a game that names no rule set is Yatzy's. About 10 CPU-s."""
    from commands import SMALL_CLI

    data = tmp_path / "data"
    solve = [*SMALL_CLI, "solve", "--rules", "yatzy", "--data", str(data)]
    done = subprocess.run(solve, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    port = serving.free_port()
    args = serving.quiet_serve(port, data, "--rules", "yatzy", "--db", str(tmp_path / "games.sqlite3"), cli=SMALL_CLI)
    app = App(playwright, f"http://127.0.0.1:{port}", tmp_path / "profile")
    try:
        with serving.started(args, port, tmp_path / "serve.log"):
            app.open()
            ready = app.page.evaluate(SW_READY)
            assert any("/app-tables/yatzy.f64?sha256=" in url for url in ready["tables"]), ready
            assert not any("/app-tables/penta." in url for url in ready["tables"]), ready
        go_offline(app)
        view = app.page.evaluate("PentaOffline.api('POST', '/api/games', {players: 'Ana'})")
        assert view["rules"] == "yatzy" and view["offline"]
        assert app.problems == []
    finally:
        app.close()


@pytest.fixture
def https_export(penta_table_dir, tmp_path):
    """The files of `pentadice export-app` served over HTTPS (a self-signed certificate) on localhost."""
    if not shutil.which("openssl"):
        pytest.skip("no openssl to make a certificate")
    folder = tmp_path / "app"
    cmd = [sys.executable, "-m", "pentadice", "export-app", str(folder), "--data", str(penta_table_dir)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    handler = functools.partial(QuietFiles, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd, folder
    finally:
        httpd.shutdown()
        httpd.server_close()


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    """A static host: a folder's files, no log line per request."""

    def log_message(self, format, *args) -> None:
        pass


def test_installable_and_offline_from_export(playwright, https_export, tmp_path):
    httpd, folder = https_export
    assert {p.name for p in folder.iterdir()} >= {"index.html", "sw.js", "manifest.webmanifest", "config.json",
                                                 "advisor.js", "offline.js", "app-tables", "icons"}  # fmt: skip
    app = App(playwright, f"https://localhost:{httpd.server_port}", tmp_path / "profile")
    try:
        first_visit(app)
        assert app.page.evaluate("PentaOffline.ready()") == "offline"  # no server: config.json says so
        httpd.shutdown()
        go_offline(app)
        words = app.page.evaluate("PentaOffline.api('GET', '/api/messages?lang=id')")  # from the app's files
        assert words["lang"] == "id" and words["messages"]["Game over"] == "Permainan selesai"
        coach_offline(app)
        solo_offline(app)
        assert app.problems == []
    finally:
        app.close()


def test_export_app_refuses_clearly(penta_table_dir, tmp_path):
    """A folder that is not empty, an unknown or too large rule set, a missing table: one line, a non-zero exit,
    nothing written; ``--force`` replaces a previous export whole, and leaves a folder of other files alone
    (tests/test_export_app_safety.py has the rest)."""
    folder = tmp_path / "full"
    folder.mkdir()
    (folder / "mine.txt").write_text("kept")

    for args, words in (
        ((str(folder),), "is not empty"),
        ((str(tmp_path / "a"), "--rules", "maxi-yatzy"), "too large"),
        ((str(tmp_path / "b"), "--rules", "nope"), "unknown rule set"),
        ((str(tmp_path / "c"),), "pentadice solve --rules penta"),
    ):
        done = CliRunner().invoke(main, ["export-app", *args, "--data", str(tmp_path / "none")])
        assert done.exit_code == 2 and words in done.output and "Traceback" not in done.output, done.output
        assert len(done.output.strip().splitlines()) == 1, done.output
    assert (folder / "mine.txt").read_text() == "kept"
    assert not any(Path(tmp_path / n).exists() for n in "abc")
    done = CliRunner().invoke(main, ["export-app", str(folder), "--force", "--data", str(penta_table_dir)])
    assert done.exit_code == 2 and "is not a previous export of the app" in done.output, done.output
    (folder / "mine.txt").unlink()
    for force in ((), ("--force",)):  # into the empty folder, then over that export
        done = CliRunner().invoke(main, ["export-app", str(folder), *force, "--data", str(penta_table_dir)])
        assert done.exit_code == 0, done.output
    assert (folder / "app-tables" / "penta.f64").stat().st_size == 8 * 2**20
    assert json.loads((folder / "config.json").read_text())["server"] is False
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary folder left
