"""The advisor in the browser (``pentadice/faces/web/static/advisor.js``) against the Python advisor: 10,000 random
situations of each rule set the offline app serves (every one but Maxi Yatzy, each on its full table), answered
by the Python advisor's fast batch path (:class:`pentadice.advisor.quick.QuickAdvisor`: ``advise --batch``'s
answers, which ``tests/test_quick_advice.py`` holds equal to the object path's), must get the same options, the
same best option, keep and box (ties within 1e-9 aside), every value within 1e-9, the same joker note and
sacrifice message from the JS advisor reading the exported tables, in Node and in Chromium; and the JS legal
boxes, points and Penta bonus equal :func:`rules.legal_scores` on random hands, open boxes and Penta states (half
of them all alike: every joker path) for each of those rule sets. The server's ``/app-tables/`` addresses are
checked here too.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from sheets import random_sheet
from solutions import solved

from pentadice.advisor import Advisor
from pentadice.advisor.quick import QuickAdvisor
from pentadice.faces.web import app_tables
from pentadice.game import rules
from pentadice.game.situation import Situation
from pentadice.tables import table

NODE = os.environ.get("PENTADICE_NODE", "/usr/bin/node")
ROOT = Path(__file__).resolve().parent.parent
ADVISOR_JS = ROOT / "pentadice" / "faces" / "web" / "static" / "advisor.js"
COMPARE_JS = Path(__file__).parent / "js" / "compare.js"
CHECKER = Path(__file__).parent / "js" / "check_advisor.mjs"
SITUATIONS = 10_000  # per rule set served
LEGAL_CASES = 3_000  # per rule set served


def served() -> list[str]:
    """The rule sets the offline app takes: all but those whose table is too large for a phone."""
    out = []
    for name, rs in rules.REGISTRY.items():
        try:
            app_tables.check_size(rs)
        except app_tables.TooLarge:
            continue
        out.append(name)
    return out


def random_situations(rs: rules.RuleSet, n: int, seed: int) -> list[Situation]:
    """``n`` random situations that can occur in a game of ``rs``: any number of boxes filled (one open at
    least), random dice (all alike one time in six, so that the joker and the bonus come up), any roll."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        sheet = random_sheet(rs, rng, int(rng.integers(0, len(rs.boxes))))
        if rng.random() < 1 / 6:
            dice = [int(rng.integers(1, 7))] * rs.dice
        else:
            dice = [int(d) for d in rng.integers(1, 7, size=rs.dice)]
        out.append(Situation.make(rs, dice, int(rng.integers(0, rs.rolls)), sheet))
    return out


