"""Games: ``POST /api/games`` (a new game, or a saved one going on; shared: played from several devices), its
view and chances, and the moves a person or the computer plays in it. Each move is one transaction of the games
database (:func:`pentadice.faces.web.playing.act`); in a shared game a move is accepted only from the device
holding the right seat (:mod:`pentadice.faces.web.seats`: the ``X-Pentadice-Seat`` header)."""

from __future__ import annotations

import json

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from pentadice.advisor import chances
from pentadice.faces.web import bodies, schemas, seats
from pentadice.faces.web.apidoc import ERRORS, GAME_ERRORS, VERSION_BODY, body_doc
from pentadice.faces.web.bodies import ApiError
from pentadice.faces.web.playing import AUTO_COMMIT_SECONDS, act, known_chances, person_to_act, read, started, view
from pentadice.faces.web.responses import answer
from pentadice.faces.web.state import State, WebState
from pentadice.game.moves import Keep, Score
from pentadice.players import strategies
from pentadice.players.engine import (
    MAX_PLAYERS,
    Game,
    GameError,
    Player,
    check_auto_commit,
    check_players,
    parse_players,
    valid_name,
)
from pentadice.support.inputs import json_kind

NEW_GAME_FIELDS = ("players", "rules", "seed", "auto_commit", "dice", "save", "shared")

router = APIRouter()


@router.post(
    "/api/games",
    status_code=201,
    responses={201: {"model": schemas.GameView}, **ERRORS},
    openapi_extra=body_doc(schemas.NewGameIn, {"players": "Ana,cpu", "rules": "penta", "seed": 1}),
    tags=["games"],
)
async def new_game(request: Request, state: State) -> Response:
    """A new game, or a saved one going on (`save`); answers its view, with its id. `shared`: a game played
    from several devices, whose answer (this one only) gives each person's seat its secret (`seats`)."""
    body = await bodies.read(request, bodies.LARGE_LIMIT)
    data = bodies.json_object(body, NEW_GAME_FIELDS, '{"players": "Ana,cpu", "rules": "penta"}')
    shared = data.get("shared", False)
    if not isinstance(shared, bool):
        raise ApiError(422, f"shared must be true or false, not {bodies.short(shared)}")
    saved = data.get("save") is not None  # "save": null is no save: a new game
    game, advisor = _saved_game(state, data) if saved else _new_game(state, data)
    return await started(state, game, advisor, shared)


def _new_game(state: WebState, data: dict):
    advisor = state.advisor_of(data.get("rules"))
    seed = data.get("seed")
    if seed is not None:
        bodies.whole(seed, "seed", 0, 2**128 - 1)
    kind = data.get("dice", "random")
    if kind not in ("random", "manual"):
        raise ApiError(422, f'dice must be "random" or "manual" (a coach game), not {bodies.short(kind)}')
    try:
        seconds = check_auto_commit(data.get("auto_commit", AUTO_COMMIT_SECONDS))
        players = _players_of(data.get("players", "You,cpu"))
        tables = strategies.table_directory(advisor)
        return Game(advisor.rules, players, seed, seconds, coach=kind == "manual", tables=tables), advisor
    except GameError as e:
        raise ApiError(422, str(e)) from None


def _saved_game(state: WebState, data: dict):
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
    check_names(game)
    return game, state.advisor_of(game.rules.name)


def check_names(game: Game) -> None:
    """422 if a player's name of a saved game posted is not one a new game takes (:func:`valid_name`): names
    enter the games database only by the rules of a new game's."""
    for player in game.players:
        try:
            valid_name(player.name)
        except GameError as e:
            raise ApiError(422, str(e)) from None


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
    check_players(players)  # names that look the same said as such first
    for number, player in enumerate(players):
        try:
            valid_name(player.name)
        except GameError as e:
            raise ApiError(422, f"players[{number}]: {e}") from None
    return players


