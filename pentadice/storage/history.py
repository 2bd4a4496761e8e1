"""The history of finished games and each player's statistics, read from the games database: what ``GET
/api/history``, the page's history and ``pentadice history`` show, and ``--out FILE.parquet`` exports.

The proficiency measure is the review's mean loss per decision (points of expected final score given up, 0 for
the best move; below :data:`~pentadice.players.review.EXPERT_MEAN_LOSS`, 0.2, is expert play). Statistics are
per player name and rule set: a Penta score and a Maxi Yatzy score are not added up. Names are told apart as a
game tells its players apart (:func:`pentadice.players.seats.name_key`: ``Ana`` and ``Ana`` with a zero-width
space are one player), grouped on this side of the query so that no database needs a migration or a function of
its own for it; a player's games are found by that key too.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from datetime import UTC, datetime

import sqlalchemy as sa

from pentadice.storage.database import Database
from pentadice.storage.schema import READS, games, results

EXPERT_MEAN_LOSS = 0.2  # the review's (pentadice.players.review), repeated here so that storage imports no engine
PAGE = 50  # finished games listed at once by default
MOST = 1000  # and at most


def _when(value: datetime | None) -> str | None:
    """A time as ISO 8601 in UTC (SQLite gives it back without its zone)."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.isoformat() + "Z"
    return value.isoformat().replace("+00:00", "Z")


@functools.lru_cache(maxsize=1 << 16)
def _key(name: str) -> str:
    """A name's key (:func:`pentadice.players.seats.name_key`), kept for the names met again."""
    from pentadice.players.seats import name_key

    return name_key(name)


def _names_like(conn: sa.Connection, name: str) -> list[str]:
    """The stored spellings of ``name``: every player name with its key (one small query of the distinct
    names)."""
    wanted = _key(name)
    stored = conn.execute(sa.select(results.c.name).distinct()).scalars()
    return [n for n in stored if isinstance(n, str) and _key(n) == wanted]


FINITE_MOST = 1.7976931348623157e308  # the largest finite double: SQLite's infinity is above it


def _readable(db: Database, table: sa.Table) -> list:
    """Conditions that leave out the rows of ``table`` holding a value not of its column's type (SQLite keeps
    whatever a column is given: a row written by another program, a damaged file): the history and statistics
    show the other rows without it. PostgreSQL holds each column to its type itself: nothing to leave out."""
    if db.kind != "sqlite":
        return []
    out = []
    for column in table.c:
        kind = sa.func.typeof(column)
        if isinstance(column.type, sa.DateTime):
            fits = sa.and_(kind == "text", sa.func.datetime(column).is_not(None))
        elif isinstance(column.type, sa.Integer | sa.Boolean):
            fits = kind == "integer"
        elif isinstance(column.type, sa.Float):  # a finite number: JSON has no infinity
            fits = sa.and_(kind.in_(("real", "integer")), sa.func.abs(column) <= FINITE_MOST)
        elif column.name in READS.get(table.name, ()):  # text: its bytes that are not UTF-8 read as U+FFFD,
            fits = kind == "text"  # but a BLOB is no text (a game's save, which this does not read, may be)
        else:
            continue
        out.append(sa.or_(column.is_(None), fits) if column.nullable else fits)
    return out


def _mean_loss(decisions: int | None, loss: float | None) -> float | None:
    return loss / decisions if decisions and loss is not None else None


def finished_games(
    db: Database, limit: int = PAGE, offset: int = 0, player: str | None = None, rules: str | None = None
) -> dict:
    """The finished games, the latest first: ``{"games": [...], "total": n}``; each with its id (its review is
    ``GET /api/games/{id}/review``), rule set, where it was played, start and end, players (score, winner,
    decisions, mean loss) and winners. ``player``: only games with a player of that name."""
    limit = max(1, min(limit, MOST))
    where = [games.c.finished_at.is_not(None), *_readable(db, games)]
    if rules is not None:
        where.append(games.c.rules == rules)
    with db.begin() as conn:
        if player is not None:
            spelt = _names_like(conn, player)
            where.append(games.c.id.in_(sa.select(results.c.game_id).where(results.c.name.in_(spelt))))
        total = conn.execute(sa.select(sa.func.count()).select_from(games).where(*where)).scalar_one()
        rows = conn.execute(
            sa.select(games.c.id, games.c.rules, games.c.source, games.c.created_at, games.c.finished_at)
            .where(*where)
            .order_by(games.c.finished_at.desc(), games.c.id)
            .limit(limit)
            .offset(max(0, offset))
        ).all()
        ids = [r.id for r in rows]
        seats = conn.execute(
            sa.select(results)
            .where(results.c.game_id.in_(ids), *_readable(db, results))
            .order_by(results.c.game_id, results.c.seat)
        ).all() if ids else []  # fmt: skip
    players: dict[str, list[dict]] = {}
    for s in seats:
        players.setdefault(s.game_id, []).append(
            {
                "name": s.name,
                "computer": s.computer,
                "strategy": s.strategy,
                "score": s.score,
                "winner": s.winner,
                "decisions": s.decisions,
                "mean_loss": _mean_loss(s.decisions, s.loss),
            }
        )
    out = []
    for r in rows:
        seated = players.get(r.id, [])
        out.append(
            {
                "id": r.id,
                "rules": r.rules,
                "source": r.source,
                "started": _when(r.created_at),
                "finished": _when(r.finished_at),
                "players": seated,
                "winners": [p["name"] for p in seated if p["winner"]],
            }
        )
    return {"games": out, "total": total}


