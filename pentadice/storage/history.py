"""The history of finished games and each player's statistics, read from the games database: what ``GET
/api/history``, the page's history and ``pentadice history`` show, and ``--out FILE.parquet`` exports.

The proficiency measure is the review's mean loss per decision (points of expected final score given up, 0 for
the best move; below :data:`~pentadice.players.review.EXPERT_MEAN_LOSS`, 0.2, is expert play). Statistics are
per player name and rule set: a Penta score and a Maxi Yatzy score are not added up.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

import sqlalchemy as sa

from pentadice.storage.database import Database
from pentadice.storage.schema import games, results

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


def _mean_loss(decisions: int | None, loss: float | None) -> float | None:
    return loss / decisions if decisions and loss is not None else None


def finished_games(
    db: Database, limit: int = PAGE, offset: int = 0, player: str | None = None, rules: str | None = None
) -> dict:
    """The finished games, the latest first: ``{"games": [...], "total": n}``; each with its id (its review is
    ``GET /api/games/{id}/review``), rule set, where it was played, start and end, players (score, winner,
    decisions, mean loss) and winners. ``player``: only games with a player of that name."""
    limit = max(1, min(limit, MOST))
    where = [games.c.finished_at.is_not(None)]
    if rules is not None:
        where.append(games.c.rules == rules)
    if player is not None:
        where.append(games.c.id.in_(sa.select(results.c.game_id).where(results.c.name == player)))
    with db.begin() as conn:
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
            sa.select(results).where(results.c.game_id.in_(ids)).order_by(results.c.game_id, results.c.seat)
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
    """Per player name and rule set: games, wins, mean and best score, decisions reviewed, mean loss per
    decision and whether that is expert play; the most games first."""
    r = results.c
    where = []
    if name is not None:
        where.append(r.name == name)
    if rules is not None:
        where.append(r.rules == rules)
    reviewed = sa.case((r.decisions.is_not(None), r.decisions), else_=0)
    query = (
        sa.select(
            r.name,
            r.rules,
            sa.func.min(sa.case((r.computer, 1), else_=0)).label("computer"),
            sa.func.count().label("games"),
            sa.func.sum(sa.case((r.winner, 1), else_=0)).label("wins"),
            sa.func.avg(r.score).label("mean_score"),
            sa.func.max(r.score).label("best_score"),
            sa.func.sum(reviewed).label("decisions"),
            sa.func.sum(sa.case((r.decisions.is_not(None), r.loss), else_=0.0)).label("loss"),
            sa.func.max(r.finished_at).label("last"),
        )
        .where(*where)
        .group_by(r.name, r.rules)
        .order_by(sa.func.count().desc(), r.name, r.rules)
    )
    with db.begin() as conn:
        rows = conn.execute(query).all()
    out = []
    for row in rows:
        mean = _mean_loss(int(row.decisions or 0), float(row.loss or 0.0))
        out.append(
            {
                "name": row.name,
                "rules": row.rules,
                "computer": bool(row.computer),
                "games": int(row.games),
                "wins": int(row.wins or 0),
                "mean_score": float(row.mean_score),
                "best_score": int(row.best_score),
                "decisions": int(row.decisions or 0),
                "mean_loss": mean,
                "expert": mean is not None and mean < EXPERT_MEAN_LOSS,
                "last": _when(row.last),
            }
        )
    return out


def player_series(db: Database, name: str, rules: str | None = None, limit: int = MOST) -> list[dict]:
    """A player's finished games in the order played: when, rule set, score, won, decisions and mean loss per
    decision (how their play changes over time)."""
    r = results.c
    where = [r.name == name] + ([r.rules == rules] if rules is not None else [])
    with db.begin() as conn:
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
    table = pa.table(columns)
    write_file(path, lambda f: pq.write_table(table, f))
    return len(rows)


def _naive_utc(value: datetime) -> datetime:
    """A time in UTC without its zone (what pyarrow's UTC timestamps take)."""
    return value if value.tzinfo is None else value.astimezone(UTC).replace(tzinfo=None)