@router.get("/api/games/{game_id}", responses={200: {"model": schemas.GameView}, **GAME_ERRORS}, tags=["games"])
async def get_game(game_id: str, request: Request, state: State) -> Response:
    """The game's view (in a shared game, `you`: the seat the `X-Pentadice-Seat` header's secret holds)."""
    secret = seats.secret_of(request.headers)
    return answer(await read(state, game_id, lambda held: view(state, game_id, held, secret)))


@router.get(
    "/api/games/{game_id}/chances", responses={200: {"model": schemas.ChancesOut}, **GAME_ERRORS}, tags=["games"]
)
async def get_chances(game_id: str, state: State) -> Response:
    """Each player's chance of finishing first from the sheets as they stand (and the dice showing, where the
    chances table is held: at once); without the table, waiting while they are computed (seconds early in a
    game; the game's own requests are not held up meanwhile). While the table is being prepared: null, with
    the reason and the progress."""

    def look(held) -> tuple:
        """The game's advisor, the preparation it waits on, its sheets, and what is known of the answer: whole
        where the chances table is held (a millisecond), else the sheets shown."""
        rs = held.advisor.rules
        waiting = state.preparation.chances_waiting(rs.name) if state.preparation is not None else None
        sheets = [p.sheet for p in held.game.players]  # sheets are replaced, never edited: a snapshot
        shown = {"sheets": [s.as_dict(held.game.rules) for s in sheets]}
        if waiting is None and chances.table_of(rs, held.advisor.values) is not None:
            return held.advisor, None, sheets, {**shown, "chances": known_chances(held.game, held.advisor)[0],
                                                "reason": None}  # fmt: skip
        return held.advisor, waiting, sheets, shown

    advisor, waiting, sheets, shown = await read(state, game_id, look)
    if "chances" in shown:
        return answer(shown)
    rs, values = advisor.rules, advisor.values
    if waiting is not None:
        pct = round(100 * waiting.get("progress", 0.0))
        reason = f"the chances table of {rs.name} is being prepared ({pct} % of what is left)"
        return answer({**shown, "chances": None, "reason": reason, "preparing": waiting})
    out = await run_in_threadpool(_chances_answer, rs, values, sheets)
    return answer({**shown, **out})


def _chances_answer(rs, values, sheets) -> dict:
    """GET .../chances: the chances, waiting for them (null with the reason where they cannot be computed)."""
    try:
        return {"chances": chances.win_chances(rs, values, sheets), "reason": None}
    except chances.ChancesUnavailable as e:
        return {"chances": None, "reason": str(e)}


def _move(action: str, **extra):
    """The route of a move in a game, ``POST /api/games/{game_id}/ACTION``, answered with the move played."""
    responses = {200: {"model": schemas.MoveOut}, **GAME_ERRORS}
    return router.post(f"/api/games/{{game_id}}/{action}", responses=responses, tags=["games"], **extra)


@_move("roll", openapi_extra=body_doc(schemas.RollIn, {"keep": [4, 4]}))
async def roll(game_id: str, request: Request, state: State) -> Response:
    """Roll: the turn's first roll (`keep` empty), or keep `keep` and reroll the others. A coach game
    gives the faces rolled in `dice`."""
    body = await bodies.read(request, bodies.ACTION_LIMIT)
    data = bodies.json_object(body, ("keep", "dice", "version"), '{"keep": []}')
    secret = seats.secret_of(request.headers)

    def move(held) -> dict:
        game = held.game
        keep = bodies.faces(data.get("keep", []), "keep", game.rules.dice)
        rolled = data.get("dice")
        if rolled is not None:
            if not game.coach:
                raise ApiError(422, 'dice are given in coach games ("dice": "manual") only: this one rolls')
            rolled = bodies.faces(rolled, "dice", game.rules.dice)
        person_may_move(held, secret)
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

    return await act(state, game_id, move, _version_of(data), secret)


