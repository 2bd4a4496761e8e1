"""The HTTP API and the page: :func:`create_app` builds the ASGI application ``pentadice serve`` runs.

A thin front end (see ``docs/architecture.md`` and ``docs/api.md``): each handler reads its body strictly
(:mod:`pentadice.faces.web.bodies`), makes engine types of it, calls the engine or the advisor, and answers JSON.
Every refusal is ``{"error": ...}`` with a 4xx status: 400 a body that is not JSON, 403 a request another
site's page sent (but GET and HEAD), 404 an unknown game or path, 405 a wrong method, 408 a body that did not
arrive in time, 409 a move the game's state refuses (the engine's :class:`GameError`), 413 a body too large,
421 a ``Host`` not served (DNS rebinding), 422 a wrong field or value; the HTTP layer's own refusals
(:mod:`pentadice.faces.web.server`) are JSON too. Advisor work runs in worker threads (a game's requests one at a time,
under its lock), except a cached answer, which is sent at once. Nothing on disk is read or written because
of a request, but the page's own files.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import mimetypes
import time
from collections.abc import Callable, Iterable, Mapping
from email.utils import formatdate
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.routing import Match

from pentadice.advisor import chances
from pentadice.faces.web import bodies, schemas
from pentadice.faces.web.advising import MAX_BATCH, AdviceCache, batch_answers, situation_of
from pentadice.faces.web.bodies import ApiError
from pentadice.faces.web.store import IDLE_SECONDS, MAX_GAMES, GameStore
from pentadice.game import rules
from pentadice.game.moves import Keep, MoveError, Score
from pentadice.players import strategies
from pentadice.players.engine import (
    MAX_PLAYERS,
    Game,
    GameError,
    Player,
    check_auto_commit,
    parse_players,
    save_text,
)
from pentadice.support.inputs import InputError, json_kind

STATIC = Path(__file__).parent / "static"
AUTO_COMMIT_SECONDS = 3.0
JSON = "application/json"
SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; frame-ancestors 'none'; base-uri 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]
NO_STORE = (b"cache-control", b"no-store")
ADVISE_EXAMPLE = '{"dice": [..], "rolls_left": N, "sheet": {..}}'
NEW_GAME_FIELDS = ("players", "rules", "seed", "auto_commit", "dice", "save")
log = logging.getLogger("pentadice.faces.web")


def create_app(
    advisors: Mapping[str, object],
    *,
    static_dir: Path | None = STATIC,
    clock: Callable[[], float] = time.monotonic,
    max_games: int = MAX_GAMES,
    idle_seconds: float = IDLE_SECONDS,
    allowed_hosts: Iterable[str] | None = None,
) -> FastAPI:
    """The application serving ``advisors`` (rule set name -> :class:`~pentadice.advisor.Advisor`, loaded
    and compiled already), the page from ``static_dir`` (None or missing: the API alone), games held in memory,
    their idle time measured by ``clock``. ``allowed_hosts``: the names a request's ``Host`` may carry
    (:func:`pentadice.faces.web.server.allowed_hosts`; loopback addresses and the address the request arrived at are
    served too), others refused with 421 against DNS rebinding; None: any (a test client's)."""
    if not advisors:
        raise ValueError("serve at least one rule set")
    served = dict(advisors)
    default_rules = rules.DEFAULT_RULES if rules.DEFAULT_RULES in served else next(iter(served))
    store = GameStore(clock, max_games, idle_seconds)
    cache = AdviceCache()
    app = FastAPI(
        title="pentadice",
        summary="Penta and the Yahtzee family: the optimal advisor and games, over HTTP.",
        version=_version(),
        docs_url=None,  # the interactive pages load scripts from a CDN; the description is /openapi.json
        redoc_url=None,
    )
    app.state.store, app.state.cache, app.state.advisors = store, cache, served

    # Reading requests.

    def advisor_of(name: object):
        if name is None:
            return served[default_rules]
        if isinstance(name, str) and name in served:
            return served[name]
        if isinstance(name, str) and name in rules.REGISTRY:
            raise ApiError(422, f"the {name} rule set is not served here; served: {', '.join(served)}")
        raise ApiError(422, f"unknown rule set {bodies.short(name)}; served: {', '.join(served)}")

    def top_of(value: object) -> int | None:
        return None if value is None else bodies.whole(value, "top", 1, 1_000_000)

    def held_of(game_id: str):
        held = store.get(game_id)
        if held is None:
            raise ApiError(404, f"no such game {bodies.short(game_id)} ({store.dropped_text})")
        return held

    # Rendering answers.

    def view(game_id: str, held) -> dict:
        game = held.game
        out = {"id": game_id, **game.view()}
        out.update(
            coach=game.coach,
            auto_commit_seconds=game.auto_commit_seconds,
            can_undo=game.can_undo,
            history=len(game.history),
        )
        person_to_move = game.dice is not None and not game.over and not game.player.computer
        out["advice"] = json.loads(cache.get(held.advisor, game.situation())) if person_to_move else None
        out["chances"], out["chances_pending"] = _known_chances(game, held.advisor)
        return out

    async def act(game_id: str, move: Callable[[object], dict | None]) -> Response:
        """``move(held)`` on the game, its requests one at a time: ``{"played": .., "game": view}``."""
        held = held_of(game_id)
        async with held.lock:

            def run() -> dict:
                played = move(held)
                out = {"played": played} if played is not None else {}
                return {**out, "game": view(game_id, held)}

            return answer(await run_in_threadpool(run))

    def person_to_act(game: Game) -> None:
        if game.over:
            raise ApiError(409, "the game is over")
        if game.player.computer:
            raise ApiError(409, f"it is {game.player.name}'s turn, the computer's: POST .../computer plays it")

    # The API.

    errors = {
        400: {"model": schemas.ErrorOut, "description": "The body is not JSON."},
        403: {"model": schemas.ErrorOut, "description": "Sent by another site's page (Origin, Sec-Fetch-Site)."},
        408: {"model": schemas.ErrorOut, "description": "The body did not arrive in time."},
        413: {"model": schemas.ErrorOut, "description": "The body is too large."},
        422: {"model": schemas.ErrorOut, "description": "A wrong field or value."},
    }
    game_errors = {
        **errors,
        404: {"model": schemas.ErrorOut, "description": "No such game (unknown, or dropped)."},
        409: {"model": schemas.ErrorOut, "description": "The game's state refuses the move."},
    }

    def body_doc(model: type, example: object) -> dict:
        schema = {"$ref": f"#/components/schemas/{model.__name__}"}
        return {"requestBody": {"required": True, "content": {JSON: {"schema": schema, "example": example}}}}

    @app.get("/api/health", responses={200: {"model": schemas.Health}}, tags=["server"])
    async def health() -> Response:
        """The server is up: the rule sets it serves and how many games it holds."""
        store.expire()
        return answer(
            {
                "status": "ok",
                "rules": list(served),
                "games": len(store),
                "max_games": store.max_games,
                "dropped": store.dropped,
                "dropped_when": store.dropped_text,
            }
        )

    rules_answer = json.dumps({"rules": [_rules_of(rs) for rs in (a.rules for a in served.values())]}).encode()

    @app.get("/api/rules", responses={200: {"model": schemas.RulesOut}}, tags=["server"])
    async def rule_sets() -> Response:
        """The rule sets served: their boxes (ids, display names, sections), dice and rolls."""
        return Response(rules_answer, media_type=JSON)

    @app.post(
        "/api/advise",
        responses={200: {"model": schemas.AdviceOut}, **errors},
        openapi_extra=body_doc(schemas.AdviseIn, {"dice": [1, 1, 3, 4, 6], "rolls_left": 2, "sheet": {"ones": 3}}),
        tags=["advice"],
    )
    async def advise(request: Request) -> Response:
        """Every option of one situation with its expected final score: exactly `pentadice advise --json`."""
        body = await bodies.read(request, bodies.ADVISE_LIMIT)
        known = cache.by_body(body)
        if known is not None:
            return Response(known, media_type=JSON)
        data = bodies.loads(body)
        if not isinstance(data, dict):
            raise ApiError(422, f"the body must be a JSON object {ADVISE_EXAMPLE}")
        advisor = advisor_of(data.pop("rules", None))
        top = top_of(data.pop("top", None))
        situation = situation_of(advisor, data)
        key = cache.key(advisor, situation, top)
        found = cache.lookup(key)
        if found is None:
            found = await run_in_threadpool(cache.compute, key, advisor, situation, top)
        cache.remember_body(body, found)
        return Response(found, media_type=JSON)

    @app.post(
        "/api/advise/batch",
        responses={200: {"model": schemas.BatchOut}, **errors},
        openapi_extra=body_doc(schemas.BatchIn, {"items": [{"dice": [1, 1, 3, 4, 6]}, {"dice": [6, 6, 6, 6, 6]}]}),
        tags=["advice"],
    )
    async def advise_batch(request: Request) -> Response:
        """Many situations at once, as `advise --batch` answers them (no `why`); a bad item gets its error."""
        body = await bodies.read(request, bodies.LARGE_LIMIT)
        data = bodies.json_object(body, ("rules", "top", "items"), '{"items": [..]}', required=("items",))
        advisor = advisor_of(data.get("rules"))
        top = top_of(data.get("top"))
        items = data["items"]
        if not isinstance(items, list):
            raise ApiError(422, f"items must be a list of situations {ADVISE_EXAMPLE}")
        if len(items) > MAX_BATCH:
            raise ApiError(422, f"at most {MAX_BATCH:,} items in one batch, not {len(items):,}")
        results = await run_in_threadpool(batch_answers, advisor, items, top)
        return answer({"results": results})

    @app.post(
        "/api/games",
        status_code=201,
        responses={201: {"model": schemas.GameView}, **errors},
        openapi_extra=body_doc(schemas.NewGameIn, {"players": "Ana,cpu", "rules": "penta", "seed": 1}),
        tags=["games"],
    )
    async def new_game(request: Request) -> Response:
        """A new game, or a saved one going on (`save`); answers its view, with its id."""
        body = await bodies.read(request, bodies.LARGE_LIMIT)
        data = bodies.json_object(body, NEW_GAME_FIELDS, '{"players": "Ana,cpu", "rules": "penta"}')
        game, advisor = _saved_game(data) if "save" in data else _new_game(data)
        return await _started(game, advisor)

    async def _started(game: Game, advisor) -> Response:
        """A game just made or loaded, held from now on: 201 with its view and its place."""
        if game.coach and any(p.computer for p in game.players):
            raise ApiError(422, "a coach game follows real dice: its players are people, not the computer")
        game_id = store.add(game, advisor)
        out = await run_in_threadpool(view, game_id, store.get(game_id))
        return answer(out, 201, {"location": f"/api/games/{game_id}"})

    def _new_game(data: dict):
        advisor = advisor_of(data.get("rules"))
        seed = data.get("seed")
        if seed is not None:
            bodies.whole(seed, "seed", 0, 2**128 - 1)
        kind = data.get("dice", "random")
        if kind not in ("random", "manual"):
            raise ApiError(422, f'dice must be "random" or "manual" (a coach game), not {bodies.short(kind)}')
        try:
            seconds = check_auto_commit(data.get("auto_commit", AUTO_COMMIT_SECONDS))
            players = _players_of(data.get("players", "You,cpu"))
            return Game(advisor.rules, players, seed, seconds, coach=kind == "manual"), advisor
        except GameError as e:
            raise ApiError(422, str(e)) from None

    def _saved_game(data: dict):
        fixed = [f for f in ("players", "rules", "seed", "dice") if f in data]
        if fixed:
            raise ApiError(422, f"{', '.join(fixed)}: a saved game's players, rules and dice come from the save")
        if not isinstance(data["save"], dict):
            raise ApiError(422, "save must be a saved game: the JSON object of a save file")
        try:
            game = Game.from_json(json.dumps(data["save"]))
            if "auto_commit" in data:
                game.auto_commit_seconds = check_auto_commit(data["auto_commit"])
        except GameError as e:
            raise ApiError(422, str(e)) from None
        game.save_path = None  # a path on the player's machine: nothing to the server
        return game, advisor_of(game.rules.name)

    @app.get("/api/games/{game_id}", responses={200: {"model": schemas.GameView}, **game_errors}, tags=["games"])
    async def get_game(game_id: str) -> Response:
        """The game's view."""
        held = held_of(game_id)
        async with held.lock:
            return answer(await run_in_threadpool(view, game_id, held))

    @app.get(
        "/api/games/{game_id}/chances", responses={200: {"model": schemas.ChancesOut}, **game_errors}, tags=["games"]
    )
    async def get_chances(game_id: str) -> Response:
        """Each player's chance of finishing first from the sheets as they stand, waiting while they are
        computed (seconds early in a game; the game's own requests are not held up meanwhile)."""
        held = held_of(game_id)
        async with held.lock:
            sheets = [p.sheet for p in held.game.players]  # sheets are replaced, never edited: a snapshot
        out = await run_in_threadpool(_chances_answer, held.advisor.rules, held.advisor.values, sheets)
        return answer({"sheets": [s.as_dict(held.game.rules) for s in sheets], **out})

    @app.post(
        "/api/games/{game_id}/roll",
        responses={200: {"model": schemas.MoveOut}, **game_errors},
        openapi_extra=body_doc(schemas.RollIn, {"keep": [4, 4]}),
        tags=["games"],
    )
    async def roll(game_id: str, request: Request) -> Response:
        """Roll: the turn's first roll (`keep` empty), or keep `keep` and reroll the others. A coach game
        gives the faces rolled in `dice`."""
        data = bodies.json_object(await bodies.read(request, bodies.ACTION_LIMIT), ("keep", "dice"), '{"keep": []}')

        def move(held) -> dict:
            game = held.game
            keep = bodies.faces(data.get("keep", []), "keep", game.rules.dice)
            rolled = data.get("dice")
            if rolled is not None:
                if not game.coach:
                    raise ApiError(422, 'dice are given in coach games ("dice": "manual") only: this one rolls')
                rolled = bodies.faces(rolled, "dice", game.rules.dice)
            person_to_act(game)
            if game.dice is None and keep:
                raise ApiError(409, "there are no dice to keep before the turn's first roll")
            if game.coach and (game.dice is None or game.rolls_left > 0) and len(keep) < game.rules.dice:
                rolling = game.rules.dice - len(keep)  # a wrong count is a wrong value (422), not the game's state
                if rolled is None or len(rolled) != rolling:
                    got = "none" if rolled is None else f"{len(rolled)}"
                    raise ApiError(422, f"dice: a coach game takes the faces of the {rolling} dice rolled, not {got}")
            if game.dice is None:
                return {"player": game.player.name, "computer": False, "rolled": list(game.start_turn(rolled))}
            return game.play(Keep(tuple(keep)), held.advisor, rolled=rolled).as_dict()

        return await act(game_id, move)

    @app.post(
        "/api/games/{game_id}/score",
        responses={200: {"model": schemas.MoveOut}, **game_errors},
        openapi_extra=body_doc(schemas.ScoreIn, {"box": "fives"}),
        tags=["games"],
    )
    async def score(game_id: str, request: Request) -> Response:
        """Fill a box with the dice showing (`box`: its id, or its name as people type it)."""
        body = await bodies.read(request, bodies.ACTION_LIMIT)
        data = bodies.json_object(body, ("box",), '{"box": "fives"}', ["box"])

        def move(held) -> dict:
            game = held.game
            if not isinstance(data["box"], str):
                raise ApiError(422, f"box must be a box id, not {bodies.short(data['box'])}")
            try:
                box = game.rules.parse_box(data["box"])
            except ValueError as e:
                raise ApiError(422, str(e)) from None
            person_to_act(game)
            return game.play(Score(box), held.advisor).as_dict()

        return await act(game_id, move)

    @app.post(
        "/api/games/{game_id}/auto-commit", responses={200: {"model": schemas.MoveOut}, **game_errors}, tags=["games"]
    )
    async def auto_commit(game_id: str, request: Request) -> Response:
        """The countdown ran out: fill the advisor's box (the computer's choice). Only after a person's last roll."""
        await _empty_body(request)

        def move(held) -> dict:
            game = held.game
            person_to_act(game)
            if game.auto_commit_seconds is None:
                raise ApiError(409, "the auto-commit is off in this game")
            return game.auto_commit_played(held.advisor).as_dict()

        return await act(game_id, move)

    @app.post(
        "/api/games/{game_id}/computer", responses={200: {"model": schemas.MoveOut}, **game_errors}, tags=["games"]
    )
    async def computer(game_id: str, request: Request) -> Response:
        """One step of the computer player whose turn it is: its first roll, a keep or a box."""
        await _empty_body(request)

        def move(held) -> dict:
            game = held.game
            if game.over:
                raise ApiError(409, "the game is over")
            if not game.player.computer:
                raise ApiError(409, f"it is {game.player.name}'s turn, a person's: the computer does not play it")
            happened = game.advance(held.advisor, now=clock(), limit=1)
            if not happened:
                raise ApiError(409, "the computer has nothing to play")
            step = happened[0]
            if isinstance(step, tuple):  # ("rolled", player, dice): a turn's first roll
                return {"player": step[1], "computer": True, "rolled": list(step[2])}
            return step.as_dict()

        return await act(game_id, move)

    @app.post("/api/games/{game_id}/undo", responses={200: {"model": schemas.GameOut}, **game_errors}, tags=["games"])
    async def undo(game_id: str, request: Request) -> Response:
        """Coach games: take back the last step (a box, a keep with its roll, or a turn's first roll)."""
        await _empty_body(request)

        def move(held) -> None:
            held.game.undo()

        return await act(game_id, move)

    @app.get(
        "/api/games/{game_id}/review", responses={200: {"model": schemas.ReviewOut}, **game_errors}, tags=["games"]
    )
    async def review_game(game_id: str) -> Response:
        """Every decision of the game so far: the choice, the best option, the loss; per player totals."""
        held = held_of(game_id)
        async with held.lock:
            return answer(await run_in_threadpool(_review, held.game, held.advisor))

    @app.get(
        "/api/games/{game_id}/save",
        responses={200: {"model": schemas.SaveOut}, **game_errors},
        tags=["games"],
    )
    async def save(game_id: str) -> Response:
        """The game as a save file (`pentadice play --resume` reads it), without the dice generator's state:
        a game resumed from it rolls fresh dice."""
        held = held_of(game_id)
        async with held.lock:
            return Response(_escaped(held.game.to_json(rng=False).encode()), media_type=JSON)

    @app.post(
        "/api/review",
        responses={200: {"model": schemas.ReviewOut}, **errors},
        openapi_extra={
            "requestBody": {"required": True, "content": {JSON: {"schema": {"type": "object"}, "example": {}}}}
        },
        tags=["games"],
    )
    async def review_save(request: Request) -> Response:
        """The review of a saved game posted whole (nothing is kept)."""
        game = _save_file(await bodies.read(request, bodies.LARGE_LIMIT))
        return answer(await run_in_threadpool(_review, game, advisor_of(game.rules.name)))

    @app.post(
        "/api/games/resume",
        status_code=201,
        responses={201: {"model": schemas.GameView}, **errors},
        openapi_extra={
            "requestBody": {"required": True, "content": {JSON: {"schema": {"type": "object"}, "example": {}}}}
        },
        tags=["games"],
    )
    async def resume_game(request: Request) -> Response:
        """A saved game going on, posted as its file is, byte for byte (the page's upload): read as `play
        --resume` reads a save file. Answers its view, with its id."""
        game = _save_file(await bodies.read(request, bodies.LARGE_LIMIT))
        game.save_path = None  # a path on the player's machine: nothing to the server
        return await _started(game, advisor_of(game.rules.name))

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

    @app.get("/api/messages", responses={200: {"model": schemas.MessagesOut}, **errors}, tags=["server"])
    async def messages(request: Request, lang: str | None = None) -> Response:
        """The message catalogue the terminal speaks, for the page: msgid -> text in ``lang`` (``en``, ``id``;
        default: the browser's Accept-Language)."""
        from pentadice.support import i18n

        try:
            asked = request.headers.get("accept-language")
            code = i18n.check(lang) if lang is not None else i18n.from_accept_language(asked)
        except i18n.UnknownLanguage as e:
            raise ApiError(422, str(e)) from None
        return answer({"lang": code, "messages": i18n.catalogue(code)})

    # Errors: always {"error": ...}.

    @app.exception_handler(ApiError)
    async def api_error(request: Request, e: ApiError) -> Response:
        return answer({"error": e.message}, e.status)

    @app.exception_handler(GameError)
    async def game_error(request: Request, e: GameError) -> Response:
        return answer({"error": str(e)}, 409)

    @app.exception_handler(MoveError)
    async def move_error(request: Request, e: MoveError) -> Response:
        return answer({"error": str(e)}, 422)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, e: HTTPException) -> Response:
        headers = dict(e.headers or {})
        if e.status_code == 404:
            message = f"no such path: {request.url.path[:200]}"
        elif e.status_code == 405:
            allowed = headers.setdefault("Allow", headers.pop("allow", "GET, HEAD"))  # the page's files: GET
            message = f"{request.method[:20]} is not allowed on {request.url.path[:200]}; allowed: {allowed}"
        else:
            message = str(e.detail)
        return answer({"error": message}, e.status_code, headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, e: RequestValidationError) -> Response:
        first = e.errors()[0] if e.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return answer({"error": f"{where}: {first.get('msg', 'invalid')}"}, 422)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, e: Exception) -> Response:  # a bug: logged, never shown
        log.exception("internal error on %s %s", request.method, request.url.path)
        return answer({"error": "internal error"}, 500)

    app.openapi = lambda: _openapi(app)
    hosts = None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)
    app.add_middleware(SecurityHeaders, routes=app.router.routes, hosts=hosts)
    files = HeldFiles(static_dir) if static_dir is not None and static_dir.is_dir() else None
    app.mount("/", Pages(files, app.router.routes), name="page")
    return app


