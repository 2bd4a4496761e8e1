"""``pentadice export-app DIR --force`` replaces only a folder it wrote: never the home folder, the current folder,
the table directory or a folder holding files of the user's; a symbolic link is written through; a replacement
cut by SIGTERM leaves the old app or the new one in place, and folders a killed export left beside DIR are removed
by the next. The table read is a table of zeros of Penta's shape (the app's files, not its advice, are tested)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.tables import table

MANIFEST = "pentadice-export.json"


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> Path:
    """A table directory holding a Penta table (zeros: the export copies it, nothing reads its advice)."""
    directory = tmp_path_factory.mktemp("tables")
    rs = rules.get_rules("penta")
    table.save(rs, np.zeros(rs.table_shape), directory)
    return directory


def export(*args: str, tables: Path, cwd: Path | None = None, home: Path | None = None) -> subprocess.CompletedProcess:
    """``pentadice export-app ARGS --data TABLES`` (in ``cwd``, with HOME ``home``), run by click's runner in this
    process (a new process costs a second each): its exit status and standard error."""
    with contextlib.chdir(cwd or Path.cwd()):
        done = CliRunner().invoke(
            main, ["export-app", *args, "--data", str(tables)], env={"HOME": str(home)} if home else None
        )
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    return subprocess.CompletedProcess(args, done.exit_code, done.stdout, done.stderr)


def refused(done: subprocess.CompletedProcess, says: str) -> None:
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_force_replaces_a_previous_export_and_nothing_else(tables, tmp_path):
    app = tmp_path / "app"
    first = export(str(app), tables=tables)
    assert first.returncode == 0, first.stderr
    manifest = json.loads((app / MANIFEST).read_text())
    assert sorted(manifest["files"]) == sorted(n for n in files(app) if n != MANIFEST)
    refused(export(str(app), tables=tables), "is not empty")
    (app / "index.html").write_text("an old page")
    again = export(str(app), "--force", tables=tables)
    assert again.returncode == 0, again.stderr
    assert (app / "index.html").read_text() != "an old page"
    (app / "CNAME").write_text("mine")  # a file of the user's in the export: the folder is not the app's alone now
    refused(export(str(app), "--force", tables=tables), "CNAME is not a file it wrote")
    assert (app / "CNAME").read_text() == "mine" and (app / MANIFEST).exists()
    assert [p.name for p in tmp_path.iterdir()] == ["app"]  # no temporary folder left beside it


def test_force_leaves_a_folder_of_the_users_alone(tables, tmp_path):
    folder = tmp_path / "full"
    folder.mkdir()
    (folder / "mine.txt").write_text("kept")
    refused(export(str(folder), "--force", tables=tables), "is not a previous export of the app")
    assert files(folder) == {"mine.txt": b"kept"}


def test_force_never_replaces_the_home_the_current_folder_or_the_tables(tables, tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("secret")
    work = home / "work"
    work.mkdir()
    (work / "notes.txt").write_text("kept")
    inner = work / "inner"
    inner.mkdir()
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    own = tmp_path / "tables" / "data"  # a table directory of the test's own, whose folder holds no home
    own.mkdir(parents=True)
    for f in tables.iterdir():
        os.link(f, own / f.name)
    before_tables = files(own)
    for args, cwd, says in (
        (("~", "--force"), work, "is your home folder"),
        ((".", "--force"), work, "is the current folder"),
        ((".",), work, "is the current folder"),
        (("..", "--force"), inner, f"holds the current folder ({inner})"),
        ((str(own), "--force"), work, "is the table directory"),
        ((str(own.parent), "--force"), work, f"holds the table directory ({own})"),
    ):
        refused(export(*args, tables=own, cwd=cwd, home=home), says)
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before
    assert files(own) == before_tables


def test_a_path_under_a_file_or_a_pipe_is_one_clear_line(tables, tmp_path):
    (tmp_path / "file.txt").write_text("kept")
    refused(export(str(tmp_path / "file.txt" / "sub"), tables=tables), "which is a file, not a folder")
    assert (tmp_path / "file.txt").read_text() == "kept"
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    refused(export(str(tmp_path / "fifo" / "app"), tables=tables), "which is a pipe, not a folder")
    refused(export(str(tmp_path / "loop"), tables=tables), "it is a symbolic link that leads nowhere, not a folder")


def test_a_symbolic_link_is_written_through(tables, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    for args in ((str(link),), (str(link), "--force")):  # into the empty folder, then over the export there
        done = export(*args, tables=tables)
        assert done.returncode == 0, done.stderr
        assert link.is_symlink() and os.readlink(link) == str(real)
        assert (real / MANIFEST).is_file() and (real / "app-tables" / "penta.f64").stat().st_size == 8 * 2**20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]


def test_a_symbolic_link_to_nowhere_is_refused_and_no_folder_made_where_it_points(tables, tmp_path):
    """A link planted where the app is to go (another user's, in a shared /tmp) is no place to make folders at."""
    link = tmp_path / "app"
    link.symlink_to(tmp_path / "elsewhere" / "deep")
    refused(export(str(link), tables=tables), "is a symbolic link to")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app"] and link.is_symlink()


def test_the_home_folder_of_the_password_database_is_never_replaced(tables, tmp_path, monkeypatch):
    """``$HOME`` naming another folder (as under ``sudo -E``) does not make the user's own home replaceable."""
    from pentadice.faces.cli import export_app

    real_home = tmp_path / "real-home"
    (real_home / ".ssh").mkdir(parents=True)
    (real_home / ".ssh" / "id_ed25519").write_text("secret")
    monkeypatch.setattr(export_app, "_password_home", lambda: real_home)
    refused(export(str(real_home), "--force", tables=tables, home=tmp_path / "other"), "is your home folder")
    assert (real_home / ".ssh" / "id_ed25519").read_text() == "secret"


def test_folders_a_killed_export_left_are_removed_by_the_next(tables, tmp_path):
    app = tmp_path / "app"
    assert export(str(app), tables=tables).returncode == 0
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)  # a process that is gone
    old = tmp_path / f".app.old.{pid}-abcd1234"
    new = tmp_path / f".app.new.{pid}-efgh5678"
    earlier = tmp_path / ".app.old.k2j4h5g6"  # as an earlier version named the app it replaced
    for leftover in (old, earlier):
        subprocess.run(["cp", "-a", str(app), str(leftover)], check=True)
    new.mkdir()
    (new / "index.html").write_text("half")
    mine = tmp_path / ".app.settings"  # folders of the user's whose names look alike
    mine.mkdir()
    (mine / "keep.txt").write_text("kept")
    backup = tmp_path / ".app.backup01"  # a copy of the export, named as the user likes
    subprocess.run(["cp", "-a", str(app), str(backup)], check=True)
    done = export(str(app), "--force", tables=tables)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".app.backup01", ".app.settings", "app"]
    assert (mine / "keep.txt").read_text() == "kept" and (backup / MANIFEST).is_file()


