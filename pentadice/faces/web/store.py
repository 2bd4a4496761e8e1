"""The games a server holds: in memory only, at most :data:`MAX_GAMES` (the least recently used dropped
first), each dropped after :data:`IDLE_SECONDS` without a request, under ids no one can guess."""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_GAMES = 1000
IDLE_SECONDS = 6 * 3600.0


@dataclass
class Held:
    """A game with the advisor of its rule set, the lock its requests take turns on, and when it was last used."""

    game: object
    advisor: object
    last_used: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class GameStore:
    """Games by id; :meth:`get` refreshes a game's place and time, and drops the games gone idle."""

    def __init__(
        self, clock: Callable[[], float], max_games: int = MAX_GAMES, idle_seconds: float = IDLE_SECONDS
    ) -> None:
        self.clock = clock
        self.max_games = max_games
        self.idle_seconds = idle_seconds
        self.games: OrderedDict[str, Held] = OrderedDict()
        self.dropped = 0  # games dropped so far (idle, or the least recently used beyond the cap)

    def __len__(self) -> int:
        return len(self.games)

    @property
    def dropped_text(self) -> str:
        """What happens to old games, in words (said with every unknown id)."""
        minutes = self.idle_seconds / 60
        return (
            f"a game not used for {minutes:g} minutes, or beyond the {self.max_games:,} most recently used, "
            "is dropped; a game's save (GET /api/games/{id}/save) can be posted to /api/games to go on"
        )

    def add(self, game: object, advisor: object) -> str:
        """Hold ``game``; returns its new id (128 random bits). The least recently used game goes when full."""
        self.expire()
        while len(self.games) >= self.max_games:
            self.games.popitem(last=False)
            self.dropped += 1
        game_id = secrets.token_urlsafe(16)
        self.games[game_id] = Held(game, advisor, self.clock())
        return game_id

    def get(self, game_id: str) -> Held | None:
        """The game under ``game_id``, now the most recently used; None if unknown, dropped or idle too long."""
        self.expire()
        held = self.games.get(game_id)
        if held is None:
            return None
        held.last_used = self.clock()
        self.games.move_to_end(game_id)
        return held

    def expire(self) -> None:
        """Drop the games idle for longer than :attr:`idle_seconds` (the oldest are first in line)."""
        cutoff = self.clock() - self.idle_seconds
        while self.games:
            game_id, held = next(iter(self.games.items()))
            if held.last_used > cutoff or held.lock.locked():
                return
            del self.games[game_id]
            self.dropped += 1
