"""``pentadice build`` against what an operator may get wrong: a ``--scheduler`` address that is not a Dask
scheduler's (another transport, an HTTP server, a server that greets first, nothing at all) is one line naming the
address and what answers there, before anything is planned or written; Ctrl-C at a terminal (SIGINT to the whole
foreground group, the local cluster's workers included) prints only the "Interrupted:" line; a build resumed or
finished removes only the files it wrote, never a file of the user's in its folders. On reduced games
(tests/outofcore_games.py): a few seconds each."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import outofcore_games
import pytest
from click.testing import CliRunner
from outofcore_games import stop_after

from pentadice.cluster import address as cluster_address
from pentadice.cluster import engine
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.solver import induction
from pentadice.tables import chances_store, table, targets_store
from pentadice.tables import win_store as store

RS = outofcore_games.GAMES["yatzy"]  # registered as "yatzy" by the commands below
MEMORY = "64MiB"
UNREACHABLE = "tcp://127.0.0.1:9"  # the discard port: nothing listens


@functools.cache
def values() -> np.ndarray:
    return induction.solve(RS).values


def table_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "data"
    directory.mkdir()
    table.save(RS, values(), directory)
    return directory


def build_command(*args: str, env: dict | None = None, **popen) -> list[str]:
    """``pentadice build ARGS`` in a new process, the reduced Yatzy registered as ``yatzy``."""
    code = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv.pop(1))
        import outofcore_games
        from pentadice.faces.cli import entry
        from pentadice.game import rules
        rules.REGISTRY["yatzy"] = outofcore_games.GAMES["yatzy"]
        sys.argv[0] = "pentadice"
        entry()
    """)
    return [sys.executable, "-c", code, str(Path(__file__).parent), "build", "--rules", "yatzy", *args]


def run_build(*args: str, timeout_s: str = "2s") -> subprocess.CompletedProcess:
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": timeout_s}  # Dask's own wait, shortened
    return subprocess.run(build_command(*args), capture_output=True, text=True, timeout=120, env=env)


def one_line(stderr: str, says: str) -> None:
    assert "Traceback" not in stderr and says in stderr, stderr
    assert len([line for line in stderr.splitlines() if line.startswith("Error:")]) == 1, stderr


