"""A real, throwaway PostgreSQL server for the tests: Debian's binaries (``make postgres`` installs them), a cluster
of its own in a fresh temporary directory, trust authentication on a Unix socket in that directory and on 127.0.0.1
with a free port, removed afterwards. No Python driver is needed here: databases are made with ``createdb`` and
looked into with ``psql``, so this helper works wherever the server's binaries are.

PostgreSQL refuses to run as root: run as root (CI), the cluster belongs to the ``postgres`` system user (created by
Debian's package) and ``initdb`` and ``postgres`` run as that user through ``setpriv``; run as anyone else, they run
as that user. The superuser of the cluster is called ``postgres`` either way.

The postmaster is a child of the test process (not daemonised by ``pg_ctl``): :meth:`PostgresServer.kill` can
SIGKILL it and reap it at once, and a server is never left behind: it receives SIGINT (a fast shutdown) when the
thread that started it ends, test process included, however that ends.

    server = PostgresServer().start()
    url = server.create_database("games")  # postgresql+psycopg://postgres@127.0.0.1:PORT/games
    server.kill()  # an outage: every process of the server SIGKILLed
    server.start()  # crash recovery, then the same port and the same databases
    server.cleanup()
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

INSTALL_HINT = "PostgreSQL is not installed: `make postgres` installs Debian's postgresql"
SYSTEM_USER = "postgres"  # who owns the cluster when we are root; also the cluster's superuser, whoever runs it
SUPERUSER = "postgres"
PROGRAMS = ("initdb", "postgres", "psql", "createdb")
BINDIR_VARIABLE = "PENTADICE_POSTGRES_BINDIR"  # overrides the search below

# Settings for a fast, throwaway server, not for keeping data: fsync=off (a crash of the machine could lose what
# was committed, a crash of the server cannot: commits still reach the operating system before they return, as
# synchronous_commit stays on, so kill() then start() keeps every committed row); small shared buffers (the tests
# hold little data); no JIT compilation (it costs more than it saves on test queries); 100 connections (pools of
# several engines at once).
SETTINGS: dict[str, str] = {
    "fsync": "off",
    "shared_buffers": "16MB",
    "max_connections": "100",
    "jit": "off",
}

_SIGNALS = {"smart": signal.SIGTERM, "fast": signal.SIGINT, "immediate": signal.SIGQUIT}
_SOCKET_PATH_MAX = 100  # a Unix socket's path is at most 107 bytes; the socket's own name takes 16 of them


def _version_key(path: Path) -> tuple:
    """Sort key of /usr/lib/postgresql/VERSION/bin: 9.6 < 15 < 16."""
    return tuple(int(part) if part.isdigit() else -1 for part in re.split(r"[.]", path.parent.name))


def find_bindir() -> Path | None:
    """The directory of the newest PostgreSQL server's binaries (the one holding ``initdb``):
    $PENTADICE_POSTGRES_BINDIR, else the newest /usr/lib/postgresql/*/bin (Debian's layout), else
    ``pg_config --bindir``; None when none is."""
    if os.environ.get(BINDIR_VARIABLE):
        return Path(os.environ[BINDIR_VARIABLE])
    debian = [p.parent for p in Path("/usr/lib/postgresql").glob("*/bin/initdb") if os.access(p, os.X_OK)]
    if debian:
        return max(debian, key=_version_key)
    pg_config = shutil.which("pg_config")
    if pg_config:
        done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        bindir = Path(done.stdout.strip())
        if done.returncode == 0 and (bindir / "initdb").is_file():
            return bindir
    return None


def available() -> str | None:
    """None when a throwaway server can be made here, else why not and how to fix it (a hint for a skipped test)."""
    bindir = find_bindir()
    if bindir is None:
        return INSTALL_HINT
    missing = [p for p in PROGRAMS if not os.access(bindir / p, os.X_OK)]
    if missing:
        return f"PostgreSQL in {bindir} lacks {', '.join(missing)}: `make postgres` installs Debian's postgresql"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SYSTEM_USER)
        except KeyError:
            return (
                f"run as root, PostgreSQL needs the {SYSTEM_USER!r} system user (Debian's postgresql creates it): "
                "`make postgres`"
            )
        if not shutil.which("setpriv"):
            return "run as root, PostgreSQL needs setpriv (util-linux) to run as the postgres user"
    return None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _searchable_by_others(path: Path) -> bool:
    """Whether another user (the postgres user) can reach inside ``path``: every directory on the way is o+x."""
    path = path.resolve()
    return all(os.stat(p).st_mode & 0o001 for p in (path, *path.parents))


