"""The advisor: which dice to keep, which box to fill, and what every option is worth."""

from pentadice.advisor.advice import NO_SCORE_MESSAGE, Advice, Advisor, Option
from pentadice.game.situation import Situation, SituationError

__all__ = ["NO_SCORE_MESSAGE", "Advice", "Advisor", "Option", "Situation", "SituationError"]
