"""What the tests of save files share: the save file of a short game, and the arguments of a scripted game of
one person that ``play`` saves."""

from __future__ import annotations

from pentadice.game import rules
from pentadice.players.engine import Game, Player

PLAY = ["play", "--players", "Ana", "--seed", "1", "--pause", "0", "--auto-commit", "0"]


def a_save(seed: int = 7, name: str = "Ana", cpu: bool = True) -> str:
    """A save file of a game of one person (and the computer), a box filled, with its generator's state."""
    players = [Player(name), Player("cpu", computer=True)] if cpu else [Player(name)]
    game = Game(rules.PENTA_RULES, players, seed=seed)
    game.roll()
    game.score("chance")
    return game.to_json()
