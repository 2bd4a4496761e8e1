"""The games, kept in the database (:class:`GameRecords`): a game is one row holding its whole save, written once
a move, only over the version the move was played on; the finished ones have a row a player in ``results``.

Each server process keeps the games it used last in memory, checked against the database's version before each
use (one small query): a move made through another process is read from the database, never missed.

A stored game that cannot be read back (its save, undo steps or seats damaged on disk) is a :class:`DamagedGame`,
never a JSON or decoding error: the other games go on.

Servers sharing a database agree on when an idle unfinished game is removed: each one that removes games says
its ``--keep-days`` in the ``expiry`` table at each removal, and a game is removed only once every server that
said so within :data:`CLAIM_DAYS` would remove it (the longest keep-days wins; a shorter one never takes
another server's games).
"""

from __future__ import annotations

import json
import logging
import math
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from pentadice.game import rules
from pentadice.storage import KEEP_DAYS
from pentadice.storage.database import Database, StorageError, said
from pentadice.storage.schema import expiry, games, results

log = logging.getLogger("pentadice.storage")
GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what an id can be (URL-safe base64); anything else is no game
CACHE_GAMES = 256  # games a process keeps in memory (the database holds them all)
EXPIRE_EVERY = 3600.0  # seconds between two removals of the idle unfinished games
KEEP_DAYS_MOST = 36500.0  # the longest keep-days a server may say (serve --keep-days' bound)
CLAIM_DAYS = 2.0  # a server's keep-days counts this long after its last removal (a stopped server's lapses)
DAMAGE = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError)  # what a bad record raises


class RulesNotHeld(Exception):
    """A stored game of a rule set this process does not know (house rules whose file was not given): not damaged,
    but not playable here (``args``: ``(game_id, rule set name)``). ``status``: 422."""

    status = 422

    def __init__(self, game_id: str, name: str) -> None:
        super().__init__(game_id, name)
        self.message = (
            f"game {game_id} is a game of the rule set {said(name, 40)!r}, which this server does not know: start "
            "the server with their house-rules file (--rules FILE) to go on with it"
        )

    def __str__(self) -> str:
        return self.message


class DamagedGame(Exception):
    """A game whose stored record cannot be read back: ``what`` (``save``, ``undo``, ``seats``, ``version``) is damaged
    in the database (``args``: ``(game_id, what)``). The message names the game and the part, never the stored
    text itself. ``status``: the HTTP status a request meeting it gets (the fault is the server's data, not the
    request's)."""

    status = 500

    def __init__(self, game_id: str, what: str) -> None:
        super().__init__(game_id, what)
        self.game_id = game_id
        self.what = what
        self.message = f"game {game_id}'s record is damaged ({what}): it cannot be read back"

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Result:
    """One player of a finished game, as the history keeps them."""

    seat: int
    name: str
    computer: bool
    strategy: str | None
    score: int
    winner: bool
    decisions: int | None  # of the review (None: not reviewed)
    loss: float | None  # total loss of those decisions, points


def results_of(game, review=None) -> list[Result]:
    """The results of a finished ``game`` (the engine's), with each player's decisions and total loss from
    ``review`` (:func:`pentadice.players.review.review` of it) where given."""
    winners = {p.name for p in game.winners()}
    out = []
    for seat, p in enumerate(game.players):
        reviewed = review.players[seat] if review is not None else None
        out.append(
            Result(
                seat,
                p.name,
                p.computer,
                p.strategy if p.computer else None,
                p.sheet.score(game.rules),
                p.name in winners,
                len(reviewed.decisions) if reviewed is not None else None,
                float(reviewed.total_loss) if reviewed is not None else None,
            )
        )
    return out


@dataclass
class Stored:
    """A game as read from the database: the engine's game and the version (moves written) it was read at."""

    game_id: str
    game: object
    version: int
    finished: bool
    seats: dict[int, str] | None = None  # a shared game's seats: index -> SHA-256 of its secret (None: unshared)


def _now() -> datetime:
    return datetime.now(UTC)