@_move("score", openapi_extra=body_doc(schemas.ScoreIn, {"box": "fives"}))
async def score(game_id: str, request: Request, state: State) -> Response:
    """Fill a box with the dice showing (`box`: its id, or its name as people type it)."""
    body = await bodies.read(request, bodies.ACTION_LIMIT)
    data = bodies.json_object(body, ("box", "version"), '{"box": "fives"}', ["box"])
    secret = seats.secret_of(request.headers)

    def move(held) -> dict:
        game = held.game
        if not isinstance(data["box"], str):
            raise ApiError(422, f"box must be a box id, not {bodies.short(data['box'])}")
        try:
            box = game.rules.parse_box(data["box"])
        except ValueError as e:
            raise ApiError(422, str(e)) from None
        person_may_move(held, secret)
        return game.play(Score(box), held.advisor).as_dict()

    return await act(state, game_id, move, _version_of(data), secret)


@_move("auto-commit", openapi_extra=VERSION_BODY)
async def auto_commit(game_id: str, request: Request, state: State) -> Response:
    """The countdown ran out: fill the advisor's box (the computer's choice). Only after a person's last roll."""

    secret = seats.secret_of(request.headers)

    def move(held) -> dict:
        game = held.game
        person_may_move(held, secret)
        if game.auto_commit_seconds is None:
            raise ApiError(409, "the auto-commit is off in this game")
        return game.auto_commit_played(held.advisor).as_dict()

    return await _bodiless(request, state, game_id, move, secret)


@_move("computer", openapi_extra=VERSION_BODY)
async def computer(game_id: str, request: Request, state: State) -> Response:
    """One step of the computer player whose turn it is: its first roll, a keep or a box. In a shared game,
    from a device holding any seat of it."""
    secret = seats.secret_of(request.headers)

    def move(held) -> dict:
        game = held.game
        seats.check_any_seat(held.stored.seats, seats.holder(held.stored.seats, secret))
        if game.over:
            raise ApiError(409, "the game is over")
        if not game.player.computer:
            raise ApiError(409, f"it is {game.player.name}'s turn, a person's: the computer does not play it")
        happened = game.advance(held.advisor, now=state.clock(), limit=1)
        if not happened:
            raise ApiError(409, "the computer has nothing to play")
        step = happened[0]
        if isinstance(step, tuple):  # ("rolled", player, dice): a turn's first roll
            return {"player": step[1], "computer": True, "rolled": list(step[2])}
        return step.as_dict()

    return await _bodiless(request, state, game_id, move, secret)


@router.post(
    "/api/games/{game_id}/undo",
    responses={200: {"model": schemas.GameOut}, **GAME_ERRORS},
    openapi_extra=VERSION_BODY,
    tags=["games"],
)
async def undo(game_id: str, request: Request, state: State) -> Response:
    """Coach games: take back the last step (a box, a keep with its roll, or a turn's first roll)."""
    secret = seats.secret_of(request.headers)

    def move(held) -> None:
        if held.stored.seats is not None:  # a shared game is never a coach game: refused by the engine after this
            person_may_move(held, secret)
        held.game.undo()

    return await _bodiless(request, state, game_id, move, secret)


async def _bodiless(request: Request, state: State, game_id: str, move, secret: str | None) -> Response:
    """An action without fields (no body, or ``{}``): ``move`` played in the game, under its lock."""
    body = await bodies.read(request, bodies.ACTION_LIMIT)
    data = bodies.json_object(body, ("version",), "{}") if body.strip() else {}
    return await act(state, game_id, move, _version_of(data), secret)


def person_may_move(held, secret: str | None) -> None:
    """409 unless a person is to move in the game; in a shared game, 403 unless ``secret`` is the secret of
    that person's seat."""
    stored = held.stored.seats
    if stored is not None and seats.holder(stored, secret) is None:
        raise ApiError(403, seats.NEED_SECRET)  # said first: a watcher is told what moving takes
    person_to_act(held.game)
    seats.check_mover(stored, seats.holder(stored, secret), held.game)


def _version_of(data: dict) -> int | None:
    """A move's ``version``: the game's version in the view the client played from (optional; a game moved on
    since refuses the move with 409, so that a move sent twice is played once)."""
    version = data.get("version")
    return None if version is None else bodies.whole(version, "version", 0, 2**31 - 1)