def test_sigterm_between_the_renames_leaves_the_new_app_whole(tables, tmp_path, monkeypatch):
    """SIGTERM arriving just after the old app is moved aside (the moment that left the folder missing and a
    ``.app.old.*`` behind): it is held until the new app is in place and the old one removed, then ends the command
    (exit 130, one line)."""
    app = tmp_path / "app"
    assert CliRunner().invoke(main, ["export-app", str(app), "--data", str(tables)]).exit_code == 0
    (app / "index.html").write_text("the old page")
    rename = Path.rename

    def rename_then_sigterm(self, to):
        result = rename(self, to)
        if self == app:
            os.kill(os.getpid(), signal.SIGTERM)
        return result

    monkeypatch.setattr(Path, "rename", rename_then_sigterm)
    done = CliRunner().invoke(main, ["export-app", str(app), "--force", "--data", str(tables)])
    assert done.exit_code == 130, done.output
    assert done.output.strip().splitlines() == [f"Interrupted: the offline app was written to {app} first, whole"]
    assert (app / "index.html").read_text() != "the old page" and (app / MANIFEST).is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["app"]


def test_a_manifest_never_vouches_for_files_an_export_does_not_write(tables, tmp_path):
    """A pentadice-export.json put in a folder of the user's, listing its files (a key, ``.ssh/``): --force leaves
    them; a manifest whose list is not of names is one line, not a traceback."""
    folder = tmp_path / "keys"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA")
    (folder / "id_rsa").write_text("the user's key")
    (folder / MANIFEST).write_text(json.dumps({"format": "pentadice-offline-app",
                                               "files": [".ssh/authorized_keys", "id_rsa"]}))  # fmt: skip
    before = files(folder)
    refused(export(str(folder), "--force", tables=tables), ".ssh/authorized_keys is not a file it wrote")
    assert files(folder) == before
    (folder / MANIFEST).write_text(json.dumps({"format": "pentadice-offline-app", "files": [["id_rsa"], {}]}))
    refused(export(str(folder), "--force", tables=tables), f"its {MANIFEST} is not an export's")
    assert files(folder)["id_rsa"] == b"the user's key"


