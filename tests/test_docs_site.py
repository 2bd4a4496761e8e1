"""The documentation says what the software does today: the HTTP reference is the server's own description, the
Performance page's figures are those of the benchmarks' result files, the README stays a front page, and no page
speaks of the project's bookkeeping (issue numbers, "this machine", earlier commits). The site's build itself
(`make docs`, `mkdocs build --strict`: every link and page) runs in CI before the tests.

Cost: one application built in process (under a second); the rest reads files."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tools"))

import results  # noqa: E402  (benchmarks/results.py)
import write_openapi  # noqa: E402  (tools/write_openapi.py)


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_the_http_reference_is_the_servers_description(penta_advisor):
    kept = (ROOT / "docs" / "reference" / "openapi.json").read_text(encoding="utf-8")
    assert json.loads(kept) == json.loads(write_openapi.document(penta_advisor)), (
        "docs/reference/openapi.json differs from the server's /openapi.json: run tools/write_openapi.py"
    )


def test_the_http_reference_page_lists_every_route_and_schema():
    spec = json.loads((ROOT / "docs" / "reference" / "openapi.json").read_text(encoding="utf-8"))
    hook = importlib.util.spec_from_file_location("generated_pages", ROOT / "docs" / "hooks" / "generated_pages.py")
    module = importlib.util.module_from_spec(hook)
    hook.loader.exec_module(module)
    page = module.render(spec)
    for path, operations in spec["paths"].items():
        for method in operations:
            assert f"## {method.upper()} `{path}`" in page
    for name in spec["components"]["schemas"]:
        assert f"### {name}\n" in page


def test_the_performance_page_shows_the_result_files():
    runs = results.load_runs()
    assert {name for name, _ in results.RUNS} == {p.stem for p in results.RESULTS.glob("*.json")}, (
        "a result file the page does not show, or one missing"
    )
    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert results.figures_of_page(page) == results.render(runs) + "\n", (
        "docs/performance.md's figures differ from benchmarks/results/: run python benchmarks/results.py"
    )
    for _heading, run in runs:
        assert run["rows"], "a run without figures"
        for key in ("date", "cores", "cpu", "load_start", "load_end", "version", "commit", "command"):
            assert run[key] not in (None, ""), key


def test_a_changed_figure_is_noticed(tmp_path, monkeypatch):
    """The page check is not one that cannot fail: a figure edited in a file no longer matches the page."""
    for path in results.RESULTS.glob("*.json"):
        (tmp_path / path.name).write_text(path.read_text())
    first = next(tmp_path.glob("*.json"))
    record = json.loads(first.read_text())
    record["rows"][0]["figure"] += " (edited)"
    first.write_text(json.dumps(record))
    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert results.figures_of_page(page) != results.render(results.load_runs(tmp_path)) + "\n"


def test_the_readme_is_a_front_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    text = "\n".join(lines[:20])
    assert "make play" in text and "make test" in text, "the two set-up commands come first"


# What the project's pages never say to their readers: the tracker's bookkeeping and the measuring machine.
BOOKKEEPING = re.compile(
    r"\bissues? #?\d+|\bthis (2-core )?machine\b|\b2-core (development )?machine\b|\bcommit [0-9a-f]{7}\b"
    r"|\bsince issue\b|\bagents?\b(?! string)|\.\./shared/",
    re.I,
)


@pytest.mark.parametrize("page", [str(p.relative_to(ROOT)) for p in [*_pages(), ROOT / "CHANGELOG.md"]])
def test_pages_speak_to_users(page):
    """The changelog and the Performance page (pages of the site too) may name the machine and the commit a figure
    was measured on."""
    text = (ROOT / page).read_text(encoding="utf-8")
    found = [m.group(0) for m in BOOKKEEPING.finditer(text)]
    if page in ("CHANGELOG.md", "docs/performance.md"):
        found = [f for f in found if not f.lower().startswith("commit ") and "2-core" not in f.lower()]
    assert not found, f"{page}: {found}"
