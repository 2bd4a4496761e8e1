"""``GET /api/health``: the server is up, with the rule sets it serves, the games it holds and the preparation
of their tables."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from pentadice.faces.web import schemas
from pentadice.faces.web.responses import answer
from pentadice.faces.web.state import State

router = APIRouter()


@router.get("/api/health", responses={200: {"model": schemas.Health}}, tags=["server"])
async def health(state: State) -> Response:
    """The server is up: the rule sets it serves, how many games it holds, and how far the tables its games
    read are prepared (each rule set's: ready, the win player and the chances, the table being built)."""
    store = state.store
    store.expire()
    prep = state.preparation
    return answer(
        {
            "status": "ok",
            "rules": list(state.advisors),
            "games": len(store),
            "max_games": store.max_games,
            "dropped": store.dropped,
            "dropped_when": store.dropped_text,
            "preparing": prep.preparing() if prep is not None else False,
            "tables": {name: prep.status(name) for name in state.advisors} if prep is not None else None,
        }
    )
