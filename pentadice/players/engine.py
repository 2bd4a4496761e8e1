"""The game engine: players take turns on their own score sheets, under one rule set. Pure Python, no I/O.

A front end drives it (see ``docs/architecture.md``): :meth:`Game.advance` plays what needs no person (a
turn's first roll, the computer's moves, and the auto-commit once the time passed in reaches the deadline:
the box the computer would choose), :meth:`Game.play` makes a person's :class:`~pentadice.game.moves.Keep` or
:class:`~pentadice.game.moves.Score` and says what happened, :meth:`Game.view` gives the game as JSON-ready data.
(:meth:`Game.roll` and :meth:`Game.score` are the steps underneath.) A game saves to JSON
(:meth:`Game.to_json`) and loads from it (:meth:`Game.from_json`), random generator included, so that a
resumed game rolls what the original would have rolled (a save made with ``rng=False`` leaves it out, and
the game draws fresh dice when it is loaded). A saved game is checked as strictly as a sheet typed on the command
line: anything wrong in it is a :class:`GameError` naming what, never another exception.

Every decision is kept in :attr:`Game.history` (:class:`Step`: the moment and the move), saved with the game, for
the review. A coach game (the dice entered by the caller) takes its steps back with :meth:`Game.undo`.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from pentadice.game import rules
from pentadice.game.moves import Keep, Move, MoveError, Score, parse_move
from pentadice.game.rules import NO_SCORE_MESSAGE
from pentadice.game.sheet import Sheet, SheetError
from pentadice.game.situation import Situation
from pentadice.players import strategies
from pentadice.support import inputs
from pentadice.support.inputs import unsafe_char

_COUNT_WORDS = ("no", "one", "two", "three", "four", "five", "six")  # (the engine's messages; words.py is above it)

MAX_PLAYERS = 6
MAX_NAME = 32  # characters in a player's name
MAX_AUTO_COMMIT = 86400.0  # seconds: a day; longer is "off"
MAX_SAVE_BYTES = 1 << 20  # a saved game is a few kilobytes; anything over a megabyte is not one
MAX_TURNS = 10_000  # far beyond any game (Kiriki's extra turns included)
SAVE_FORMAT = "pentadice-game"
SAVE_KEYS = {"format", "rules", "players", "current", "dice", "rolls_made", "auto_commit_seconds"}
SAVE_OPTIONAL_KEYS = {"hints", "save_path", "coach", "history", "history_from", "rng"}  # absent from earlier saves
PLAYER_KEYS = {"name", "computer", "turns", "sheet"}
PLAYER_OPTIONAL_KEYS = {"strategy"}  # a computer's strategy; absent from earlier saves (optimal)
STEP_KEYS = {"index", "turn", "dice", "rolls_left", "sheet", "move", "after", "auto", "computer"}
MAX_UNDO = 1000  # steps a coach game can take back (a whole game of six players is about 400)
RNG_KEYS = {"bit_generator", "state", "has_uint32", "uinteger"}
# Characters never printed raw: they could move the cursor, retitle the terminal or reorder the text shown.


class GameError(ValueError):
    """A move the rules do not allow now, or a saved game that cannot be loaded."""


BOM = "\ufeff"  # a byte-order mark, as some editors (Windows Notepad) begin a UTF-8 file


def save_text(data: str | bytes | bytearray) -> str:
    """The text of a save file, as every reader of saves reads it (``play --resume``, ``review``, the page
    and the API, by :meth:`Game.from_json`): strict UTF-8 (anything else is refused, saying so: a save is
    never shown with replacement characters), and one leading byte-order mark dropped (an editor may add
    it). InputError if the bytes are not UTF-8."""
    text = inputs.decode(bytes(data), "the saved game") if isinstance(data, bytes | bytearray) else data
    return text.removeprefix(BOM)


def check_name(name: object) -> str:
    """A player's name: 1 to :data:`MAX_NAME` printable characters, no surrounding spaces; GameError if not."""
    if not isinstance(name, str):
        raise GameError(f"a player's name is text, not {name!r}")
    if not name.strip():
        raise GameError("empty player name")
    if not any(unicodedata.category(c)[0] in "LNPS" for c in name):  # letters, digits, marks of punctuation
        raise GameError(f"player name {name!r} has no visible character")
    if any(unsafe_char(c) for c in name):
        raise GameError(f"player name {name!r} holds a control character: names are printable text")
    if name != name.strip():
        raise GameError(f"player name {name!r} starts or ends with spaces")
    if len(name) > MAX_NAME:
        raise GameError(f"player name {name[:MAX_NAME]!r}... is longer than {MAX_NAME} characters")
    return name


