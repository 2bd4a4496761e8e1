"""The HTTP API and the page: :func:`create_app` builds the ASGI application ``pentadice serve`` runs.

A thin front end (see ``docs/architecture.md`` and ``docs/api.md``): the routes are in one module per resource
(``routes_health``, ``routes_rules``, ``routes_advice``, ``routes_games``, ``routes_live`` (a game's live updates),
``routes_review`` (a game's review and save, a save file posted), ``routes_history`` (finished games, players'
statistics), ``routes_messages``, ``routes_qr`` (a seat link's QR code), ``routes_app`` (the offline app's tables),
``routes_docs`` (the reference at ``/docs``)),
sharing the :class:`~pentadice.faces.web.state.WebState` this module makes (the rule sets served, the games
database, the advice cache, the clock), which a route asks for as a parameter. Each handler reads its body strictly
(:mod:`pentadice.faces.web.bodies`), makes engine types of it, calls the engine or the advisor, and answers JSON.
Every refusal is ``{"error": ...}`` with a 4xx status: 400 a body that is not JSON, 403 a request another
site's page sent (but GET and HEAD) or a shared game's move without its seat's secret, 404 an unknown game or
path, 405 a wrong method, 408 a body that did not arrive in time, 409 a move the game's state refuses (the
engine's :class:`GameError`), 413 a body too large, 421 a ``Host`` not served (DNS rebinding), 422 a wrong field
or value; 503 (or 507, a full disk) when the games database fails, nothing written; 500 with the words "is
damaged" for a game whose record in the database cannot be decoded (logged once, the other games served).
The HTTP layer's own refusals (:mod:`pentadice.faces.web.server`) are JSON too.
Advisor work and the games database run in worker threads (a game's requests one at a time in a process), except
a cached answer, which is sent at once. Nothing on disk is read or written because of a request, but the page's
own files and the games database (:mod:`pentadice.storage`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from pentadice.faces.web import (
    routes_advice,
    routes_app,
    routes_docs,
    routes_games,
    routes_health,
    routes_history,
    routes_live,
    routes_messages,
    routes_qr,
    routes_review,
    routes_rules,
    schemas,
)
from pentadice.faces.web.advising import AdviceCache
from pentadice.faces.web.bodies import ApiError
from pentadice.faces.web.cors import SharedRoutesCORS
from pentadice.faces.web.guard import SecurityHeaders
from pentadice.faces.web.live import Live
from pentadice.faces.web.page import STATIC, HeldFiles, Pages
from pentadice.faces.web.playing import AUTO_COMMIT_SECONDS
from pentadice.faces.web.preparing import Preparation
from pentadice.faces.web.responses import JSON, NO_STORE, SECURITY_HEADERS, answer
from pentadice.faces.web.state import WebState
from pentadice.faces.web.store import GameStore
from pentadice.game import rules
from pentadice.game.moves import MoveError
from pentadice.players.engine import Game, GameError
from pentadice.storage.database import Database, StorageError, open_database
from pentadice.storage.games import KEEP_DAYS, DamagedGame, GameRecords, RulesNotHeld

__all__ = [
    "AUTO_COMMIT_SECONDS",
    "JSON",
    "NO_STORE",
    "SECURITY_HEADERS",
    "STATIC",
    "HeldFiles",
    "Pages",
    "SecurityHeaders",
    "answer",
    "create_app",
]

# The routers by resource, in the order their paths are listed in /openapi.json.
STORAGE_RETRY_SECONDS = 5  # a request the database failed: its Retry-After
LOGGED = "_pentadice_logged"  # set on an exception the application answered with its 500 and logged
DAMAGED_LOGGED = 1000  # damaged games logged once each, up to this many in a process (then no more said)
DAMAGED_PARTS = {  # what DamagedGame names, in words
    "save": "its saved game cannot be read",
    "undo": "its undo steps cannot be read",
    "seats": "its seats cannot be read",
    "version": "its number of moves is not a number",
}
ROUTERS = (
    routes_health,
    routes_rules,
    routes_advice,
    routes_games,
    routes_live,
    routes_review,
    routes_history,
    routes_messages,
    routes_qr,
)
log = logging.getLogger("pentadice.web")


def create_app(
    advisors: Mapping[str, object],
    *,
    static_dir: Path | None = STATIC,
    clock: Callable[[], float] = time.monotonic,
    db: Database | None = None,
    keep_days: float = KEEP_DAYS,
    allowed_hosts: Iterable[str] | None = None,
    preparation: Preparation | None = None,
    share_base: str | None = None,
    stopping: Callable[[], bool] | None = None,
    allowed_origins: Iterable[str] = (),
) -> FastAPI:
    """The application serving ``advisors`` (rule set name -> :class:`~pentadice.advisor.Advisor`, loaded
    and compiled already), the page from ``static_dir`` (None or missing: the API alone), games kept in the
    games database ``db`` (:func:`pentadice.storage.database.open_database`; None: a database of this application
    alone, in a temporary file removed at exit), unfinished ones removed after ``keep_days`` idle, the computer's
    clock ``clock``. ``allowed_hosts``: the names a request's ``Host`` may carry
    (:func:`pentadice.faces.web.addresses.allowed_hosts`; loopback addresses and the address the request arrived at are
    served too), others refused with 421 against DNS rebinding; None: any (a test client's). ``preparation``:
    the tables prepared in the background (:class:`~pentadice.faces.web.preparing.Preparation`; None: a game
    builds what it needs when it needs it). ``share_base``: the URL a shared game's seat links begin with
    (``GET /api/health`` says it; None: the server listens on loopback only, the page uses its own origin).
    ``stopping()``: whether the server is stopping (the live updates' streams then end; None: never asked).
    ``allowed_origins``: other sites whose pages may call the advice, the rule sets and the offline app's tables
    (:mod:`pentadice.faces.web.cors`; none by default).
    The routes share one :class:`~pentadice.faces.web.state.WebState`, kept as ``app.state.web``."""
    served = dict(advisors)
    rules_json = routes_rules.rules_answer(served.values())
    if db is None:
        db = _private_database()
    store = GameStore(GameRecords(db, Game, keep_days=keep_days), served.get)
    live = Live(store.records.versions, stopping=stopping)
    state = WebState(served, store, AdviceCache(), clock, rules_json, preparation, live, share_base)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        # Stopping: this server's keep-days no longer hold back the expiry of the servers sharing its database.
        await run_in_threadpool(store.records.release)

    app = FastAPI(
        lifespan=lifespan,
        title="pentadice",
        summary="Penta and the Yahtzee family: the optimal advisor and games, over HTTP.",
        version=_version(),
        docs_url=None,  # FastAPI's pages load scripts from a CDN: /docs is routes_docs', offline; /openapi.json
        redoc_url=None,
    )
    app.state.web = state
    for module in ROUTERS:
        app.include_router(module.router)
    app.include_router(routes_app.router)  # the offline app's tables
    app.include_router(routes_docs.router)  # the reference, HTML, written from /openapi.json
    _handle_errors(app)
    app.openapi = lambda: _openapi(app)
    # The API's routes as their routers hold them: what the guard and the page match a path against (an app's
    # own list holds included routers as such in recent FastAPI versions, not their routes).
    api_routes = [route for module in ROUTERS for route in module.router.routes]
    hosts = None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)
    origins = frozenset(allowed_origins)
    app.add_middleware(SecurityHeaders, routes=api_routes, hosts=hosts, origins=origins)
    if origins:  # outside the guard: a preflight is answered before the guard's OPTIONS answer
        app.add_middleware(SharedRoutesCORS, origins=origins)
    files = HeldFiles(static_dir) if static_dir is not None and static_dir.is_dir() else None
    app.mount("/", Pages(files, api_routes), name="page")  # after the routes: the paths they did not take
    return app


def _handle_errors(app: FastAPI) -> None:
    """Errors: always ``{"error": ...}``."""

    @app.exception_handler(ApiError)
    async def api_error(request: Request, e: ApiError) -> Response:
        return answer({"error": e.message, **e.extra}, e.status, e.headers)

    @app.exception_handler(StorageError)
    async def storage_error(request: Request, e: StorageError) -> Response:  # nothing written: said, logged
        log.warning("%s %s: %s", request.method, request.url.path[:200], e.message)
        return answer({"error": e.message}, e.status, {"retry-after": str(STORAGE_RETRY_SECONDS)})

    damaged_said: set[str] = set()

    @app.exception_handler(RulesNotHeld)
    async def rules_not_held(request: Request, e: RulesNotHeld) -> Response:  # house rules not given: said
        return answer({"error": e.message}, e.status)

    @app.exception_handler(DamagedGame)
    async def damaged_game(request: Request, e: DamagedGame) -> Response:  # the server's fault: 500, said in words
        game_id = str(e.args[0]) if e.args else "?"
        part = str(e.args[1]) if len(e.args) > 1 else ""
        what = DAMAGED_PARTS.get(part, part[:80] or "it cannot be read")
        if game_id not in damaged_said and len(damaged_said) < DAMAGED_LOGGED:
            damaged_said.add(game_id)
            log.error("the record of game %s in the games database is damaged: %s", game_id[:40], what)
        message = (
            f"the record of this game in the games database is damaged ({what}): it can be neither shown nor "
            "played; the other games are not affected"
        )
        return answer({"error": message, "damaged": True}, 500)

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
        with contextlib.suppress(AttributeError):
            setattr(e, LOGGED, True)  # Starlette raises it again: the server does not log it twice
        return answer({"error": "internal error"}, 500)


def _private_database() -> Database:
    """A games database of one application alone (tests, an embedding program): a temporary SQLite file,
    removed when the interpreter exits."""
    import atexit
    import tempfile

    folder = tempfile.TemporaryDirectory(prefix="pentadice-games-")
    db = open_database(Path(folder.name) / "games.sqlite3")

    def remove() -> None:
        db.close()
        folder.cleanup()

    atexit.register(remove)
    return db


def _openapi(app: FastAPI) -> dict:
    """The generated description, with the request bodies' schemas (documented, not parsed by FastAPI) and what
    this application serves: the rule sets a body may name (and their dice), those a history query may name, the
    languages; kept exactly as the server reads them (``tests/test_api_contract.py`` runs Schemathesis on it)."""
    if app.openapi_schema is None:
        spec = get_openapi(title=app.title, version=app.version, summary=app.summary, routes=app.routes)
        components = spec.setdefault("components", {}).setdefault("schemas", {})
        for model in schemas.REQUEST_MODELS:
            schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(schema.pop("$defs", {}))
            components[model.__name__] = schema
        _served_in_document(spec, app.state.web)
        app.openapi_schema = spec
    return app.openapi_schema


def _served_in_document(spec: dict, state: WebState) -> None:
    """What the document says of this application's own values: a body's ``rules`` is a rule set served (or
    null), ``dice`` as many as a served rule set's; a query's ``rules`` any rule set known, ``lang`` a language
    spoken, a player's name 1 to 32 characters; an optional query parameter is a string, or absent."""
    from pentadice.players.engine import MAX_NAME
    from pentadice.support import i18n

    components = spec["components"]["schemas"]
    served = list(state.advisors)
    for name in ("AdviseIn", "BatchIn", "NewGameIn"):
        field = components[name]["properties"]["rules"]
        field["anyOf"] = [{"type": "string", "enum": served}, {"type": "null"}]
    player = spec["paths"].get("/api/players/{name}", {}).get("get")
    if player is not None:  # no finished game has that name
        player["responses"].setdefault("404", {
            "description": "No finished game has a player of that name.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}},
        })  # fmt: skip
    counts = [a.rules.dice for a in state.advisors.values()]
    dice = components["AdviseIn"]["properties"]["dice"]
    dice["minItems"], dice["maxItems"] = min(counts), max(counts)
    known = {"rules": {"type": "string", "enum": list(rules.REGISTRY)}, "lang": {"type": "string",
             "enum": list(i18n.LANGUAGES)}}  # fmt: skip
    for operations in spec["paths"].values():
        for operation in operations.values():
            for param in operation.get("parameters", ()):
                schema = param.get("schema", {})
                options = [s for s in schema.get("anyOf", ()) if s.get("type") != "null"]
                if param["in"] == "query" and not param.get("required") and len(options) == 1:
                    rest = {k: v for k, v in schema.items() if k != "anyOf"}
                    schema = param["schema"] = {**options[0], **rest}  # absent, not null: a query has no null
                if param["name"] in known and param["in"] == "query":
                    param["schema"] = {**{k: v for k, v in schema.items() if k in ("title", "description")},
                                       **known[param["name"]]}  # fmt: skip
                elif param["name"] in ("player", "name") and schema.get("type") == "string":
                    schema.update(minLength=1, maxLength=MAX_NAME)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pentadice")
    except PackageNotFoundError:
        return "0"
