"""``pentadice export-app DIR``: the offline app as static files any HTTPS host can serve (docs/offline.md).

DIR gets the page (``index.html``, ``app.js``, ``style.css``), the advisor and the local game (``advisor.js``,
``offline.js``), the service worker (``sw.js``, its cache version the hash of these files), the manifest and the
icons, ``config.json`` (no server: the app answers its own API calls), the page's words in each language under
``messages/`` (what ``GET /api/messages`` answers), and under ``app-tables/`` each rule set's
exported tables (:mod:`pentadice.faces.web.app_tables`) with an ``index.json``. Written to a temporary folder
beside DIR and renamed into place; a DIR that is not empty is refused unless ``--force`` (then replaced whole).
Serve DIR at the root of its host: the page's files and its addresses (``/games/ID``) are absolute paths.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import click

from pentadice.faces.cli.options import DATA_OPTION
from pentadice.support import exits, i18n, paths

DEFAULT_RULES = "penta"


def _rule_sets(text: str) -> list:
    """The rule sets named in ``--rules`` (comma-separated), each checked to fit the offline app."""
    from pentadice.faces.web import app_tables
    from pentadice.game import rules

    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise exits.BadInput("--rules: name at least one rule set, e.g. penta")
    out = []
    for name in dict.fromkeys(names):
        try:
            rs = rules.get_rules(name)
            app_tables.check_size(rs)
        except (rules.UnknownRules, app_tables.TooLarge) as e:
            raise exits.BadInput(f"--rules: {e}") from None
        out.append(rs)
    return out


def _target(directory: str, force: bool) -> Path:
    target = Path(directory).expanduser().absolute()
    if target.exists() and not target.is_dir():
        raise exits.BadInput(f"{target} is a file, not a folder")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise exits.BadInput(f"{target} is not empty (--force replaces it with the app)")
    return target


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
    return sizes


@click.command("export-app")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--rules",
    "rule_names",
    default=DEFAULT_RULES,
    show_default=True,
    help="The rule sets the app plays offline, comma-separated (their tables read from the table directory; "
    "Maxi Yatzy's is too large).",
)
@DATA_OPTION
@click.option("--force", is_flag=True, help="Replace DIR when it is not empty.")
def export_app(directory: str, rule_names: str, data: str | None, force: bool) -> None:
    """Write the offline app to DIR: static files any HTTPS host can serve (the coach and solo games against
    the computer, in the browser, with no server)."""
    from pentadice.faces.web import app_tables
    from pentadice.faces.web.page import STATIC
    from pentadice.tables import table

    rule_sets = _rule_sets(rule_names)
    target = _target(directory, force)
    where = paths.data_dir(data)
    exported = []
    for rs in rule_sets:
        try:
            loaded = table.load(rs, where)
        except table.TableMissing:
            raise exits.BadInput(
                f"no {rs.name} table in {where}: `pentadice solve --rules {rs.name}` makes it"
            ) from None
        exported.append(app_tables.export(rs, loaded.values))
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    except OSError as e:
        raise exits.Failure(f"cannot write beside {target}: {e.strerror or e}") from None
    try:
        sizes = write_app(temporary, exported, STATIC)
        os.chmod(temporary, 0o755)
        _put_in_place(temporary, target)
    except OSError as e:
        raise exits.Failure(f"cannot write {target}: {e.strerror or e}") from None
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    total = sum(sizes.values())
    tables = ", ".join(f"{e.name} {(len(e.values) + len(e.json_bytes)) / 2**20:.1f} MiB" for e in exported)
    click.echo(f"Wrote the offline app to {target}: {len(sizes)} files, {total / 2**20:.1f} MiB (tables: {tables}).")
    click.echo("Serve the folder at the root of an HTTPS host; open it once, then it works offline.")


def _put_in_place(temporary: Path, target: Path) -> None:
    """``temporary`` renamed to ``target``; a ``target`` already there (empty, or ``--force``) is moved aside
    first and removed once the new folder is in place."""
    if not target.exists():
        temporary.rename(target)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
    os.rmdir(aside)
    target.rename(aside)
    try:
        temporary.rename(target)
    except OSError:
        aside.rename(target)  # the old app back where it was
        raise
    shutil.rmtree(aside, ignore_errors=True)