class GameRecords:
    """The games of database ``db``, the last :data:`CACHE_GAMES` used held in memory; ``game_class`` is the
    engine's :class:`~pentadice.players.engine.Game` (passed in: storage imports no engine)."""

    def __init__(
        self,
        db: Database,
        game_class,
        keep_days: float = KEEP_DAYS,
        cache_games: int = CACHE_GAMES,
        clock: Callable[[], float] = time.monotonic,
        expire: bool = True,
    ) -> None:
        self.db = db
        self.game_class = game_class
        self.keep_days = keep_days
        self.cache_games = cache_games
        self.clock = clock
        self._cache: OrderedDict[str, Stored] = OrderedDict()
        self._lock = threading.Lock()
        self._expired_at: float | None = None
        self._expire = expire  # False: a command that only records (play) leaves the removal to the server
        self._server = secrets.token_urlsafe(12)  # this process's name in the expiry table
        self._warned_days: float | None = None

    @property
    def policy(self) -> str:
        """What is kept, in words (said with every unknown id)."""
        return (
            f"finished games are kept; an unfinished game not played for {self.keep_days:g} days is removed; "
            "a game's save (GET /api/games/{id}/save) can be posted to /api/games to go on"
        )

    def add(
        self,
        game,
        source: str = "web",
        finished: Sequence[Result] = (),
        started: datetime | None = None,
        seats: dict[int, str] | None = None,
    ) -> str:
        """Keep a new game (``finished``: its results, if it is over already; ``started``: when it began, if
        before now; ``seats``: a shared game's seats, index -> the SHA-256 of its secret); its new id (128
        random bits)."""
        self.expire_now_and_then()
        game_id = secrets.token_urlsafe(16)
        now = _now()
        with self.db.begin(write=True) as conn:
            conn.execute(
                games.insert().values(
                    id=game_id,
                    rules=game.rules.name,
                    created_at=started or now,
                    updated_at=now,
                    finished_at=now if finished else None,
                    version=0,
                    coach=bool(game.coach),
                    source=source,
                    save=game.to_json(),
                    undo=_undo_text(game),
                    seats=_seats_text(seats),
                )
            )
            _insert_results(conn, game_id, game.rules.name, now, finished)
        self._remember(Stored(game_id, game, 0, bool(finished), dict(seats) if seats is not None else None))
        return game_id

    def get(self, game_id: str) -> Stored | None:
        """The game under ``game_id`` as the database has it now (None: no such game)."""
        if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
            return None
        self.expire_now_and_then()
        with self.db.begin() as conn:
            version = conn.execute(sa.select(games.c.version).where(games.c.id == game_id)).scalar_one_or_none()
            if version is None:
                self.forget(game_id)
                return None
            if not isinstance(version, int) or isinstance(version, bool) or version < 0:
                raise DamagedGame(game_id, "version")  # SQLite keeps whatever a column is given
            with self._lock:
                held = self._cache.get(game_id)
                if held is not None and held.version == version:
                    self._cache.move_to_end(game_id)
                    return held
            columns = (games.c.save, games.c.undo, games.c.version, games.c.finished_at, games.c.seats)
            row = conn.execute(sa.select(*columns).where(games.c.id == game_id)).one_or_none()
        if row is None:
            return None
        game, seats = self._decoded(game_id, row)
        return self._remember(Stored(game_id, game, row.version, row.finished_at is not None, seats))

    def _decoded(self, game_id: str, row) -> tuple[object, dict[int, str] | None]:
        """The engine's game and the seats of a stored row; :class:`DamagedGame` naming the part that cannot be
        read back."""
        if not isinstance(row.save, str):
            raise DamagedGame(game_id, "save")
        name = _rules_named(row.save)
        if name is not None and name not in rules.REGISTRY:
            raise RulesNotHeld(game_id, name)
        try:
            game = self.game_class.from_json(row.save)
        except DAMAGE:
            raise DamagedGame(game_id, "save") from None
        if row.undo:
            try:
                steps = json.loads(row.undo) if isinstance(row.undo, str) else None
                if not isinstance(steps, list):
                    raise ValueError("not a list")
                game.load_undo(steps)
            except DAMAGE:
                raise DamagedGame(game_id, "undo") from None
        return game, _seats_of(game_id, row.seats)

    def versions(self, game_ids: Sequence[str]) -> dict[str, tuple[int, bool]]:
        """The version (moves written) of each of ``game_ids`` as the database has it now, and whether the
        game is finished: one small query, however many games (what the live updates poll). A game not there
        (removed) is left out."""
        wanted = [g for g in game_ids if isinstance(g, str) and GAME_ID.fullmatch(g)]
        if not wanted:
            return {}
        query = sa.select(games.c.id, games.c.version, games.c.finished_at).where(games.c.id.in_(wanted))
        with self.db.begin() as conn:
            return {row.id: (row.version, row.finished_at is not None) for row in conn.execute(query)}

    def commit(self, held: Stored, finished: Sequence[Result] = (), reopened: bool = False) -> bool:
        """Write ``held``'s game (a move played on it) over the version it was read at: with ``finished``, the
        results of the move that ended it; ``reopened``, a coach game's undo of its last box, its results taken
        back. False, the game forgotten here, if another request wrote first (read it again and replay);
        StorageError if the database fails (the game forgotten here too: the database still has it as before)."""
        now = _now()
        done = bool(finished)
        try:
            with self.db.begin(write=True) as conn:
                ended = {"finished_at": now} if done else {"finished_at": None} if reopened else {}
                written = conn.execute(
                    games.update()
                    .where(games.c.id == held.game_id, games.c.version == held.version)
                    .values(
                        version=held.version + 1,
                        updated_at=now,
                        save=held.game.to_json(),
                        undo=_undo_text(held.game),
                        **ended,
                    )
                ).rowcount
                if written != 1:
                    self.forget(held.game_id)
                    return False
                if reopened or done:
                    conn.execute(results.delete().where(results.c.game_id == held.game_id))
                if done:
                    _insert_results(conn, held.game_id, held.game.rules.name, now, finished)
        except BaseException:
            self.forget(held.game_id)
            raise
        held.version += 1
        held.finished = done or (held.finished and not reopened)
        return True

    def forget(self, game_id: str) -> None:
        """Drop the game from this process's memory (the next use reads it from the database)."""
        with self._lock:
            self._cache.pop(game_id, None)

    def _remember(self, held: Stored) -> Stored:
        with self._lock:
            self._cache[held.game_id] = held
            self._cache.move_to_end(held.game_id)
            while len(self._cache) > self.cache_games:
                self._cache.popitem(last=False)
        return held

    def count(self) -> dict[str, int]:
        """Games in the database: ``unfinished`` and ``finished``."""
        with self.db.begin() as conn:
            rows = conn.execute(
                sa.select(games.c.finished_at.is_(None), sa.func.count()).group_by(games.c.finished_at.is_(None))
            ).all()
        counts = {bool(open_): n for open_, n in rows}
        return {"unfinished": counts.get(True, 0), "finished": counts.get(False, 0)}

    def expire(self) -> int:
        """Remove the unfinished games not played for :attr:`keep_days`, or for the longer keep-days another
        server sharing the database said within :data:`CLAIM_DAYS` (this one's said too, in the same
        transaction); how many were removed."""
        now = _now()
        with self.db.begin(write=True) as conn:
            days = self._agreed_days(conn, now)
            cutoff = now - timedelta(days=days)
            removed = conn.execute(
                games.delete().where(games.c.finished_at.is_(None), games.c.updated_at < cutoff)
            ).rowcount
        return removed

    def _agreed_days(self, conn: sa.Connection, now: datetime) -> float:
        """Say this server's keep-days in the ``expiry`` table, forget what stopped servers said, and return the
        longest keep-days said within :data:`CLAIM_DAYS` (logged when it is not this server's)."""
        said = conn.execute(
            expiry.update().where(expiry.c.server == self._server).values(keep_days=self.keep_days, seen_at=now)
        ).rowcount
        if not said:
            conn.execute(expiry.insert().values(server=self._server, keep_days=self.keep_days, seen_at=now))
        lapsed = now - timedelta(days=CLAIM_DAYS)
        conn.execute(expiry.delete().where(expiry.c.seen_at < lapsed))
        stored = conn.execute(sa.select(sa.type_coerce(expiry.c.keep_days, sa.types.NullType()))).scalars().all()
        days = max(self.keep_days, *(d for d in map(_said_days, stored) if d is not None))
        if days != self.keep_days and days != self._warned_days:
            self._warned_days = days
            log.warning(
                "another server sharing the games database keeps unfinished games %g days: they are removed "
                "after %g days, not this server's %g (servers sharing a database agree; see docs/operating.md)",
                days,
                days,
                self.keep_days,
            )
        return days

    def release(self) -> None:
        """Withdraw this server's keep-days from the ``expiry`` table (a server stopping: its games' expiry is
        then the remaining servers' alone); a database that fails is left to lapse it after
        :data:`CLAIM_DAYS`."""
        try:
            with self.db.begin(write=True) as conn:
                conn.execute(expiry.delete().where(expiry.c.server == self._server))
        except StorageError as e:
            log.warning("withdrawing this server's keep-days failed: %s", e.message)

    def expire_now_and_then(self) -> None:
        """:meth:`expire`, at most once in :data:`EXPIRE_EVERY` seconds (not where ``expire`` was false)."""
        if not self._expire:
            return
        now = self.clock()
        if self._expired_at is None or now - self._expired_at >= EXPIRE_EVERY:
            self._expired_at = now
            try:
                self.expire()
            except StorageError as e:  # housekeeping: a database that cannot be written now still serves reads
                log.warning("removing the idle games failed: %s", e.message)


