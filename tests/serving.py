"""Real ``pentadice serve`` processes for the tests: on 127.0.0.1 and a free port, awaited until ``/api/health``
answers, stopped afterwards (the browser, server-hardening and table tests share them)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest


def quiet_serve(port: int, directory: Path | str, *extra: str, cli: Sequence[str] = ()) -> list[str]:
    """The command of ``pentadice serve`` on ``port`` with the tables of ``directory``, holding those saved and
    building none in the background (``--no-prepare``: a test of another concern keeps the machine quiet).
    ``cli``: the command to run instead of ``python -m pentadice`` (``commands.SMALL_CLI``: the small game)."""
    return [*(cli or (sys.executable, "-m", "pentadice")), "serve", "--port", str(port), "--data", str(directory),
            "--no-prepare", *extra]  # fmt: skip


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def started(
    args: list[str],
    port: int,
    log: Path,
    seconds: float = 120,
    what: str = "pentadice serve",
    preexec_fn: Callable[[], None] | None = None,
) -> Iterator[subprocess.Popen]:
    """Start the server ``args`` (logging to ``log``), wait until ``/api/health`` answers on ``port`` (failing
    the test if it ends or takes longer than ``seconds``), yield the process, and stop it afterwards."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, preexec_fn=preexec_fn)
    try:
        deadline = time.monotonic() + seconds
        while True:
            if proc.poll() is not None:
                pytest.fail(f"{what} ended ({proc.returncode}):\n{log.read_text()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not answer in time:\n{log.read_text()}")
            time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
