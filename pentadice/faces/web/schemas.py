"""What the API's bodies and answers look like, for its OpenAPI description (``/openapi.json``).

These models document; they do not parse. Requests are read by :mod:`pentadice.faces.web.bodies` and the engine's
own checks (one strict reader, the same error texts as the command line), answers are built by the engine and
the advisor; ``tests/test_api.py`` checks that they agree with these models.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Face = Annotated[int, Field(ge=1, le=6)]
Version = Annotated[int, Field(ge=0, le=2**31 - 1)]
STRATEGY_PATTERN = "^([Oo][Pp][Tt][Ii][Mm][Aa][Ll]|[Ww][Ii][Nn])$"  # optimal or win, in any case


class Body(BaseModel):
    """A request body: a JSON object of the fields named, no other (unknown fields are refused, 422)."""

    model_config = ConfigDict(extra="forbid")


class ErrorOut(BaseModel):
    error: str = Field(description="What was wrong, in words.", examples=["no rolls left: score the dice in a box"])


class DamagedOut(ErrorOut):
    damaged: Literal[True] = Field(description="The game's record in the games database cannot be decoded.")


class Building(BaseModel):
    table: str | None = Field(description="The table being built: moments, chances, win or win-end.")
    what: str = Field(examples=["the win player's end-game table"])
    done: int = Field(0, description="Tables of this rule set built so far in this preparation.")
    total: int = Field(0, description="Tables of this rule set this preparation builds.")
    progress: float = Field(
        description="Of what this preparation builds for the rule set, the part done (0 to 1); in a game's "
        "`preparing`, the chances table's own."
    )
    table_progress: float = Field(0.0, description="Of the table being built, the part done (0 to 1).")


class TablesOut(BaseModel):
    ready: bool = Field(description="Every table a game of this rule set reads is held.")
    win: Literal["ready", "preparing", "refused", "unavailable"] = Field(
        description="A computer that plays to win: ready; its tables being prepared; refused for this rule set "
        "(win_refusal says why); unavailable (not built: --no-prepare, or the build failed)."
    )
    chances: Literal["ready", "preparing", "forward", "unavailable"] = Field(
        description="The live chances: read from the chances table; its table being prepared; computed the slow "
        "way, state by state (Maxi Yatzy: late in a game only); unavailable (Kiriki)."
    )
    building: Building | None
    failed: str | None = Field(description="Why preparing these tables failed, else null.")
    win_refusal: str | None = Field(description="Why a computer cannot play to win under this rule set, else null.")


class Health(BaseModel):
    status: Literal["ok"]
    rules: list[str] = Field(description="The rule sets served.")
    games: int = Field(description="Games in the database now, finished or not.")
    finished_games: int = Field(description="Of them, the finished ones (kept in the history).")
    kept: str = Field(description="What is kept, and how long an unfinished game is kept, in words.")
    database: Literal["sqlite", "postgresql"] = Field(description="The kind of database the games are kept in.")
    preparing: bool = Field(description="Tables are still being loaded or built in the background.")
    tables: dict[str, TablesOut] | None = Field(description="Each rule set's tables; null: none are prepared here.")
    share_base: str | None = Field(
        description="The URL a shared game's seat links begin with (http://192.168.1.5:8000, https:// with "
        "--tls); null: the server listens on loopback only (the page's own origin)."
    )


class BoxOut(BaseModel):
    id: str = Field(examples=["full_house"])
    name: str = Field(examples=["Full house"])
    section: Literal["upper", "lower"]


class JokerBoxOut(BaseModel):
    box: str = Field(examples=["full_house"])
    points: int = Field(description="What a joker scores in this box.", examples=[25])


class RuleSetOut(BaseModel):
    name: str = Field(examples=["penta"])
    title: str = Field(examples=["Penta"])
    boxes: list[BoxOut]
    dice: int
    rolls: int
    upper_threshold: int = Field(description="Upper points that earn the upper bonus.", examples=[63])
    upper_bonus: int = Field(examples=[35])
    penta_points: int = Field(description="Points of the Penta (Yahtzee) box (0: the sheet has none).", examples=[50])
    penta_bonus: int = Field(description="Bonus of each further five of a kind (0: none).", examples=[100])
    penta_repeat: bool = Field(description="Kiriki: further five of a kinds are added to the box.")
    joker: str = Field(description="How a joker is placed: none, free or forced.", examples=["forced"])
    joker_boxes: list[JokerBoxOut] = Field(
        description="The boxes a joker fills at their points (full house and straights), in sheet order."
    )
    auto_commit_seconds: float = Field(description="The default auto-commit delay of a new game.")
    win_refusal: str | None = Field(description="Why a computer cannot play to win under these rules, else null.")


class RulesOut(BaseModel):
    rules: list[RuleSetOut]


class AdviseIn(Body):
    """One ``advise --batch`` line, plus the rule set and how many options to list."""

    dice: list[Face] = Field(
        min_length=5,
        max_length=6,
        description="The dice showing (faces 1 to 6), as many as the rule set has (6 in maxi-yatzy).",
        examples=[[1, 1, 3, 4, 6]],
    )
    rolls_left: int = Field(
        2, ge=0, le=2, description="Rerolls left (0: the last roll) [default: the first roll's; 2 in 3 rolls]."
    )
    sheet: dict[str, int] = Field(
        default_factory=dict,
        description="Filled boxes and their points (box ids or names as people type them), and penta_bonus "
        "where the rule set pays one.",
        examples=[{"ones": 3, "full_house": 25}],
    )
    rules: str | None = Field(
        None, description="Rule set, one of those served (default: penta, or the only one served)."
    )
    top: int | None = Field(None, ge=1, le=1_000_000, description="List only the best N options (default: all).")


class OptionOut(BaseModel):
    action: Literal["keep", "score"]
    keep: list[int] | None = Field(None, description="The dice kept (keep).")
    box: str | None = Field(None, description="The box filled (score).")
    points: int | None = None
    penta_bonus: int | None = None
    upper_bonus: int | None = None
    value: float = Field(description="Expected final score of the game with this option and optimal play.")
    loss: float = Field(description="Expected points lost against the best option.")


class OutlookOut(BaseModel):
    option: OptionOut
    points_this_turn: float
    points_later: float
    likely_box: str
    likely_box_chance: float


class WhyOut(BaseModel):
    text: str
    gain: float
    best: OutlookOut
    obvious: OutlookOut


class AdviceNoWhy(BaseModel):
    """An ``advise --batch`` answer: the ``--json`` object without ``why``."""

    rules: str
    dice: list[int]
    rolls_left: int
    sheet: dict[str, int]
    score_so_far: int
    best: OptionOut
    options: list[OptionOut]
    joker: str | None = Field(None, description="The joker's effect, when it applies (absent otherwise).")
    message: str | None = Field(None, description="The rules' sacrifice message, when it applies.")


class AdviceOut(AdviceNoWhy):
    """Exactly what ``pentadice advise --json`` prints."""

    why: WhyOut | None = Field(description="Why the best option beats the most points this turn (null: it is that).")


class BatchError(BaseModel):
    line: int = Field(description="The item's number, from 1.")
    error: str


class BatchIn(Body):
    rules: str | None = Field(None, description="Rule set, one of those served (default: penta).")
    top: int | None = Field(None, ge=1, le=1_000_000)
    items: list[Any] = Field(
        max_length=1000,
        description="Situations, as /api/advise bodies (dice, rolls_left, sheet). An item that is not one is "
        "answered in its place in results by its error ({line, error}), the answer still 200.",
    )


class BatchOut(BaseModel):
    results: list[AdviceNoWhy | BatchError]


class PlayerIn(Body):
    name: str = Field(
        min_length=1,
        max_length=32,
        description="Printable, no surrounding spaces, no control or invisible character (422 otherwise); "
        "distinct from the other players' as it shows.",
    )
    computer: bool = False
    strategy: str | None = Field(
        "optimal",
        pattern=STRATEGY_PATTERN,
        description="A computer's strategy: optimal or win, in any case (null: optimal).",
    )


class NewGameIn(Body):
    players: str | Annotated[list[PlayerIn], Field(min_length=1, max_length=6)] = Field(
        "You,cpu",
        description='"Ana,cpu:win,cpu" (a name is a person; cpu, cpu:STRATEGY, cpu:NAME or cpu:STRATEGY:NAME a '
        "computer; strategies: optimal, the default, and win), or a list.",
        max_length=280,
    )
    rules: str | None = Field(None, description="Rule set, one of those served (default: penta).")
    seed: int | None = Field(
        None, ge=0, le=2**128 - 1, description="Seed of the dice: the same seed and moves, the same game."
    )
    auto_commit: float | None = Field(
        3, ge=0, le=86400, description="Seconds the page counts down after a person's last roll (null: off)."
    )
    dice: Literal["random", "manual"] = Field(
        "random", description="manual: a coach game, whose dice the client gives (real dice)."
    )
    save: dict[str, Any] | None = Field(
        None,
        description="A saved game (from GET /api/games/{id}/save or `pentadice play --save`): go on with it "
        "(players, rules, seed and dice then come from it, and may not be given). null: no save, a new game.",
    )
    shared: bool = Field(
        False,
        description="Played from several devices: each person's seat gets a secret (in this answer only), and a "
        "move is accepted only with the X-Pentadice-Seat header of the seat to move. Not with dice: manual.",
    )


class PlayerView(BaseModel):
    name: str
    computer: bool
    strategy: str | None = Field(None, description="A computer's strategy (optimal or win); null for a person.")
    turns: int
    sheet: dict[str, int]
    totals: dict[str, int]


class SeatOut(BaseModel):
    seat: int = Field(description="The seat's index into players.")
    name: str
    secret: str = Field(description="Sent back in the X-Pentadice-Seat header; kept in localStorage, never a URL.")


class GameView(BaseModel):
    """The engine's view of the game, with the server's fields."""

    id: str = Field(description="The game's id: 22 random characters.")
    rules: str
    players: list[PlayerView]
    over: bool
    current: int | None = Field(description="Whose turn (an index into players); null once over.")
    turn: int | None
    dice: list[int] | None = Field(description="The dice showing; null before the turn's first roll.")
    rolls_left: int | None
    deadline: float | None
    legal: dict[str, int] | None = Field(None, description="Boxes that may take the dice, with their points.")
    penta_bonus: int | None = None
    warning: str | None = None
    winners: list[str] | None = None
    coach: bool = Field(description="A coach game: the client gives the dice.")
    auto_commit_seconds: float | None
    can_undo: bool
    history: int = Field(description="Decisions made so far.")
    version: int = Field(description="Moves written so far; a move may send it back to be played only on this view.")
    advice: AdviceOut | None = Field(
        description="The advise --json object for a person's dice showing, else null (in a shared game: given "
        "only to the device holding the seat to move)."
    )
    shared: bool = Field(False, description="Played from several devices, each seat's moves from its own.")
    you: int | None = Field(
        None, description="The seat the request's X-Pentadice-Seat secret holds; null: none (a watcher)."
    )
    seats: list[SeatOut] | None = Field(
        None, description="A shared game's creating answer only: each person's seat with its secret."
    )
    chances: list[float] | None = Field(
        None,
        description="Each player's probability of finishing first from the sheets as they stand and the dice "
        "showing, every player assumed to play optimal; null while computed (chances_pending) or where not "
        "available (Kiriki).",
    )
    chances_pending: bool = Field(False, description="The chances are being computed: GET .../chances waits for them.")
    preparing: Building | None = Field(None, description="The chances table being prepared (chances then null).")


class ChancesOut(BaseModel):
    sheets: list[dict[str, int]] = Field(description="The sheets the chances are for, one per player.")
    chances: list[float] | None = Field(
        description="Each player's probability of finishing first; null: not available."
    )
    reason: str | None = Field(description="Why the chances are not available (Kiriki), else null.")
    preparing: Building | None = Field(None, description="The chances table being prepared (chances then null).")


class RollIn(Body):
    keep: list[Face] = Field(default_factory=list, max_length=6, description="Faces kept (empty: roll them all).")
    dice: list[Face] | None = Field(None, max_length=6, description="Coach games: the faces of the dice rolled.")
    version: Version | None = Field(None, description="The view's version: 409 if the game has moved on since.")


class ScoreIn(Body):
    box: str = Field(examples=["fives"])
    version: Version | None = Field(None, description="The view's version: 409 if the game has moved on since.")


class VersionIn(Body):
    """The optional body of a move without fields (auto-commit, computer, undo): none, ``{}`` or a version."""

    version: Version | None = Field(None, description="The view's version: 409 if the game has moved on since.")


class PlayedOut(BaseModel):
    player: str
    computer: bool = False
    rolled: list[int] | None = Field(None, description="A turn's first roll.")
    move: str | None = Field(None, description="The move's notation: keep 4 4, roll, score fives.")
    dice: list[int] | None = None
    box: str | None = None
    points: int | None = None
    penta_bonus: int | None = None
    upper_bonus: int | None = None
    auto: bool | None = None
    loss: float | None = None


class MoveOut(BaseModel):
    played: PlayedOut
    game: GameView


class GameOut(BaseModel):
    game: GameView


class ReviewPlayer(BaseModel):
    name: str
    computer: bool
    decisions: int
    total_loss: float
    mean_loss: float | None
    worst: list[dict[str, Any]]
    strategy: str | None = None
    score: int | None = Field(None, description="The player's total so far (final once the game is over).")
    winner: bool | None = Field(None, description="Whether the player has the top score of a finished game.")


class ReviewOut(BaseModel):
    over: bool | None = Field(None, description="Whether the game is finished.")
    players: list[ReviewPlayer]
    decisions: list[dict[str, Any]]


class SaveOut(BaseModel):
    """A saved game, as ``pentadice play --resume`` reads it (without the generator's state)."""

    model_config = {"extra": "allow"}
    format: Literal["pentadice-game"]
    rules: str


class MessagesOut(BaseModel):
    lang: str
    messages: dict[str, str]


class QrIn(Body):
    text: str = Field(
        max_length=512,
        pattern="^[Hh][Tt][Tt][Pp][Ss]?://",
        description="An http:// or https:// link with a host, no spaces (422 otherwise).",
    )


REQUEST_MODELS = (AdviseIn, BatchIn, NewGameIn, RollIn, ScoreIn, VersionIn, QrIn)


class HistoryPlayerOut(BaseModel):
    name: str
    computer: bool
    strategy: str | None = Field(description="A computer's strategy; null for a person.")
    score: int
    winner: bool
    decisions: int | None = Field(description="Decisions reviewed (null: a game finished before reviews were kept).")
    mean_loss: float | None = Field(description="Mean loss per decision, points (below 0.2: expert play).")


class HistoryGameOut(BaseModel):
    id: str = Field(description="The game's id: its review is GET /api/games/{id}/review.")
    rules: str
    source: Literal["web", "terminal"] = Field(description="Played on the page (or the API), or at a terminal.")
    started: str = Field(description="ISO 8601, UTC.")
    finished: str = Field(description="ISO 8601, UTC.")
    players: list[HistoryPlayerOut]
    winners: list[str]


class HistoryOut(BaseModel):
    games: list[HistoryGameOut] = Field(description="The finished games asked for, the latest first.")
    total: int = Field(description="Finished games matching, in all.")
    expert_mean_loss: float


class PlayerStatsOut(BaseModel):
    name: str
    rules: str
    computer: bool
    games: int
    wins: int
    mean_score: float
    best_score: int
    decisions: int = Field(description="Decisions reviewed.")
    mean_loss: float | None = Field(description="Mean loss per decision reviewed, points; null: none reviewed.")
    expert: bool = Field(description="The mean loss is below expert_mean_loss.")
    last: str | None = Field(description="When their last game finished, ISO 8601, UTC.")


class PlayersOut(BaseModel):
    players: list[PlayerStatsOut] = Field(description="The players asked for (limit, offset), the most games first.")
    total: int = Field(description="Players (per rule set) in all.")
    expert_mean_loss: float


class PlayerGameOut(BaseModel):
    id: str
    rules: str
    finished: str
    score: int
    winner: bool
    decisions: int | None
    mean_loss: float | None


class PlayerOut(BaseModel):
    name: str
    stats: list[PlayerStatsOut] = Field(description="Per rule set.")
    games: list[PlayerGameOut] = Field(description="Their finished games, in the order played (the latest 1,000).")
    expert_mean_loss: float
