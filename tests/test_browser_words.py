"""The page's words and the details players expect, in a real headless Chromium: Indonesian with no English left
on any screen (the language switched after loading, the default player "You" included), "Your turn" and "You
roll" rather than "You's turn" and "You rolls", the footer naming the game's rule set; the coach's prompt
after a roll (the held dice kept), its two rows of dice told apart, a sheet in progress typed in at once and
undo taking back a whole roll entry; the review's final scores and winner, a ``win`` computer's losses shown
as risks taken to win; no dice animation under ``prefers-reduced-motion``; the sound off by default; a
confirmation before "New game" leaves an unfinished game; the points the upper bonus still needs.

The browser and the page driver are those of tests/test_browser.py; one server (``pentadice serve`` on the
session's Penta table, a games database of this module's own) for the module.
"""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest
import serving
from test_browser import DESKTOP, PHONE, Page, browser  # noqa: F401 (the browser fixture)

from pentadice.support import i18n

ROOT = Path(__file__).resolve().parent.parent
POT = ROOT / "pentadice" / "support" / "locale" / "pentadice.pot"
AUDIO_COUNTER = """(() => { const Real = window.AudioContext; window.__audio = 0; if (Real)
    window.AudioContext = class extends Real { constructor(...a) { super(...a); window.__audio += 1; } }; })()"""


@pytest.fixture(scope="module")
def server(penta_table_dir, tmp_path_factory):
    """``pentadice serve`` on the Penta table with a games database of its own: its base URL."""
    folder = tmp_path_factory.mktemp("words")
    port = serving.free_port()
    args = serving.quiet_serve(port, penta_table_dir, "--db", str(folder / "games.sqlite3"))
    with serving.started(args, port, folder / "serve.log"):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def page(browser, server):  # noqa: F811 (the fixture of test_browser)
    pages: list[Page] = []

    def make(**kw) -> Page:
        pages.append(Page(browser, server, **kw))
        return pages[-1]

    yield make
    for pg in pages:
        pg.close()
    for pg in pages:
        pg.assert_clean()


