"""A game's record: its review (``GET /api/games/{id}/review``) and its save file (``GET .../save``); a save
file posted whole, reviewed (``POST /api/review``, nothing kept) or going on (``POST /api/games/resume``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from pentadice.faces.web import bodies, schemas
from pentadice.faces.web.apidoc import ERRORS, GAME_ERRORS, SAVE_FILE_BODY
from pentadice.faces.web.bodies import ApiError
from pentadice.faces.web.playing import read, started
from pentadice.faces.web.responses import JSON, answer, escaped
from pentadice.faces.web.routes_games import check_names
from pentadice.faces.web.state import State
from pentadice.players.engine import Game, GameError, save_text
from pentadice.support.inputs import InputError

router = APIRouter()


@router.get("/api/games/{game_id}/review", responses={200: {"model": schemas.ReviewOut}, **GAME_ERRORS}, tags=["games"])
async def review_game(game_id: str, state: State) -> Response:
    """Every decision of the game so far: the choice, the best option, the loss; per player totals."""
    return answer(await read(state, game_id, lambda held: _review(held.game, held.advisor)))


@router.get(
    "/api/games/{game_id}/save",
    responses={200: {"model": schemas.SaveOut}, **GAME_ERRORS},
    tags=["games"],
)
async def save(game_id: str, state: State) -> Response:
    """The game as a save file (`pentadice play --resume` reads it), without the dice generator's state:
    a game resumed from it rolls fresh dice."""
    text = await read(state, game_id, lambda held: held.game.to_json(rng=False))
    return Response(escaped(text.encode()), media_type=JSON)


@router.post(
    "/api/review",
    responses={200: {"model": schemas.ReviewOut}, **ERRORS},
    openapi_extra=SAVE_FILE_BODY,
    tags=["games"],
)
async def review_save(request: Request, state: State) -> Response:
    """The review of a saved game posted whole (nothing is kept)."""
    game = _save_file(await bodies.read(request, bodies.LARGE_LIMIT))
    return answer(await run_in_threadpool(_review, game, state.advisor_of(game.rules.name)))


@router.post(
    "/api/games/resume",
    status_code=201,
    responses={201: {"model": schemas.GameView}, **ERRORS},
    openapi_extra=SAVE_FILE_BODY,
    tags=["games"],
)
async def resume_game(request: Request, state: State) -> Response:
    """A saved game going on, posted as its file is, byte for byte (the page's upload): read as `play
    --resume` reads a save file. Answers its view, with its id."""
    game = _save_file(await bodies.read(request, bodies.LARGE_LIMIT))
    game.save_path = None  # a path on the player's machine: nothing to the server
    check_names(game)
    return await started(state, game, state.advisor_of(game.rules.name))


def _save_file(body: bytes) -> Game:
    """A save file posted whole, read by the one reader of saves (:func:`save_text`, :meth:`Game.from_json`:
    strict UTF-8, a leading byte-order mark dropped): 400 if it is not UTF-8 or not JSON, 422 if it is not
    a saved game or a damaged one."""
    try:
        text = save_text(body)
    except InputError as e:
        raise ApiError(400, str(e)) from None
    bodies.loads(text.encode())  # not JSON: 400
    try:
        return Game.from_json(text)
    except GameError as e:
        raise ApiError(422, str(e)) from None


def _review(game: Game, advisor) -> dict:
    from pentadice.players.review import review

    return review(game, advisor).as_dict()
