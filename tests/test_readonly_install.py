"""A read-only install run by a user without a home: Numba cannot cache beside the sources nor in ~/.cache.
The commands must still work, caching compiled code in a private temporary directory, or not at all (saying so
once). Run as the user `nobody` (the tests run as root in CI); skipped where we cannot switch users."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

SETPRIV = shutil.which("setpriv")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0 or SETPRIV is None, reason="needs root and setpriv to become nobody"),
]
NOBODY = 65534


@pytest.fixture
def open_dir():
    """A directory that nobody can write (a home for tables and temporaries), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="pentadice-ro-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def as_nobody(args, tmpdir: Path, stdin: bytes | None = None):
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "TMPDIR": str(tmpdir), "LANG": "C.UTF-8"}
    cmd = [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-m", "pentadice.cli"]
    return subprocess.run([*cmd, *args], input=stdin, capture_output=True, env=env, timeout=600, cwd="/")


def test_commands_work_and_cache_in_a_private_temporary_directory(open_dir):
    package = Path(__import__("pentadice").__file__).parent
    assert not os.access(package, os.W_OK) or os.stat(package).st_uid != NOBODY
    tables = open_dir / "tables"
    tables.mkdir()
    tables.chmod(0o777)
    solve = as_nobody(["solve", "--json", "--out", str(tables)], open_dir)
    assert solve.returncode == 0, solve.stderr.decode()
    assert json.loads(solve.stdout)["rules"] == "penta"
    batch = as_nobody(["advise", "--batch", "-", "--data", str(tables)], open_dir, b'{"dice": [1, 1, 3, 4, 6]}\n')
    assert batch.returncode == 0, batch.stderr.decode()
    assert json.loads(batch.stdout)["dice"] == [1, 1, 3, 4, 6]
    sim = as_nobody(["simulate", "-n", "20", "--seed", "1", "--data", str(tables)], open_dir)
    assert sim.returncode == 0, sim.stderr.decode()
    cache = open_dir / f"pentadice-numba-{NOBODY}"
    assert cache.is_dir() and (cache.stat().st_mode & 0o777) == 0o700 and any(cache.rglob("*.nbi"))
    for result in (solve, batch, sim):
        assert b"Traceback" not in result.stderr and b"not cached" not in result.stderr


def test_without_any_writable_cache_it_compiles_and_says_so_once(open_dir):
    """A cache directory planted by another user is not used (Numba's cache files are loaded as code)."""
    planted = open_dir / f"pentadice-numba-{NOBODY}"
    planted.mkdir(mode=0o777)
    planted.chmod(0o777)  # root's, writable by all: not private
    tables = open_dir / "tables"
    tables.mkdir()
    tables.chmod(0o777)
    result = as_nobody(["advise", "--batch", "-", "--data", str(tables)], open_dir, b'{"dice": [6, 6, 6, 6, 6]}\n')
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert json.loads(result.stdout)["dice"] == [6, 6, 6, 6, 6]
    assert err.count("compiled again on each run") == 1 and "Traceback" not in err
    assert not any(planted.iterdir())