def check_auto_commit(seconds: object) -> float | None:
    """The auto-commit time: a finite number of seconds from 0 (at once) to :data:`MAX_AUTO_COMMIT`, or None
    (off); GameError if not."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise GameError(f"the auto-commit time is a number of seconds or off, not {_short(seconds)}")
    # The comparisons come first: an integer too large for a float must not reach float().
    if not (0 <= seconds <= MAX_AUTO_COMMIT and math.isfinite(seconds)):
        raise GameError(f"the auto-commit time is 0 to {MAX_AUTO_COMMIT:g} seconds or off, not {_short(seconds)}")
    return abs(float(seconds))  # -0.0 is 0


def parse_auto_commit(text: str) -> float | None:
    """``--auto-commit``: seconds (0: at once) or ``off``; GameError for anything else (inf, nan, negative,
    more than a day)."""
    word = text.strip().lower()
    if word == "off":
        return None
    seconds = float(word) if re.fullmatch(r"[0-9]{1,9}(\.[0-9]*)?|\.[0-9]+", word) else math.nan
    if not 0 <= seconds <= MAX_AUTO_COMMIT:  # NaN too
        raise GameError(f"{_short(text)} is not a number of seconds from 0 to {MAX_AUTO_COMMIT:g}, or off")
    return seconds


@dataclass
class Player:
    """One player: a name, human or computer, the score sheet so far and the turns played (Kiriki gives extra
    turns), and a computer's strategy (:mod:`pentadice.players.strategies`; a person's is ``optimal``, the
    computer's choice a person may ask for). The sheet is replaced, never edited, as boxes are filled."""

    name: str
    computer: bool = False
    sheet: Sheet = field(default_factory=Sheet)
    turns: int = 0
    strategy: str = strategies.DEFAULT

    @property
    def boxes(self) -> Mapping[str, int]:
        return self.sheet.boxes

    @property
    def penta_bonus(self) -> int:
        return self.sheet.penta_bonus


@dataclass(frozen=True)
class Scored:
    """What one scoring move earned."""

    player: str
    box: str
    points: int
    penta_bonus: int
    upper_bonus: int
    auto: bool = False


@dataclass(frozen=True)
class Played:
    """What one move did: who made it, the move, the dice it kept and the dice after it (a keep) or what it
    earned (a score), and what it cost against the best option (when an advisor was asked)."""

    player: str
    move: Move
    dice: tuple[int, ...]  # after a keep, the dice showing; after a score, the dice scored
    kept: tuple[int, ...] = ()
    scored: Scored | None = None
    loss: float | None = None
    computer: bool = False

    def as_dict(self) -> dict:
        out = {"player": self.player, "move": str(self.move), "dice": list(self.dice), "computer": self.computer}
        if self.scored is not None:
            s = self.scored
            out.update(box=s.box, points=s.points, penta_bonus=s.penta_bonus, upper_bonus=s.upper_bonus, auto=s.auto)
        if self.loss is not None:
            out["loss"] = self.loss
        return out


@dataclass(frozen=True)
class Step:
    """One decision of a game: who made it (``player``, the name; ``index``, the seat), in which of their turns,
    the moment before it (the dice showing, the rerolls left, the sheet), the move, the dice after it (a keep),
    and whether the auto-commit (``auto``) or a computer player made it. A turn's first roll is no decision."""

    player: str
    index: int
    turn: int
    dice: tuple[int, ...]
    rolls_left: int
    sheet: Sheet
    move: Move
    after: tuple[int, ...] | None = None
    auto: bool = False
    computer: bool = False

    def situation(self) -> Situation:
        """The moment of the decision as the advisor sees it."""
        return Situation(self.dice, self.rolls_left, self.sheet)

    def as_json(self, rs: rules.RuleSet | None = None) -> dict:
        """The step as saved (the player by seat; the sheet in the order of ``rs``'s boxes)."""
        return {
            "index": self.index,
            "turn": self.turn,
            "dice": list(self.dice),
            "rolls_left": self.rolls_left,
            "sheet": self.sheet.as_dict(rs),
            "move": str(self.move),
            "after": list(self.after) if self.after is not None else None,
            "auto": self.auto,
            "computer": self.computer,
        }


@dataclass(frozen=True)
class _Snapshot:
    """What a step changes, as it was before it (for :meth:`Game.undo`)."""

    sheets: tuple[tuple[Sheet, int], ...]  # each player's sheet and turns
    current: int
    dice: tuple[int, ...] | None
    rolls_made: int
    history: int  # steps recorded


def parse_players(spec: str) -> list[Player]:
    """Players from ``"Ana,cpu:win,cpu"``: a name is a human; ``cpu`` a computer playing ``optimal``,
    ``cpu:STRATEGY`` one playing that strategy, ``cpu:NAME`` a named one playing ``optimal`` and
    ``cpu:STRATEGY:NAME`` a named one playing that strategy (see :func:`strategies.parse_computer`)."""
    players = []
    unnamed = []  # computers without a name: "cpu" alone, "cpu 1", "cpu 2"... when there are several
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            raise GameError(f"empty player name in {spec!r}")
        kind, colon, name = item.partition(":")
        if kind.strip().lower() == "cpu":
            try:
                strategy, name = strategies.parse_computer(name, item) if colon else (strategies.DEFAULT, "")
            except strategies.StrategyError as e:
                raise GameError(str(e)) from None
            players.append(Player(name, computer=True, strategy=strategy))
            if not name:
                unnamed.append(players[-1])
        elif ":" in item:
            raise GameError(
                f"unknown player kind {kind!r} in {item!r}: a player is NAME, cpu, cpu:STRATEGY, cpu:NAME or "
                f"cpu:STRATEGY:NAME"
            )
        else:
            players.append(Player(item))
    for number, player in enumerate(unnamed, 1):
        player.name = "cpu" if len(unnamed) == 1 else f"cpu {number}"
    check_players(players)
    return players


