"""The page in a real headless Chromium on the Yatzy family's sheets: a Yatzy game shows its 15 boxes and the
upper bonus at 63, a Maxi Yatzy game 6 dice (rolled, held, fitting a phone's width) and the bonus at 75.

The server is the real application (``tests/family_server.py``: Yatzy's solved table, and a 6-dice game of
nine of Maxi Yatzy's boxes under the name ``maxi-yatzy``, solved in seconds) in a subprocess on a free port;
the browser and the page helpers are those of ``tests/test_browser.py`` (skipped as they are)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_browser import DESKTOP, PHONE, Page, _free_port, browser, running  # noqa: F401 (browser: a fixture)

SERVER = Path(__file__).with_name("family_server.py")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The family server on a free port; its base URL (the 6-dice game's solve and the kernels' compile on a first
    run; Yatzy's table and second moments those of the session, saved once: tests/family_server.py)."""
    from family_server import saved_yatzy

    port = _free_port()
    log = tmp_path_factory.mktemp("serve-family") / "serve.log"
    args = [sys.executable, str(SERVER), str(port), str(saved_yatzy(tmp_path_factory))]
    yield from running(args, port, log, 300, "the family server")


def start(browser, server, rules: str, size=DESKTOP) -> Page:  # noqa: F811 (the fixture's value)
    page = Page(browser, server, size=size)
    page.page.select_option("#rules", rules)
    page.start([("Ana", False)], seed=3, auto_commit=False)
    return page


def test_a_yatzy_game_shows_its_fifteen_boxes(browser, server):  # noqa: F811
    page = start(browser, server, "yatzy")
    p = page.page
    assert p.locator("#dice .die").count() == 5
    assert p.locator("tr.box").count() == 15
    names = [t.strip() for t in p.locator("tr.box th span").all_text_contents()]
    assert names[6:8] == ["One pair", "Two pairs"] and names[-1] == "Yatzy" and "Penta" not in names
    sums = p.locator("tr.sum th").all_text_contents()
    assert "Upper bonus (63+)" in sums and not any("Penta" in s or "Yatzy bonus" in s for s in sums)
    page.assert_clean()
    page.close()


@pytest.mark.parametrize("size", [DESKTOP, PHONE])
def test_a_maxi_yatzy_game_rolls_six_dice(browser, server, size):  # noqa: F811
    page = start(browser, server, "maxi-yatzy", size)
    p = page.page
    assert p.locator("#dice .die").count() == 6 and p.locator("tr.box").count() == 9
    assert "Upper bonus (75+)" in p.locator("tr.sum th").all_text_contents()
    p.click("#roll")
    p.wait_for_function("() => document.querySelectorAll('#dice .die:not(.blank)').length === 6", timeout=60_000)
    faces = [int(f) for f in p.eval_on_selector_all("#dice .die", "ds => ds.map(d => d.dataset.face)")]
    assert len(faces) == 6 and all(1 <= f <= 6 for f in faces)
    p.keyboard.press("6")  # the sixth die is held from the keyboard too
    p.wait_for_selector("#dice .die.held")
    assert p.locator("#dice .die").nth(5).get_attribute("aria-pressed") == "true"
    right = p.eval_on_selector_all("#dice .die", "ds => Math.max(...ds.map(d => d.getBoundingClientRect().right))")
    assert right <= size["width"]  # six dice fit the width, a phone's included
    page.assert_clean()
    page.close()
