"""The games a server plays, kept in the games database (:mod:`pentadice.storage`): each request reads its game
from there (the games used last are held in memory, checked against the database's version), a move is written
there in one transaction, and a request of this process waits for the one before it on the same game
(:meth:`GameStore.lock`); requests of other processes are told apart by the game's version (see
:meth:`pentadice.storage.games.GameRecords.commit`)."""

from __future__ import annotations

import asyncio
import time
import weakref
from dataclasses import dataclass

from pentadice.storage.games import GameRecords, Result, Stored, results_of

COUNT_SECONDS = 2.0  # /api/health's count of the games is at most this old


@dataclass
class Held:
    """A game read from the database with the advisor of its rule set."""

    stored: Stored
    advisor: object

    @property
    def game(self):
        return self.stored.game

    @property
    def game_id(self) -> str:
        return self.stored.game_id


class GameStore:
    """The games of :class:`~pentadice.storage.games.GameRecords` ``records``, with their advisors
    (``advisor_of(rule set name)``) and this process's lock of each game in use."""

    def __init__(self, records: GameRecords, advisor_of) -> None:
        self.records = records
        self.advisor_of = advisor_of
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._counted: tuple[float, dict[str, int]] | None = None

    @property
    def policy(self) -> str:
        """What is kept, and for how long (said with every unknown id)."""
        return self.records.policy

    def lock(self, game_id: str) -> asyncio.Lock:
        """The lock the requests of this process on game ``game_id`` take turns on (held while one is used)."""
        lock = self._locks.get(game_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[game_id] = lock
        return lock

    def add(self, game, advisor, seats: dict[int, str] | None = None) -> str:
        """Keep a new game, or a save posted to go on; its id. A save that is over already is kept without
        results: the history counts the games that finish here, each once. ``seats``: a shared game's, index ->
        the SHA-256 of the seat's secret."""
        return self.records.add(game, "web", seats=seats)

    def get(self, game_id: str) -> Held | None:
        """The game under ``game_id`` as the database has it (None: unknown, or removed); its advisor is None
        where its rule set is not served here (a game of another server or of ``play`` in the same database).
        :class:`~pentadice.storage.games.DamagedGame` if its record cannot be decoded (its save, undo steps or
        seats damaged in the database)."""
        stored = self.records.get(game_id)
        if stored is None:
            return None
        return Held(stored, self.advisor_of(stored.game.rules.name))

    def commit(self, held: Held, was_over: bool) -> bool:
        """Write a move played on ``held``: its results too if it ended the game, taken back if it was a coach
        game's undo of the last box; False if another process wrote the game first."""
        over = held.game.over
        finished = self.results(held.game, held.advisor) if over and not was_over else ()
        return self.records.commit(held.stored, finished, reopened=was_over and not over)

    def forget(self, game_id: str) -> None:
        self.records.forget(game_id)

    def counted(self) -> dict[str, int] | None:
        """The games counted less than :data:`COUNT_SECONDS` ago, else None (:meth:`count` them)."""
        if self._counted is not None and time.monotonic() - self._counted[0] < COUNT_SECONDS:
            return self._counted[1]
        return None

    def count(self) -> dict[str, int]:
        """The games in the database, finished and not (blocking: in a worker thread)."""
        counts = self.records.count()
        self._counted = (time.monotonic(), counts)
        return counts

    @staticmethod
    def results(game, advisor) -> list[Result]:
        """The results of a finished game, each player's review included."""
        from pentadice.players.review import review

        return results_of(game, review(game, advisor))
