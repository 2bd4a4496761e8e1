"""Writes docs/reference/openapi.json, the HTTP API's description as `pentadice serve` publishes it at /openapi.json
(serving Penta), which the documentation site renders as its HTTP reference. Run it after changing a route:
`.venv/bin/python tools/write_openapi.py` (tests/test_docs_site.py fails while the file and the server disagree)."""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "reference" / "openapi.json"


def document(advisor) -> str:
    """The description served by an application serving ``advisor`` (Penta's), as the file holds it."""
    from pentadice.faces.web.api import create_app

    spec = create_app({"penta": advisor}, static_dir=None).openapi()
    return json.dumps(spec, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


def main() -> int:
    from pentadice.advisor import Advisor

    TARGET.write_text(document(Advisor.load("penta")), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