def _base_directory(as_root: bool) -> str:
    """Where the temporary directory goes: the usual one, unless the postgres user could not reach it (as root)
    or a socket's path there would be too long."""
    base = tempfile.gettempdir()
    too_long = len(os.path.join(base, "pentadice-pg-xxxxxxxx")) > _SOCKET_PATH_MAX
    if too_long or (as_root and not _searchable_by_others(Path(base))):
        return "/tmp"
    return base


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (the server's processes: backends, checkpointer, workers)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry))
    return found


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended: no such process, or a zombie (that a PID 1 which reaps nothing may keep)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


class PostgresServer:
    """A throwaway PostgreSQL cluster in a fresh temporary directory (``initdb`` runs here; :meth:`start` starts
    it). Connect through :meth:`url` (TCP on 127.0.0.1:``port``, trust: no password) or the Unix socket in
    ``directory``; :meth:`cleanup` stops the server and removes the directory."""

    def __init__(self, bindir: Path | str | None = None, port: int | None = None, settings: dict | None = None):
        hint = available() if bindir is None else None
        if hint:
            raise RuntimeError(hint)
        self.bindir = Path(bindir) if bindir is not None else find_bindir()
        self.port = port or free_port()
        self.as_root = os.geteuid() == 0
        self.directory = Path(tempfile.mkdtemp(prefix="pentadice-pg-", dir=_base_directory(self.as_root)))
        self.data = self.directory / "data"
        self.log_path = self.directory / "postgres.log"
        self.process: subprocess.Popen | None = None
        try:
            if self.as_root:
                user = pwd.getpwnam(SYSTEM_USER)
                os.chown(self.directory, user.pw_uid, user.pw_gid)
            self._run_as_owner(
                [str(self.bindir / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
                 "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"]
            )  # fmt: skip
            lines = [
                "",
                "# pentadice's tests (tests/postgres.py): a throwaway server",
                "listen_addresses = '127.0.0.1'",
                f"port = {self.port}",
                f"unix_socket_directories = '{self.directory}'",
                *(f"{name} = '{value}'" for name, value in {**SETTINGS, **(settings or {})}.items()),
            ]
            with open(self.data / "postgresql.conf", "a") as conf:  # appended: the file keeps its owner
                conf.write("\n".join(lines) + "\n")
        except BaseException:
            shutil.rmtree(self.directory, ignore_errors=True)
            raise

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<PostgresServer {self.bindir.parent.name} 127.0.0.1:{self.port} {self.directory} {state}>"

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.cleanup()

    def _as_owner(self, cmd: list[str], die_with_parent: bool = False) -> list[str]:
        """``cmd`` run by the cluster's owner: through setpriv as the postgres user when we are root; with a
        parent-death signal (SIGINT: a fast shutdown) when asked and possible."""
        prefix = []
        if self.as_root:
            prefix = ["setpriv", f"--reuid={SYSTEM_USER}", f"--regid={SYSTEM_USER}", "--init-groups"]
        # The signal comes when the *thread* that started the server ends: only the main thread's is wanted.
        if die_with_parent and threading.current_thread() is threading.main_thread() and shutil.which("setpriv"):
            prefix = [*(prefix or ["setpriv"]), "--pdeathsig=INT"]
        return [*prefix, *cmd]

    def _run_as_owner(self, cmd: list[str]) -> str:
        done = subprocess.run(
            self._as_owner(cmd), cwd=self.directory, stdin=subprocess.DEVNULL, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        return done.stdout

    def _client(self, program: str, *args: str) -> str:
        """A client program (psql, createdb, ...) of the same bindir, through the Unix socket as the superuser."""
        cmd = [str(self.bindir / program), "-h", str(self.directory), "-p", str(self.port), "-U", SUPERUSER, *args]
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        return done.stdout

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        """The server's log so far (every start's)."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def start(self, timeout: float = 60) -> PostgresServer:
        """Start the server (nothing when it runs) and wait until it accepts connections: after a :meth:`kill`,
        until its crash recovery is done. Returns the server."""
        if self.running:
            return self
        with open(self.log_path, "ab") as log:  # the server writes to its own copy of the descriptor
            self.process = subprocess.Popen(
                self._as_owner([str(self.bindir / "postgres"), "-D", str(self.data)], die_with_parent=True),
                cwd=self.directory,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        # Ready when the postmaster's postmaster.pid (this one's, not a killed one's) says so: what pg_ctl -w reads.
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited with {self.process.returncode}:\n{self.log()[-3000:]}")
            try:
                lines = (self.data / "postmaster.pid").read_text().splitlines()
            except OSError:
                lines = []
            if len(lines) >= 8 and lines[0].strip() == str(self.process.pid) and lines[7].strip() == "ready":
                return self
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"postgres not ready after {timeout} s:\n{self.log()[-3000:]}")
            time.sleep(0.02)

    def stop(self, mode: str = "fast", timeout: float = 60) -> None:
        """Shut the server down (nothing when it is not running). ``mode`` as pg_ctl's: "smart" waits for the
        clients to leave, "fast" ends their sessions, "immediate" quits without a checkpoint (recovery at the next
        start)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(_SIGNALS[mode])
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise

    def kill(self) -> None:
        """An outage: SIGKILL the postmaster and every process of the server at once. Connections break without
        a word, nothing is written; the next :meth:`start` runs crash recovery."""
        if self.process is None:
            return
        pid = self.process.pid
        if self.process.poll() is None:
            os.kill(pid, signal.SIGSTOP)  # no new backend forked while its processes are found and killed
            children = _children(pid)
            for child in children:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
            self.process.wait()
            # A new postmaster refuses to start while a process of the old one still holds its shared memory.
            deadline = time.monotonic() + 30
            while not all(_gone(c) for c in children) and time.monotonic() < deadline:
                time.sleep(0.01)

    def restart(self, mode: str = "fast") -> PostgresServer:
        """:meth:`stop` then :meth:`start`: the same port, the same databases."""
        self.stop(mode)
        return self.start()

    def url(self, name: str = "postgres") -> str:
        """The SQLAlchemy URL of database ``name`` (psycopg 3, TCP, the superuser, no password)."""
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{urllib.parse.quote(name, safe='')}"

    def create_database(self, name: str) -> str:
        """Create the database ``name`` (with ``createdb``) and return its :meth:`url`."""
        self._client("createdb", "--", name)
        return self.url(name)

    def psql(self, sql: str, database: str = "postgres") -> str:
        """The unaligned, headerless output of ``sql`` run by ``psql`` in ``database`` (stops at the first error,
        raised as RuntimeError)."""
        return self._client("psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", database, "-c", sql)

    def set_system(self, name: str, value: str | None, shows: str, timeout: float = 30.0) -> None:
        """``ALTER SYSTEM SET name = value`` (``None``: ``RESET``) and a reload, returning once a new session
        shows ``shows``: the postmaster has then read its configuration again and signalled every session, each
        of which takes the value before its next command (a pool's ping, then the request). ``pg_reload_conf()``
        alone returns before that, and a request sent at once may still run under the old value."""
        self.psql(f"ALTER SYSTEM RESET {name}" if value is None else f"ALTER SYSTEM SET {name} = {value}")
        self.psql("SELECT pg_reload_conf()")
        deadline = time.monotonic() + timeout
        while (shown := self.psql(f"SHOW {name}").strip()) != shows:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} is still {shown!r} {timeout:.0f} s after the reload")
            time.sleep(0.05)

    def cleanup(self) -> None:
        """Stop the server (immediately: its data is thrown away) and remove its directory."""
        if self.running:
            self.stop("immediate")
        shutil.rmtree(self.directory, ignore_errors=True)