async def _empty_body(request: Request) -> None:
    """Actions without fields take no body, or ``{}``."""
    body = await bodies.read(request, bodies.ACTION_LIMIT)
    if body.strip():
        bodies.json_object(body, (), "{}")


def answer(data: object, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    """``data`` as JSON; text from clients (player names) stays data: ``<``, ``>`` and ``&`` are escaped."""
    return Response(_escaped(json.dumps(data).encode()), status, headers, media_type=JSON)


def _escaped(body: bytes) -> bytes:
    """JSON text with ``<``, ``>`` and ``&`` as ``\\u003c``...: the same JSON, never markup if sniffed."""
    return body.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


def _known_chances(game: Game, advisor) -> tuple[list[float] | None, bool]:
    """Each player's chance of finishing first from the sheets as they stand, if at hand (else null, and
    pending: GET .../chances computes them and waits); null and not pending where they cannot be computed
    (see :mod:`pentadice.advisor.chances`)."""
    try:
        found = chances.known_chances(advisor.rules, advisor.values, [p.sheet for p in game.players], queue=False)
    except chances.ChancesUnavailable:
        return None, False
    return found, found is None


def _chances_answer(rs, values, sheets) -> dict:
    """GET .../chances: the chances, waiting for them (null with the reason where they cannot be computed)."""
    try:
        return {"chances": chances.win_chances(rs, values, sheets), "reason": None}
    except chances.ChancesUnavailable as e:
        return {"chances": None, "reason": str(e)}


def _players_of(value: object) -> list[Player]:
    """Players from ``"Ana,cpu:win"`` or ``[{"name": "Ana"}, {"name": "cpu", "computer": true, "strategy":
    "win"}]``."""
    if isinstance(value, str):
        if len(value) > (MAX_PLAYERS + 1) * 40:
            raise ApiError(422, f"players: at most {MAX_PLAYERS} names")
        return parse_players(value)
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_PLAYERS:
        raise ApiError(422, f'players must be "Ana,cpu" or a list of 1 to {MAX_PLAYERS} {{"name", "computer"}}')
    players = []
    for number, item in enumerate(value):
        where = f"players[{number}]"  # which entry is wrong, counted from 0 as in the list
        if not isinstance(item, dict):
            example = '{"name": "Ana", "computer": false}'
            raise ApiError(
                422, f"{where} is {json_kind(item)} {bodies.short(item)}, not an object: a player is {example}"
            )
        try:
            bodies.check_fields(item, ("name", "computer", "strategy"), ("name",))
        except ApiError as e:
            raise ApiError(e.status, f"{where}: {e.message}") from None
        computer = item.get("computer", False)
        if not isinstance(computer, bool):
            raise ApiError(422, f"{where}: computer must be true or false, not {bodies.short(item['computer'])}")
        strategy = item.get("strategy")
        strategy = strategies.DEFAULT if strategy is None else strategy  # null or absent: the default, as "cpu"
        if isinstance(strategy, str):
            strategy = strategy.lower()  # any case, as in "cpu:WIN"
        if not isinstance(strategy, str) or strategy not in strategies.STRATEGIES:
            raise ApiError(
                422, f"strategy must be one of {', '.join(strategies.STRATEGIES)}, not {bodies.short(strategy)}"
            )
        if strategy != strategies.DEFAULT and not computer:
            raise ApiError(422, f"{bodies.short(item['name'])} is a person: a strategy is for computer players")
        players.append(Player(item["name"], computer, strategy=strategy))
    return players


def _review(game: Game, advisor) -> dict:
    from pentadice.players.review import review

    return review(game, advisor).as_dict()


def _rules_of(rs: rules.RuleSet) -> dict:
    boxes = [
        {"id": b, "name": rs.box_name(b), "section": "upper" if (rs.upper_mask >> rs.box_index[b]) & 1 else "lower"}
        for b in rs.boxes
    ]
    return {
        "name": rs.name,
        "title": rs.title,
        "boxes": boxes,
        "dice": rs.dice,
        "rolls": rs.rolls,
        "upper_threshold": rs.upper_threshold,
        "upper_bonus": rs.upper_bonus,
        "penta_points": rs.penta_points,
        "penta_bonus": rs.penta_bonus,
        "penta_repeat": rs.penta_repeat,
        "joker": str(rs.joker),
        "auto_commit_seconds": AUTO_COMMIT_SECONDS,
    }


def _openapi(app: FastAPI) -> dict:
    """The generated description, with the request bodies' schemas (documented, not parsed by FastAPI)."""
    if app.openapi_schema is None:
        spec = get_openapi(title=app.title, version=app.version, summary=app.summary, routes=app.routes)
        components = spec.setdefault("components", {}).setdefault("schemas", {})
        for model in schemas.REQUEST_MODELS:
            schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(schema.pop("$defs", {}))
            components[model.__name__] = schema
        app.openapi_schema = spec
    return app.openapi_schema


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pentadice")
    except PackageNotFoundError:
        return "0"


class SecurityHeaders:
    """Every answer says: scripts, styles and images from this server only, no framing, no sniffing of
    content types, no referrer; API answers are not cached. Before the application: a request another site's
    page makes the browser send (an ``Origin`` not this server's, or ``Sec-Fetch-Site: cross-site``) is
    refused, but GET and HEAD (a page elsewhere could otherwise fill the games held and push a player's game
    out); HEAD on an API path a GET route serves is that GET, without the body. First of all, where ``hosts``
    is given, a request whose ``Host`` is not served is refused (421: a page elsewhere that a DNS rebinding
    pointed at this server), as is one with no ``Host`` or two (400)."""

    def __init__(self, app, routes: list, hosts: frozenset[str] | None = None) -> None:
        self.app = app
        self.routes = routes
        self.hosts = hosts

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = scope["path"].startswith("/api/")
        extra = [*SECURITY_HEADERS, NO_STORE] if api else SECURITY_HEADERS

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        refused = _host_refusal(scope, self.hosts) if self.hosts is not None else None
        if refused is not None:
            await answer({"error": refused[1]}, refused[0], {"connection": "close"})(scope, receive, send_with_headers)
            return
        if scope["method"] not in ("GET", "HEAD") and _cross_site(scope):
            refusal = answer({"error": "a request from another site's page is refused: the API serves this page"}, 403)
            await refusal(scope, receive, send_with_headers)
            return
        if api and scope["method"] == "HEAD" and self._serves_get(scope):
            scope = {**scope, "method": "GET"}
            respond = send_with_headers

            async def send_with_headers(message) -> None:  # the headers of the GET, no body
                if message["type"] == "http.response.body":
                    message = {**message, "body": b""}
                await respond(message)

        await self.app(scope, receive, send_with_headers)

    def _serves_get(self, scope) -> bool:
        as_get = {**scope, "method": "GET"}
        return any(isinstance(r, APIRoute) and r.matches(as_get)[0] is Match.FULL for r in self.routes)


def _host_refusal(scope, hosts: frozenset[str]) -> tuple[int, str] | None:
    """Why a request's ``Host`` is refused (status, message), or None: one ``Host`` (none only in HTTP/1.0),
    naming one of ``hosts``, a loopback address or the address the request arrived at, with any port."""
    given = [v for k, v in scope.get("headers", ()) if k.lower() == b"host"]
    if len(given) > 1:
        return 400, "the request has two Host headers"
    if not given:
        return None if scope.get("http_version") == "1.0" else (400, "the request has no Host header")
    host = given[0].decode("latin-1").strip().lower()
    name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not name or (port and not port.isdigit()):
        name = host
    name = name.rstrip(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name in hosts or name.endswith(".localhost"):
        return None
    try:
        address = ipaddress.ip_address(name)
        if address.is_loopback or name == str((scope.get("server") or ("",))[0]).lower():
            return None
    except ValueError:
        pass
    shown = host if len(host) <= 60 else host[:57] + "..."
    return 421, f"this server does not serve the host {shown!r} (`pentadice serve --allow-host NAME` adds one)"


def _cross_site(scope) -> bool:
    """Whether a browser says the request comes from another site's page: ``Sec-Fetch-Site: cross-site``, or
    an ``Origin`` whose host and port are not the ``Host`` asked (``null`` included). Clients that are not
    browsers send neither."""
    headers = {k.lower(): v for k, v in scope.get("headers", ())}
    if headers.get(b"sec-fetch-site") == b"cross-site":
        return True
    origin = headers.get(b"origin")
    if origin is None:
        return False
    try:
        parts = urlsplit(origin.decode("latin-1"))
        port = parts.port
    except ValueError:
        return True
    default = {"http": 80, "https": 443}.get(parts.scheme)
    where = (parts.hostname or "", port or default)
    host = headers.get(b"host", b"").decode("latin-1")
    try:
        asked = urlsplit(f"{parts.scheme}://{host}")
        return not parts.hostname or where != (asked.hostname or "", asked.port or default)
    except ValueError:
        return True


class HeldFiles:
    """The page's files, read into memory at start-up (a few small files): answered without a thread or a
    file read, so that clients fetching them many times over (and not reading the answers) cost the server
    little, and nothing done to the folder afterwards changes what is served. ``/`` and a folder answer its
    ``index.html``; no directory listing, nothing outside the folder; GET and HEAD only (405); an ``ETag``
    that ``If-None-Match`` can match (304)."""

    LIMIT = 16 * 1024 * 1024  # bytes of page files held at most (the page is about 70 KB)

    def __init__(self, directory: Path) -> None:
        self.files: dict[str, tuple[bytes, list[tuple[bytes, bytes]]]] = {}
        held = 0
        for path in sorted(directory.rglob("*")):
            if not path.is_file() or path.is_symlink():
                continue
            body = path.read_bytes()
            held += len(body)
            if held > self.LIMIT:
                raise ValueError(f"the page's files in {directory} are larger than {self.LIMIT:,} bytes")
            kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind == "application/javascript":
                kind += "; charset=utf-8"
            mtime = path.stat().st_mtime
            tag = f'"{hashlib.md5(body, usedforsecurity=False).hexdigest()}"'.encode()
            headers = [
                (b"content-type", kind.encode()),
                (b"etag", tag),
                (b"last-modified", formatdate(mtime, usegmt=True).encode()),
            ]
            self.files[path.relative_to(directory).as_posix()] = (body, headers)

    async def __call__(self, scope, receive, send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            raise HTTPException(405)
        name = scope["path"].lstrip("/")
        if name == "" or name.endswith("/"):
            name += "index.html"
        held = self.files.get(name)
        if held is None:
            raise HTTPException(404)
        body, headers = held
        status = 200
        tags = [v for k, v in scope.get("headers", ()) if k.lower() == b"if-none-match"]
        if tags and any(t.strip() in (headers[1][1], b"*") for v in tags for t in v.split(b",")):
            status, body = 304, b""
        length = [] if status == 304 else [(b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": [*headers, *length]})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


class Pages:
    """The page's files (:class:`HeldFiles`). An ``/api/`` path no route took is a JSON error: 405 where a
    route has that path under another method, else 404."""

    def __init__(self, files: HeldFiles | None, routes: list) -> None:
        self.files = files
        self.routes = routes

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path", "")
        if path == "/api" or path.startswith("/api/"):
            allowed = set()
            for route in self.routes:
                if isinstance(route, APIRoute) and route.matches(scope)[0] is Match.PARTIAL:
                    allowed |= route.methods | ({"HEAD"} if "GET" in route.methods else set())
            if allowed:
                raise HTTPException(405, headers={"Allow": ", ".join(sorted(allowed))})
            raise HTTPException(404)
        if self.files is None:  # no page installed: the API alone
            raise HTTPException(404)
        await self.files(scope, receive, send)  # whole files only: the page's files are small
