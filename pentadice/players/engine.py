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

The engine's other modules, whose names are importable from here as well: :mod:`pentadice.players.seats` (the
players, their names and the ``--players`` text, the auto-commit time, :class:`GameError`),
:mod:`pentadice.players.steps` (:class:`Step`, :class:`Played`, :class:`Scored`) and
:mod:`pentadice.players.saves` (the save format, and loading a saved game with its checks).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pentadice.game import rules
from pentadice.game.moves import Keep, Move, Score
from pentadice.game.rules import NO_SCORE_MESSAGE
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation
from pentadice.players import saves, strategies
from pentadice.players.saves import MAX_SAVE_BYTES, MAX_TURNS, SAVE_FORMAT, save_text
from pentadice.players.seats import (
    MAX_AUTO_COMMIT,
    MAX_NAME,
    MAX_PLAYERS,
    GameError,
    Player,
    check_auto_commit,
    check_name,
    check_players,
    name_key,
    parse_auto_commit,
    parse_players,
    valid_name,
)
from pentadice.players.steps import Played, Scored, Step, legal_boxes

__all__ = [  # the engine's names, those of its other modules included (imported from here by the front ends)
    "MAX_AUTO_COMMIT",
    "MAX_NAME",
    "MAX_PLAYERS",
    "MAX_SAVE_BYTES",
    "MAX_TURNS",
    "MAX_UNDO",
    "SAVE_FORMAT",
    "Game",
    "GameError",
    "Played",
    "Player",
    "Scored",
    "Step",
    "check_auto_commit",
    "check_name",
    "check_players",
    "computer_move",
    "name_key",
    "parse_auto_commit",
    "parse_players",
    "save_text",
    "valid_name",
]

_COUNT_WORDS = ("no", "one", "two", "three", "four", "five", "six")  # (the engine's messages; words.py is above it)
MAX_UNDO = 1000  # steps a coach game can take back (a whole game of six players is about 400)


@dataclass(frozen=True)
class _Snapshot:
    """What a step changes, as it was before it (for :meth:`Game.undo`)."""

    sheets: tuple[tuple[Sheet, int], ...]  # each player's sheet and turns
    current: int
    dice: tuple[int, ...] | None
    rolls_made: int
    history: int  # steps recorded


class Game:
    """A game of several players under rule set ``rules``, with a seeded NumPy generator for the dice."""

    def __init__(
        self,
        rs: rules.RuleSet,
        players: Sequence[Player],
        seed: int | None = None,
        auto_commit_seconds: float | None = 3.0,
        coach: bool = False,
        tables: Path | str | None = None,
    ) -> None:
        check_players(players)
        for p in players:
            try:
                strategies.check(rs, p.strategy, tables)
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
        return legal_boxes(self.rules, self.dice, self.player.sheet)

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
            faces = tuple(int(d) for d in self.rng.integers(1, 7, size=n))
        else:
            faces = tuple(rolled)
            if len(faces) != n or not all(isinstance(d, int | np.integer) and 1 <= d <= 6 for d in faces):
                raise GameError(f"give the faces of the {n} dice rolled, each 1 to 6, not {list(faces)}")
        before = self.dice
        self._remember()
        self.dice = tuple(sorted(keep + tuple(int(d) for d in faces)))
        if before is not None:  # a keep: a decision (the first roll of a turn is none)
            self._record(before, Keep(keep), self.dice)
        self.rolls_made += 1
        self.deadline = None
        return self.dice

    def _check_showing(self, keep: Sequence[int]) -> None:
        """GameError unless every die of ``keep`` is among the dice showing (saying which are not)."""
        dice = self.dice or ()
        showing = Counter(dice)
        missing = Counter(keep) - showing
        if missing:
            faces = []
            for face in sorted(missing):
                n = showing[face]
                faces.append(f"no {face}" if n == 0 else f"only {_COUNT_WORDS[n]} {face}{'s' if n > 1 else ''}")
            raise GameError(
                f"cannot keep {' '.join(map(str, sorted(keep)))}: the dice show {' '.join(map(str, dice))} "
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

    def undo_json(self) -> list[dict]:
        """The steps :meth:`undo` can take back, as JSON data (kept with a game between requests: see
        :meth:`load_undo`)."""
        return [
            {
                "players": [{"sheet": dict(s.boxes), "bonus": s.penta_bonus, "turns": t} for s, t in snap.sheets],
                "current": snap.current,
                "dice": list(snap.dice) if snap.dice is not None else None,
                "rolls_made": snap.rolls_made,
                "history": snap.history,
            }
            for snap in self._undo
        ]

    def load_undo(self, data: list[dict]) -> None:
        """The steps to take back that :meth:`undo_json` gave (of this game, as stored with it)."""
        self._undo.clear()
        for snap in data:
            sheets = tuple((Sheet(dict(p["sheet"]), p["bonus"]), p["turns"]) for p in snap["players"])
            dice = tuple(snap["dice"]) if snap["dice"] is not None else None
            self._undo.append(_Snapshot(sheets, snap["current"], dice, snap["rolls_made"], snap["history"]))

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
        scored = self.auto_commit_played(advisor).scored
        assert scored is not None  # an auto-commit scores a box
        return scored

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
        draws fresh dice). The history comes last, a step a line (see :func:`pentadice.players.saves.dump`)."""
        return saves.dump(self, rng)

    @classmethod
    def from_json(cls, text: str | bytes) -> Game:
        """A saved game; GameError naming what is wrong with a malformed one (and never another exception; see
        :func:`pentadice.players.saves.load`)."""
        return saves.load(cls, text)


def computer_move(game: Game, advisor) -> Played:
    """One step of the computer for the current player, once the dice are rolled: the move of the player's
    strategy (a person asking for the computer's choice gets ``optimal``'s: the advisor's best option)."""
    return game.play(strategies.choose(game.player.strategy, game, advisor), advisor)