def check_players(players: Sequence[Player]) -> None:
    """1 to :data:`MAX_PLAYERS` players with distinct, printable names (see :func:`check_name`)."""
    if not 1 <= len(players) <= MAX_PLAYERS:
        raise GameError(f"a game has 1 to {MAX_PLAYERS} players, not {len(players)}")
    for p in players:
        check_name(p.name)
        if p.strategy not in strategies.STRATEGIES:
            raise GameError(f"unknown strategy {p.strategy!r}: strategies are {', '.join(strategies.STRATEGIES)}")
        if not p.computer and p.strategy != strategies.DEFAULT:
            raise GameError(f"{p.name!r} is a person: a strategy ({p.strategy}) is for computer players")
    names = [p.name for p in players]
    twice = [n for n, c in Counter(names).items() if c > 1]
    if twice:
        raise GameError(f"two players are called {twice[0]!r}")
    seen: dict[str, str] = {}
    for name in names:
        other = seen.setdefault(name_key(name), name)
        if other != name:
            raise GameError(f"two players' names look the same: {other!r} and {name!r}; give names that differ")


_INVISIBLE = frozenset("\u034f\u115f\u1160\u3164\uffa0") | frozenset(map(chr, range(0xFE00, 0xFE10)))


def name_key(name: str) -> str:
    """What a name looks like, to tell players apart: its NFKC form (full-width letters, ligatures, a
    no-break space as their plain forms) without invisible characters (format characters such as a zero-width
    space or joiner, variation selectors, fillers) and with each run of spaces as one."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(c for c in text if c not in _INVISIBLE and unicodedata.category(c) != "Cf")
    return " ".join(text.split())


class Game:
    """A game of several players under rule set ``rules``, with a seeded NumPy generator for the dice."""

    def __init__(
        self,
        rs: rules.RuleSet,
        players: Sequence[Player],
        seed: int | None = None,
        auto_commit_seconds: float | None = 3.0,
        coach: bool = False,
    ) -> None:
        check_players(players)
        for p in players:
            try:
                strategies.check(rs, p.strategy)
            except strategies.StrategyError as e:
                raise GameError(str(e)) from None
        self.coach = coach  # the dice come from the caller (real dice on the table), not the generator
        self.rules = rs
        self.players = list(players)
        self.rng = np.random.default_rng(seed)
        self.auto_commit_seconds = check_auto_commit(auto_commit_seconds)  # None: off
        self.current = 0
        self.dice: tuple[int, ...] | None = None
        self.rolls_made = 0
        self.deadline: float | None = None  # when the auto-commit fills a box (see advance)
        self.history: list[Step] = []  # every decision, in order
        # Where the history began, when not at the game's start (a save of an earlier version played on, or a game
        # set up in the middle): each player's turns and the rolls made in the turn then. Set at the first step.
        self.history_from: tuple[tuple[int, ...], int] | None = None
        self._undo: deque[_Snapshot] = deque(maxlen=MAX_UNDO)  # coach games: the game before each step
        # The front end's settings, kept with a saved game.
        self.hints = False
        self.save_path: str | None = None

    # What the front end reads.

    @property
    def player(self) -> Player:
        return self.players[self.current]

    @property
    def over(self) -> bool:
        return all(len(p.boxes) == len(self.rules.boxes) for p in self.players)

    @property
    def rolls_left(self) -> int:
        return self.rules.rolls - self.rolls_made

    @property
    def turn_number(self) -> int:
        """The current player's turn, from 1 (past the number of boxes in Kiriki's extra turns)."""
        return self.player.turns + 1

    def situation(self) -> Situation:
        """The current moment as the advisor sees it."""
        if self.dice is None:
            raise GameError("roll the dice first")
        return Situation(self.dice, self.rolls_left, self.player.sheet)

    def legal_boxes(self) -> tuple[dict[str, int], int]:
        """The boxes that may take the dice now and their points, and the Penta bonus the dice earn."""
        if self.dice is None:
            raise GameError("roll the dice first")
        return _legal(self.rules, self.dice, self.player.sheet)

    @property
    def no_box_scores(self) -> bool:
        """True when every box that may take the dice would score 0: the rules' sacrifice warning."""
        legal, _ = self.legal_boxes()
        return all(points == 0 for points in legal.values())

    @property
    def warning(self) -> str | None:
        """The rules' sacrifice warning: only on the last roll (with rerolls left there is still a choice)."""
        if self.dice is None or self.rolls_left > 0:
            return None
        return NO_SCORE_MESSAGE if self.no_box_scores else None

    def totals(self, player: Player) -> dict[str, int]:
        """Upper section, its bonus, lower section, Penta bonuses and TOTAL (the sheet's own sums)."""
        return player.sheet.totals(self.rules)

    def winners(self) -> list[Player]:
        """The players with the highest total (several on a tie); only once the game is over."""
        if not self.over:
            raise GameError("the game is not over yet")
        best = max(self.totals(p)["total"] for p in self.players)
        return [p for p in self.players if self.totals(p)["total"] == best]

    # Moves.

    def roll(self, keep: Sequence[int] = (), rolled: Sequence[int] | None = None) -> tuple[int, ...]:
        """Roll the dice, keeping ``keep`` (faces among the dice showing); returns the dice, sorted. ``rolled``:
        the faces the other dice show, given by the caller (a coach game must give them)."""
        if self.over:
            raise GameError("the game is over")
        if self.rolls_made >= self.rules.rolls:
            raise GameError(f"no rolls left: {self.rules.rolls} rolls a turn; score the dice in a box")
        keep = tuple(sorted(keep))
        if self.dice is None:
            if keep:
                raise GameError("there are no dice to keep before the first roll")
        else:
            self._check_showing(keep)
        n = self.rules.dice - len(keep)
        if rolled is None:
            if self.coach:
                raise GameError(f"a coach game takes the faces of the {n} dice rolled from you")
            rolled = self.rng.integers(1, 7, size=n)
        else:
            rolled = tuple(rolled)
            if len(rolled) != n or not all(isinstance(d, int | np.integer) and 1 <= d <= 6 for d in rolled):
                raise GameError(f"give the faces of the {n} dice rolled, each 1 to 6, not {list(rolled)}")
        before = self.dice
        self._remember()
        self.dice = tuple(sorted(keep + tuple(int(d) for d in rolled)))
        if before is not None:  # a keep: a decision (the first roll of a turn is none)
            self._record(before, Keep(keep), self.dice)
        self.rolls_made += 1
        self.deadline = None
        return self.dice

    def _check_showing(self, keep: Sequence[int]) -> None:
        """GameError unless every die of ``keep`` is among the dice showing (saying which are not)."""
        showing = Counter(self.dice)
        missing = Counter(keep) - showing
        if missing:
            faces = []
            for face in sorted(missing):
                n = showing[face]
                faces.append(f"no {face}" if n == 0 else f"only {_COUNT_WORDS[n]} {face}{'s' if n > 1 else ''}")
            raise GameError(
                f"cannot keep {' '.join(map(str, sorted(keep)))}: the dice show {' '.join(map(str, self.dice))} "
                f"({', '.join(faces)})"
            )

    def score(self, box: str, auto: bool = False) -> Scored:
        """Fill ``box`` with the dice; the turn passes to the next player."""
        if self.over:
            raise GameError("the game is over")
        if box not in self.rules.boxes:
            known = box in rules.BOX_NAMES_EN  # a box of another sheet (one_pair in Penta, penta in Yatzy)
            what = f"{self.rules.title} has no box" if known else "unknown box"
            raise GameError(f"{what} {box!r}; boxes: {' '.join(self.rules.boxes)}")
        if self.dice is None:
            raise GameError("roll the dice first")
        player = self.player
        legal, bonus = self.legal_boxes()
        if box in player.boxes and box not in legal:
            raise GameError(f"{self.rules.box_name(box)} is already filled ({player.boxes[box]})")
        if box not in legal:
            allowed = ", ".join(self.rules.box_name(b) for b in legal)
            raise GameError(f"the joker does not allow {self.rules.box_name(box)} now; allowed: {allowed}")
        points = legal[box]
        before = player.sheet.upper_total
        upper = (self.rules.upper_mask >> self.rules.box_index[box]) & 1
        upper_bonus = rules.upper_bonus_earned(self.rules, before, points) if upper else 0
        self._remember()
        self._record(self.dice, Score(box), None, auto)
        player.sheet = player.sheet.with_score(box, points, bonus)
        player.turns += 1
        self._next_player()
        return Scored(player.name, box, points, bonus, upper_bonus, auto)

    def _record(self, dice: tuple[int, ...], move: Move, after: tuple[int, ...] | None, auto: bool = False) -> None:
        """Keep the decision being made now (before the game changes) in :attr:`history`."""
        if not self.history:
            base = (tuple(q.turns for q in self.players), self.rolls_made)
            self.history_from = None if base == ((0,) * len(self.players), 1) else base
        p = self.player
        sheet = Sheet(dict(p.sheet.boxes), p.sheet.penta_bonus)  # a copy: a sheet's boxes are a plain dict
        step = Step(p.name, self.current, p.turns + 1, dice, self.rolls_left, sheet, move, after, auto, p.computer)
        self.history.append(step)

    # Taking a step back (coach games).

    def _remember(self) -> None:
        """The game as it is now, before a step changes it: what :meth:`undo` goes back to (coach games)."""
        if self.coach:
            sheets = tuple((Sheet(dict(p.sheet.boxes), p.sheet.penta_bonus), p.turns) for p in self.players)
            self._undo.append(_Snapshot(sheets, self.current, self.dice, self.rolls_made, len(self.history)))

    @property
    def can_undo(self) -> bool:
        """Whether :meth:`undo` has a step to take back: a coach game with a step made since it began or was
        loaded (the steps to take back are not saved)."""
        return self.coach and bool(self._undo)

    def undo(self) -> None:
        """Take back the last step of a coach game: a box filled, a keep with the roll entered for it, or a
        turn's first roll. The sheets, turns, player, dice and history are as they were before it; the
        auto-commit's countdown starts again. GameError in a game that rolls its own dice (undo would let a
        player roll again until the dice please), or with nothing to take back."""
        if not self.coach:
            raise GameError("only a coach game takes a step back: here the game rolls the dice, and undo would reroll")
        if not self._undo:
            raise GameError("nothing to undo")
        snap = self._undo.pop()
        for p, (sheet, turns) in zip(self.players, snap.sheets, strict=True):
            p.sheet, p.turns = sheet, turns
        self.current, self.dice, self.rolls_made = snap.current, snap.dice, snap.rolls_made
        del self.history[snap.history :]
        self.deadline = None

    def auto_commit(self, advisor) -> Scored:
        """After the last roll, with no box chosen in time: fill the box the computer would choose."""
        return self.auto_commit_played(advisor).scored

    def auto_commit_played(self, advisor) -> Played:
        """:meth:`auto_commit`, reported as a move (:class:`Played`) for a front end to show."""
        if self.dice is None or self.rolls_left > 0:
            raise GameError("the auto-commit only fills a box after the last roll")
        return self.play(Score(advisor.best_box(self.situation()).box), advisor, auto=True)

    # One move type in, what happened out; the game advanced until a person must act.

    def start_turn(self, rolled: Sequence[int] | None = None) -> tuple[int, ...]:
        """The first roll of the current player's turn (``rolled``: the dice, in a coach game)."""
        if self.dice is not None:
            raise GameError("the turn has begun: the dice are showing")
        return self.roll((), rolled)

    def play(self, move: Move, advisor=None, auto: bool = False, rolled: Sequence[int] | None = None) -> Played:
        """Make ``move`` for the current player (a :class:`Keep` rolls the other dice, from the generator or,
        given, ``rolled``; a :class:`Score` fills the box); with an ``advisor``, what it cost against the best
        option is in the result."""
        if self.dice is None:
            raise GameError("roll the dice first")
        player, before = self.player, self.dice
        loss = None
        if advisor is not None and not (isinstance(move, Keep) and len(move.dice) == self.rules.dice):
            try:
                loss = advisor.advise(self.situation()).option_of(move).loss
            except ValueError:
                loss = None  # not a legal option: the move itself is refused below, with the reason
        self.deadline = None
        if isinstance(move, Keep):
            self._check_showing(move.dice)  # dice not showing are refused as such, however many are kept
            if len(move.dice) == self.rules.dice:
                raise GameError("keeping all the dice rolls nothing: score them in a box")
            if self.rolls_left == 0:
                raise GameError("no rolls left: score the dice in a box")
            dice = self.roll(move.dice, rolled)
            return Played(player.name, move, dice, move.dice, None, loss, player.computer)
        scored = self.score(move.box, auto=auto)
        return Played(player.name, move, before, (), scored, loss, player.computer)

    def advance(self, advisor, now: float, limit: int | None = None) -> list[Played | tuple[str, str, tuple[int, ...]]]:
        """Play what needs no person, up to the point where one must act: a new turn's first roll (reported
        as ``("rolled", player, dice)``), the computer players' moves, and, once ``now`` (seconds, any clock
        the caller keeps) has passed the :attr:`deadline`, the auto-commit. The deadline is set, from ``now``,
        when a person's last roll is first seen here (:meth:`restart_countdown` clears it when the person
        acts). At most ``limit`` steps (a front end that shows them one by one). Returns what happened."""
        happened: list = []
        while not self.over and (limit is None or len(happened) < limit):
            if self.dice is None:
                if self.coach:
                    break  # the caller rolls real dice: start_turn(rolled)
                name = self.player.name
                happened.append(("rolled", name, self.start_turn()))
                continue
            if self.player.computer:
                happened.append(computer_move(self, advisor))
                continue
            if self.rolls_left > 0 or self.auto_commit_seconds is None:
                break
            if self.deadline is None:
                self.deadline = now + self.auto_commit_seconds
            if now < self.deadline:
                break
            happened.append(self.auto_commit_played(advisor))
        return happened

    def restart_countdown(self) -> None:
        """The person whose turn it is did something (typed a line): the auto-commit's countdown starts again
        at the next :meth:`advance`."""
        self.deadline = None

    def view(self) -> dict:
        """The game as JSON-ready data for any front end: players with their sheets and totals, whose turn,
        the dice, the boxes that may take them with their points, the rules' warning, the auto-commit's
        deadline, and the winners once the game is over."""
        out: dict = {
            "rules": self.rules.name,
            "players": [
                {
                    "name": p.name,
                    "computer": p.computer,
                    "strategy": p.strategy if p.computer else None,
                    "turns": p.turns,
                    "sheet": p.sheet.as_dict(self.rules),
                    "totals": p.sheet.totals(self.rules),
                }
                for p in self.players
            ],
            "over": self.over,
            "current": None if self.over else self.current,
            "turn": None if self.over else self.turn_number,
            "dice": list(self.dice) if self.dice is not None else None,
            "rolls_left": self.rolls_left if self.dice is not None else None,
            "deadline": self.deadline,
        }
        if self.dice is not None:
            legal, bonus = self.legal_boxes()
            out.update(legal=legal, penta_bonus=bonus, warning=self.warning)
        if self.over:
            out["winners"] = [p.name for p in self.winners()]
        return out

    def _next_player(self) -> None:
        self.dice = None
        self.rolls_made = 0
        self.deadline = None  # the next player's countdown starts at their own last roll
        for step in range(1, len(self.players) + 1):
            nxt = (self.current + step) % len(self.players)
            if len(self.players[nxt].boxes) < len(self.rules.boxes):
                self.current = nxt
                return

    # Saving and loading.

    def to_json(self, rng: bool = True) -> str:
        """The whole game, its history and the front end's settings included, and the random generator's state
        unless ``rng`` is false (a save for a client that must not predict the dice: the game loaded from it
        draws fresh dice). The history comes last, a step a line."""
        data = {
            "format": SAVE_FORMAT,
            "rules": self.rules.name,
            "players": [
                {"name": p.name, "computer": p.computer, "turns": p.turns, "sheet": p.sheet.as_dict(self.rules)}
                | ({"strategy": p.strategy} if p.computer else {})
                for p in self.players
            ],
            "current": self.current,
            "dice": list(self.dice) if self.dice is not None else None,
            "rolls_made": self.rolls_made,
            "auto_commit_seconds": self.auto_commit_seconds,
            "hints": self.hints,
            "coach": self.coach,
            "save_path": self.save_path,
        }
        if rng:
            data["rng"] = self.rng.bit_generator.state
        if self.history and self.history_from is not None:
            data["history_from"] = {"turns": list(self.history_from[0]), "rolls_made": self.history_from[1]}
        text = json.dumps({**data, "history": []}, indent=1)
        if not self.history:
            return text
        head = text.removesuffix('"history": []\n}')
        assert head != text  # the last key: its text ends the save
        steps = ",\n  ".join(json.dumps(step.as_json(self.rules)) for step in self.history)
        return f'{head}"history": [\n  {steps}\n ]\n}}'

    @classmethod
    def from_json(cls, text: str | bytes) -> Game:
        """A saved game; GameError naming what is wrong with a malformed one (and never another exception)."""
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
            return cls._load(data)
        except (GameError, SheetError) as e:
            raise GameError(f"the saved game is damaged: {e}") from None

    @classmethod
    def _load(cls, data: dict) -> Game:
        _check_keys(data, SAVE_KEYS, SAVE_OPTIONAL_KEYS, "the game")
        name = _field(data, "rules", "the game")
        if not isinstance(name, str) or name not in rules.REGISTRY:
            raise GameError(f"unknown rule set {_short(name)}; known: {', '.join(rules.REGISTRY)}")
        rs = rules.get_rules(name)
        saved_players = _field(data, "players", "the game")
        if not isinstance(saved_players, list) or not 1 <= len(saved_players) <= MAX_PLAYERS:
            raise GameError(f"players must be a list of 1 to {MAX_PLAYERS} players")
        players = [_load_player(rs, p, number) for number, p in enumerate(saved_players)]
        game = cls(
            rs, players, seed=0, auto_commit_seconds=check_auto_commit(_field(data, "auto_commit_seconds", "the game"))
        )
        current = _field(data, "current", "the game")
        if isinstance(current, bool) or not isinstance(current, int) or not 0 <= current < len(players):
            raise GameError(f"no such current player: {_short(current)} (players 0 to {len(players) - 1})")
        game.current = current
        rolls_made = _field(data, "rolls_made", "the game")
        if isinstance(rolls_made, bool) or not isinstance(rolls_made, int) or not 0 <= rolls_made <= rs.rolls:
            raise GameError(f"impossible number of rolls: {_short(rolls_made)} (0 to {rs.rolls})")
        game.rolls_made = rolls_made
        dice = _field(data, "dice", "the game")
        if dice is not None:
            if not isinstance(dice, list) or len(dice) != rs.dice:
                raise GameError(f"impossible dice {_short(dice)}: {rs.dice} dice, or null")
            game.dice = tuple(sorted(_whole(d, "a die", 1, 6) for d in dice))
        hints = data.get("hints", False)
        if not isinstance(hints, bool):
            raise GameError(f"hints must be true or false, not {_short(hints)}")
        game.hints = hints
        coach = data.get("coach", False)
        if not isinstance(coach, bool):
            raise GameError(f"coach must be true or false, not {_short(coach)}")
        game.coach = coach
        game.save_path = _load_path(data.get("save_path"))
        if "rng" in data:
            game._load_rng(data["rng"])
        else:  # saved without it (rng=False): fresh dice, nobody could predict
            game.rng = np.random.default_rng()
        game._check_loaded()
        history = data.get("history", [])  # none in saves of earlier versions: it begins with the next step
        if not isinstance(history, list):
            raise GameError("history must be a list of steps")
        if history:
            game.history_from = game._load_history_from(data.get("history_from"))
            game._load_history(history)
        elif "history_from" in data:
            raise GameError("history_from without a history")
        return game

    def _load_history_from(self, data: object) -> tuple[tuple[int, ...], int] | None:
        """Where a saved history began (None: at the game's start)."""
        if data is None:
            return None
        if not isinstance(data, dict):
            raise GameError("history_from must be an object")
        _check_keys(data, {"turns", "rolls_made"}, set(), "history_from")
        turns = _field(data, "turns", "history_from")
        if not isinstance(turns, list) or len(turns) != len(self.players):
            raise GameError(f"history_from: turns must be a list of {len(self.players)} numbers")
        turns = tuple(_whole(t, "history_from: turns", 0, p.turns) for t, p in zip(turns, self.players, strict=True))
        rolls_made = _whole(_field(data, "rolls_made", "history_from"), "history_from: rolls_made", 0, self.rules.rolls)
        return turns, rolls_made

    def _load_rng(self, state: object) -> None:
        """The generator's state, checked field by field: a PCG64 state of 128-bit numbers (odd increment)."""
        if not isinstance(state, dict):
            raise GameError("rng must be an object")
        _check_keys(state, RNG_KEYS, set(), "rng")
        if _field(state, "bit_generator", "rng") != "PCG64":
            raise GameError(f"rng: the generator is PCG64, not {_short(state['bit_generator'])}")
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
            self.rng.bit_generator.state = state
        except (TypeError, ValueError, OverflowError) as e:
            raise GameError(f"rng: {e}") from None

    def _check_loaded(self) -> None:
        """The parts agree: dice and rolls, the current player and the order of play."""
        if (self.dice is None) != (self.rolls_made == 0):
            raise GameError("dice and rolls disagree")
        n_boxes = len(self.rules.boxes)
        if self.over:
            if self.dice is not None:
                raise GameError("every sheet is full, yet dice are showing")
            return
        current = self.player
        if len(current.boxes) == n_boxes:
            raise GameError(f"the current player, {current.name!r}, has a full sheet")
        for i, p in enumerate(self.players):
            expected = current.turns + (1 if i < self.current else 0)  # the order of play
            if p.turns > expected or (p.turns < expected and len(p.boxes) < n_boxes):
                raise GameError(
                    f"{p.name!r} has played {p.turns} turns and {current.name!r}, whose turn it is, "
                    f"{current.turns}: not the order of play"
                )

    def _load_history(self, data: list) -> None:
        """The saved decisions: each a legal move of its own moment, and together the game as it stands (each
        player's sheet follows from their boxes, a keep's dice are the next step's, the last boxes made the
        sheets, the rolls showing come from the last keep). A history may begin after the game did (a save of
        an earlier version, played on)."""
        if len(data) > 4 * MAX_TURNS:
            raise GameError(f"history of {len(data)} steps: more than a game has")
        steps = [self._load_step(n, step) for n, step in enumerate(data, 1)]
        base_turns, base_rolls = self.history_from or ((0,) * len(self.players), 0)
        sheets: dict[int, Sheet] = {}  # each player's sheet after the steps so far
        pending: Step | None = None  # a keep not yet followed by the turn's box
        for n, step in enumerate(steps, 1):
            what = f"history step {n} ({step.player}, {step.move})"
            first = self.rules.rolls - max(1, base_rolls if n == 1 else 1)  # a turn's first decision
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
            if step.turn != _turns_of(self.rules, step.sheet) + 1:
                raise GameError(f"{what}: turn {step.turn} with {len(step.sheet.boxes)} boxes filled")
            if isinstance(step.move, Keep):
                sheets[step.index], pending = step.sheet, step
                continue
            legal, bonus = _legal(self.rules, step.dice, step.sheet)
            sheets[step.index], pending = step.sheet.with_score(step.move.box, legal[step.move.box], bonus), None
        for index, p in enumerate(self.players):
            boxes = sum(isinstance(s.move, Score) and s.index == index for s in steps)
            if boxes != p.turns - base_turns[index]:
                raise GameError(f"the history holds {boxes} boxes of {p.name!r}, who played {p.turns} turns")
            if index in sheets and sheets[index] != p.sheet:
                raise GameError(f"the history's last box of {p.name!r} does not give the sheet saved")
        if pending is not None:
            if pending.index != self.current or (self.dice, self.rolls_left) != (pending.after, pending.rolls_left - 1):
                raise GameError("the history's last keep does not give the dice showing")
        elif steps:
            if self.rolls_made > 1:
                raise GameError(f"the dice show after roll {self.rolls_made}, yet the history holds no keep for them")
            if not self.over and self.current != self._seat_after(steps[-1].index):
                raise GameError(f"the history's last box was {steps[-1].player!r}'s: not the turn of the player after")
        self.history = steps

    def _seat_after(self, index: int) -> int:
        """The seat that plays after ``index``: the next one with an open box (as the sheets stand now)."""
        for step in range(1, len(self.players) + 1):
            nxt = (index + step) % len(self.players)
            if len(self.players[nxt].boxes) < len(self.rules.boxes):
                return nxt
        return index

    def _load_step(self, n: int, data: object) -> Step:
        """One saved step, every field checked, and its move legal at its moment."""
        what = f"history step {n}"
        if not isinstance(data, dict):
            raise GameError(f"{what} must be an object")
        _check_keys(data, STEP_KEYS, set(), what)
        rs = self.rules
        index = _whole(_field(data, "index", what), f"{what}: index", 0, len(self.players) - 1)
        player = self.players[index]
        turn = _whole(_field(data, "turn", what), f"{what}: turn", 1, MAX_TURNS)
        dice = _dice(rs, _field(data, "dice", what), f"{what}: dice")
        rolls_left = _whole(_field(data, "rolls_left", what), f"{what}: rolls_left", 0, rs.rolls - 1)
        points = _field(data, "sheet", what)
        if not isinstance(points, dict):
            raise GameError(f"{what}: the sheet must be an object of box: points pairs")
        for key, value in points.items():
            _whole(value, f"{what}: sheet {_short(key)}", -(2**63), 2**63 - 1)
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
            raise GameError(f"{what}: the move is 'keep 1 3 4', 'roll' or 'score BOX', not {_short(text)}")
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
            if move.box not in _legal(rs, dice, sheet)[0]:
                raise GameError(f"{what}: {rs.box_name(move.box)} may not take {' '.join(map(str, dice))} there")
            if auto and rolls_left > 0:
                raise GameError(f"{what}: the auto-commit only fills a box after the last roll")
        return Step(player.name, index, turn, dice, rolls_left, sheet, move, after, auto, computer)


