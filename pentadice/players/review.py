"""The review of a game: every decision of its history against the advisor's best option, and what it cost.

The loss of a decision is the advisor's: the expected final score of the best option less that of the option
chosen (0 for the best one). Summed and averaged per player, it measures how well they played: the best
Yahtzee advisors call a mean loss under :data:`EXPERT_MEAN_LOSS` points per decision expert play. It works
on any game with a history, a finished one loaded from a save included; the advisor is duck-typed (anything
with ``rules`` and ``advise(situation)``), as in the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from pentadice.game import rules
from pentadice.game.moves import Keep
from pentadice.game.situation import Situation
from pentadice.players.engine import Game, GameError, Step

EXPERT_MEAN_LOSS = 0.2  # points per decision: below it, expert play
WORST = 3  # the mistakes shown for each player
LOSS_SHOWN = 1e-9  # losses below this are rounding, not a mistake


@dataclass(frozen=True)
class Decision:
    """One step of the history with the option chosen and the best one (as the advisor's ``Option.as_dict``)
    and the loss (None only if the advisor knows no such option, which a checked history never holds)."""

    step: Step
    chosen: dict
    best: dict
    loss: float | None

    def as_dict(self, rs: rules.RuleSet | None = None) -> dict:
        """The decision as JSON data, its sheet in the order of ``rs``'s boxes."""
        s = self.step
        return {
            "player": s.player,
            "index": s.index,
            "turn": s.turn,
            "dice": list(s.dice),
            "rolls_left": s.rolls_left,
            "sheet": s.sheet.as_dict(rs),
            "move": str(s.move),
            "auto": s.auto,
            "computer": s.computer,
            "chosen": self.chosen,
            "best": self.best,
            "loss": self.loss,
        }


@dataclass(frozen=True)
class PlayerReview:
    """One player's decisions, their total and mean loss, and the worst ones (at most :data:`WORST`, each
    with a loss above rounding, worst first); the player's strategy (a ``win`` computer's losses are risks it
    takes on purpose), score (the sheet's total so far) and whether they won (a finished game's top score)."""

    name: str
    computer: bool
    decisions: tuple[Decision, ...]
    strategy: str = "optimal"
    score: int | None = None
    winner: bool = False

    @property
    def total_loss(self) -> float:
        return sum(d.loss for d in self.decisions if d.loss is not None)

    @property
    def mean_loss(self) -> float:
        """The mean loss per decision (0 with no decision)."""
        counted = [d for d in self.decisions if d.loss is not None]
        return self.total_loss / len(counted) if counted else 0.0

    @property
    def expert(self) -> bool:
        """Whether the play was expert: some decisions, with a mean loss under :data:`EXPERT_MEAN_LOSS`."""
        return bool(self.decisions) and self.mean_loss < EXPERT_MEAN_LOSS

    @property
    def worst(self) -> list[Decision]:
        costly = [d for d in self.decisions if d.loss is not None and d.loss > LOSS_SHOWN]
        return sorted(costly, key=lambda d: -d.loss)[:WORST]  # stable: the earlier of equal losses first

    @property
    def first_turn(self) -> int | None:
        """The turn of the first decision recorded (past 1 when the history began after the game did)."""
        return self.decisions[0].step.turn if self.decisions else None

    def as_dict(self, rs: rules.RuleSet | None = None) -> dict:
        return {
            "name": self.name,
            "computer": self.computer,
            "decisions": len(self.decisions),
            "total_loss": self.total_loss,
            "mean_loss": self.mean_loss,
            "expert": self.expert,
            "worst": [d.as_dict(rs) for d in self.worst],
            "strategy": self.strategy,
            "score": self.score,
            "winner": self.winner,
        }


@dataclass(frozen=True)
class Review:
    """The review of a game: its decisions in order and each player's summary, in seat order; ``over``:
    whether the game is finished (the scores then final)."""

    rules: str
    players: tuple[PlayerReview, ...]
    decisions: tuple[Decision, ...]
    over: bool = False

    def as_dict(self) -> dict:
        rs = rules.REGISTRY.get(self.rules)  # the sheets in the game's own box order
        return {
            "rules": self.rules,
            "over": self.over,
            "expert_mean_loss": EXPERT_MEAN_LOSS,
            "players": [p.as_dict(rs) for p in self.players],
            "decisions": [d.as_dict(rs) for d in self.decisions],
        }


def review(game: Game, advisor) -> Review:
    """Every decision of ``game``'s history against the best option of ``advisor`` (of the game's rule set)."""
    if advisor.rules.name != game.rules.name:
        raise GameError(f"a {game.rules.name} game needs the {game.rules.name} advisor, not {advisor.rules.name}")
    decisions = tuple(decide(step, advisor) for step in game.history)
    won = {id(p) for p in game.winners()} if game.over else set()
    players = tuple(
        PlayerReview(
            p.name,
            p.computer,
            tuple(d for d in decisions if d.step.index == i),
            strategy=p.strategy,
            score=game.totals(p)["total"],
            winner=id(p) in won,
        )
        for i, p in enumerate(game.players)
    )
    return Review(game.rules.name, players, decisions, over=game.over)


def decide(step: Step, advisor) -> Decision:
    """One step against the best option of its moment."""
    advice = advisor.advise(step.situation())
    best = advice.best
    move = step.move
    if isinstance(move, Keep) and len(move.dice) == len(step.dice):
        # Keeping every die rerolls nothing: worth what the same dice are with one reroll fewer.
        later = advisor.advise(Situation(step.dice, step.rolls_left - 1, step.sheet)).best
        loss = max(0.0, best.value - later.value)
        return Decision(
            step, {"action": "keep", "keep": list(move.dice), "value": later.value, "loss": loss}, best.as_dict(), loss
        )
    try:
        chosen = advice.option_of(move)
    except ValueError:  # not an option of this moment: no value to give
        unknown = (
            {"action": "keep", "keep": list(move.dice)}
            if isinstance(move, Keep)
            else {"action": "score", "box": move.box}
        )
        return Decision(step, {**unknown, "value": None, "loss": None}, best.as_dict(), None)
    return Decision(step, chosen.as_dict(), best.as_dict(), chosen.loss)
