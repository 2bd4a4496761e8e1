"""``GET /api/games/{id}/events``: a game's live updates, as Server-Sent Events (:mod:`pentadice.faces.web.live`).
Open to anyone who knows the game's id, like its view: the events carry its version, never the view nor a
secret; a screen reads the view (``GET /api/games/{id}``, with its seat's header) when the version changes."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from pentadice.faces.web import live, schemas
from pentadice.faces.web.apidoc import GAME_ERRORS
from pentadice.faces.web.bodies import ApiError
from pentadice.faces.web.guard import HEAD_SCOPE_KEY
from pentadice.faces.web.playing import read
from pentadice.faces.web.responses import JSON
from pentadice.faces.web.state import State

EVENT_STREAM = "text/event-stream"
BUSY_RETRY_SECONDS = 5  # a stream refused because too many are open (on the server, the address, the game)
STREAM_HEADERS = {"x-accel-buffering": "no"}  # a proxy (nginx) passes each event on at once

router = APIRouter()


def _json(doc: dict) -> dict:
    """A refusal's documentation, its body JSON (the route's own answer is the event stream)."""
    model = doc["model"].__name__
    return {"description": doc["description"], "content": {JSON: {"schema": {"$ref": f"#/components/schemas/{model}"}}}}


class EventStream(StreamingResponse):
    """A stream of Server-Sent Events (what the document says the route answers)."""

    media_type = EVENT_STREAM


@router.get(
    "/api/games/{game_id}/events",
    response_class=EventStream,
    responses={
        200: {
            "content": {EVENT_STREAM: {"schema": {"type": "string", "description": "Server-Sent Events."}}},
            "description": 'The event stream: `event: game` and `data: {"version": N, "over": false}` at '
            "once and at each move; a `: ping` comment every 15 seconds of quiet.",
        },
        **{k: _json(v) for k, v in GAME_ERRORS.items() if k in (404, 422, 500)},
        429: _json(
            {
                "model": schemas.ErrorOut,
                "description": f"This client address has {live.CLIENT_STREAMS} streams open, this game "
                f"{live.GAME_STREAMS}, or this game {live.CLIENT_GAME_STREAMS} from this address, the most each "
                "may; with a Retry-After.",
            }
        ),
        503: _json(
            {
                "model": schemas.ErrorOut,
                "description": "Too many streams are open on this server, or the games database cannot be "
                "reached; with a Retry-After.",
            }
        ),
    },
    tags=["games"],
)
async def events(game_id: str, request: Request, state: State) -> Response:
    """The game's changes as Server-Sent Events: on connecting and at each move written (by any server process),
    `event: game` with `data: {"version": N, "over": false}`; a `: ping` comment every 15 seconds of quiet.
    429 with a Retry-After when this client address (the connection's; an IPv6 client's /64) has 64 streams
    open, this game 32 (a six-seat table with a few tabs each, and screens watching), or this game 16 from this
    address; 503 when 512 are open in this process."""
    watching = state.live
    if request.scope.get(HEAD_SCOPE_KEY):  # HEAD: the headers of the stream, no stream
        await read(state, game_id, lambda held: None)
        if watching.full:
            raise ApiError(503, "too many live streams are open on this server: try again",
                           headers={"retry-after": str(BUSY_RETRY_SECONDS)})  # fmt: skip
        return Response(b"", media_type=EVENT_STREAM, headers=STREAM_HEADERS)
    client = live.client_key(request.client.host if request.client is not None else "")
    try:  # before the game is read: a refusal costs the server nothing (a flood of them included)
        place = watching.take(client, game_id)  # given back when the stream ends, or is dropped unstarted
    except live.Refused as e:
        raise ApiError(e.status, e.message, headers={"retry-after": str(BUSY_RETRY_SECONDS)}) from None
    try:
        version, over = await read(state, game_id, lambda held: (held.stored.version, held.game.over))
    except BaseException:
        place.give_back()
        raise

    async def stream():
        watcher = watching.watch(game_id, version, over)
        try:
            async for chunk in watching.stream(watcher):
                yield chunk
        finally:
            watching.leave(game_id, watcher)
            place.give_back()

    return StreamingResponse(stream(), media_type=EVENT_STREAM, headers=STREAM_HEADERS)
