"""MkDocs hook: the site's pages written from files of the repository, so that they cannot drift from them.

- reference/http.md, from the API's own description, docs/reference/openapi.json (what `pentadice serve` publishes
  at /openapi.json; tools/write_openapi.py writes it and a test keeps it equal to the server's), by the renderer the
  server's `/docs` uses (pentadice/faces/web/reference.py).
- changelog.md, from CHANGELOG.md at the top of the repository (its links to docs/ pages made relative to the site).
"""

from __future__ import annotations

import json
from pathlib import Path

from mkdocs.structure.files import File, Files

from pentadice.faces.web.reference import render

DOCS = Path(__file__).resolve().parent.parent
SOURCE = DOCS / "reference" / "openapi.json"
PAGE = "reference/http.md"
CHANGELOG = DOCS.parent / "CHANGELOG.md"


def on_files(files: Files, config) -> Files:
    intro = ("A copy of it, [openapi.json](openapi.json), sits beside this page; the server also answers this "
             "reference at `/docs`. How to start the server and call it: [HTTP API](../api.md).")  # fmt: skip
    spec = json.loads(SOURCE.read_text(encoding="utf-8"))
    files.append(File.generated(config, PAGE, content=render(spec, intro)))
    changes = CHANGELOG.read_text(encoding="utf-8").replace("](docs/", "](")
    files.append(File.generated(config, "changelog.md", content=changes))
    return files