@pytest.mark.timeout(30)
def test_a_manifest_that_is_a_pipe_or_a_link_is_neither_waited_on_nor_followed(tables, tmp_path):
    app = tmp_path / "app"
    assert export(str(app), tables=tables).returncode == 0
    manifest = app / MANIFEST
    real = tmp_path / "elsewhere.json"
    real.write_bytes(manifest.read_bytes())
    manifest.unlink()
    os.mkfifo(manifest)  # opened as it was, it waited for a writer: for ever
    refused(export(str(app), "--force", tables=tables), f"its {MANIFEST} is not a plain file")
    manifest.unlink()
    manifest.symlink_to(real)
    refused(export(str(app), "--force", tables=tables), f"its {MANIFEST} is not a plain file")
    assert manifest.is_symlink() and real.is_file()


def test_a_folder_of_the_users_in_an_export_is_kept_even_empty(tables, tmp_path):
    app = tmp_path / "app"
    assert export(str(app), tables=tables).returncode == 0
    (app / "drafts").mkdir()
    refused(export(str(app), "--force", tables=tables), "drafts/ is not a file it wrote")
    assert (app / "drafts").is_dir()


def test_a_file_put_in_the_export_while_the_app_is_written_is_left_alone(tables, tmp_path, monkeypatch):
    """A file of the user's arriving after the check, just before the old app is moved aside: the folder is put
    back as it was, the file in it, the new app not put in place."""
    app = tmp_path / "app"
    assert export(str(app), tables=tables).returncode == 0
    rename = Path.rename

    def rename_after_a_user_file(self, to):
        if self == app:
            (app / "notes.txt").write_text("the user's")
        return rename(self, to)

    monkeypatch.setattr(Path, "rename", rename_after_a_user_file)
    refused(export(str(app), "--force", tables=tables), "app changed meanwhile (notes.txt is not a file it wrote)")
    assert (app / "notes.txt").read_text() == "the user's" and (app / MANIFEST).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app"]


def test_a_folder_named_like_a_killed_exports_is_removed_only_when_it_holds_an_export(tables, tmp_path):
    app = tmp_path / "app"
    assert export(str(app), tables=tables).returncode == 0
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)  # a process that is gone
    for kind in ("new", "old"):
        mine = tmp_path / f".app.{kind}.{pid}-abcd1234"
        mine.mkdir()
        (mine / "notes.txt").write_text("the user's")
    assert export(str(app), "--force", tables=tables).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".app.new.{pid}-abcd1234", f".app.old.{pid}-abcd1234",
                                                          "app"]  # fmt: skip


def test_a_path_is_printed_without_its_control_characters(tables, tmp_path):
    (tmp_path / "plain").write_text("a file")
    done = export(str(tmp_path / "plain" / "a\x1b[2Jb\nc"), tables=tables)
    refused(done, "cannot write the app to ")
    assert "\x1b" not in done.stderr and "a?[2Jb?c" in done.stderr


def test_a_deep_chain_of_folders_or_a_manifest_not_json_is_one_line(tables, tmp_path):
    """A chain of 500 folders in an export (more than Python's recursion allows to walk it folder by folder):
    refused in one line naming it shortened, kept; a manifest of 2 MB of spaces, or not UTF-8: not an export's."""
    app = tmp_path / "app"
    assert export(str(app), tables=tables).returncode == 0
    fd = os.open(app, os.O_RDONLY)
    try:
        for _ in range(500):
            os.mkdir("a", dir_fd=fd)
            fd, previous = os.open("a", os.O_RDONLY, dir_fd=fd), fd
            os.close(previous)
        with open(os.open("notes.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as fh:
            fh.write("the user's")
    finally:
        os.close(fd)
    try:
        done = export(str(app), "--force", tables=tables)
        refused(done, "a/a/a/...")
        assert "/notes.txt is not a file it wrote" in done.stderr and len(done.stderr) < 300, done.stderr
        assert (app / MANIFEST).is_file() and (app / "a").is_dir()
    finally:  # the chain removed here, deepest first: pytest's own clean-up walks it by recursion
        chain = [str(app / "a")]
        while os.path.isdir(os.path.join(chain[-1], "a")):
            chain.append(os.path.join(chain[-1], "a"))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(chain[-1], "notes.txt"))
        for folder in reversed(chain):
            os.rmdir(folder)
    second = tmp_path / "second"
    assert export(str(second), tables=tables).returncode == 0
    for body in (b" " * (2 << 20), b"\xff\xfe\x00{"):
        (second / MANIFEST).write_bytes(body)
        refused(export(str(second), "--force", tables=tables), f"its {MANIFEST} is not an export's")
