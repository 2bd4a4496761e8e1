"""The history of finished games and the players' statistics, read from the games database:
``GET /api/history`` (the finished games, the latest first, each with its review at ``GET /api/games/{id}/review``),
``GET /api/players`` (a page of them, per player and rule set: games, wins, mean and best score, mean loss a decision)
and ``GET /api/players/{name}`` (the same, with the player's games in the order played: the mean loss over time)."""

from __future__ import annotations

from fastapi import APIRouter, Query
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from pentadice.faces.web import schemas
from pentadice.faces.web.apidoc import ERRORS
from pentadice.faces.web.bodies import ApiError
from pentadice.faces.web.responses import answer
from pentadice.faces.web.state import State
from pentadice.game import rules
from pentadice.players.engine import GameError, valid_name
from pentadice.storage import history

router = APIRouter()


def _rules_of(name: str | None) -> str | None:
    if name is not None and name not in rules.REGISTRY:
        raise ApiError(422, f"unknown rule set {name[:40]!r}; known: {', '.join(rules.REGISTRY)}")
    return name


def _player_name(name: str | None) -> str | None:
    """A name asked for: one a game takes (:func:`valid_name`: printable, nothing invisible); 422 otherwise."""
    try:
        return None if name is None else valid_name(name)
    except GameError as e:
        raise ApiError(422, str(e)) from None


@router.get("/api/history", responses={200: {"model": schemas.HistoryOut}, **ERRORS}, tags=["history"])
async def finished_games(
    state: State,
    limit: int = Query(history.PAGE, ge=1, le=history.MOST),
    offset: int = Query(0, ge=0, le=10**9),
    player: str | None = Query(None, description="Only the games of a player of this name."),
    rules_name: str | None = Query(None, alias="rules", description="Only the games of this rule set."),
) -> Response:
    """The finished games, the latest first (``total``: how many match), each with its players, scores and
    winners; its review is ``GET /api/games/{id}/review``."""
    db = state.store.records.db
    found = await run_in_threadpool(
        history.finished_games, db, limit, offset, _player_name(player), _rules_of(rules_name)
    )
    return answer({**found, "expert_mean_loss": history.EXPERT_MEAN_LOSS})


@router.get("/api/players", responses={200: {"model": schemas.PlayersOut}, **ERRORS}, tags=["history"])
async def players(
    state: State,
    limit: int = Query(history.PAGE, ge=1, le=history.MOST),
    offset: int = Query(0, ge=0, le=10**9),
    rules_name: str | None = Query(None, alias="rules", description="Only this rule set."),
) -> Response:
    """Each player's statistics per rule set, the most games first, a page at a time as ``/api/history``'s
    (``total``: how many in all). Names that look alike (``Ana`` and ``Ana`` with a zero-width space) are one
    player, as in a game."""
    db = state.store.records.db
    found = await run_in_threadpool(history.players_page, db, _rules_of(rules_name), limit, offset)
    return answer({**found, "expert_mean_loss": history.EXPERT_MEAN_LOSS})


@router.get("/api/players/{name:path}", responses={200: {"model": schemas.PlayerOut}, **ERRORS}, tags=["history"])
async def player(
    name: str, state: State, rules_name: str | None = Query(None, alias="rules", description="Only this rule set.")
) -> Response:
    """One player name's statistics per rule set, and their finished games in the order played (score, won,
    mean loss per decision): how their play changes over time. 404 if no finished game has that name."""
    db = state.store.records.db
    name, chosen = _player_name(name), _rules_of(rules_name)

    def look() -> dict:
        return {
            "name": name,
            "stats": history.player_stats(db, name, chosen),
            "games": history.player_series(db, name, chosen),
        }

    found = await run_in_threadpool(look)
    if not found["stats"]:
        raise ApiError(404, f"no finished game has a player named {name[:40]!r}")
    return answer({**found, "expert_mean_loss": history.EXPERT_MEAN_LOSS})