def call(server: str, method: str, path: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data is not None else {}
    request = urllib.request.Request(server + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def english_patterns() -> list[re.Pattern]:
    """Every English message of the catalogue that Indonesian says otherwise (or not at all), as a pattern
    matching a whole text with its fields ({name}, {n}) filled in; a message with no English word of its own
    (of three letters or more, not in its Indonesian text) is left out: it would match Indonesian as well."""
    pofile = pytest.importorskip("babel.messages.pofile", reason="Babel (make install) reads the catalogue")
    with POT.open("rb") as fh:
        template = pofile.read_po(fh)
    indonesian = i18n.catalogue("id")
    out = []
    for message in template:
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        for msgid in ids:
            if not msgid or indonesian.get(msgid) == msgid:
                continue  # the same in both languages (a name, a sign)
            said = re.sub(r"\{\w*\}", " ", indonesian.get(msgid) or "").lower()
            words = [w for w in re.findall(r"[A-Za-z]{3,}", re.sub(r"\{\w*\}", " ", msgid)) if w.lower() not in said]
            if not words:
                continue  # "{box} bonus" ("bonus {box}"), "{n} %": no English of its own to tell it by
            parts = re.split(r"(\{\w*\})", msgid)
            out.append(re.compile("".join(".+?" if re.fullmatch(r"\{\w*\}", p) else re.escape(p) for p in parts)))
    return out


VISIBLE_TEXTS = """() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent.trim();
    const host = n.parentElement;
    if (!text || !host || host.closest("script, style, option:not(:checked)")) continue;
    if (host.checkVisibility && !host.checkVisibility()) continue;
    out.push(text);
  }
  for (const node of document.querySelectorAll("[aria-label], [title]")) {
    if (node.checkVisibility && !node.checkVisibility()) continue;
    for (const a of ["aria-label", "title"]) if (node.getAttribute(a)) out.push(node.getAttribute(a).trim());
  }
  return out;
}"""


def english_left(pg: Page, patterns: list[re.Pattern]) -> list[str]:
    """The texts shown (and the labels read out) that are English messages."""
    texts = pg.page.evaluate(VISIBLE_TEXTS)
    return sorted({text for text in texts if any(p.fullmatch(text) for p in patterns)})


def roll_and_wait(pg: Page) -> None:
    pg.page.click("#roll")
    pg.wait_state("choose", "last")


def test_indonesian_has_no_english_left_on_any_screen(page, server):
    """The page loaded in English and switched to Indonesian: the set-up (play and coach), a game with its
    advice and the confirmation, a coach game, the review and the history show no English message; the default
    player is "Anda", the footer names the rule set."""
    patterns = english_patterns()
    pg = page(size=PHONE, lang="en")
    p = pg.page
    assert p.input_value("#player-list li input[type=text]") == "You"
    p.select_option("#lang", "id")
    p.wait_for_function("() => document.documentElement.lang === 'id'")
    assert p.input_value("#player-list li input[type=text]") == "Anda"  # the default name, in the new language
    assert "Penta" in p.inner_text("#foot-text")
    seen: dict[str, list[str]] = {"setup": english_left(pg, patterns)}
    assert "Seed" not in p.inner_text("#setup") and "Auto-commit" not in p.inner_text("#setup")

    p.click("#mode-coach")
    p.click("#sheet-entry summary")
    seen["coach set-up"] = english_left(pg, patterns)

    p.click("#mode-play")
    p.locator("#hints").set_checked(True)
    p.click("#start")
    pg.wait_state("roll")
    assert p.inner_text("#status").startswith("Giliran Anda")
    roll_and_wait(pg)
    seen["game"] = english_left(pg, patterns)
    p.click("#new-game")
    seen["confirmation"] = english_left(pg, patterns)
    p.click("#confirm-new-keep")

    p.click("#mode-coach")
    p.click("#start")
    p.wait_for_selector("#pad:not([hidden])")
    for face in (2, 3, 3, 5, 6):
        p.click(f"#pad-faces button[data-face='{face}']")
    p.click("#pad-enter")
    pg.wait_state("choose")
    seen["coach game"] = english_left(pg, patterns)
    p.locator("#sheet button.score").first.click()
    pg.wait_state("roll")
    p.click("#mode-review")
    seen["review (empty)"] = english_left(pg, patterns)
    p.click("#mode-history")
    p.wait_for_function("() => !document.getElementById('history-count').textContent.includes('…')")
    seen["history"] = english_left(pg, patterns)
    assert {screen: left for screen, left in seen.items() if left} == {}


def test_you_is_spoken_to_and_the_footer_names_the_rules(page):
    """The default player hears "Your turn", "You roll", "You score", never "You's turn" or "You rolls"; a
    named player keeps the third person."""
    pg = page(size=DESKTOP, lang="en")
    p = pg.page
    assert p.inner_text("#foot-text") == "pentadice: exact optimal strategy for Penta"
    p.click("#start")
    pg.wait_state("roll")
    assert p.inner_text("#status") == "Your turn 1 of 13"
    roll_and_wait(pg)
    assert pg.live().startswith("You roll ")
    p.locator("#sheet button.score").first.click()
    pg.wait_state("roll")  # the computer's turn played through
    said = " | ".join(pg.announced())
    assert "You score " in said and "cpu scores " in said
    assert "You's" not in said and "You rolls" not in said and "You scores" not in said
    assert "You's" not in p.inner_text("#game")


def test_the_coach_prompt_rows_sheet_in_progress_and_undo(page):
    """A coach game started from a sheet typed in (the boxes' points, at once); after a roll the prompt asks to
    hold first, then for the faces of the dice rolled again only; the dice and the faces to tap are labelled
    rows; Undo takes back the faces being entered whole, then the whole roll entered, with its holds."""
    pg = page(size=PHONE, lang="en")
    p = pg.page
    p.click("#mode-coach")
    p.click("#sheet-entry summary")
    p.fill("#sheet-entry-table input[data-box='ones']", "3")
    p.fill("#sheet-entry-table input[data-box='chance']", "23")
    p.click("#start")
    p.wait_for_selector("#pad:not([hidden])")
    assert p.inner_text("#status") == "Your turn 3 of 13"  # two boxes filled: the third turn
    assert p.locator("#sheet tr[data-box='ones'] td").first.inner_text().strip() == "3"
    assert p.locator("#sheet tr[data-box='chance'] td").first.inner_text().strip() == "23"
    assert "5 dice rolled" in p.inner_text("#pad-prompt")
    for face in (1, 2, 3, 3, 5):
        p.click(f"#pad-faces button[data-face='{face}']")
    p.click("#pad-enter")
    pg.wait_state("choose")
    # Nothing held yet: hold first; the two rows say which is which.
    assert "first tap the dice you keep" in p.inner_text("#pad-prompt")
    assert p.locator("#dice-label").is_visible() and p.locator(".pad-label").is_visible()
    assert p.text_content("#dice-label") != p.text_content(".pad-label")
    p.click("#dice .die[data-face='3'] >> nth=0")
    p.click("#dice .die[data-face='3'] >> nth=1")
    assert p.text_content("#pad-prompt") == "Roll 2: 3 3 kept; tap the faces of the 3 dice rolled again"
    # Undo with faces being entered: they go, all of them.
    p.click("#pad-faces button[data-face='4']")
    p.click("#pad-faces button[data-face='6']")
    p.click("#undo")
    assert "rolled: nothing yet" in p.text_content("#pad-entered") and "kept: 3 3" in p.text_content("#pad-entered")
    for face in (4, 6, 6):
        p.click(f"#pad-faces button[data-face='{face}']")
    p.click("#pad-enter")
    p.wait_for_function("() => document.querySelectorAll('#dice .die[data-face=\"6\"]').length === 2")
    pg.wait_state("choose")
    # Undo after the roll: the whole roll entry goes back, the dice kept for it held again.
    p.click("#undo")
    p.wait_for_function("() => document.querySelectorAll('#dice .die[data-face=\"6\"]').length === 0")
    held = p.evaluate("[...document.querySelectorAll('#dice .die.held')].map(d => Number(d.dataset.face))")
    assert held == [3, 3]
    assert "3 dice rolled again" in p.text_content("#pad-prompt")


def finished_game(server: str) -> tuple[str, dict]:
    """A finished game of Ana and Bot played through the API, Bot taking the box that scores least (the
    risks a computer playing to win may take): its id, and its save with Bot made the ``win`` computer it
    played as (every step of his marked the computer's)."""
    game = call(server, "POST", "/api/games", {"players": "Ana,Bot", "seed": 7, "auto_commit": None})
    gid = game["id"]
    while not game["over"]:
        if game["dice"] is None:
            game = call(server, "POST", f"/api/games/{gid}/roll", {"keep": []})["game"]
            continue
        legal = game["legal"]
        if game["current"] == 0:
            best = game["advice"]["best"]
            box = best["box"] if best["action"] == "score" else max(legal, key=legal.get)
        else:
            box = min(legal, key=lambda b: (legal[b], b))
        game = call(server, "POST", f"/api/games/{gid}/score", {"box": box})["game"]
    save = call(server, "GET", f"/api/games/{gid}/save")
    save["players"][1].update(computer=True, strategy="win")
    for step in save["history"]:
        step["computer"] = step["index"] == 1
    return gid, save


def test_the_review_shows_final_scores_the_winner_and_risks_taken_to_win(page, server):
    """The review of a finished game starts with the final scores and the winner; in the review of its save
    where Bot is a computer that plays to win, his losses are shown as risks taken on purpose, not as plain
    losses (and Ana's as hers)."""
    gid, save = finished_game(server)
    view = call(server, "GET", f"/api/games/{gid}")
    totals = {p["name"]: p["totals"]["total"] for p in view["players"]}
    pg = page(size=DESKTOP, lang="en")
    p = pg.page
    p.goto(f"{server}/games/{gid}?fast=1&lang=en")
    p.wait_for_selector("body[data-ready='1']")
    pg.wait_state("over")
    p.click("#review-game")
    p.wait_for_selector("#review-out .final-scores")
    rows = p.locator(".final-list li").all_inner_texts()
    assert [r.split()[0] for r in rows] == sorted(totals, key=lambda n: -totals[n])
    assert all(str(totals[row.split()[0]]) in row for row in rows)
    winners, top = view["winners"], max(totals.values())
    expected = f"{winners[0]} wins with {top} points" if len(winners) == 1 else "A tie: "
    assert p.inner_text(".final-winner").startswith(expected)
    assert p.locator(".plays-to-win").count() == 0  # both played as people here

    p.set_input_files(
        "#review-file", files=[{"name": "g.json", "mimeType": "application/json", "buffer": json.dumps(save).encode()}]
    )
    p.wait_for_selector(".player-review.plays-to-win")
    assert p.locator(".player-review h3").all_inner_texts() == ["Ana", "Bot (computer, plays to win)"]
    bot = p.inner_text(".player-review.plays-to-win")
    assert "risks taken on purpose" in bot and "The largest risks taken to win" in bot
    assert "The worst decisions" not in bot
    p.click("#review-out details.decisions summary")
    risky = p.locator(".review-table tr.risk td:first-child").all_inner_texts()
    assert risky and set(risky) == {"Bot"}
    assert all("(a risk for the win)" in c for c in p.locator(".review-table tr.risk td:last-child").all_inner_texts())


def test_motion_sound_confirmation_and_the_upper_bonus(page):
    """Under prefers-reduced-motion a roll animates nothing (and without it the dice tumble); the sound is off
    until switched on (then a roll makes one, and the setting stays); "New game" in an unfinished game asks
    first; the upper bonus row says how many points it still needs."""
    still = page(size=PHONE, lang="en")
    p = still.page
    p.emulate_media(reduced_motion="reduce")
    p.add_init_script(AUDIO_COUNTER)
    p.reload()
    p.wait_for_selector("body[data-ready='1']")
    assert p.get_attribute("#sound-button", "aria-pressed") == "false"
    assert p.evaluate("localStorage.getItem('pentadice.sound')") is None
    p.click("#start")
    still.wait_state("roll")
    need = p.locator("#sheet tr.bonus td").first
    assert need.get_attribute("data-need") == "63"
    roll_and_wait(still)
    assert p.evaluate("document.getAnimations().length") == 0
    assert p.locator("#dice .die.rolling").count() == 0
    assert p.evaluate("window.__audio") == 0  # no sound: no audio at all
    # Score an upper box: the bonus needs the rest.
    upper = ["ones", "twos", "threes", "fours", "fives", "sixes"]
    legal = p.evaluate("[...document.querySelectorAll('#sheet button.score')].map(b => b.dataset.box)")
    box = next(b for b in reversed(upper) if b in legal)
    p.click(f"#sheet button.score[data-box='{box}']")
    still.wait_state("roll")
    upper_sum = int(p.locator("#sheet tr.sum.upper td").first.inner_text())
    assert int(need.get_attribute("data-need")) == 63 - upper_sum
    # The confirmation: Esc keeps the game, "Leave" goes to the set-up.
    p.click("#new-game")
    assert p.evaluate("document.getElementById('confirm-new').open")
    p.keyboard.press("Escape")
    assert not p.evaluate("document.getElementById('confirm-new').open")
    assert p.locator("#game").is_visible()
    p.click("#new-game")
    p.click("#confirm-new-leave")
    p.wait_for_selector("#setup:not([hidden])")

    moving = page(size=PHONE, lang="en")
    q = moving.page
    q.emulate_media(reduced_motion="no-preference")
    q.add_init_script(AUDIO_COUNTER)
    q.reload()
    q.wait_for_selector("body[data-ready='1']")
    q.click("#sound-button")
    assert q.get_attribute("#sound-button", "aria-pressed") == "true"
    q.click("#start")
    moving.wait_state("roll")
    roll_and_wait(moving)
    assert q.locator("#dice .die.rolling").count() == 5
    tumble = "getComputedStyle(document.querySelector('#dice .die.rolling svg')).animationName"
    assert q.evaluate(tumble) == "die-tumble"
    assert q.evaluate("window.__audio") >= 1
    q.reload()
    q.wait_for_selector("body[data-ready='1']")
    assert q.get_attribute("#sound-button", "aria-pressed") == "true"  # kept