@pytest.mark.parametrize(("address", "says"), [
    ("tls://127.0.0.1:8786", "tls://127.0.0.1:8786: a tls:// scheduler needs Dask's TLS settings"),
    ("ucx://127.0.0.1:8786", "ucx://127.0.0.1:8786: ucx:// needs UCX"),
    ("ws://127.0.0.1:8786", "ws://127.0.0.1:8786: ws:// is not a transport this build uses"),
    ("inproc://nothing", "inproc://nothing: an inproc:// address names a scheduler inside one process"),
    ("http://127.0.0.1:8787", "http:// is not a Dask scheduler's address"),
    ("tcp://127.0.0.1", "give the scheduler's port, as tcp://127.0.0.1:8786"),
    ("tcp://127.0.0.1:99999", "the port is not a number from 1 to 65535"),
    ("tcp://127.0.0.1:0", "the port is not a number from 1 to 65535"),
    ("tcp://[::1]", "give the scheduler's port, as tcp://[::1]:8786"),
    ("tcp://127.0.0.1:8786#", "give the scheduler as tcp://HOST:PORT"),
    ("tcp://127.0.0.1\n:8786", "tcp://127.0.0.1?:8786: a scheduler's address has no space or control character"),
    ("tcp://sched uler:8786", "a scheduler's address has no space or control character"),
    ("garbage!!", "garbage!!: 'garbage!!' is not a host; give the scheduler as tcp://HOST:PORT"),
    ("8786", "8786: a port alone; give the scheduler as tcp://HOST:PORT"),
])  # fmt: skip
def test_a_scheduler_address_of_another_kind_is_a_usage_error(tmp_path, address, says):
    done = CliRunner().invoke(main, ["build", "--rules", "yatzy", "--data", str(tmp_path), "--scheduler", address])
    assert done.exit_code == 2, done.output
    one_line(done.output, says)
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def http_server() -> Iterator[int]:
    """An HTTP server on 127.0.0.1 (in a thread): its port."""

    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, format, *args) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd.server_port
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def greeting_server() -> Iterator[tuple[int, list[bytes]]]:
    """A server that speaks first, as an SSH or SMTP server does (or an HTTP server answering at once): its
    port, and the greetings it sends, one per connection."""
    greetings = [b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", b"SSH-2.0-OpenSSH_9.6\r\n"]
    sock = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        for greeting in greetings:
            conn, _ = sock.accept()
            with conn, contextlib.suppress(OSError):
                conn.sendall(greeting)
                conn.recv(1024)  # until the client closes

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield sock.getsockname()[1], greetings
    finally:
        sock.close()


def test_an_empty_scheduler_variable_is_no_scheduler(tmp_path, monkeypatch):
    """``PENTADICE_SCHEDULER=`` (set, but empty) is unset: the build runs here."""
    directory = table_dir(tmp_path)
    monkeypatch.setitem(rules.REGISTRY, "yatzy", RS)
    monkeypatch.setenv("PENTADICE_SCHEDULER", "")
    args = ["build", "--rules", "yatzy", "--table", "chances", "--data", str(directory), "--workers", "0"]
    done = CliRunner().invoke(main, [*args, "--chunk", "8", "--memory", MEMORY])
    assert done.exit_code == 0 and "Built the yatzy chances table" in done.output, done.output


def test_an_http_server_is_not_taken_for_a_scheduler(tmp_path, http_server):
    directory = table_dir(tmp_path)
    before = sorted(p.name for p in directory.iterdir())
    address = f"tcp://127.0.0.1:{http_server}"
    done = run_build("--data", str(directory), "--scheduler", address)
    assert done.returncode == 1, done.stderr
    one_line(done.stderr, f"{address} is not a Dask scheduler: it said nothing in 2 s")
    assert sorted(p.name for p in directory.iterdir()) == before


def test_a_server_that_greets_is_named_by_its_greeting_not_read_as_a_frame_length(tmp_path, greeting_server):
    """The reply that Dask read as the length of a frame (``HTTP/1.1`` is 3.5 EiB) is shown as what it is."""
    port, _ = greeting_server
    for says in ("it answered 'HTTP/1.1 400 Bad Request'", "it answered 'SSH-2.0-OpenSSH_9.6'"):
        done = run_build("--data", str(tmp_path), "--scheduler", f"tcp://127.0.0.1:{port}")
        assert done.returncode == 1, done.stderr
        one_line(done.stderr, f"tcp://127.0.0.1:{port} is not a Dask scheduler: {says}")


@pytest.fixture
def slow_server() -> Iterator[int]:
    """A server that speaks first but never finishes: a Dask handshake's first 24 bytes (a frame of 40 bytes
    announced, 2 frames) and no more, then, to the next connection, one byte every 0.3 s: its port."""
    sock = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = sock.accept()
            with conn:
                conn.sendall(struct.pack("<QQQ", 40, 2, 8))
                conn.recv(1024)  # until the client closes
            conn, _ = sock.accept()
            with conn:
                for byte in b"0123456789abcdefghij":
                    conn.sendall(bytes([byte]))
                    if done.wait(0.3):
                        break

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield sock.getsockname()[1]
    finally:
        done.set()
        sock.close()


def test_a_server_whose_first_message_never_ends_is_not_taken_for_a_scheduler(slow_server):
    """Dask waits for a scheduler's whole handshake without end: the check reads it whole, however slowly its
    bytes come, within the connection's timeout."""
    address = f"tcp://127.0.0.1:{slow_server}"
    for says in ("its first message stopped short", "it sent only '012"):
        start = time.monotonic()
        with pytest.raises(engine.ClusterError, match=says):
            cluster_address.probe(address, 1.0)
        assert time.monotonic() - start < 2.5


@pytest.mark.parametrize("which", ["win", "targets", "chances"])
def test_an_unreachable_scheduler_leaves_nothing_written(tmp_path, monkeypatch, which):
    """Through the command, and through the engine alone: the connection is made before the plan and the table's
    disk (159 MB for Yatzy's win tables) are written."""
    directory = table_dir(tmp_path)
    before = sorted(p.name for p in directory.iterdir())
    monkeypatch.setitem(rules.REGISTRY, "yatzy", RS)
    args = ["build", "--rules", "yatzy", "--table", which, "--data", str(directory), "--scheduler", UNREACHABLE]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 1, done.output
    one_line(done.output, f"cannot reach the Dask scheduler {UNREACHABLE}: nothing listens there")
    with pytest.raises(engine.ClusterError, match="nothing listens there"):
        if which == "win":
            engine.build(RS, directory, values(), UNREACHABLE, memory=1 << 26, chunk=8)
        elif which == "targets":
            engine.build_targets(RS, directory, UNREACHABLE, memory=1 << 26, chunk=3000)
        else:
            engine.build_chances(RS, directory, values(), UNREACHABLE, memory=1 << 26, chunk=8)
    assert sorted(p.name for p in directory.iterdir()) == before


def test_ctrl_c_at_a_terminal_prints_only_the_interrupted_line(tmp_path):
    """SIGINT to the build's process group, as a terminal sends Ctrl-C: the local cluster's workers get it too,
    and used to print about 60 lines of tracebacks before the driver's line."""
    directory = table_dir(tmp_path)
    root = store.Store(directory, RS.name).root
    cmd = build_command("--data", str(directory), "--workers", "1", "--chunk", "1", "--memory", MEMORY)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, process_group=0)
    try:
        deadline = time.monotonic() + 90
        while not (root / "L01.merged.json").exists():  # the cluster's workers at work
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    kept = f"Interrupted: the chunks written so far are kept in {root}; run the same command again to go on"
    assert lines[-1] == kept
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and len(lines) <= 4, err


