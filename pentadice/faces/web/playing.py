"""A game over HTTP: its view (the engine's, with the advice and the chances the page shows), a move played in a
worker thread and written to the games database (its watchers woken: :mod:`pentadice.faces.web.live`), and a
game made or loaded kept there (shared, with a secret a person's seat: :mod:`pentadice.faces.web.seats`)."""

from __future__ import annotations

import json
from collections.abc import Callable

from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from pentadice.advisor import chances
from pentadice.faces.web import seats
from pentadice.faces.web.bodies import ApiError
from pentadice.faces.web.responses import answer
from pentadice.faces.web.state import WebState
from pentadice.faces.web.store import Held
from pentadice.players.engine import Game

AUTO_COMMIT_SECONDS = 3.0  # a new game's countdown before the advisor's box is filled (GET /api/rules says it)


def view(state: WebState, game_id: str, held: Held, secret: str | None = None) -> dict:
    """The game's view with its id; the advice where a person is to move, the chances where at hand. A shared
    game's view says which seat the request's ``secret`` holds (``you``; null: a watcher), and gives the advice
    only to the device holding the seat to move."""
    game = held.game
    shared = held.stored.seats is not None
    you = seats.holder(held.stored.seats, secret)
    out = {"id": game_id, **game.view()}
    out.update(
        coach=game.coach,
        auto_commit_seconds=game.auto_commit_seconds,
        can_undo=game.can_undo,
        history=len(game.history),
        version=held.stored.version,
        shared=shared,
        you=you,
    )
    person_to_move = game.dice is not None and not game.over and not game.player.computer
    if shared and you != game.current:
        person_to_move = False  # the advice is the player's to see, on their own device
    out["advice"] = json.loads(state.cache.get(held.advisor, game.situation())) if person_to_move else None
    waiting = state.preparation.chances_waiting(game.rules.name) if state.preparation is not None else None
    if waiting is not None:  # the chances table is being built: said, never computed the slow way meanwhile
        out["chances"], out["chances_pending"], out["preparing"] = None, True, waiting
    else:
        out["chances"], out["chances_pending"] = known_chances(game, held.advisor)
        out["preparing"] = None
    return out


CONFLICT_TRIES = 5  # times a move is played again on the game as another process left it


async def act(
    state: WebState,
    game_id: str,
    move: Callable[[Held], dict | None],
    version: int | None = None,
    secret: str | None = None,
) -> Response:
    """``move(held)`` on the game read from the database, written back in one transaction: ``{"played": ..,
    "game": view}``. This process's requests on a game take turns; where another process wrote the game
    first, the move is played again on the game as it now is. ``version``: the game's version the client saw
    (its view's ``version``); a game moved on since is 409, so that of two requests for the same move one
    plays it and the other is refused, whichever process each reaches. ``secret``: the seat's secret the
    request carries (the view answered is that seat's). The game's watchers in this process are woken at once."""
    async with state.store.lock(game_id):

        def run() -> dict:
            for _ in range(CONFLICT_TRIES):
                held = state.held_of(game_id)
                if version is not None and held.stored.version != version:
                    raise ApiError(409, _stale(version, held.stored.version))
                was_over = held.game.over
                try:
                    played = move(held)
                    written = state.store.commit(held, was_over)
                except BaseException:
                    state.store.forget(game_id)  # the game in memory may be changed: read it again next time
                    raise
                if written:
                    out = {"played": played} if played is not None else {}
                    return {**out, "game": view(state, game_id, held, secret)}
            raise ApiError(409, "the game keeps changing under other requests: read it again and retry")

        out = await run_in_threadpool(run)
    if state.live is not None:
        state.live.changed(game_id, out["game"]["version"], out["game"]["over"])
    return answer(out)


async def read(state: WebState, game_id: str, use: Callable[[Held], object]) -> object:
    """``use(held)`` on the game read from the database, in a worker thread, this process's requests on it
    taking turns."""
    async with state.store.lock(game_id):
        return await run_in_threadpool(lambda: use(state.held_of(game_id)))


