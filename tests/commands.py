"""The real `pentadice` command as an operator types it (in a process of its own, or in process through click's
CliRunner), and the one line it answers a refusal with."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from pentadice.faces.cli import main

CLI = [sys.executable, "-m", "pentadice"]
# `pentadice` with small games standing for the rule sets (tests/reduced_pentadice.py): what a real process does,
# on tables of a few MB.
SMALL_CLI = [sys.executable, str(Path(__file__).with_name("reduced_pentadice.py"))]


def pentadice(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``pentadice ARGS`` in a process of its own, no standard input."""
    cmd = [*CLI, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, env=env)


def one_line(done, *words: str, code: int = 1) -> str:
    """The one ``Error:`` line of a refused command (a process's, or click's CliRunner result), holding every one
    of ``words``: exit ``code``, no traceback, no warning before it (a usage error: click's banner, then its line)."""
    out = done.stderr if isinstance(done, subprocess.CompletedProcess) else done.output
    rc = done.returncode if isinstance(done, subprocess.CompletedProcess) else done.exit_code
    assert rc == code, out
    assert "Traceback" not in out and "Warning" not in out
    lines = out.strip().splitlines()
    if code == 2:
        lines = [ln for ln in lines if ln.startswith("Error:")]
    assert len(lines) == 1 and lines[0].startswith("Error: "), out
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def run(*args: str, stdin: str | bytes | None = None, input: str | bytes | None = None) -> Result:
    """``pentadice ARGS`` in process (click's CliRunner), ``stdin`` (or ``input``) its standard input."""
    return CliRunner().invoke(main, list(args), input=input if stdin is None else stdin)


def unbuffered() -> dict[str, str]:
    """The environment of a ``pentadice`` process whose output is not buffered."""
    return {**os.environ, "PYTHONUNBUFFERED": "1"}