def _legal(rs: rules.RuleSet, dice: Sequence[int], sheet: Sheet) -> tuple[dict[str, int], int]:
    """The boxes of ``sheet`` that may take ``dice`` with their points, and the Penta bonus they earn."""
    return rules.legal_scores(rs, dice, rs.boxes_of(sheet.open_mask(rs)), sheet.penta_scored(rs))


def _turns_of(rs: rules.RuleSet, sheet: Sheet) -> int:
    """The turns played to fill ``sheet``: one a box, and in Kiriki one more for each five of a kind added."""
    extra = 0
    if rs.penta_repeat and rs.penta_id is not None and sheet.boxes.get(rs.penta_id, 0) > 0:
        extra = sheet.boxes[rs.penta_id] // rs.penta_points - 1
    return len(sheet.boxes) + extra


def _dice(rs: rules.RuleSet, value: object, what: str) -> tuple[int, ...]:
    """The dice of the rule set as a sorted tuple, from a JSON list; GameError naming ``what`` otherwise."""
    if not isinstance(value, list) or len(value) != rs.dice:
        raise GameError(f"{what}: {rs.dice} dice, not {_short(value)}")
    return tuple(sorted(_whole(d, f"{what}: a die", 1, 6) for d in value))


def _check_keys(data: dict, required: set[str], optional: set[str], what: str) -> None:
    """Refuses fields not known; a missing field is refused where it is read (:func:`_field`)."""
    unknown = sorted(data.keys() - required - optional)
    if unknown:
        raise GameError(f"{what} has an unknown field {_short(unknown[0])}")