async def started(state: WebState, game: Game, advisor, shared: bool = False) -> Response:
    """A game just made or loaded, held from now on: 201 with its view and its place; 503 while the tables a
    ``win`` computer of it reads are being prepared (:func:`check_prepared`). ``shared``: a game played from
    several devices, a secret a person's seat, given in this answer only (``seats``; ``you``: the first
    person's seat, the creating device's)."""
    if game.coach and any(p.computer for p in game.players):
        raise ApiError(422, "a coach game follows real dice: its players are people, not the computer")
    if shared and game.coach:
        raise ApiError(422, 'a coach game ("dice": "manual") is played on one screen: it cannot be shared')
    given = seats.new_seats(game.players) if shared else None
    if given is not None and not given:
        raise ApiError(422, "a shared game needs a person's seat: every player here is the computer")
    check_prepared(state, game)

    def run() -> tuple[str, dict]:
        game_id = state.store.add(game, advisor, seats.digests(given) if given is not None else None)
        first = None if given is None else given[min(given)]
        return game_id, view(state, game_id, state.held_of(game_id), first)

    game_id, out = await run_in_threadpool(run)
    if given is not None:
        names = [p.name for p in game.players]
        out["seats"] = [{"seat": i, "name": names[i], "secret": secret} for i, secret in sorted(given.items())]
    return answer(out, 201, {"location": f"/api/games/{game_id}"})


RETRY_SECONDS = 5  # a 503's Retry-After while tables are prepared


def check_prepared(state: WebState, game: Game) -> None:
    """503, with the preparation's progress and a ``Retry-After``, when a ``win`` computer of ``game`` would
    read tables that are still being built (or that this server does not hold): a game never starts to wait
    mid-move for a table."""
    prep = state.preparation
    if prep is None or not any(p.computer and p.strategy == "win" for p in game.players):
        return
    name = game.rules.name
    waiting = prep.win_waiting(name)
    if waiting is not None:
        pct = round(100 * waiting.get("progress", 0.0))
        raise ApiError(
            503,
            f"the win player's tables of {name} are being prepared ({waiting['what']}, {pct} % of what is left): "
            f"start a game with a computer that plays to win once they are ready (GET /api/health says when)",
            {"preparing": waiting},
            {"retry-after": str(RETRY_SECONDS)},
        )
    missing = prep.win_missing(name)
    if missing is not None:
        raise ApiError(503, missing, {"preparing": None})


def person_to_act(game: Game) -> None:
    """409 unless a person is to move in the game."""
    if game.over:
        raise ApiError(409, "the game is over")
    if game.player.computer:
        raise ApiError(409, f"it is {game.player.name}'s turn, the computer's: POST .../computer plays it")


def known_chances(game: Game, advisor) -> tuple[list[float] | None, bool]:
    """Each player's chance of finishing first from the sheets as they stand and, during a turn, the dice
    showing (read from the chances table where it is held: a millisecond); else, if at hand (otherwise null,
    and pending: GET .../chances computes them and waits); null and not pending where they cannot be computed
    (see :mod:`pentadice.advisor.chances`)."""
    sheets = [p.sheet for p in game.players]
    try:
        held = chances.chances_of(advisor.rules, advisor.values)
        if held.table is not None:
            if game.dice is not None and not game.over and len(sheets) > 1:
                return held.during_turn(sheets, game.current, game.dice, game.rolls_left), False
            return held.known(sheets), False
        found = chances.known_chances(advisor.rules, advisor.values, sheets, queue=False)
    except (chances.ChancesUnavailable, ValueError):  # ValueError: a state no game reaches (a hand-made save)
        return None, False
    return found, found is None


def _stale(sent: int, stored: int) -> str:
    """Why a move carrying the view's version ``sent`` is refused by the game at version ``stored``."""
    if sent > stored:  # no view of this game ever had it: a client's own count, or a view of another game
        return (
            f"the move says version {sent}, but this game is at version {stored}: no view of it had that version; "
            "read it (GET /api/games/{id}) and play from its version"
        )
    return (
        f"the game has moved on since the view you played from (version {sent}, now {stored}): read it again "
        "(GET /api/games/{id})"
    )
