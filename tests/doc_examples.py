"""Runs the Python examples of one documentation page (README.md or a page of docs/) as a reader would, in the
checkout: its ```python blocks are run as they are and its ```pycon blocks checked as doctest sessions (ELLIPSIS and
NORMALIZE_WHITESPACE), all in order in one namespace. Prints each failure; exit status 1 if any.

    python tests/doc_examples.py docs/library.md
"""

from __future__ import annotations

import doctest
import re
import sys
import textwrap
import traceback
from pathlib import Path

BLOCK = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.S | re.M)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def blocks(text: str) -> list[tuple[str, str, int]]:
    """``(language, code, line)`` of every fenced block of a Markdown text, dedented, in order."""
    found = []
    for m in BLOCK.finditer(text):
        body = "\n".join(line[len(m["indent"]) :] for line in m["body"].split("\n"))
        found.append((m["lang"], textwrap.dedent(body), text.count("\n", 0, m.start()) + 2))
    return found


def run(page: Path) -> int:
    """Runs ``page``'s Python examples; the number that failed."""
    namespace: dict = {"__name__": "__main__"}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    failed = 0
    for lang, code, line in blocks(page.read_text(encoding="utf-8")):
        where = f"{page}:{line}"
        if lang == "python":
            try:
                exec(compile(code, where, "exec"), namespace)
            except Exception:
                failed += 1
                print(f"{where}: the python block raised\n{traceback.format_exc()}")
        elif lang == "pycon":
            test = parser.get_doctest(code, namespace, where, str(page), line - 1)
            result = runner.run(test, out=sys.stdout.write, clear_globs=False)
            namespace.update(test.globs)
            failed += result.failed
    return failed


if __name__ == "__main__":
    sys.exit(1 if run(Path(sys.argv[1])) else 0)
