"""The game engine: players take turns on their own score sheets, under one rule set. Pure Python, no I/O.

A front end drives it: :meth:`Game.roll` (keeping some dice), :meth:`Game.score` (a box), and after the last
roll, when the player picks nothing within :attr:`Game.auto_commit_seconds`, :meth:`Game.auto_commit`, which
fills the box the computer would choose (the advisor's best box). :func:`computer_move` plays one step for a
computer player. A game saves to JSON (:meth:`Game.to_json`) and loads from it (:meth:`Game.from_json`),
random generator included, so that a resumed game rolls what the original would have rolled.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from pentadice import rules
from pentadice.advisor import NO_SCORE_MESSAGE, Option, Situation
from pentadice.sheet import Sheet, SheetError

MAX_PLAYERS = 6
SAVE_FORMAT = "pentadice-game"


class GameError(ValueError):
    """A move the rules do not allow now, or a saved game that cannot be loaded."""


@dataclass
class Player:
    """One player: a name, human or computer, and the score sheet so far."""

    name: str
    computer: bool = False
    boxes: dict[str, int] = field(default_factory=dict)
    penta_bonus: int = 0
    turns: int = 0  # turns played (Kiriki gives extra turns)

    def sheet(self) -> Sheet:
        return Sheet(dict(self.boxes), self.penta_bonus)


@dataclass(frozen=True)
class Scored:
    """What one scoring move earned."""

    player: str
    box: str
    points: int
    penta_bonus: int
    upper_bonus: int
    auto: bool = False


def parse_players(spec: str) -> list[Player]:
    """Players from ``"Ana,cpu,cpu"``: a name is a human, ``cpu`` (or ``cpu:NAME``) a computer player."""
    players = []
    computers = 0
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            raise GameError(f"empty player name in {spec!r}")
        kind, _, name = item.partition(":")
        if kind.lower() == "cpu":
            computers += 1
            players.append(Player(name.strip() or f"cpu {computers}", computer=True))
        elif ":" in item:
            raise GameError(f"unknown player kind {kind!r} in {item!r}: a player is NAME, cpu or cpu:NAME")
        else:
            players.append(Player(item))
    check_players(players)
    return players


def check_players(players: Sequence[Player]) -> None:
    if not 1 <= len(players) <= MAX_PLAYERS:
        raise GameError(f"a game has 1 to {MAX_PLAYERS} players, not {len(players)}")
    names = [p.name for p in players]
    twice = [n for n, c in Counter(names).items() if c > 1]
    if twice:
        raise GameError(f"two players are called {twice[0]!r}")


class Game:
    """A game of several players under rule set ``rules``, with a seeded NumPy generator for the dice."""

    def __init__(
        self,
        rs: rules.RuleSet,
        players: Sequence[Player],
        seed: int | None = None,
        auto_commit_seconds: float = 3.0,
    ) -> None:
        check_players(players)
        self.rules = rs
        self.players = list(players)
        self.rng = np.random.default_rng(seed)
        self.auto_commit_seconds = auto_commit_seconds
        self.current = 0
        self.dice: tuple[int, ...] | None = None
        self.rolls_made = 0

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
        return Situation(self.dice, self.rolls_left, self.player.sheet())

    def legal_boxes(self) -> tuple[dict[str, int], int]:
        """The boxes that may take the dice now and their points, and the Penta bonus the dice earn."""
        if self.dice is None:
            raise GameError("roll the dice first")
        sheet = self.player.sheet()
        open_boxes = rules.boxes_of(sheet.open_mask(self.rules))
        return rules.legal_scores(self.rules, self.dice, open_boxes, sheet.penta_full(self.rules))

    @property
    def no_box_scores(self) -> bool:
        """True when every box that may take the dice would score 0: the rules' sacrifice warning."""
        legal, _ = self.legal_boxes()
        return all(points == 0 for points in legal.values())

    @property
    def warning(self) -> str | None:
        return NO_SCORE_MESSAGE if self.dice is not None and self.no_box_scores else None

    def totals(self, player: Player) -> dict[str, int]:
        """Upper section, its bonus, lower section, Penta bonuses and TOTAL."""
        upper = sum(v for b, v in player.boxes.items() if rules.BOX_INDEX[b] < 6)
        lower = sum(v for b, v in player.boxes.items() if rules.BOX_INDEX[b] >= 6)
        bonus = self.rules.upper_bonus if upper >= self.rules.upper_threshold else 0
        total = upper + bonus + lower + player.penta_bonus
        return {"upper": upper, "upper_bonus": bonus, "lower": lower, "penta_bonus": player.penta_bonus, "total": total}

    def winners(self) -> list[Player]:
        """The players with the highest total (several on a tie); only once the game is over."""
        if not self.over:
            raise GameError("the game is not over yet")
        best = max(self.totals(p)["total"] for p in self.players)
        return [p for p in self.players if self.totals(p)["total"] == best]

    # Moves.

    def roll(self, keep: Sequence[int] = ()) -> tuple[int, ...]:
        """Roll the dice, keeping ``keep`` (faces among the dice showing); returns the dice, sorted."""
        if self.over:
            raise GameError("the game is over")
        if self.rolls_made >= self.rules.rolls:
            raise GameError(f"no rolls left: {self.rules.rolls} rolls a turn; score the dice in a box")
        keep = tuple(sorted(keep))
        if self.dice is None:
            if keep:
                raise GameError("there are no dice to keep before the first roll")
        else:
            missing = Counter(keep) - Counter(self.dice)
            if missing:
                showing = " ".join(map(str, self.dice))
                raise GameError(
                    f"cannot keep {' '.join(map(str, sorted(missing.elements())))}: the dice show {showing}"
                )
        rolled = self.rng.integers(1, 7, size=self.rules.dice - len(keep))
        self.dice = tuple(sorted(keep + tuple(int(d) for d in rolled)))
        self.rolls_made += 1
        return self.dice

    def score(self, box: str, auto: bool = False) -> Scored:
        """Fill ``box`` with the dice; the turn passes to the next player."""
        if self.over:
            raise GameError("the game is over")
        if box not in rules.BOX_INDEX:
            raise GameError(f"unknown box {box!r}; boxes: {' '.join(self.rules.boxes)}")
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
        before = player.sheet().upper_total
        upper_bonus = rules.upper_bonus_earned(self.rules, before, points) if rules.BOX_INDEX[box] < 6 else 0
        player.boxes[box] = player.boxes.get(box, 0) + points  # Kiriki adds to a filled Penta box
        player.penta_bonus += bonus
        player.turns += 1
        self._next_player()
        return Scored(player.name, box, points, bonus, upper_bonus, auto)

    def auto_commit(self, advisor) -> Scored:
        """After the last roll, with no box chosen in time: fill the box the computer would choose."""
        if self.dice is None or self.rolls_left > 0:
            raise GameError("the auto-commit only fills a box after the last roll")
        return self.score(advisor.best_box(self.situation()).box, auto=True)

    def _next_player(self) -> None:
        self.dice = None
        self.rolls_made = 0
        for step in range(1, len(self.players) + 1):
            nxt = (self.current + step) % len(self.players)
            if len(self.players[nxt].boxes) < len(self.rules.boxes):
                self.current = nxt
                return

    # Saving and loading.

    def to_json(self) -> str:
        """The whole game, random generator included."""
        return json.dumps(
            {
                "format": SAVE_FORMAT,
                "rules": self.rules.name,
                "players": [
                    {"name": p.name, "computer": p.computer, "turns": p.turns, "sheet": p.sheet().as_dict()}
                    for p in self.players
                ],
                "current": self.current,
                "dice": list(self.dice) if self.dice is not None else None,
                "rolls_made": self.rolls_made,
                "auto_commit_seconds": self.auto_commit_seconds,
                "rng": self.rng.bit_generator.state,
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> Game:
        """A saved game; GameError naming what is wrong with a malformed one."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise GameError(f"the saved game is not valid JSON: {e}") from None
        if not isinstance(data, dict) or data.get("format") != SAVE_FORMAT:
            raise GameError("this is not a saved pentadice game")
        try:
            rs = rules.get_rules(data["rules"])
            players = []
            for p in data["players"]:
                sheet = Sheet.from_mapping(p["sheet"])
                if len(sheet.boxes) < len(rs.boxes):
                    sheet.validate(rs)
                turns = int(p["turns"])
                if turns < len(sheet.boxes):
                    raise ValueError(f"player {p['name']!r} has {len(sheet.boxes)} boxes after {turns} turns")
                players.append(Player(str(p["name"]), bool(p["computer"]), dict(sheet.boxes), sheet.penta_bonus, turns))
            game = cls(rs, players, auto_commit_seconds=float(data["auto_commit_seconds"]))
            game.rng.bit_generator.state = data["rng"]
            game.current = int(data["current"])
            game.rolls_made = int(data["rolls_made"])
            dice = data["dice"]
            game.dice = None if dice is None else tuple(sorted(int(d) for d in dice))
        except (KeyError, TypeError, ValueError, SheetError) as e:
            raise GameError(f"the saved game is damaged: {e}") from None
        game._check_loaded()
        return game

    def _check_loaded(self) -> None:
        if not 0 <= self.current < len(self.players):
            raise GameError("the saved game is damaged: no such current player")
        if not 0 <= self.rolls_made <= self.rules.rolls:
            raise GameError("the saved game is damaged: impossible number of rolls")
        if (self.dice is None) != (self.rolls_made == 0):
            raise GameError("the saved game is damaged: dice and rolls disagree")
        if self.dice is not None and (len(self.dice) != self.rules.dice or not all(1 <= d <= 6 for d in self.dice)):
            raise GameError("the saved game is damaged: impossible dice")


def computer_move(game: Game, advisor) -> tuple[Option, Scored | None]:
    """One step of the computer for the current player, once the dice are rolled: the advisor's best option,
    played. Returns the option and, when it scored, what it earned."""
    advice = advisor.advise(game.situation())
    best = advice.best
    if best.action == "keep":
        game.roll(best.keep or ())
        return best, None
    return best, game.score(best.box or "")