def player_stats(db: Database, name: str | None = None, rules: str | None = None) -> list[dict]:
    """Per player (names told apart by their key, see the module) and rule set: games, wins, mean and best
    score, decisions reviewed, mean loss per decision and whether that is expert play, the last game; the most
    games first. A player's name is the spelling of most of their games. ``name``: that player alone."""
    r = results.c
    where = [*_readable(db, results), *([] if rules is None else [r.rules == rules])]
    reviewed = sa.case((r.decisions.is_not(None), r.decisions), else_=0)
    query = (
        sa.select(
            r.name,
            r.rules,
            sa.func.min(sa.case((r.computer, 1), else_=0)).label("computer"),
            sa.func.count().label("games"),
            sa.func.sum(sa.case((r.winner, 1), else_=0)).label("wins"),
            sa.func.sum(r.score).label("total_score"),
            sa.func.max(r.score).label("best_score"),
            sa.func.sum(reviewed).label("decisions"),
            sa.func.sum(sa.case((r.decisions.is_not(None), r.loss), else_=0.0)).label("loss"),
            sa.func.max(r.finished_at).label("last"),
        )
        .group_by(r.name, r.rules)
        .order_by(sa.func.count().desc(), r.name, r.rules)
    )
    with db.begin() as conn:
        if name is not None:
            where.append(r.name.in_(_names_like(conn, name)))
        rows = conn.execute(query.where(*where)).all()
    return _grouped(rows)


def _grouped(rows: Iterable) -> list[dict]:
    """The statistics of ``rows`` (one a stored spelling and rule set, the most games first) added up per
    player key and rule set."""
    groups: dict[tuple[str, str], dict] = {}
    for row in rows:
        key = (_key(row.name), row.rules)
        g = groups.get(key)
        if g is None:  # the first spelling met has the most games: the player's name
            g = groups[key] = {"name": row.name, "rules": row.rules, "computer": True, "games": 0, "wins": 0}
            g.update(total=0, best_score=None, decisions=0, loss=0.0, last=None)
        g["computer"] = g["computer"] and bool(row.computer)
        g["games"] += int(row.games)
        g["wins"] += int(row.wins or 0)
        g["total"] += int(row.total_score or 0)
        g["best_score"] = int(row.best_score) if g["best_score"] is None else max(g["best_score"], int(row.best_score))
        g["decisions"] += int(row.decisions or 0)
        g["loss"] += float(row.loss or 0.0)
        if row.last is not None and (g["last"] is None or row.last > g["last"]):
            g["last"] = row.last
    out = []
    for g in groups.values():
        mean = _mean_loss(g["decisions"], g["loss"])
        out.append(
            {
                "name": g["name"],
                "rules": g["rules"],
                "computer": g["computer"],
                "games": g["games"],
                "wins": g["wins"],
                "mean_score": g["total"] / g["games"],
                "best_score": g["best_score"],
                "decisions": g["decisions"],
                "mean_loss": mean,
                "expert": mean is not None and mean < EXPERT_MEAN_LOSS,
                "last": _when(g["last"]),
            }
        )
    out.sort(key=lambda s: (-s["games"], s["name"], s["rules"]))
    return out


def players_page(db: Database, rules: str | None = None, limit: int = PAGE, offset: int = 0) -> dict:
    """A page of :func:`player_stats` (``limit`` from ``offset``, at most :data:`MOST`): ``{"players": [...],
    "total": n}``, ``total`` the players (and rule sets) in all."""
    every = player_stats(db, None, rules)
    limit = max(1, min(limit, MOST))
    offset = max(0, offset)
    return {"players": every[offset : offset + limit], "total": len(every)}


def player_series(db: Database, name: str, rules: str | None = None, limit: int = MOST) -> list[dict]:
    """A player's finished games in the order played: when, rule set, score, won, decisions and mean loss per
    decision (how their play changes over time)."""
    r = results.c
    where = [*_readable(db, results), *([r.rules == rules] if rules is not None else [])]
    with db.begin() as conn:
        where.append(r.name.in_(_names_like(conn, name)))
        rows = conn.execute(
            sa.select(r.game_id, r.rules, r.finished_at, r.score, r.winner, r.decisions, r.loss)
            .where(*where)
            .order_by(r.finished_at.desc(), r.game_id)
            .limit(max(1, min(limit, MOST)))
        ).all()
    return [
        {
            "id": row.game_id,
            "rules": row.rules,
            "finished": _when(row.finished_at),
            "score": row.score,
            "winner": row.winner,
            "decisions": row.decisions,
            "mean_loss": _mean_loss(row.decisions, row.loss),
        }
        for row in reversed(rows)
    ]


