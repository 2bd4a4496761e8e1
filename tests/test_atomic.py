"""Writing files: whole or not at all, never over something that is not a regular file, litter cleaned up."""

import os
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest
from commands import run

from pentadice.tables import atomic


def write_text(path, text: str):
    return atomic.write_file(path, lambda fh: fh.write(text.encode()))


def test_a_new_file_is_written_whole(tmp_path):
    path = tmp_path / "out.txt"
    write_text(path, "hello")
    assert path.read_text() == "hello"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_a_regular_file_keeps_its_permissions(tmp_path):
    path = tmp_path / "secret.json"
    path.write_text("old")
    path.chmod(0o600)
    write_text(path, "new")
    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_symlink_is_followed_and_stays_a_symlink(tmp_path):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = real_dir / "game.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"
    assert sorted(p.name for p in real_dir.iterdir()) == ["game.json"]  # the temporary sat beside the target


def test_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "target.json")
    write_text(link, "x")
    assert link.is_symlink() and (tmp_path / "target.json").read_text() == "x"


@pytest.mark.parametrize("kind", ["directory", "device", "fifo", "socket"])
def test_what_is_not_a_regular_file_is_refused_and_left_alone(tmp_path, kind):
    if kind == "directory":
        path = tmp_path / "dir"
        path.mkdir()
    elif kind == "device":
        path = tmp_path / "null"
        path.symlink_to("/dev/null")
    elif kind == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)
    else:
        import socket

        path = tmp_path / "sock"
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
    before = os.lstat(path)
    with pytest.raises(atomic.TargetError, match="not a regular file"):
        atomic.target(path)  # checked before any work
    with pytest.raises(atomic.TargetError):
        write_text(path, "x")
    after = os.lstat(path)
    assert (before.st_ino, before.st_mode) == (after.st_ino, after.st_mode)


def test_a_fifo_is_streamed_into_where_the_format_allows(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    where = atomic.target(fifo, stream_ok=True)
    assert where.streamed
    atomic.write_file(where, lambda fh: fh.write(b"streamed"))
    reader.join(10)
    assert got == [b"streamed"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_missing_directory_is_refused_before_any_work(tmp_path):
    with pytest.raises(atomic.TargetError, match="does not exist"):
        atomic.target(tmp_path / "nowhere" / "x.parquet")


def test_a_failed_write_leaves_nothing(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")

    def boom(fh):
        fh.write(b"half")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        atomic.write_file(path, boom)
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_stale_temporaries_of_a_killed_writer_are_removed_by_the_next(tmp_path):
    """kill -9 in the middle of a write leaves .NAME.PID-RANDOM.tmp; the next writer of NAME removes it, and
    leaves alone the temporary of a writer still at work and other files."""
    path = tmp_path / "penta.npy"
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pentadice.tables import atomic; "
            "atomic.write_file(sys.argv[1], lambda fh: (fh.write(b'x' * 1000), print('writing', flush=True), "
            "time.sleep(60)))",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout.readline().strip() == "writing"
    busy = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(busy) == 1
    assert atomic.remove_stale_temps(path) == []  # its writer is at work: kept
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    other = tmp_path / ".other.npy.1-abc.tmp"
    other.write_text("not ours to remove")
    write_text(path, "new")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".other.npy.1-abc.tmp", "penta.npy"]


def test_signals_during_the_rename_are_held_back_and_raised_after(tmp_path):
    path = tmp_path / "out.txt"
    real_replace = os.replace

    def replace_with_a_signal(src, dst):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs at the next bytecode: here, inside the rename
        real_replace(src, dst)

    os.replace = replace_with_a_signal
    try:
        with pytest.raises(atomic.CommittedInterrupt):
            write_text(path, "done")
    finally:
        os.replace = real_replace
    assert path.read_text() == "done"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_target_swapped_for_a_fifo_during_the_write_is_left_alone(tmp_path):
    path = tmp_path / "out.parquet"
    path.write_text("old")
    where = atomic.target(path)

    def write_while_swapped(fh):
        path.unlink()
        os.mkfifo(path)
        fh.write(b"new")

    with pytest.raises(atomic.TargetError, match="meanwhile"):
        atomic.write_file(where, write_while_swapped)
    assert stat.S_ISFIFO(os.lstat(path).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]


def test_stale_temporary_cleanup_spares_names_we_did_not_give(penta_table_dir, tmp_path):
    planted = tmp_path / ".r.parquet.2023-backup.tmp"
    planted.write_text("someone's backup")
    ours = tmp_path / ".r.parquet.999999999-abcdefgh.tmp"  # our pattern, a writer that does not exist
    ours.write_text("half")
    result = run("simulate", "-n", "10", "--out", str(tmp_path / "r.parquet"), "--data", str(penta_table_dir))
    assert result.exit_code == 0, result.output
    assert planted.exists() and not ours.exists()