def mine(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mine.txt"
    path.write_text("the user's")
    return path


@pytest.mark.parametrize("which", ["win", "targets", "chances"])
def test_a_resumed_build_removes_only_the_files_it_wrote(tmp_path, monkeypatch, which):
    """A build stopped midway, files of the user's put in its folders (a layer's chunks, a layer to come, the
    folder itself), then resumed and finished by the command, and run again: the files are all still there."""
    directory = table_dir(tmp_path)
    chunk = 3000 if which == "targets" else 8
    start = {
        "win": lambda progress: engine.build(RS, directory, values(), None, 0, 1 << 26, progress, chunk),
        "targets": lambda progress: engine.build_targets(RS, directory, None, 0, 1 << 26, progress, chunk),
        "chances": lambda progress: engine.build_chances(RS, directory, values(), None, 0, 1 << 26, progress, chunk),
    }[which]
    with pytest.raises(KeyboardInterrupt):
        start(stop_after(12))
    kind = {"win": store.Store, "targets": targets_store.store_of, "chances": chances_store.store_of}[which]
    root = kind(directory, RS.name).root
    layers = sorted(p for p in root.glob("L??") if p.is_dir())
    assert layers, sorted(p.name for p in root.iterdir())
    users = [mine(layers[0]), mine(root / "L09"), mine(root)]
    monkeypatch.setitem(rules.REGISTRY, "yatzy", RS)
    command = ["build", "--rules", "yatzy", "--table", which, "--data", str(directory), "--workers", "0", "--chunk",
               str(chunk), "--memory", MEMORY]  # fmt: skip
    for says in ("Built the yatzy", "whole already"):
        done = CliRunner().invoke(main, command)
        assert done.exit_code == 0 and says in done.output, done.output
        assert all(p.read_text() == "the user's" for p in users)
    if which != "win":  # the work folder: what the build wrote in it is gone
        assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == [
            f"{layers[0].name}/mine.txt", "L09/mine.txt", "mine.txt"]  # fmt: skip


def test_the_local_cluster_leaves_no_callback_that_would_swallow_ctrl_c():
    """The local cluster's scheduler runs in the driver and watches every garbage collection: Ctrl-C arriving in
    that callback was printed as "Exception ignored in ... _gc_callback" with a traceback, and the build went on
    (seen at a terminal, with the progress bar). The driver keeps no such callback."""
    import gc

    runners = engine.Runners(None, 1, engine.Progress())
    try:
        runners.get()
        assert [cb for cb in gc.callbacks if "distributed" in getattr(cb, "__module__", "")] == []
    finally:
        runners.close()


def test_a_scheduler_lost_mid_build_is_one_line_and_the_files_are_kept(tmp_path):
    """A scheduler of its own (``dask scheduler``, ``dask worker``), killed once the build's first chunks are
    written: one line saying so and that the files are kept for the same command to go on."""
    dask_cli = Path(sys.executable).with_name("dask")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen([dask_cli, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                  "--no-dashboard"], **quiet)  # fmt: skip
    worker = subprocess.Popen([dask_cli, "worker", address, "--nthreads", "1", "--no-dashboard"], **quiet)
    directory = table_dir(tmp_path)
    root = store.Store(directory, RS.name).root

    def kill_when_started() -> None:
        deadline = time.monotonic() + 90
        while not list(root.glob("L*/*.json")) and time.monotonic() < deadline:
            time.sleep(0.01)
        scheduler.kill()

    try:
        deadline = time.monotonic() + 60
        while True:  # the scheduler up, its worker there
            try:
                engine.check_scheduler(address)
                break
            except engine.ClusterError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        watcher = threading.Thread(target=kill_when_started, daemon=True)
        watcher.start()
        done = run_build("--data", str(directory), "--scheduler", address, "--chunk", "1", "--memory", MEMORY)
        watcher.join()
    finally:
        for p in (scheduler, worker):
            p.kill()
            p.wait()
    assert done.returncode == 1, done.stderr
    one_line(done.stderr, f"the build lost the Dask scheduler {address}: the connection to it was lost")
    assert f"what the build wrote is kept in {root}, for the same command to go on" in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 4, done.stderr  # the note, the plan, the dashboard, the error


@pytest.mark.parametrize("which", ["win", "targets"])
def test_a_layer_folder_that_is_a_link_is_neither_written_through_nor_emptied(tmp_path, monkeypatch, which):
    """A build stopped midway, the folder of a layer still to come a symbolic link to a folder of the user's
    (files in it named as a build names its own): resumed, the build says so in one line and the files where the
    link leads are as they were."""
    directory = table_dir(tmp_path)
    chunk = 3000 if which == "targets" else 8
    start = {
        "win": lambda progress: engine.build(RS, directory, values(), None, 0, 1 << 26, progress, chunk),
        "targets": lambda progress: engine.build_targets(RS, directory, None, 0, 1 << 26, progress, chunk),
    }[which]
    with pytest.raises(KeyboardInterrupt):
        start(stop_after(12))
    root = (store.Store if which == "win" else targets_store.store_of)(directory, RS.name).root
    layers = sorted(int(p.name[1:]) for p in root.glob("L??") if p.is_dir())
    outside = tmp_path / "mine"
    outside.mkdir()
    names = ["plan.json", "table.json", "c00000.npy", "c00000.json", "s01-c00000.npy", "c00000.rows.npy"]
    for name in names:
        (outside / name).write_text("the user's")
    link = root / f"L{layers[-1] + 1:02d}"
    assert not os.path.lexists(link)
    link.symlink_to(outside)
    monkeypatch.setitem(rules.REGISTRY, "yatzy", RS)
    command = ["build", "--rules", "yatzy", "--table", which, "--data", str(directory), "--workers", "0", "--chunk",
               str(chunk), "--memory", MEMORY]  # fmt: skip
    done = CliRunner().invoke(main, command)
    assert done.exit_code == 1, done.output
    one_line(done.output, f"{link} is a symbolic link, not a folder of the build's: remove it")
    assert sorted(p.name for p in outside.iterdir()) == sorted(names)
    assert all((outside / name).read_text() == "the user's" for name in names)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="makes its certificate with openssl")
def test_a_tls_server_that_says_nothing_after_its_handshake_is_not_taken_for_a_scheduler(tmp_path):
    """At a tls:// address the check makes the TLS handshake with Dask's settings, then reads the scheduler's first
    message as at a tcp:// one (Dask would wait for it without end)."""
    import dask

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=localhost"], check=True, capture_output=True)  # fmt: skip
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    sock = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = sock.accept()
            with server.wrap_socket(conn, server_side=True) as tls:  # the handshake, then nothing
                tls.recv(1024)  # until the client closes

    threading.Thread(target=serve, daemon=True).start()
    settings = {"distributed.comm.tls.ca-file": str(cert), "distributed.comm.tls.client.cert": str(cert),
                "distributed.comm.tls.client.key": str(key)}  # fmt: skip
    try:
        with dask.config.set(settings):
            address = f"tls://127.0.0.1:{sock.getsockname()[1]}"
            with pytest.raises(engine.ClusterError, match=f"{address} is not a Dask scheduler: it said nothing in 1 s"):
                cluster_address.probe(address, 1.0)
    finally:
        sock.close()
