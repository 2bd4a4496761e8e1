"""A part of pentadice whose Python modules are missing (a broken or partial install: httptools for the web
server, Dask for ``build``, psycopg for a PostgreSQL database) is named in one line with the pip extra that
installs it, exit 1, never a traceback. The web server's packages are in the default install. Each command
runs in a subprocess whose imports of the named modules fail as they do where they are not installed."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Run first in the subprocess: an import finder that says the named modules are not installed.
BLOCKER = """
import sys
blocked = set(sys.argv.pop(1).split(","))
class Blocker:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Blocker)
sys.argv[0] = "pentadice"
from pentadice.cli import entry
entry()
"""


def without(modules: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``pentadice ARGS`` where ``modules`` (comma-separated) cannot be imported."""
    return subprocess.run(
        [sys.executable, "-c", BLOCKER, modules, *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def one_line(done: subprocess.CompletedProcess, module: str, extra: str) -> str:
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "ModuleNotFoundError" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("Error: ") and module in lines[0] and f"pip install 'pentadice[{extra}]'" in lines[0]
    return lines[0]


@pytest.mark.parametrize("module", ["httptools", "uvicorn", "fastapi"])
def test_serve_without_a_web_server_package_names_it_in_one_line(module, tmp_path):
    done = without(module, "serve", "--port", "0", "--data", str(tmp_path), "--no-prepare", cwd=tmp_path)
    one_line(done, module, "web")


def test_serve_without_uvloop_serves_on_asyncios_loop(penta_table_dir, tmp_path):
    import serving

    port = serving.free_port()
    args = [sys.executable, "-c", BLOCKER, "uvloop", "serve", "--port", str(port), "--data", str(penta_table_dir),
            "--no-prepare", "--db", str(tmp_path / "games.sqlite3")]  # fmt: skip
    with serving.started(args, port, tmp_path / "serve.log"):
        pass


def test_build_without_dask_names_the_cluster_extra_in_one_line(tmp_path):
    done = without("dask,distributed", "build", "--rules", "penta", "--table", "targets", "--data", str(tmp_path),
                   "--json", cwd=tmp_path)  # fmt: skip
    one_line(done, "Dask", "cluster")


def test_a_postgresql_database_without_psycopg_names_the_postgres_extra_in_one_line(tmp_path):
    done = without("psycopg", "history", "--db", "postgresql://nobody@127.0.0.1:9/none", cwd=tmp_path)
    one_line(done, "psycopg", "postgres")


def test_any_other_missing_module_is_one_line_too(tmp_path):
    done = without("segno,fastapi", "export-app", str(tmp_path / "app"), cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "is not installed" in done.stderr, done.stderr


def test_the_web_server_is_in_the_default_install_and_web_still_names_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    default = {d.split(">")[0].split("[")[0] for d in project["dependencies"]}
    assert {"fastapi", "uvicorn"} <= default
    assert any(d.startswith("uvicorn[standard]") for d in project["dependencies"])  # httptools, uvloop
    assert "web" in project["optional-dependencies"]
