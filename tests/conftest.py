"""Shared fixtures: solved tables are expensive, so each is solved once per test session."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest
import signals
import solutions
from solutions import built_once, solved

from pentadice import solver
from pentadice.tables import table

# The commands' human output follows the locale (see pentadice/support/i18n.py): tests that compare English text run in
# a neutral one, whatever the developer's; the language tests set their own.
for _name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
    os.environ.pop(_name, None)
os.environ["LANG"] = "C.UTF-8"
# The games database of every app, command and server the tests start: a file of this session's, never the user's.
os.environ["PENTADICE_DB"] = os.path.join(tempfile.mkdtemp(prefix="pentadice-test-games-"), "games.sqlite3")
# Started as a background job (SIGINT ignored, and so in every child), the Ctrl-C tests would test nothing.
signals.default_interrupts()


COMPILE_LOCKS = "pentadice_compile_locks"  # the workers' shared folder of compile locks, as xdist hands it over
LOCKS_KEY = pytest.StashKey[str]()  # the controller's: that folder


def pytest_configure(config):
    """Under pytest-xdist, each worker's compiled kernels run on its share of the cores (a test that asks for more
    threads still gets them), so that the workers do not oversubscribe the machine; and a kernel two workers need
    at once is compiled by one of them, the other loading it from Numba's cache (tests/compile_locks.py), the
    lock files in a folder the controller makes and removes."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    worker_input = getattr(config, "workerinput", None)
    if worker_input is None and config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses", None):
        config.stash[LOCKS_KEY] = tempfile.mkdtemp(prefix="pentadice-compile-locks-")
    if workers > 1:
        import numba

        numba.set_num_threads(max(1, numba.config.NUMBA_NUM_THREADS // workers))
    if worker_input is not None and worker_input.get(COMPILE_LOCKS):
        from compile_locks import serialise_compiles

        serialise_compiles(Path(worker_input[COMPILE_LOCKS]))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist, in the controller: each worker is told the session's folder of compile locks."""
    node.workerinput[COMPILE_LOCKS] = node.config.stash.get(LOCKS_KEY, "")


def pytest_unconfigure(config):
    """The controller removes the compile locks' folder once every worker has ended."""
    if getattr(config, "workerinput", None) is None and LOCKS_KEY in config.stash:
        shutil.rmtree(config.stash[LOCKS_KEY], ignore_errors=True)


def pytest_collection_modifyitems(items):
    """The files holding full-size solves (a test marked slow) run first, each file's tests in their order: under
    pytest-xdist the long files start at once and the short ones fill the workers in around them, rather than
    a Maxi Yatzy solve starting last, on one worker, while the others wait. pytest-xdist keeps this order only
    with ``--no-loadscope-reorder`` (as ``make test`` runs it); otherwise it starts the files of most tests first."""
    heavy = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in heavy)


@pytest.fixture(scope="session", autouse=True)
def _shared_between_workers(shared_tmp, worker_id):
    """Under pytest-xdist, a rule set is solved by one worker for all of them (tests/solutions.py)."""
    if worker_id != "master":
        solutions.SHARED.append(shared_tmp)


@pytest.fixture(scope="session")
def penta_solution() -> solver.Solution:
    return solved("penta")


@pytest.fixture(scope="session")
def penta_table_dir(tmp_path_factory, penta_solution):
    """A directory holding the saved Penta table."""
    directory = tmp_path_factory.mktemp("tables")
    table.save(penta_solution.rules, penta_solution.values, directory)
    return directory


@pytest.fixture(scope="session")
def shared_tmp(tmp_path_factory, worker_id):
    """A folder that every pytest-xdist worker of this session sees (without xdist, the session's own): what is
    built once for the whole session lives here, built by the first worker that needs it (:func:`built_once`)."""
    base = tmp_path_factory.getbasetemp()
    return base if worker_id == "master" else base.parent


@pytest.fixture(scope="session")
def small_game_tables(shared_tmp):
    """A directory holding every table of the small game that stands for Penta in a test's `pentadice` process
    (tests/reduced_pentadice.py), as `make table` leaves data/ for the full game: built once per session by that
    process's `pentadice solve` (a few seconds), shared by every worker."""
    import subprocess

    from commands import SMALL_CLI

    def build(directory):
        cmd = [*SMALL_CLI, "solve", "--rules", "penta", "--data", str(directory), "--json"]
        done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr

    return built_once(shared_tmp, "small-game-tables", build)


@pytest.fixture
def penta_is_small(monkeypatch):
    """The small game that stands for Penta in a test's `pentadice` process (tests/reduced_pentadice.py),
    registered as "penta" for this test too, so that it reads `small_game_tables` and that process's saves: its
    rule set."""
    import reduced_games

    from pentadice.game import rules

    small = reduced_games.as_rule_set("penta")
    monkeypatch.setitem(rules.REGISTRY, "penta", small)
    return small


@pytest.fixture(scope="session")
def penta_advisor(penta_table_dir):
    from pentadice.advisor import Advisor

    return Advisor.load("penta", str(penta_table_dir), solve_missing=False)


@pytest.fixture(scope="module")
def app(penta_advisor):
    """The application `pentadice serve` runs, serving Penta, in process: one per test module (its games, seats
    and streams are the module's own)."""
    from pentadice.faces.web.api import create_app

    return create_app({"penta": penta_advisor})


@pytest.fixture(scope="module")
def client(app):
    """FastAPI's TestClient of :func:`app`, as a browser on this machine reaches it (``http://localhost``)."""
    from fastapi.testclient import TestClient

    with TestClient(app, base_url="http://localhost") as c:
        yield c


@pytest.fixture(autouse=True)
def _tables_mapped_again():
    """`serve` and `play` read tables into memory for the rest of their process (pentadice.tables.chunks); run in
    process by a test, they must not change how the next test loads tables."""
    yield
    from pentadice.tables import chunks

    chunks.use_private_copies(False)


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server (tests/postgres.py), one throwaway cluster per test session, removed at its end;
    skipped with the command that installs PostgreSQL where it is missing. A test may stop or kill it: the next
    ``postgres_url`` starts it again."""
    import postgres

    hint = postgres.available()
    if hint:
        pytest.skip(hint)
    server = postgres.PostgresServer()
    try:
        yield server.start()
    finally:
        server.cleanup()


_postgres_databases = iter(range(1, 1_000_000))


@pytest.fixture
def postgres_url(postgres_server):
    """The SQLAlchemy URL (postgresql+psycopg://...) of a fresh, empty database of its own for this test."""
    postgres_server.start()  # nothing when it runs; again after a test that stopped or killed it
    return postgres_server.create_database(f"test_{next(_postgres_databases)}")


@pytest.fixture(scope="session")
def scheduler():
    """A running Dask cluster of two worker processes (as `pentadice build --scheduler tcp://...` finds one),
    shared by the out-of-core tests: its workers start (and load the kernels) once."""
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0") as cluster:
        yield cluster.scheduler_address
