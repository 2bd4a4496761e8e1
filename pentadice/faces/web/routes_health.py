"""``GET /api/health``: the server is up, with the rule sets it serves and the games it holds."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from pentadice.faces.web import schemas
from pentadice.faces.web.responses import answer
from pentadice.faces.web.state import State

router = APIRouter()


@router.get("/api/health", responses={200: {"model": schemas.Health}}, tags=["server"])
async def health(state: State) -> Response:
    """The server is up: the rule sets it serves and how many games it holds."""
    store = state.store
    store.expire()
    return answer(
        {
            "status": "ok",
            "rules": list(state.advisors),
            "games": len(store),
            "max_games": store.max_games,
            "dropped": store.dropped,
            "dropped_when": store.dropped_text,
        }
    )
