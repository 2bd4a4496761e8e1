"""``pentadice export-app DIR``: the offline app as static files any HTTPS host can serve (docs/offline.md).

DIR gets the page (``index.html``, ``app.js``, ``style.css``), the advisor and the local game (``advisor.js``,
``offline.js``), the service worker (``sw.js``, its cache version the hash of these files), the manifest and the
icons, ``config.json`` (no server: the app answers its own API calls), the page's words in each language under
``messages/`` (what ``GET /api/messages`` answers), and under ``app-tables/`` each rule set's
exported tables (:mod:`pentadice.faces.web.app_tables`) with an ``index.json``, and last ``pentadice-export.json``,
the list of the files written (what marks the folder as an export).

Written to a temporary folder beside DIR (``.DIR.new.PID-XXXXXXXX``) and renamed into place, Ctrl-C and SIGTERM
held during the renames; a DIR that is not empty is refused, and with ``--force`` replaced only when it is a
previous export (its manifest lists every file in it), never the home folder, the current folder or the table
directory. A symbolic link is written through: the folder it points at is replaced, the link stays. Folders a
killed export left beside DIR are removed by the next. Serve DIR at the root of its host: the page's files and its
addresses (``/games/ID``) are absolute paths.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import random
import re
import shutil
import stat
from pathlib import Path

import click

from pentadice.faces.cli.options import DATA_OPTION
from pentadice.game import rule_files, rules
from pentadice.support import exits, i18n, paths
from pentadice.support.inputs import clean
from pentadice.support.interrupts import CommittedInterrupt, Held
from pentadice.tables import atomic


def _rule_sets(text: str) -> list:
    """The rule sets named in ``--rules`` (comma-separated), each checked to fit the offline app."""
    from pentadice.faces.web import app_tables

    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise exits.BadInput("--rules: name at least one rule set, e.g. penta")
    out = []
    for name in dict.fromkeys(names):
        try:
            rs = rule_files.resolve(name)  # a house-rules file too
            app_tables.check_size(rs)
        except ValueError as e:  # an unknown name, a bad rules file, a table too large (TooLarge)
            raise exits.BadInput(f"--rules: {e}") from None
        out.append(rs)
    return out


MANIFEST = "pentadice-export.json"  # written last into an export: the list of its files, how --force knows one
MANIFEST_FORMAT = "pentadice-offline-app"
LEFTOVER = re.compile(r"(new|old)\.([0-9]+)-[a-z0-9_]{8}")  # after ".DIR.": our folders beside DIR, with the PID
OLD_LEFTOVER = re.compile(r"old\.[a-z0-9_]{8}")  # the app replaced, left by a version that did not name the PID


def _target(directory: str, force: bool, tables: Path) -> Path:
    """The folder to write (symbolic links followed: the folder a link points at is replaced, the link stays),
    checked before any work: a new name, an empty folder, or with ``--force`` a previous export (its manifest
    lists every file in it); never the home folder, the current folder (or a folder holding it) or the table
    directory (or a folder holding it). BadInput naming the problem otherwise."""
    given = paths.expand(directory)
    target = Path(os.path.realpath(given))
    shown = clean(os.fspath(given))  # in messages: no control character of the name printed as it is
    if os.path.islink(given) and not os.path.lexists(target):  # a link to nowhere: not a place to make folders at
        raise exits.BadInput(
            f"cannot write the app to {shown}: it is a symbolic link to {clean(os.fspath(target))}, which does not "
            "exist (make that folder first, or give a folder of the app's own)"
        )
    ancestor = target
    while not os.path.lexists(ancestor) and ancestor.parent != ancestor:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        kind = _kind(ancestor)
        what = f"is {kind}" if ancestor == target else f"is under {clean(os.fspath(ancestor))}, which is {kind}"
        raise exits.BadInput(f"cannot write the app to {shown}: it {what}, not a folder")
    places = (("your home folder", _home()), ("your home folder", _password_home()),
              ("the current folder", Path.cwd()), ("the table directory", tables))  # fmt: skip
    for name, place in places:
        if place is None:
            continue
        place = Path(os.path.realpath(place))
        if target == place or target in place.parents:
            what = f"is {name}" if target == place else f"holds {name} ({clean(os.fspath(place))})"
            raise exits.BadInput(
                f"{shown} {what}: it is left alone (the app's folder is replaced whole); give a folder of the "
                "app's own, such as ./app"
            )
    if target.is_dir() and any(target.iterdir()):
        if not force:
            raise exits.BadInput(f"{shown} is not empty (--force replaces a previous export of the app)")
        reason = not_an_export(target)
        if reason:
            raise exits.BadInput(f"{shown} is not a previous export of the app ({reason}): it is left alone; "
                                 "give a new or empty folder")  # fmt: skip
    return target


def _kind(path: Path) -> str:
    """What ``path``, not a folder, is: ``a file``, ``a pipe``, ``a device``, ..., or a link that leads nowhere."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # a link to nothing, or a loop of links
        return "a symbolic link that leads nowhere"
    return "a file" if stat.S_ISREG(mode) else atomic.kind_of(mode)


