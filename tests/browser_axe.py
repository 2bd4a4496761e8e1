"""axe-core in the browser tests: the npm package of the repository's package.json (``make browser`` installs it
into node_modules/ with ``npm ci``), injected into a page through the DevTools protocol (the page's
Content-Security-Policy stays on), and its violations of the page as it stands."""

from __future__ import annotations

import json
from pathlib import Path

AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"


def axe(pg, where: str) -> None:
    """axe-core's violations of the page of ``pg`` (a test_browser Page) as it stands: none."""
    p = pg.page
    if not p.evaluate("typeof window.axe === 'object'"):
        p.evaluate(AXE.read_text() + "\n;0")
    found = p.evaluate(
        """async () => { const r = await axe.run(document, {resultTypes: ["violations"]});
            return r.violations.map(v => ({id: v.id, help: v.help,
                nodes: v.nodes.slice(0, 4).map(n => n.target.join(" ") + ": " + n.failureSummary)})); }"""
    )
    assert found == [], f"{where}: {json.dumps(found, indent=1)}"
