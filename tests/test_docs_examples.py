"""Every example of the README and of the documentation site is the real behaviour of the current code.

- Each `$ .venv/bin/pentadice ...` command of a ```console block is run as a user would run it in the checkout (no
  table directory exported: the checkout's data/) and its output compared line by line: a line `...` stands for any
  lines, `...` inside a line for any text.
- The ```python and ```pycon blocks of a page are run in order in one namespace by tests/doc_examples.py, in a
  process of its own (a python block must not raise; a pycon block is a doctest session).
- Each ```js block is run by Node as an ES module in a folder holding the offline app's files as `pentadice
  export-app app/` writes them, beside the package's folder: it must exit 0.
- Every fenced block names a language this file knows, so that no example is skipped by being unlabelled.

Cost: one process per command (a fraction of a second each), one per page with Python examples, one per JavaScript
example, and one export of the offline app (about a second)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doc_examples import blocks

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "$ .venv/bin/pentadice "
# Shown, not run: shell set-up (make, pip, a server, curl against it), files and answers, configuration, diagrams.
SHOWN = {"sh", "text", "json", "toml", "ini", "nginx", "caddy", "systemd", "dockerfile", "yaml", "html", "csv"}
RUN = {"console", "python", "pycon", "js"}


def pages() -> list[Path]:
    """The README and every page of the site, in a stable order."""
    return [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "hooks" not in p.parts)]


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def console_examples() -> list[tuple[str, str, list[str]]]:
    """``(page, command, expected lines)`` of every console block, in order."""
    found = []
    for page in pages():
        for lang, code, _line in blocks(page.read_text(encoding="utf-8")):
            if lang != "console":
                continue
            for chunk in code.split(PROMPT)[1:]:
                command, *lines = chunk.rstrip("\n").split("\n")
                found.append((_name(page), command, lines))
    return found


def js_examples() -> list[tuple[str, int, str]]:
    """``(page, line, code)`` of every js block."""
    return [(_name(p), line, code) for p in pages() for lang, code, line in blocks(p.read_text()) if lang == "js"]


def python_pages() -> list[str]:
    return [_name(p) for p in pages() if any(lang in ("python", "pycon") for lang, _, _ in blocks(p.read_text()))]


def matches(expected: list[str], actual: list[str]) -> bool:
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    pattern = ".*".join(re.escape(part) for part in head.split("..."))
    return re.fullmatch(pattern, actual[0]) is not None and matches(rest, actual[1:])


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PENTADICE_DATA"}


@pytest.fixture(scope="module")
def checkout_table(penta_table_dir):
    """The checkout's data/ holds the Penta table, as after `make table` (copied there if missing)."""
    data = ROOT / "data"
    data.mkdir(exist_ok=True)
    for suffix in (".npy", ".parquet", ".json"):
        if not (data / f"penta{suffix}").exists():
            shutil.copy(penta_table_dir / f"penta{suffix}", data / f"penta{suffix}")
    return data


def test_the_documentation_has_examples_of_each_kind():
    kinds = {lang for page in pages() for lang, _, _ in blocks(page.read_text())}
    assert {"console", "pycon"} <= kinds
    assert len(console_examples()) >= 10


@pytest.mark.parametrize("page", [_name(p) for p in pages()])
def test_every_block_names_a_known_language(page):
    """An unlabelled or unknown block would be neither run nor knowingly shown; a console block holds only
    commands that are run (others belong in sh blocks)."""
    for lang, code, line in blocks((ROOT / page).read_text()):
        assert lang in RUN | SHOWN, f"{page}:{line}: a ```{lang or '(no language)'} block"
        if lang == "console":
            prompts = [x for x in code.split("\n") if x.startswith("$ ")]
            assert prompts and all(x.startswith(PROMPT) for x in prompts), f"{page}:{line}: {prompts}"


@pytest.mark.parametrize(
    ("page", "command", "expected"), console_examples(), ids=[f"{p}: {c}" for p, c, _ in console_examples()]
)
def test_console_example(checkout_table, page, command, expected):
    proc = subprocess.run(
        [sys.executable, "-m", "pentadice", *shlex.split(command)], capture_output=True, text=True, cwd=ROOT, env=_env()
    )
    actual = proc.stdout.rstrip("\n").split("\n")
    assert proc.returncode == 0, proc.stderr
    assert matches(expected, actual), "\n".join(["expected:", *expected, "actual:", *actual])


@pytest.mark.parametrize("page", python_pages())
def test_python_examples(checkout_table, page):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "doc_examples.py"), page],
        capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_failing_python_example_is_reported(tmp_path):
    """The runner is not a test that cannot fail: a wrong doctest answer and a raising block both count."""
    page = tmp_path / "page.md"
    page.write_text("```pycon\n>>> 1 + 1\n3\n```\n\n  ```python\n  raise ValueError('x')\n  ```\n")
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "doc_examples.py"), str(page)],
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 1
    assert "Expected:\n    3\nGot:\n    2" in proc.stdout
    assert "ValueError: x" in proc.stdout


@pytest.fixture(scope="module")
def app_folder(checkout_table, tmp_path_factory):
    """Where a JavaScript example runs: a folder holding the offline app's files as `pentadice export-app app/` writes
    them (Penta) and the package's folder (`./pentadice/...`, as in the checkout)."""
    folder = tmp_path_factory.mktemp("js")
    subprocess.run([sys.executable, "-m", "pentadice", "export-app", str(folder / "app")], check=True, cwd=ROOT,
                   env=_env(), capture_output=True)  # fmt: skip
    (folder / "pentadice").symlink_to(ROOT / "pentadice")
    return folder


@pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed")
@pytest.mark.parametrize(("page", "line", "code"), js_examples(), ids=[f"{p}:{n}" for p, n, _ in js_examples()])
def test_js_example(app_folder, page, line, code):
    proc = subprocess.run(["node", "--input-type=module", "-e", code], capture_output=True, text=True, cwd=app_folder,
                          env=_env(), timeout=120)  # fmt: skip
    assert proc.returncode == 0, f"{page}:{line}\n{proc.stdout}{proc.stderr}"
