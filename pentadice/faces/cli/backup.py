"""``pentadice backup``: a copy of the games database that is safe to take while servers play on it (SQLite's
online backup: the games still in the WAL file included), written atomically; PostgreSQL's is ``pg_dump``."""

from __future__ import annotations

import click

from pentadice.faces.cli.options import DB_OPTION
from pentadice.support import exits


@click.command()
@DB_OPTION
@click.argument("out", metavar="OUT")
def backup(db: str | None, out: str) -> None:
    """Copy the games database to the file OUT, safely while servers and `play` use it (a plain copy of the file
    may miss the latest games). OUT is a new file or a previous backup: anything else is left alone. The copy
    is a games database itself: `pentadice history --db OUT` reads it, `pentadice serve --db OUT` goes on
    with it. For a PostgreSQL database, use pg_dump."""
    from pentadice.storage.backup import backup as copy
    from pentadice.storage.database import StorageError
    from pentadice.tables.atomic import TargetError

    if not out.strip():
        raise click.BadParameter("is empty: give a file name, e.g. games-backup.sqlite3", param_hint="'OUT'")
    try:
        done = copy(db, out)
    except StorageError as e:
        raise exits.Failure(e.message) from None
    except TargetError as e:
        raise exits.Failure(escaped(str(e))) from None
    except OSError as e:
        raise exits.Failure(escaped(f"cannot write {out}: {e.strerror or e}")) from None
    click.echo(
        escaped(
            f"Backed up {done.games:,} games ({done.finished:,} finished) of {done.source} to {done.target} "
            f"({done.size:,} bytes)"
        )
    )


def escaped(text: str) -> str:
    """A line naming paths as it may be printed: each control or bidirectional character written as its escape
    (``\\n``, ``\\x1b``), as the database's messages name them, so that a path is shown as it is."""
    from pentadice.storage.database import said

    return said(text, 1 << 16)