def _said_days(value: object) -> float | None:
    """A keep-days another server said, as stored (SQLite keeps whatever it is given): a number from 0 up to
    :data:`KEEP_DAYS_MOST`, or None for what no server says (text, bytes, a negative, a longer or an infinite
    number: a damaged row), which is left out rather than failing every removal or keeping games forever."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    days = float(value)
    return days if math.isfinite(days) and 0 <= days <= KEEP_DAYS_MOST else None


def _seats_of(game_id: str, text: object) -> dict[int, str] | None:
    """A shared game's stored seats (index -> SHA-256 of its secret); :class:`DamagedGame` if they are not
    that."""
    if text is None or text == "":
        return None
    try:
        data = json.loads(text) if isinstance(text, str) else None
        if not isinstance(data, dict):
            raise ValueError("not an object")
        seats = {}
        for k, v in data.items():
            if not (k.isascii() and k.isdigit() and len(k) <= 2 and isinstance(v, str) and len(v) <= 128):
                raise ValueError("not a seat")
            seats[int(k)] = v
    except DAMAGE:
        raise DamagedGame(game_id, "seats") from None
    return seats


def _seats_text(seats: dict[int, str] | None) -> str | None:
    return None if seats is None else json.dumps({str(k): v for k, v in sorted(seats.items())}, separators=(",", ":"))


def _undo_text(game) -> str | None:
    steps = game.undo_json() if game.coach else []
    return json.dumps(steps, separators=(",", ":")) if steps else None


def _insert_results(conn: sa.Connection, game_id: str, rules: str, when: datetime, rows: Sequence[Result]) -> None:
    if rows:
        conn.execute(
            results.insert(),
            [
                {
                    "game_id": game_id,
                    "seat": r.seat,
                    "name": r.name,
                    "computer": r.computer,
                    "strategy": r.strategy,
                    "rules": rules,
                    "finished_at": when,
                    "score": r.score,
                    "winner": r.winner,
                    "decisions": r.decisions,
                    "loss": r.loss,
                }
                for r in rows
            ],
        )


def _rules_named(save: str) -> str | None:
    """The rule set a stored save names, or None where it names none that can be read (the decoder then says
    what is damaged)."""
    try:
        data = json.loads(save)
    except (ValueError, RecursionError):
        return None
    name = data.get("rules") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None
