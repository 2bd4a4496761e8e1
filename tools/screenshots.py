"""The pictures of the page in the README and the documentation, taken in headless Chromium from a real ``pentadice
serve``: a shared game on two phones (the host with its Share panel, the guest's screen), the same at 1280x800, the
coach with the network off (the service worker and the advisor in the browser), the game in dark mode, and the review
of a finished game, at 390x844 and 1280x800. Written to ``docs/screenshots/`` (``--out``).

    .venv/bin/python tools/screenshots.py [--data data] [--out docs/screenshots]

The server holds the tables of ``--data`` (Penta's: ``make table``), with a games database of its own in a
temporary folder; the pictures show seeded games, so that a second run shows the same ones.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import serving  # noqa: E402 (the tests' way of starting `pentadice serve`)

CHROMIUM = os.environ.get("PENTADICE_CHROMIUM", "/usr/bin/chromium")
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
SIZES = {"phone": PHONE, "desktop": DESKTOP}


def call(base: str, method: str, path: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.loads(answer.read())


def ready(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")


def state_in(page, *states: str) -> None:
    page.wait_for_function("s => s.includes(document.body.dataset.state)", arg=list(states), timeout=60_000)


def shared_game(browser, base: str, out: Path, size: str) -> None:
    """A shared game of Ana (the host), Budi (on his own phone) and the computer: a turn each, then the host's
    screen with its Share panel and the guest's, mid-turn."""
    host_ctx = browser.new_context(viewport=SIZES[size], color_scheme="light")
    host = host_ctx.new_page()
    ready(host, base + "/?fast=1&lang=en")
    names = host.locator("#player-list li input[type=text]")
    host.click("#add-player")
    names.nth(0).fill("Ana")
    names.nth(1).fill("cpu")
    names.nth(2).fill("Budi")
    host.locator("#player-list li").nth(2).locator("input[type=checkbox]").set_checked(False)
    host.locator("#autocommit").set_checked(False)
    host.fill("#seed", "26")
    host.check("#shared")
    host.click("#start")
    state_in(host, "roll")
    link = host.locator("#share-seats .share-link").first.input_value()
    guest_ctx = browser.new_context(viewport=SIZES[size], color_scheme="light")
    guest = guest_ctx.new_page()
    path, secret = link.split("#", 1)
    ready(guest, path + "?fast=1&lang=en#" + secret)
    host.click("#roll")
    state_in(host, "choose")
    host.locator("#sheet button.score").nth(4).click()
    state_in(host, "waiting")
    state_in(guest, "roll")
    guest.click("#roll")
    state_in(guest, "choose")
    guest.locator("#dice .die").nth(0).click()
    host.wait_for_function("() => document.querySelectorAll('#dice .die:not(.blank)').length > 0")
    host.wait_for_selector("#share-seats .qr svg")
    host.wait_for_timeout(300)
    host.screenshot(path=str(out / f"{size}-shared-host.png"), full_page=True)
    guest.screenshot(path=str(out / f"{size}-shared-guest.png"))
    host_ctx.close()
    guest_ctx.close()


def dark_game(browser, base: str, out: Path, size: str) -> None:
    """A game against the computer in dark mode, hints on, after a roll and a hold."""
    ctx = browser.new_context(viewport=SIZES[size], color_scheme="dark")
    page = ctx.new_page()
    ready(page, base + "/?fast=1&lang=en")
    page.locator("#player-list li input[type=text]").first.fill("Ana")
    page.fill("#seed", "7")
    page.locator("#hints").set_checked(True)
    page.click("#start")
    state_in(page, "roll")
    page.click("#roll")
    state_in(page, "choose")
    page.locator("#dice .die").nth(1).click()
    page.screenshot(path=str(out / f"{size}-dark.png"))
    ctx.close()


def offline_coach(browser, base: str, out: Path, size: str) -> None:
    """The coach with the network off: the page opened once (the service worker stores the app and Penta's
    tables), then reloaded offline; a roll's faces typed in and the advice from the browser's own advisor."""
    ctx = browser.new_context(viewport=SIZES[size], color_scheme="light")
    page = ctx.new_page()
    ready(page, base + "/?fast=1&lang=en")
    page.evaluate(
        """async () => { await navigator.serviceWorker.ready;
            for (let i = 0; i < 200 && !navigator.serviceWorker.controller; i++)
                await new Promise(r => setTimeout(r, 50));
            for (let i = 0; i < 200; i++) {
                const keys = await (await caches.open("pentadice-tables-v1")).keys();
                if (keys.some(k => k.url.includes("penta.f64"))) return;
                await new Promise(r => setTimeout(r, 100)); } }"""
    )
    ctx.set_offline(True)
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    page.click("#mode-coach")
    page.locator("#player-list li input[type=text]").first.fill("Budi")
    page.click("#start")
    state_in(page, "roll")
    for face in (2, 3, 3, 4, 5):
        page.click(f"#pad-faces button[data-face='{face}']")
    page.click("#pad-enter")
    state_in(page, "choose")
    page.wait_for_selector("#advice:not(:empty)")
    page.screenshot(path=str(out / f"{size}-offline-coach.png"), full_page=size == "desktop")
    ctx.close()


def review(browser, base: str, out: Path, size: str, game: str) -> None:
    """The review of a finished game (two computers, one of them played through the API)."""
    ctx = browser.new_context(viewport=SIZES[size], color_scheme="light")
    page = ctx.new_page()
    ready(page, f"{base}/games/{game}?fast=1&lang=en")
    state_in(page, "over")
    page.click("#review-game")
    page.wait_for_selector("#review:not([hidden]) .player-review")
    page.screenshot(path=str(out / f"{size}-review.png"), full_page=size == "desktop")
    ctx.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(ROOT / "data"), help="the tables' folder (default: data)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"), help="where the PNGs go")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not (Path(args.data) / "penta.json").is_file():
        print(f"screenshots: no Penta table in {args.data}: make table", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="pentadice-shots-") as folder:
        port = serving.free_port()
        cmd = serving.quiet_serve(port, args.data, "--db", str(Path(folder) / "games.sqlite3"))
        with serving.started(cmd, port, Path(folder) / "serve.log"):
            base = f"http://127.0.0.1:{port}"
            players = [{"name": "Ana", "computer": True}, {"name": "cpu", "computer": True}]
            game = call(base, "POST", "/api/games", {"players": players, "rules": "penta", "seed": 5})
            while not game["over"]:
                game = call(base, "POST", f"/api/games/{game['id']}/computer", {})["game"]
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
                for size in SIZES:
                    shared_game(browser, base, out, size)
                    dark_game(browser, base, out, size)
                    review(browser, base, out, size, game["id"])
                    offline_coach(browser, base, out, size)
                browser.close()
    for size in SIZES:
        for name in ("shared-host", "shared-guest", "dark", "review", "offline-coach"):
            print(out / f"{size}-{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
