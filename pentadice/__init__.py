"""pentadice: exact optimal strategy for Penta and the Yahtzee family of dice games.

The one call most applications need is :func:`advise`; the library's other entry points are
:class:`pentadice.advisor.Advisor`, :class:`pentadice.players.engine.Game` and
:func:`pentadice.simulator.simulate.simulate` (docs/library.md). Importing this module loads nothing heavy: each
call imports what it needs."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pentadice.advisor import Advisor
    from pentadice.advisor.advice import Advice

from pentadice.support.version import VERSION as __version__

__all__ = ["__version__", "advise"]


def advise(
    dice: Sequence[int],
    sheet: Mapping[str, int] | str | None = None,
    rolls_left: int | None = None,
    rules: str = "penta",
    data: str | None = None,
) -> Advice:
    """Every legal option of one moment of a turn, best first, each with its expected final score under optimal
    play, its loss against the best and the SD of the final score.

    Args:
        dice: the faces showing, as many as the rule set has (five in Penta).
        sheet: the boxes filled so far and their points, as a mapping (``{"ones": 3, "full_house": 25}``) or in the
            command line's notation (``"ones=3 full_house=25"``); ``penta_bonus`` holds the bonus so far.
        rolls_left: the rerolls left (0: the last roll); None: the first roll of the turn.
        rules: a built-in rule set's name (``pentadice rules`` lists them) or one registered from a house-rules file.
        data: the table directory (default: as the commands choose: ``pentadice where``).

    Returns:
        The :class:`~pentadice.advisor.advice.Advice`: ``best``, ``best_keep``, ``best_box`` and ``options``.

    Raises:
        ValueError: a situation the rules do not allow (SituationError, SheetError), or an unknown rule set.
    """
    from pentadice.game.sheet import Sheet

    advisor = _advisor(rules, data)
    if isinstance(sheet, str):
        filled = Sheet.parse(sheet, advisor.rules)
    else:
        filled = Sheet.from_mapping(sheet or {}, advisor.rules)
    return advisor.advise(advisor.situation(list(dice), rolls_left, filled))


@functools.cache
def _advisor(rules: str, data: str | None) -> Advisor:
    """The advisor of a rule set, loaded once per process (its table read and checked; a missing one copied from
    the package or solved once), answering in plain Python with SDs: a first call pays no compile."""
    from pentadice.advisor import Advisor

    return Advisor.load(rules, data, compiled=False, spread=True)