def _home() -> Path | None:
    try:
        return Path.home()
    except (RuntimeError, KeyError):  # no HOME and no entry in the password database
        return None


def _password_home() -> Path | None:
    """The user's home folder as the password database has it (``$HOME`` may say another, e.g. under sudo)."""
    try:
        import pwd

        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError, OSError):
        return None


def not_an_export(folder: Path) -> str | None:
    """Why ``folder`` is not a folder that export-app wrote (None: it is one, and ``--force`` may replace it):
    its manifest (``pentadice-export.json``, a plain file) must list every file in it, each a name an export
    writes (:func:`_export_name`: no ``.ssh/authorized_keys`` or ``id_rsa``, whatever a manifest says), and
    nothing else may be there (a folder of the user's, empty or not, included). A folder exported before the
    manifest was written is recognised by its ``config.json`` and ``app-tables/index.json``, and every file in it
    being a name an export writes."""
    try:
        found, folders = _walk(folder)
        plain = _plain_file(folder / MANIFEST)
        manifest = _read_json(folder / MANIFEST)
    except OSError as e:
        return f"it cannot be read: {e.strerror or e}"
    if plain is False:
        return f"its {MANIFEST} is not a plain file"
    if plain and manifest is None:  # not JSON, not UTF-8, larger than any export's
        return f"its {MANIFEST} is not an export's"
    if manifest is not None:
        files = manifest.get("files")
        if (manifest.get("format") != MANIFEST_FORMAT or not isinstance(files, list)
                or not all(isinstance(name, str) for name in files)):  # fmt: skip
            return f"its {MANIFEST} is not an export's"
        listed = {name for name in files if _export_name(name)} | {MANIFEST}
    else:
        try:
            config, index = _read_json(folder / "config.json"), _read_json(folder / "app-tables" / "index.json")
        except OSError as e:
            return f"it cannot be read: {e.strerror or e}"
        exported = (config or {}).get("server") is False and (index or {}).get("format") == "pentadice-app-tables"
        if not exported:
            return f"no {MANIFEST}"
        listed = {name for name in found if _written_name(name)}
    holding = {"/".join(name.split("/")[:i]) for name in listed for i in range(1, name.count("/") + 1)}
    others = [name for name in found if name not in listed] + sorted(f"{name}/" for name in set(folders) - holding)
    if others:
        first = others[0] if len(others[0]) <= 80 else f"{others[0][:40]}...{others[0][-37:]}"
        return f"{clean(first)} is not a file it wrote" + (
            f", nor are {len(others) - 1} more" if len(others) > 1 else ""
        )
    return None


def _walk(folder: Path) -> tuple[list[str], list[str]]:
    """``(files, folders)`` in ``folder``, at any depth, as sorted relative paths (a symbolic link, a pipe: a file;
    links never followed); without recursion (a chain of a thousand folders is no RecursionError). OSError when a
    folder cannot be read."""
    files, folders, todo = [], [], [""]
    while todo:
        here = todo.pop()
        with os.scandir(folder / here if here else folder) as entries:
            for entry in entries:
                name = f"{here}/{entry.name}" if here else entry.name
                if entry.is_dir(follow_symlinks=False):
                    folders.append(name)
                    todo.append(name)
                else:
                    files.append(name)
    return sorted(files), sorted(folders)


EXPORT_NAME = re.compile(  # a file an export writes, by any version: the page's files, the words, the tables
    r"(?:[a-z0-9][a-z0-9_-]*/)*[a-z0-9][a-z0-9_.-]*\.(?:html|js|css|json|f64|svg|png|ico|webmanifest)"
)


def _export_name(name: str) -> bool:
    """Whether ``name`` (a path in a folder, as a manifest lists it) is the name of a file an export writes:
    lower-case, no hidden part, a web page's kind of file (``index.html``, ``icons/icon-192.png``,
    ``app-tables/penta.f64``)."""
    return bool(EXPORT_NAME.fullmatch(name)) and ".." not in name.split("/")