def _field(data: dict, key: str, what: str) -> object:
    if key not in data:
        raise GameError(f"{what} has no {key!r}")
    return data[key]


def _whole(value: object, what: str, lo: int, hi: int) -> int:
    """An integer (a JSON number without a fraction, not true or false) from ``lo`` to ``hi``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise GameError(f"{what} must be a whole number, not {_short(value)}")
    if not lo <= value <= hi:
        raise GameError(f"{what} must be {lo} to {hi}, not {_short(value)}")
    return value


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _load_player(rs: rules.RuleSet, data: object, number: int = 0) -> Player:
    if not isinstance(data, dict):
        raise GameError(f"players[{number}] is {_short(data)}, not an object: a player must be an object")
    _check_keys(data, PLAYER_KEYS, PLAYER_OPTIONAL_KEYS, "a player")
    name = check_name(_field(data, "name", "a player"))
    computer = _field(data, "computer", f"player {name!r}")
    if not isinstance(computer, bool):
        raise GameError(f"player {name!r}: computer must be true or false, not {_short(computer)}")
    points = _field(data, "sheet", f"player {name!r}")
    if not isinstance(points, dict):
        raise GameError(f"player {name!r}: the sheet must be an object of box: points pairs")
    for key, value in points.items():
        _whole(value, f"player {name!r}: {_short(key)}", -(2**63), 2**63 - 1)
    sheet = Sheet.from_mapping(points, rs).validate(rs, finished_ok=True)
    turns = _whole(_field(data, "turns", f"player {name!r}"), f"player {name!r}: turns", 0, MAX_TURNS)
    if turns != _turns_of(rs, sheet):
        raise GameError(f"player {name!r} has {len(sheet.boxes)} boxes filled after {turns} turns")
    strategy = data.get("strategy", strategies.DEFAULT)
    if not isinstance(strategy, str) or strategy not in strategies.STRATEGIES:
        raise GameError(
            f"player {name!r}: unknown strategy {_short(strategy)}; strategies: {', '.join(strategies.STRATEGIES)}"
        )
    if not computer and strategy != strategies.DEFAULT:
        raise GameError(f"player {name!r} is a person: a strategy ({strategy}) is for computer players")
    return Player(name, computer, sheet, turns, strategy)


def _load_path(path: object) -> str | None:
    if path is None:
        return None
    if not isinstance(path, str) or not path or len(path) > 4096:
        raise GameError(f"save_path must be a file name or null, not {_short(path)}")
    return path  # only ever shown (cleaned), never written to: a save file does not choose where games go


def computer_move(game: Game, advisor) -> Played:
    """One step of the computer for the current player, once the dice are rolled: the move of the player's
    strategy (a person asking for the computer's choice gets ``optimal``'s: the advisor's best option)."""
    return game.play(strategies.choose(game.player.strategy, game, advisor), advisor)
