"""A read-only install run by a user without a home: Numba cannot cache beside the sources nor in ~/.cache.
The commands must still work, caching compiled code in a private temporary directory, or not at all (saying so
once). Run as the user `nobody` (the tests run as root in CI); skipped where we cannot switch users.

`nobody` runs a copy of the package made for the test in a temporary directory it can read (root's, so not
writable by it: a read-only install), never the checkout itself, which may sit in a directory only its owner can
enter (a clone inside `mktemp -d`, mode 700). When the interpreter's libraries are out of its reach too (a
virtual environment inside such a checkout), they are linked into that directory (hard links: no copy), and the
interpreter the environment was made from runs them; where that cannot be done, the tests are skipped saying why.

The commands run on the small game that stands for Penta (tests/reduced_pentadice.py, copied beside the package):
the compile from an empty cache is what these tests are about, and it is the same for the small game as for the
full one, whose solve would only add to it.
"""

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


AS_NOBODY = [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
PROBE = "import click, numba, numpy, pyarrow, pentadice; print(pentadice.__file__)"


@pytest.fixture(scope="module")
def install():
    """``(python, pythonpath)``: an interpreter nobody can run and a search path, all readable by nobody and
    writable by root alone, that imports a copy of this package (and, if need be, links to the libraries)."""
    root = Path(tempfile.mkdtemp(prefix="pentadice-install-"))
    root.chmod(0o755)  # readable by all, writable by root alone: a read-only install for nobody
    try:
        yield _readable_install(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _readable_install(root: Path) -> tuple[str, str]:
    package = Path(__import__("pentadice").__file__).parent
    source = root / "src"
    shutil.copytree(package, source / "pentadice", ignore=shutil.ignore_patterns("__pycache__"))
    for helper in ("reduced_pentadice.py", "reduced_games.py"):
        shutil.copy(Path(__file__).with_name(helper), source / helper)
    _readable(source)
    tried = []
    for python, path in [(sys.executable, [source]), *_linked_libraries(root, source)]:
        probe = subprocess.run(
            [*AS_NOBODY, python, "-c", PROBE], capture_output=True, env=_env(root, path), timeout=120, cwd="/"
        )
        imported = probe.stdout.decode().strip()
        if probe.returncode == 0 and imported.startswith(str(source)):
            return python, os.pathsep.join(map(str, path))
        tried.append(f"{python}: {(probe.stderr.decode().strip().splitlines() or [imported])[-1]}")
    pytest.skip("the user nobody cannot run an interpreter with this package's libraries (" + "; ".join(tried) + ")")


def _linked_libraries(root: Path, source: Path) -> list[tuple[str, list[Path]]]:
    """The environment's libraries hard-linked under ``root`` and the interpreter it was made from: for a
    virtual environment nobody cannot enter. None where they cannot be linked (another file system)."""
    base = os.path.realpath(sys.executable)
    if sys.prefix == sys.base_prefix and base == sys.executable:
        return []
    import site

    linked = []
    try:
        for number, directory in enumerate(site.getsitepackages()):
            target = root / f"lib{number}"
            shutil.copytree(directory, target, copy_function=os.link, symlinks=True)
            _readable(target, files=False)  # the links are the installed files: their modes are left as they are
            linked.append(target)
    except OSError:
        return []
    return [(base, [source, *linked])]


def _readable(top: Path, files: bool = True) -> None:
    """Every directory under ``top`` enterable by all and, with ``files``, every file readable by all."""
    for directory, _, names in os.walk(top):
        os.chmod(directory, 0o755)
        for name in names if files else ():
            path = Path(directory, name)
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o444)


def _env(tmpdir: Path, path) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
        "TMPDIR": str(tmpdir),
        "LANG": "C.UTF-8",
        "PYTHONPATH": path if isinstance(path, str) else os.pathsep.join(map(str, path)),
    }


@pytest.fixture
def open_dir():
    """A directory that nobody can write (a home for tables and temporaries), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="pentadice-ro-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def as_nobody(install, args, tmpdir: Path, stdin: bytes | None = None):
    """``pentadice ARGS`` run by nobody from the read-only install, the small game standing for Penta."""
    python, path = install
    cmd = [*AS_NOBODY, python, str(Path(path.split(os.pathsep)[0]) / "reduced_pentadice.py")]
    return subprocess.run([*cmd, *args], input=stdin, capture_output=True, env=_env(tmpdir, path), timeout=600, cwd="/")


def test_commands_work_and_cache_in_a_private_temporary_directory(install, open_dir):
    package = Path(install[1].split(os.pathsep)[0]) / "pentadice"
    assert package.is_dir() and os.stat(package).st_uid != NOBODY and not os.stat(package).st_mode & 0o022
    tables = open_dir / "tables"
    tables.mkdir()
    tables.chmod(0o777)
    solve = as_nobody(install, ["solve", "--skip", "chances,win,win-end", "--json", "--out", str(tables)], open_dir)
    assert solve.returncode == 0, solve.stderr.decode()
    assert json.loads(solve.stdout)["rules"] == "penta"
    batch = as_nobody(
        install, ["advise", "--batch", "-", "--data", str(tables)], open_dir, b'{"dice": [1, 1, 3, 4, 6]}\n'
    )
    assert batch.returncode == 0, batch.stderr.decode()
    assert json.loads(batch.stdout)["dice"] == [1, 1, 3, 4, 6]
    sim = as_nobody(install, ["simulate", "-n", "20", "--seed", "1", "--data", str(tables)], open_dir)
    assert sim.returncode == 0, sim.stderr.decode()
    cache = open_dir / f"pentadice-numba-{NOBODY}"
    assert cache.is_dir() and (cache.stat().st_mode & 0o777) == 0o700 and any(cache.rglob("*.nbi"))
    for result in (solve, batch, sim):
        assert b"Traceback" not in result.stderr and b"not cached" not in result.stderr


def test_without_any_writable_cache_it_compiles_and_says_so_once(install, open_dir, small_game_tables):
    """A cache directory planted by another user is not used (Numba's cache files are loaded as code). The
    small game's table is there (the session's, readable by all): the advice kernels compile, not the solver's
    too (the test above compiles those)."""
    planted = open_dir / f"pentadice-numba-{NOBODY}"
    planted.mkdir(mode=0o777)
    planted.chmod(0o777)  # root's, writable by all: not private
    tables = open_dir / "tables"
    tables.mkdir()
    tables.chmod(0o777)
    for f in small_game_tables.glob("penta.*"):
        if f.is_file():
            shutil.copy(f, tables / f.name)
            (tables / f.name).chmod(0o644)
    result = as_nobody(
        install, ["advise", "--batch", "-", "--data", str(tables)], open_dir, b'{"dice": [6, 6, 6, 6, 6]}\n'
    )
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert json.loads(result.stdout)["dice"] == [6, 6, 6, 6, 6]
    assert err.count("compiled again on each run") == 1 and "Traceback" not in err
    assert not any(planted.iterdir())
