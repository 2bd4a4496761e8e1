"""Random score sheets for property tests: sheets that can occur in a game of a given rule set."""

from __future__ import annotations

import numpy as np

from pentadice.game import rules
from pentadice.game.sheet import Sheet, possible_points


def random_sheet(rs: rules.RuleSet, rng: np.random.Generator, filled: int) -> Sheet:
    """A random sheet of ``filled`` boxes that can occur in a game of ``rs``."""
    possible = possible_points(rs)
    boxes = rng.choice(list(rs.boxes), size=filled, replace=False)
    points = {str(b): int(rng.choice(sorted(possible[str(b)]))) for b in boxes}
    bonus = 0
    if points.get("penta") == rs.penta_points and filled > 1 and rs.penta_bonus:
        bonus = rs.penta_bonus * int(rng.integers(0, filled))
    return Sheet(points, bonus)