def _written_name(name: str) -> bool:
    """Whether ``name`` (a path in a folder) is one an export writes: the page's files, config.json, sw.js, the
    words, the tables."""
    from pentadice.faces.web.page import STATIC

    if name in ("config.json", "sw.js") or re.fullmatch(r"messages/[a-z]{2,3}\.json", name):
        return True
    if re.fullmatch(r"app-tables/[a-z0-9+-]+\.(json|f64)", name):
        return True
    path = STATIC / name
    return path.is_file() and not path.is_symlink()


def _plain_file(path: Path) -> bool | None:
    """Whether ``path`` is a plain file, not a link, a pipe or a device (None: nothing there)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _read_json(path: Path) -> dict | None:
    """A small JSON object, or None (missing, too large, not JSON, not an object, not a plain file: a pipe is
    never waited on, a link never followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:  # a symbolic link
            return None
        raise
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        body = fh.read(1 << 20)
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def remove_leftovers(target: Path) -> list[Path]:
    """Remove the folders an export to ``target`` left beside it when it was killed (``.DIR.new.PID-XXXXXXXX``:
    an app half-written, ``.DIR.old.PID-XXXXXXXX``: the app it replaced), whose process is gone; the app replaced
    by an earlier version (``.DIR.old.XXXXXXXX``, no PID) only when it is an export (:func:`not_an_export`).
    Returns them."""
    removed = []
    prefix = f".{target.name}."
    try:
        names = os.listdir(target.parent)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(prefix):
            continue
        rest, path = name[len(prefix) :], target.parent / name
        if path.is_symlink() or not path.is_dir():
            continue
        match = LEFTOVER.fullmatch(rest)
        if match is not None:
            if atomic._alive(int(match.group(2))):  # another export at work
                continue
            if not (_half_written(path) if match.group(1) == "new" else not_an_export(path) is None):
                continue  # a folder of the user's, named alike
        elif not (OLD_LEFTOVER.fullmatch(rest) and not_an_export(path) is None):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _half_written(folder: Path) -> bool:
    """Whether ``folder`` holds only what an export writes (its manifest may not be there yet): every file a
    plain file of a name an export writes, every folder one of its own (``icons``, ``messages``, ``app-tables``)."""
    try:
        files, folders = _walk(folder)
    except OSError:
        return False
    if any(name not in ("icons", "messages", "app-tables") for name in folders):
        return False
    return all((_written_name(name) or name == MANIFEST) and _plain_file(folder / name) for name in files)


def write_app(folder: Path, exported: list, static: Path) -> dict[str, int]:
    """The app's files in ``folder`` (an empty one): the page's files, config.json, the tables; returns each
    file's size by its path."""
    sizes: dict[str, int] = {}
    shell = hashlib.sha256()
    for path in sorted(static.rglob("*")):
        if not path.is_file() or path.is_symlink() or path.name in ("sw.js", "config.json"):
            continue
        name = path.relative_to(static).as_posix()
        body = path.read_bytes()
        shell.update(name.encode() + b"\0" + body)
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(body)
        sizes[name] = len(body)
    tables = folder / "app-tables"
    tables.mkdir()
    index = []
    for e in exported:
        (tables / f"{e.name}.json").write_bytes(e.json_bytes)
        (tables / f"{e.name}.f64").write_bytes(e.values)
        sizes[f"app-tables/{e.name}.json"] = len(e.json_bytes)
        sizes[f"app-tables/{e.name}.f64"] = len(e.values)
        shell.update(e.json_sha256.encode())
        index.append({"name": e.name, "json": f"{e.name}.json", "json_bytes": len(e.json_bytes),
                      "json_sha256": e.json_sha256, "values": f"{e.name}.f64", "values_bytes": len(e.values),
                      "values_sha256": e.values_sha256})  # fmt: skip
    texts: dict[str, object] = {}
    for code in i18n.LANGUAGES:  # what GET /api/messages answers, for the page's words (offline.js reads them)
        texts[f"messages/{code}.json"] = {"lang": code, "messages": i18n.catalogue(code)}
        shell.update(json.dumps(texts[f"messages/{code}.json"], sort_keys=True).encode())
    (folder / "messages").mkdir()
    version = shell.hexdigest()[:16]
    texts |= {
        "app-tables/index.json": {"format": "pentadice-app-tables", "rules": index},
        "config.json": {
            "server": False,
            "version": version,
            "rules": [{"name": e.name} for e in exported],
            "languages": list(i18n.LANGUAGES),
        },
    }
    for name, data in texts.items():
        body = json.dumps(data, indent=1).encode()
        (folder / name).write_bytes(body)
        sizes[name] = len(body)
    from pentadice.faces.web.page import versioned_worker

    try:
        body = versioned_worker((static / "sw.js").read_text(), version).encode()
    except ValueError as e:
        raise exits.Failure(str(e)) from None
    (folder / "sw.js").write_bytes(body)
    sizes["sw.js"] = len(body)
    manifest = {"format": MANIFEST_FORMAT, "version": version, "files": sorted(sizes)}
    body = json.dumps(manifest, indent=1).encode()  # last: what marks the folder as an export (--force)
    (folder / MANIFEST).write_bytes(body)
    sizes[MANIFEST] = len(body)
    return sizes


@click.command("export-app")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--rules",
    "rule_names",
    default=rules.DEFAULT_RULES,
    show_default=True,
    help="The rule sets the app plays offline, comma-separated names or house-rules files (their tables read from "
    "the table directory; Maxi Yatzy's is too large).",
)
@DATA_OPTION
@click.option(
    "--force",
    is_flag=True,
    help="Replace DIR when it holds a previous export of the app (and nothing else); any other folder is left alone.",
)
def export_app(directory: str, rule_names: str, data: str | None, force: bool) -> None:
    """Write the offline app to DIR: static files any HTTPS host can serve (the coach and solo games against
    the computer, in the browser, with no server)."""
    from pentadice.faces.web import app_tables
    from pentadice.faces.web.page import STATIC
    from pentadice.tables import table

    rule_sets = _rule_sets(rule_names)
    where = paths.data_dir(data)
    target = _target(directory, force, where)
    temporary = None
    try:
        exported = []
        for rs in rule_sets:
            try:
                loaded = table.load(rs, where)
            except table.TableMissing:
                raise exits.BadInput(
                    f"no {rs.name} table in {clean(str(where))}: `pentadice solve --rules {rs.rules_option}` makes it"
                ) from None
            exported.append(app_tables.export(rs, loaded.values))
        parent = target.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            remove_leftovers(target)
            temporary = parent / f".{target.name}.new.{os.getpid()}-{_random()}"
            temporary.mkdir()
        except OSError as e:
            raise exits.Failure(f"cannot write beside {clean(str(target))}: {e.strerror or e}") from None
        try:
            sizes = write_app(temporary, exported, STATIC)
            os.chmod(temporary, 0o755)
            _put_in_place(temporary, target, force, directory)
        except OSError as e:
            raise exits.Failure(f"cannot write {clean(str(target))}: {e.strerror or e}") from None
    except CommittedInterrupt:
        raise exits.Interrupted(f"the offline app was written to {clean(str(target))} first, whole") from None
    except KeyboardInterrupt:
        raise exits.Interrupted(f"nothing was written: {clean(str(target))} is as it was") from None
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
    total = sum(sizes.values())
    tables = ", ".join(f"{e.name} {(len(e.values) + len(e.json_bytes)) / 2**20:.1f} MiB" for e in exported)
    size = f"{len(sizes)} files, {total / 2**20:.1f} MiB"
    click.echo(f"Wrote the offline app to {clean(str(target))}: {size} (tables: {tables}).")
    click.echo("Serve the folder at the root of an HTTPS host; open it once, then it works offline.")


