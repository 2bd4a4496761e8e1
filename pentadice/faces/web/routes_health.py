"""``GET /api/health``: the server is up, with the rule sets it serves, the games in its database and the
preparation of their tables (503 while the database cannot be reached)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from pentadice.faces.web import schemas
from pentadice.faces.web.responses import answer
from pentadice.faces.web.state import State

router = APIRouter()


@router.get("/api/health", responses={200: {"model": schemas.Health}}, tags=["server"])
async def health(state: State) -> Response:
    """The server is up: the rule sets it serves, how many games it holds, and how far the tables its games
    read are prepared (each rule set's: ready, the win player and the chances, the table being built), and
    the base of a shared game's seat links (`share_base`: the network URL; null on loopback only)."""
    store = state.store
    counts = store.counted()
    if counts is None:  # counted at most once in COUNT_SECONDS: health is polled, and must answer under load
        counts = await run_in_threadpool(store.count)
    prep = state.preparation
    return answer(
        {
            "status": "ok",
            "rules": list(state.advisors),
            "games": counts["unfinished"] + counts["finished"],
            "finished_games": counts["finished"],
            "kept": store.policy,
            "database": store.records.db.kind,
            "preparing": prep.preparing() if prep is not None else False,
            "tables": {name: prep.status(name) for name in state.advisors} if prep is not None else None,
            "share_base": state.share_base,
        }
    )