def legal_cases(rs: rules.RuleSet, n: int, seed: int) -> list[dict]:
    """Random (hand, open boxes, Penta state) with :func:`rules.legal_scores`' answer; half of the hands all
    alike, the Penta box often filled, so that every joker path is met."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        open_boxes = [b for b in rs.boxes if rng.random() < 0.5] or [str(rng.choice(list(rs.boxes)))]
        if rs.penta_id and rng.random() < 0.7 and rs.penta_id in open_boxes and len(open_boxes) > 1:
            open_boxes.remove(rs.penta_id)
        if rng.random() < 0.5:
            dice = [int(rng.integers(1, 7))] * rs.dice
        else:
            dice = [int(d) for d in rng.integers(1, 7, size=rs.dice)]
        scored = bool(rs.penta_id) and rs.penta_id not in open_boxes and bool(rng.random() < 0.6)
        legal, bonus = rules.legal_scores(rs, dice, open_boxes, scored)
        out.append({"dice": dice, "open": open_boxes, "penta_scored": scored, "legal": legal, "bonus": bonus})
    return out


def answers(rs: rules.RuleSet, values: np.ndarray, situations: list[Situation]) -> list[str]:
    """The Python advisor's answer to each situation as ``advise --batch`` writes it (JSON text), from the fast
    batch path (the object path for any it leaves to it)."""
    advisor = Advisor(table.Table(rs, values, {}, None))
    quick = QuickAdvisor(advisor)
    records = [quick.read({"dice": list(s.dice), "rolls_left": s.rolls_left, "sheet": s.sheet.as_dict(rs)})
               for s in situations]  # fmt: skip
    texts = quick.texts([r for r in records if r is not None], None, False)
    fast = iter(texts)
    out = [next(fast) if r is not None else None for r in records]
    return [
        t if t is not None else json.dumps(advisor.advise(s).as_dict(rs)) for s, t in zip(situations, out, strict=True)
    ]


def write_set(directory: Path, rs: rules.RuleSet, values: np.ndarray, situations: list[Situation]) -> None:
    """The exported tables of ``rs``, the Python advisor's answers (``NAME.cases.json``) and the legal boxes'
    cases (``NAME.legal.json``)."""
    done = app_tables.export(rs, values)
    (directory / f"{rs.name}.json").write_bytes(done.json_bytes)
    (directory / f"{rs.name}.f64").write_bytes(done.values)
    parts = []
    for s, text in zip(situations, answers(rs, values, situations), strict=True):
        asked = json.dumps({"dice": list(s.dice), "rolls_left": s.rolls_left, "sheet": s.sheet.as_dict(rs)})
        parts.append(asked[:-1] + ', "expect": ' + text + "}")
    (directory / f"{rs.name}.cases.json").write_text("[" + ",\n".join(parts) + "]")
    (directory / f"{rs.name}.legal.json").write_text(json.dumps(legal_cases(rs, LEGAL_CASES, seed=len(rs.name))))


@pytest.fixture(scope="module")
def cases(tmp_path_factory, penta_solution) -> tuple[Path, list[str]]:
    """A folder of each served rule set's exported tables with its cases; the rule sets' names."""
    directory = tmp_path_factory.mktemp("js-advisor")
    labels = served()
    for seed, name in enumerate(labels):
        solution = penta_solution if name == "penta" else solved(name)
        write_set(directory, solution.rules, solution.values, random_situations(solution.rules, SITUATIONS, seed))
    return directory, labels


def test_exported_tables_describe_the_rules(penta_solution):
    """The JSON says what the rules module says: its score table, its parameters, the values' SHA-256; a table
    too large for a phone (Maxi Yatzy) is refused with its size."""
    rs = penta_solution.rules
    done = app_tables.export(rs, penta_solution.values)
    meta = json.loads(done.json_bytes)
    assert meta["score_table"] == rules.score_table(rs).tolist()
    assert meta["params"] == rs.params().tolist()
    assert meta["values"]["sha256"] == done.values_sha256
    assert np.array_equal(np.frombuffer(done.values, "<f8").reshape(rs.table_shape), penta_solution.values,
                          equal_nan=True)  # fmt: skip
    assert meta["expected_score"] == pytest.approx(penta_solution.values[0, rs.box_mask, 0])
    with pytest.raises(app_tables.TooLarge, match="MiB"):
        app_tables.export(rules.get_rules("maxi-yatzy"), np.zeros(1))


@pytest.mark.skipif(not os.access(NODE, os.X_OK), reason=f"no node at {NODE}")
def test_js_advisor_in_node(cases):
    directory, labels = cases
    done = subprocess.run([NODE, str(CHECKER), str(directory), *labels], capture_output=True, text=True, timeout=300)
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert [x["label"] for x in lines] == labels
    for line in lines:
        assert line["sha_ok"] and line["advice"]["checked"] == SITUATIONS and line["legal"]["checked"] == LEGAL_CASES
        assert line["advice"]["mismatches"] == 0 and line["legal"]["mismatches"] == 0, line


def test_js_advisor_in_chromium(cases):
    """The same cases in Chromium: advisor.js and compare.js on a page of their own, served from 127.0.0.1 (a
    secure context: crypto.subtle checks the values' SHA-256)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="no playwright: make install")
    chromium = os.environ.get("PENTADICE_CHROMIUM", "/usr/bin/chromium")
    if not os.access(chromium, os.X_OK):
        chromium = shutil.which("chromium")
    if not chromium:
        pytest.skip("no chromium: install the browser: make browser")
    directory, labels = cases
    shutil.copy(ADVISOR_JS, directory / "advisor.js")
    shutil.copy(COMPARE_JS, directory / "compare.js")
    (directory / "index.html").write_text(
        '<!doctype html><script src="advisor.js"></script><script src="compare.js"></script>'
    )
    script = """async (labels) => {
        const out = [];
        const get = async (name) => (await fetch(name)).arrayBuffer();
        const json = async (name) => JSON.parse(new TextDecoder().decode(await get(name)));
        for (const label of labels) {
            const meta = await json(label + ".json");
            const cases = await json(label + ".cases.json");
            const buffer = await get(label + ".f64");
            const sha = (await PentaAdvisor.sha256Hex(buffer)) === meta.values.sha256;
            const tables = new PentaAdvisor.Tables(meta, buffer);
            const legal = await json(label + ".legal.json");
            out.push({label, sha_ok: sha, advice: PentaCompare.checkAdvice(tables, cases),
                      legal: PentaCompare.checkLegal(tables, legal)});
        }
        return out;
    }"""
    handler = functools.partial(QuietFiles, directory=str(directory))
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            with sync_api.sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox"])
                try:
                    page = browser.new_page()
                    page.goto(f"http://127.0.0.1:{httpd.server_port}/index.html")
                    results = page.evaluate(script, labels)
                finally:
                    browser.close()
        finally:
            httpd.shutdown()
    assert [r["label"] for r in results] == labels
    for r in results:
        assert r["sha_ok"] and r["advice"]["checked"] == SITUATIONS and r["legal"]["checked"] == LEGAL_CASES
        assert r["advice"]["mismatches"] == 0 and r["legal"]["mismatches"] == 0, r


class QuietFiles(SimpleHTTPRequestHandler):
    """A folder's files over HTTP, without a log line per request."""

    def log_message(self, format, *args) -> None:
        pass


def test_tables_served_with_etag(penta_advisor):
    """``/app-tables/``: the index, the description and the values of each rule set served, each with its
    SHA-256 as ETag (304 when the client holds it) and a week's caching; a rule set not served is a JSON 404."""
    import hashlib

    from fastapi.testclient import TestClient

    from pentadice.faces.web.api import create_app

    client = TestClient(create_app({"penta": penta_advisor}))
    index = client.get("/app-tables/index.json")
    assert index.status_code == 200
    [entry] = index.json()["rules"]
    assert entry["name"] == "penta" and entry["values_bytes"] == 8 * 2**20
    meta = client.get("/app-tables/penta.json")
    assert meta.headers["etag"] == f'"{entry["json_sha256"]}"' and "max-age" in meta.headers["cache-control"]
    assert meta.json()["values"]["sha256"] == entry["values_sha256"]
    values = client.get("/app-tables/penta.f64?sha256=" + entry["values_sha256"])
    assert hashlib.sha256(values.content).hexdigest() == entry["values_sha256"]
    assert values.headers["content-type"] == "application/octet-stream"
    again = client.get("/app-tables/penta.f64", headers={"If-None-Match": values.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    head = client.head("/app-tables/penta.f64")
    assert head.status_code == 200 and head.headers["content-length"] == str(8 * 2**20) and head.content == b""
    for path in ("/app-tables/yatzy.json", "/app-tables/penta.npy", "/app-tables/PENTA.json"):
        refused = client.get(path)
        assert refused.status_code == 404 and "error" in refused.json(), path