def _random() -> str:
    return "".join(random.SystemRandom().choices("abcdefghijklmnopqrstuvwxyz0123456789_", k=8))


def _put_in_place(temporary: Path, target: Path, force: bool, given: str) -> None:
    """``temporary`` renamed to ``target``; a ``target`` already there (empty, or with ``--force`` a previous
    export, checked again now and once more when moved aside: a file put there meanwhile puts it back, left
    alone) is moved aside first and removed once the new folder is in place. Ctrl-C and
    SIGTERM are held meanwhile: the old app or the new one is at ``target``, never neither (a signal is raised
    after, as :class:`CommittedInterrupt`)."""
    if target.is_dir() and any(target.iterdir()):
        reason = not_an_export(target) if force else "it is not empty"
        if reason:
            raise exits.BadInput(f"{clean(given)} changed meanwhile ({reason}): it is left alone")
    with Held(committed=True):
        if not os.path.lexists(target):
            temporary.rename(target)
            return
        aside = target.parent / f".{target.name}.old.{os.getpid()}-{_random()}"
        target.rename(aside)
        try:
            if aside.is_symlink() or not aside.is_dir():
                reason = "it is not a folder"
            elif any(aside.iterdir()):
                reason = not_an_export(aside) if force else "it is not empty"
            else:
                reason = None
        except OSError as e:
            reason = f"it cannot be read: {e.strerror or e}"
        if reason:  # a file put there since the check above: the folder back as it was, left alone
            aside.rename(target)
            raise exits.BadInput(f"{clean(given)} changed meanwhile ({reason}): it is left alone")
        try:
            temporary.rename(target)
        except OSError:
            aside.rename(target)  # the old app back where it was
            raise
        shutil.rmtree(aside, ignore_errors=True)