def export(db: Database, path: str | os.PathLike[str]) -> int:
    """Every finished player's result, one row each with its game's rule set, source and times, written to a
    Parquet file at ``path`` (atomically: a reader never sees half of it); the rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pentadice.tables.atomic import write_file

    r, g = results.c, games.c
    with db.begin() as conn:
        rows = conn.execute(
            sa.select(
                *(r.game_id, g.rules, g.source, g.created_at, r.finished_at, r.seat, r.name, r.computer),
                *(r.strategy, r.score, r.winner, r.decisions, r.loss),
            )
            .join(games, games.c.id == r.game_id)
            .where(*_readable(db, results), *_readable(db, games))
            .order_by(r.finished_at, r.game_id, r.seat)
        ).all()

    columns = {
        "game_id": pa.array([x.game_id for x in rows], pa.string()),
        "rules": pa.array([x.rules for x in rows], pa.string()),
        "source": pa.array([x.source for x in rows], pa.string()),
        "started": pa.array([_naive_utc(x.created_at) for x in rows], pa.timestamp("us", tz="UTC")),
        "finished": pa.array([_naive_utc(x.finished_at) for x in rows], pa.timestamp("us", tz="UTC")),
        "seat": pa.array([x.seat for x in rows], pa.int16()),
        "name": pa.array([x.name for x in rows], pa.string()),
        "computer": pa.array([x.computer for x in rows], pa.bool_()),
        "strategy": pa.array([x.strategy for x in rows], pa.string()),
        "score": pa.array([x.score for x in rows], pa.int32()),
        "winner": pa.array([x.winner for x in rows], pa.bool_()),
        "decisions": pa.array([x.decisions for x in rows], pa.int32()),
        "mean_loss": pa.array([_mean_loss(x.decisions, x.loss) for x in rows], pa.float64()),
    }
    table = pa.table(columns).replace_schema_metadata({b"pentadice": EXPORT_FORMAT.encode()})
    target = export_target(path)
    if db.kind == "sqlite":
        from pentadice.storage.database import side_file, sqlite_file
        from pentadice.tables.atomic import TargetError

        assert target.path is not None
        side = side_file(target.path, sqlite_file(db.engine.url)[0])
        if side:
            raise TargetError(
                f"{os.fspath(path)} is the games database's {side} file, which SQLite reads, resets or removes with "
                "the database: give the export another name, e.g. games.parquet"
            )
    write_file(target, lambda f: pq.write_table(table, f))
    return len(rows)


EXPORT_FOOTER_MOST = 16 * 2**20  # an export's Parquet footer (its schema and row groups) is kilobytes
EXPORT_FORMAT = "pentadice-history/1"  # said in the Parquet file's metadata: a previous export, replaced
EXPORT_COLUMNS = ("game_id", "rules", "source", "started", "finished", "seat", "name", "computer", "strategy",
                  "score", "winner", "decisions", "mean_loss")  # fmt: skip


def is_history_export(path: str | os.PathLike[str]) -> bool:
    """Whether the existing file ``path`` is a previous :func:`export` (which may then be replaced): a Parquet
    file saying so in its metadata, or one of exactly its columns (written before it said so). Anything else,
    the games database itself included, is left alone."""
    try:
        with open(path, "rb") as fh:
            if fh.read(4) != b"PAR1":
                return False
            size = fh.seek(0, os.SEEK_END)
            if size < 12:
                return False
            fh.seek(size - 8)
            tail = fh.read(8)
    except OSError:
        return False
    footer = int.from_bytes(tail[:4], "little")
    if tail[4:] != b"PAR1" or footer > min(size - 12, EXPORT_FOOTER_MOST):
        return False  # not a whole Parquet file, or a footer no export has (read whole, it would take that memory)
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except (OSError, ValueError, pa.ArrowException):
        return False
    said = (schema.metadata or {}).get(b"pentadice", b"")
    return said.startswith(b"pentadice-history/") or (not said and tuple(schema.names) == EXPORT_COLUMNS)


def export_target(path: str | os.PathLike[str]):
    """Where :func:`export` writes ``path``, checked before any work: a new file, or a previous export;
    :class:`pentadice.tables.atomic.TargetError` naming the problem for anything else (an empty name, a
    directory, a file of another kind)."""
    from pentadice.support.paths import PathError, expand
    from pentadice.tables import atomic

    given = os.fspath(path)
    if not given.strip():
        raise atomic.TargetError("the file name is empty: give a file name, e.g. games.parquet")
    try:
        final = os.path.realpath(expand(given))
    except PathError as e:
        raise atomic.TargetError(str(e)) from None
    if os.path.isfile(final) and os.path.getsize(final) > 0 and not is_history_export(final):
        raise atomic.TargetError(
            f"{given} exists and is not an export of the history (a Parquet file `pentadice history --out` "
            "wrote): it is left alone; give another name, or remove it first"
        )
    return atomic.target(path, replaces=is_history_export)


def _naive_utc(value: datetime) -> datetime:
    """A time in UTC without its zone (what pyarrow's UTC timestamps take)."""
    return value if value.tzinfo is None else value.astimezone(UTC).replace(tzinfo=None)
