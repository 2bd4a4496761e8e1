"""A saved game: the JSON text of a game (:func:`dump`, as :meth:`Game.to_json
<pentadice.players.engine.Game.to_json>`) and the game read back from it (:func:`load`, as
:meth:`Game.from_json <pentadice.players.engine.Game.from_json>`), random generator included, so that a resumed
game rolls what the original would have rolled (a save made with ``rng=False`` leaves it out, and the game
draws fresh dice when it is loaded). A saved game is checked as strictly as a sheet typed on the command line:
each field, the order of play, and a history of legal moves that gives the sheets and the dice as saved;
anything wrong in it is a :class:`~pentadice.players.seats.GameError` naming what, never another exception.
Pure Python, no I/O: the readers of save files (``play --resume``, ``review``, the page and the API) give the
text, as :func:`save_text` reads it.

The engine's class is passed in (``game_class``): the engine imports this module, never the other way round.
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np

from pentadice.game import rules
from pentadice.game.moves import Keep, MoveError, Score, parse_move
from pentadice.game.sheet import Sheet, SheetError
from pentadice.players import strategies
from pentadice.players.seats import MAX_PLAYERS, GameError, Player, check_auto_commit, check_name, short
from pentadice.players.steps import Step, legal_boxes
from pentadice.support import inputs

MAX_SAVE_BYTES = 1 << 20  # a saved game is a few kilobytes; anything over a megabyte is not one
MAX_TURNS = 10_000  # far beyond any game (Kiriki's extra turns included)
SAVE_FORMAT = "pentadice-game"
SAVE_KEYS = {"format", "rules", "players", "current", "dice", "rolls_made", "auto_commit_seconds"}
SAVE_OPTIONAL_KEYS = {"hints", "save_path", "coach", "history", "history_from", "rng"}  # absent from earlier saves
PLAYER_KEYS = {"name", "computer", "turns", "sheet"}
PLAYER_OPTIONAL_KEYS = {"strategy"}  # a computer's strategy; absent from earlier saves (optimal)
STEP_KEYS = {"index", "turn", "dice", "rolls_left", "sheet", "move", "after", "auto", "computer"}
RNG_KEYS = {"bit_generator", "state", "has_uint32", "uinteger"}

BOM = "\ufeff"  # a byte-order mark, as some editors (Windows Notepad) begin a UTF-8 file


def save_text(data: str | bytes | bytearray) -> str:
    """The text of a save file, as every reader of saves reads it (``play --resume``, ``review``, the page
    and the API, by :meth:`Game.from_json`): strict UTF-8 (anything else is refused, saying so: a save is
    never shown with replacement characters), and one leading byte-order mark dropped (an editor may add
    it). InputError if the bytes are not UTF-8."""
    text = inputs.decode(bytes(data), "the saved game") if isinstance(data, bytes | bytearray) else data
    return text.removeprefix(BOM)


def dump(game, rng: bool = True) -> str:
    """The whole game, its history and the front end's settings included, and the random generator's state
    unless ``rng`` is false (a save for a client that must not predict the dice: the game loaded from it
    draws fresh dice). The history comes last, a step a line."""
    data = {
        "format": SAVE_FORMAT,
        "rules": game.rules.name,
        "players": [
            {"name": p.name, "computer": p.computer, "turns": p.turns, "sheet": p.sheet.as_dict(game.rules)}
            | ({"strategy": p.strategy} if p.computer else {})
            for p in game.players
        ],
        "current": game.current,
        "dice": list(game.dice) if game.dice is not None else None,
        "rolls_made": game.rolls_made,
        "auto_commit_seconds": game.auto_commit_seconds,
        "hints": game.hints,
        "coach": game.coach,
        "save_path": game.save_path,
    }
    if rng:
        data["rng"] = game.rng.bit_generator.state
    if game.history and game.history_from is not None:
        data["history_from"] = {"turns": list(game.history_from[0]), "rolls_made": game.history_from[1]}
    text = json.dumps({**data, "history": []}, indent=1)
    if not game.history:
        return text
    head = text.removesuffix('"history": []\n}')
    assert head != text  # the last key: its text ends the save
    steps = ",\n  ".join(json.dumps(step.as_json(game.rules)) for step in game.history)
    return f'{head}"history": [\n  {steps}\n ]\n}}'


def load(game_class, text: str | bytes):
    """A saved game, as a ``game_class`` (the engine's :class:`~pentadice.players.engine.Game`); GameError
    naming what is wrong with a malformed one (and never another exception)."""
    if not isinstance(text, str | bytes | bytearray):
        raise GameError("a saved game is JSON text")
    if len(text) > MAX_SAVE_BYTES:
        raise GameError(f"the file is larger than {MAX_SAVE_BYTES >> 20} MB: not a saved pentadice game")
    try:
        data = inputs.loads(save_text(text), "the saved game")
    except inputs.InputError as e:  # not UTF-8, not JSON, a repeated key, NaN, nesting or a number too long
        raise GameError(str(e)) from None
    if not isinstance(data, dict) or data.get("format") != SAVE_FORMAT:
        raise GameError("this is not a saved pentadice game")
    try:
        return _load(game_class, data)
    except (GameError, SheetError) as e:
        raise GameError(f"the saved game is damaged: {e}") from None


def _load(game_class, data: dict):
    """The game of a save's JSON object, every field checked (GameError or SheetError naming what is wrong)."""
    _check_keys(data, SAVE_KEYS, SAVE_OPTIONAL_KEYS, "the game")
    name = _field(data, "rules", "the game")
    if not isinstance(name, str) or name not in rules.REGISTRY:
        raise GameError(
            f"unknown rule set {short(name)}; known: {', '.join(rules.REGISTRY)} (a game of house rules: give their"
            " file with --rules)"
        )
    rs = rules.get_rules(name)
    saved_players = _field(data, "players", "the game")
    if not isinstance(saved_players, list) or not 1 <= len(saved_players) <= MAX_PLAYERS:
        raise GameError(f"players must be a list of 1 to {MAX_PLAYERS} players")
    players = [_load_player(rs, p, number) for number, p in enumerate(saved_players)]
    game = game_class(
        rs, players, seed=0, auto_commit_seconds=check_auto_commit(_field(data, "auto_commit_seconds", "the game"))
    )
    current = _field(data, "current", "the game")
    if isinstance(current, bool) or not isinstance(current, int) or not 0 <= current < len(players):
        raise GameError(f"no such current player: {short(current)} (players 0 to {len(players) - 1})")
    game.current = current
    rolls_made = _field(data, "rolls_made", "the game")
    if isinstance(rolls_made, bool) or not isinstance(rolls_made, int) or not 0 <= rolls_made <= rs.rolls:
        raise GameError(f"impossible number of rolls: {short(rolls_made)} (0 to {rs.rolls})")
    game.rolls_made = rolls_made
    dice = _field(data, "dice", "the game")
    if dice is not None:
        if not isinstance(dice, list) or len(dice) != rs.dice:
            raise GameError(f"impossible dice {short(dice)}: {rs.dice} dice, or null")
        game.dice = tuple(sorted(_whole(d, "a die", 1, 6) for d in dice))
    hints = data.get("hints", False)
    if not isinstance(hints, bool):
        raise GameError(f"hints must be true or false, not {short(hints)}")
    game.hints = hints
    coach = data.get("coach", False)
    if not isinstance(coach, bool):
        raise GameError(f"coach must be true or false, not {short(coach)}")
    game.coach = coach
    game.save_path = _load_path(data.get("save_path"))
    if "rng" in data:
        _load_rng(game, data["rng"])
    else:  # saved without it (rng=False): fresh dice, nobody could predict
        game.rng = np.random.default_rng()
    _check_loaded(game)
    history = data.get("history", [])  # none in saves of earlier versions: it begins with the next step
    if not isinstance(history, list):
        raise GameError("history must be a list of steps")
    if history:
        game.history_from = _load_history_from(game, data.get("history_from"))
        _load_history(game, history)
    elif "history_from" in data:
        raise GameError("history_from without a history")
    return game


def _load_history_from(game, data: object) -> tuple[tuple[int, ...], int] | None:
    """Where a saved history began (None: at the game's start)."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise GameError("history_from must be an object")
    _check_keys(data, {"turns", "rolls_made"}, set(), "history_from")
    turns = _field(data, "turns", "history_from")
    if not isinstance(turns, list) or len(turns) != len(game.players):
        raise GameError(f"history_from: turns must be a list of {len(game.players)} numbers")
    turns = tuple(_whole(t, "history_from: turns", 0, p.turns) for t, p in zip(turns, game.players, strict=True))
    rolls_made = _whole(_field(data, "rolls_made", "history_from"), "history_from: rolls_made", 0, game.rules.rolls)
    return turns, rolls_made


def _load_rng(game, state: object) -> None:
    """The generator's state, checked field by field: a PCG64 state of 128-bit numbers (odd increment)."""
    if not isinstance(state, dict):
        raise GameError("rng must be an object")
    _check_keys(state, RNG_KEYS, set(), "rng")
    if _field(state, "bit_generator", "rng") != "PCG64":
        raise GameError(f"rng: the generator is PCG64, not {short(state['bit_generator'])}")
    inner = _field(state, "state", "rng")
    if not isinstance(inner, dict):
        raise GameError("rng: state must be an object")
    _check_keys(inner, {"state", "inc"}, set(), "rng state")
    _whole(_field(inner, "state", "rng state"), "rng state", 0, 2**128 - 1)
    if _whole(_field(inner, "inc", "rng state"), "rng inc", 0, 2**128 - 1) % 2 == 0:
        raise GameError("rng inc must be odd")
    _whole(_field(state, "has_uint32", "rng"), "rng has_uint32", 0, 1)
    _whole(_field(state, "uinteger", "rng"), "rng uinteger", 0, 2**32 - 1)
    try:
        game.rng.bit_generator.state = state
    except (TypeError, ValueError, OverflowError) as e:
        raise GameError(f"rng: {e}") from None


def _check_loaded(game) -> None:
    """The parts agree: dice and rolls, the current player and the order of play."""
    if (game.dice is None) != (game.rolls_made == 0):
        raise GameError("dice and rolls disagree")
    n_boxes = len(game.rules.boxes)
    if game.over:
        if game.dice is not None:
            raise GameError("every sheet is full, yet dice are showing")
        return
    current = game.player
    if len(current.boxes) == n_boxes:
        raise GameError(f"the current player, {current.name!r}, has a full sheet")
    for i, p in enumerate(game.players):
        expected = current.turns + (1 if i < game.current else 0)  # the order of play
        if p.turns > expected or (p.turns < expected and len(p.boxes) < n_boxes):
            raise GameError(
                f"{p.name!r} has played {p.turns} turns and {current.name!r}, whose turn it is, "
                f"{current.turns}: not the order of play"
            )


def _load_history(game, data: list) -> None:
    """The saved decisions: each a legal move of its own moment, and together the game as it stands (each
    player's sheet follows from their boxes, a keep's dice are the next step's, the last boxes made the
    sheets, the rolls showing come from the last keep). A history may begin after the game did (a save of
    an earlier version, played on)."""
    if len(data) > 4 * MAX_TURNS:
        raise GameError(f"history of {len(data)} steps: more than a game has")
    steps = [_load_step(game, n, step) for n, step in enumerate(data, 1)]
    base_turns, base_rolls = game.history_from or ((0,) * len(game.players), 0)
    sheets: dict[int, Sheet] = {}  # each player's sheet after the steps so far
    pending: Step | None = None  # a keep not yet followed by the turn's box
    for n, step in enumerate(steps, 1):
        what = f"history step {n} ({step.player}, {step.move})"
        first = game.rules.rolls - max(1, base_rolls if n == 1 else 1)  # a turn's first decision
        if pending is None and step.rolls_left != first:
            raise GameError(f"{what}: a turn's first decision is made with {first} rerolls left")
        if pending is not None and (step.index, step.dice, step.rolls_left) != (
            pending.index,
            pending.after,
            pending.rolls_left - 1,
        ):
            raise GameError(f"{what} does not follow the keep before it (the dice, rerolls or player differ)")
        if step.index in sheets and step.sheet != sheets[step.index]:
            raise GameError(f"{what}: the sheet is not the one the player's previous box made")
        if step.turn != _turns_of(game.rules, step.sheet) + 1:
            raise GameError(f"{what}: turn {step.turn} with {len(step.sheet.boxes)} boxes filled")
        if isinstance(step.move, Keep):
            sheets[step.index], pending = step.sheet, step
            continue
        legal, bonus = legal_boxes(game.rules, step.dice, step.sheet)
        sheets[step.index], pending = step.sheet.with_score(step.move.box, legal[step.move.box], bonus), None
    for index, p in enumerate(game.players):
        boxes = sum(isinstance(s.move, Score) and s.index == index for s in steps)
        if boxes != p.turns - base_turns[index]:
            raise GameError(f"the history holds {boxes} boxes of {p.name!r}, who played {p.turns} turns")
        if index in sheets and sheets[index] != p.sheet:
            raise GameError(f"the history's last box of {p.name!r} does not give the sheet saved")
    if pending is not None:
        if pending.index != game.current or (game.dice, game.rolls_left) != (pending.after, pending.rolls_left - 1):
            raise GameError("the history's last keep does not give the dice showing")
    elif steps:
        if game.rolls_made > 1:
            raise GameError(f"the dice show after roll {game.rolls_made}, yet the history holds no keep for them")
        if not game.over and game.current != _seat_after(game, steps[-1].index):
            raise GameError(f"the history's last box was {steps[-1].player!r}'s: not the turn of the player after")
    game.history = steps


def _seat_after(game, index: int) -> int:
    """The seat that plays after ``index``: the next one with an open box (as the sheets stand now)."""
    for step in range(1, len(game.players) + 1):
        nxt = (index + step) % len(game.players)
        if len(game.players[nxt].boxes) < len(game.rules.boxes):
            return nxt
    return index


def _load_step(game, n: int, data: object) -> Step:
    """One saved step, every field checked, and its move legal at its moment."""
    what = f"history step {n}"
    if not isinstance(data, dict):
        raise GameError(f"{what} must be an object")
    _check_keys(data, STEP_KEYS, set(), what)
    rs = game.rules
    index = _whole(_field(data, "index", what), f"{what}: index", 0, len(game.players) - 1)
    player = game.players[index]
    turn = _whole(_field(data, "turn", what), f"{what}: turn", 1, MAX_TURNS)
    dice = _dice(rs, _field(data, "dice", what), f"{what}: dice")
    rolls_left = _whole(_field(data, "rolls_left", what), f"{what}: rolls_left", 0, rs.rolls - 1)
    points = _field(data, "sheet", what)
    if not isinstance(points, dict):
        raise GameError(f"{what}: the sheet must be an object of box: points pairs")
    for key, value in points.items():
        _whole(value, f"{what}: sheet {short(key)}", -(2**63), 2**63 - 1)
    try:
        sheet = Sheet.from_mapping(points, rs).validate(rs)
    except SheetError as e:
        raise GameError(f"{what}: {e}") from None
    text = _field(data, "move", what)
    try:
        move = parse_move(text) if isinstance(text, str) and len(text) <= 100 else None
    except MoveError as e:
        raise GameError(f"{what}: {e}") from None
    if move is None or str(move) != text:
        raise GameError(f"{what}: the move is 'keep 1 3 4', 'roll' or 'score BOX', not {short(text)}")
    after = _field(data, "after", what)
    auto, computer = _field(data, "auto", what), _field(data, "computer", what)
    if not isinstance(auto, bool) or not isinstance(computer, bool):
        raise GameError(f"{what}: auto and computer must be true or false")
    if computer != player.computer:
        raise GameError(f"{what}: {player.name!r} is {'' if player.computer else 'not '}a computer player")
    if isinstance(move, Keep):
        if rolls_left == 0:
            raise GameError(f"{what}: a keep with no rolls left")
        if Counter(move.dice) - Counter(dice) or len(move.dice) > rs.dice:
            raise GameError(f"{what}: cannot {move}: the dice show {' '.join(map(str, dice))}")
        if after is None or auto:
            raise GameError(f"{what}: a keep gives the dice after it, and is never the auto-commit")
        after = _dice(rs, after, f"{what}: after")
        if Counter(move.dice) - Counter(after):
            raise GameError(f"{what}: the dice after {move} do not hold the dice kept")
    else:
        if after is not None:
            raise GameError(f"{what}: a box has no dice after it")
        if move.box not in legal_boxes(rs, dice, sheet)[0]:
            raise GameError(f"{what}: {rs.box_name(move.box)} may not take {' '.join(map(str, dice))} there")
        if auto and rolls_left > 0:
            raise GameError(f"{what}: the auto-commit only fills a box after the last roll")
    return Step(player.name, index, turn, dice, rolls_left, sheet, move, after, auto, computer)


def _turns_of(rs: rules.RuleSet, sheet: Sheet) -> int:
    """The turns played to fill ``sheet``: one a box, and in Kiriki one more for each five of a kind added."""
    extra = 0
    if rs.penta_repeat and rs.penta_id is not None and sheet.boxes.get(rs.penta_id, 0) > 0:
        extra = sheet.boxes[rs.penta_id] // rs.penta_points - 1
    return len(sheet.boxes) + extra


def _dice(rs: rules.RuleSet, value: object, what: str) -> tuple[int, ...]:
    """The dice of the rule set as a sorted tuple, from a JSON list; GameError naming ``what`` otherwise."""
    if not isinstance(value, list) or len(value) != rs.dice:
        raise GameError(f"{what}: {rs.dice} dice, not {short(value)}")
    return tuple(sorted(_whole(d, f"{what}: a die", 1, 6) for d in value))


def _check_keys(data: dict, required: set[str], optional: set[str], what: str) -> None:
    """Refuses fields not known; a missing field is refused where it is read (:func:`_field`)."""
    unknown = sorted(data.keys() - required - optional)
    if unknown:
        raise GameError(f"{what} has an unknown field {short(unknown[0])}")


def _field(data: dict, key: str, what: str) -> object:
    if key not in data:
        raise GameError(f"{what} has no {key!r}")
    return data[key]


def _whole(value: object, what: str, lo: int, hi: int) -> int:
    """An integer (a JSON number without a fraction, not true or false) from ``lo`` to ``hi``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise GameError(f"{what} must be a whole number, not {short(value)}")
    if not lo <= value <= hi:
        raise GameError(f"{what} must be {lo} to {hi}, not {short(value)}")
    return value


def _load_player(rs: rules.RuleSet, data: object, number: int = 0) -> Player:
    if not isinstance(data, dict):
        raise GameError(f"players[{number}] is {short(data)}, not an object: a player must be an object")
    _check_keys(data, PLAYER_KEYS, PLAYER_OPTIONAL_KEYS, "a player")
    name = check_name(_field(data, "name", "a player"))
    computer = _field(data, "computer", f"player {name!r}")
    if not isinstance(computer, bool):
        raise GameError(f"player {name!r}: computer must be true or false, not {short(computer)}")
    points = _field(data, "sheet", f"player {name!r}")
    if not isinstance(points, dict):
        raise GameError(f"player {name!r}: the sheet must be an object of box: points pairs")
    for key, value in points.items():
        _whole(value, f"player {name!r}: {short(key)}", -(2**63), 2**63 - 1)
    sheet = Sheet.from_mapping(points, rs).validate(rs, finished_ok=True)
    turns = _whole(_field(data, "turns", f"player {name!r}"), f"player {name!r}: turns", 0, MAX_TURNS)
    if turns != _turns_of(rs, sheet):
        raise GameError(f"player {name!r} has {len(sheet.boxes)} boxes filled after {turns} turns")
    strategy = data.get("strategy", strategies.DEFAULT)
    if not isinstance(strategy, str) or strategy not in strategies.STRATEGIES:
        raise GameError(
            f"player {name!r}: unknown strategy {short(strategy)}; strategies: {', '.join(strategies.STRATEGIES)}"
        )
    if not computer and strategy != strategies.DEFAULT:
        raise GameError(f"player {name!r} is a person: a strategy ({strategy}) is for computer players")
    return Player(name, computer, sheet, turns, strategy)


def _load_path(path: object) -> str | None:
    if path is None:
        return None
    if not isinstance(path, str) or not path or len(path) > 4096:
        raise GameError(f"save_path must be a file name or null, not {short(path)}")
    return path  # only ever shown (cleaned), never written to: a save file does not choose where games go
