"""Chances of reaching a target score, from the target table (:mod:`pentadice.tables.targets`): each option's
probability of scoring at least ``target`` in all (``advise --target``), and the best probability from the start
of a situation (``p_target_max``).

The advice for a target runs one turn of the target kernel (:mod:`pentadice.solver.targets`) for the situation,
one lane (the target), as plain Python, from the stored rows of the next states.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from pentadice.game import rules
from pentadice.solver import targets as kernel
from pentadice.solver.turn_inputs import turn_inputs
from pentadice.tables import targets

MAX_TARGET = 100_000  # --target above this is refused as a typo (no game scores that much)


def _successors(rs: rules.RuleSet, penta_scored: int, open_mask: int, sub: int) -> set[tuple[int, int, int]]:
    """Every state a turn from this one can lead to (:func:`pentadice.game.rules.successors`), and the state itself
    (Kiriki comes back to it)."""
    succ, _ = rules.successors(rs.params(), rs.dice, open_mask, penta_scored)
    out = {(penta_scored, open_mask, sub)}
    out.update((int(f), int(m), min(sub + int(a), rs.upper_threshold)) for _, m, f, a in succ)
    return out


def situation_probabilities(tt: targets.TargetTable, situation, needed: int) -> tuple[dict[int, float], np.ndarray]:
    """``(keeps, boxes)``: the probability of reaching ``needed`` more points under the target strategy,
    for keeping each sub-multiset of the dice (keep number -> P; empty on the last roll) and for scoring the
    dice in each box now (-1 where illegal)."""
    rs = tt.rules
    sheet = situation.sheet
    open_mask, sub, flag = sheet.open_mask(rs), sheet.upper_subtotal(rs), int(sheet.penta_scored(rs))
    ti = turn_inputs(rs)
    t = ti.tables
    hand = t.keep_of(situation.dice)
    lane = max(needed, 0)
    off = np.zeros(rs.table_shape, dtype=np.int64)
    ln = np.zeros(rs.table_shape, dtype=np.int64)
    parts = []
    at = 0
    for f, m, s in sorted(_successors(rs, flag, open_mask, sub)):
        if m == 0:
            row = np.zeros(1) + 1.0
        elif tt.first[f, m, s] < 0:
            continue  # a successor the rules never reach from here (the Penta box at 50 without a Penta)
        else:
            full = tt.row(f, m, s)
            row = full[: lane + 1]
        off[f, m, s] = at
        ln[f, m, s] = len(row)
        parts.append(row)
        at += len(row)
    buf = np.concatenate(parts)
    K = np.zeros((t.n_keeps, 1))
    B = np.zeros((t.n_keeps, 1))
    points = np.empty(rs.n_boxes, dtype=np.int64)
    p, n_dice, n_hands, counts, scores, add, subs = ti.turn()
    boxes = kernel.situation_targets(
        p, n_dice, n_hands, counts, scores, add, subs, buf, off, ln, hand, open_mask, flag, sub, lane,
        situation.rolls_left, K, B, points,
    )  # fmt: skip
    keeps = {}
    if situation.rolls_left > 0:
        keeps = {int(k): float(K[k, 0]) for k in t.subkeeps[hand] if k >= 0}
    return keeps, boxes


def option_probabilities(tt: targets.TargetTable, advice, target: int) -> list[float]:
    """P(final score >= ``target``) under the target strategy for each of ``advice.options``, in its order."""
    from pentadice.game.moves import Keep

    situation = advice.situation
    needed = target - advice.score_so_far
    if needed <= 0:
        return [1.0] * len(advice.options)
    keeps, boxes = situation_probabilities(tt, situation, needed)
    t = turn_inputs(tt.rules).tables
    out = []
    for o in advice.options:
        if isinstance(o.move, Keep):
            out.append(keeps[t.keep_of(o.move.dice)])
        else:
            out.append(float(boxes[tt.rules.box_index[o.move.box]]))
    return out


def check_target(target: object) -> int:
    """A target final score as given on the command line or in a request: a whole number 0 .. MAX_TARGET."""
    if isinstance(target, bool) or not isinstance(target, int):
        raise ValueError(f"the target must be a whole number of points, not {target!r}")
    if not 0 <= target <= MAX_TARGET:
        raise ValueError(f"the target must be 0 to {MAX_TARGET:,} points, not {target:,}")
    return target


def p_target_max(
    rs: rules.RuleSet,
    directory: str | os.PathLike[str] | None,
    sheet,
    dice: Sequence[int] | None = None,
    rolls_left: int | None = None,
    target: int = 0,
) -> float:
    """The highest probability of finishing with at least ``target`` points from this point: the start of a
    turn with ``sheet`` (no ``dice``), or a moment of a turn (``dice``, ``rolls_left``, default 2). Reads the
    target table (:class:`~pentadice.tables.targets.TargetsMissing` if it has not been built)."""
    from pentadice.game.situation import Situation
    from pentadice.support import paths

    check_target(target)
    tt = targets.load(rs, paths.data_dir(directory))
    sheet.validate(rs)
    needed = target - sheet.score(rs)
    if dice is None:
        return tt.p(int(sheet.penta_scored(rs)), sheet.open_mask(rs), sheet.upper_subtotal(rs), needed)
    situation = Situation.make(rs, dice, rs.rolls - 1 if rolls_left is None else rolls_left, sheet)
    if needed <= 0:
        return 1.0
    keeps, boxes = situation_probabilities(tt, situation, needed)
    return max([*keeps.values(), *(float(x) for x in boxes if x >= 0)])


# ----------------------------------------------------------------------------------------------------------
# The advice for a target, as JSON data and as text.


def ranked(advice, probabilities: list[float]) -> list[tuple[object, float]]:
    """The options with their probabilities, ranked by the probability, then by the expected score (the
    advice's own order breaks the remaining ties)."""
    order = sorted(range(len(advice.options)), key=lambda i: (-probabilities[i], i))
    return [(advice.options[i], probabilities[i]) for i in order]


def advice_dict(advice, rs: rules.RuleSet, probabilities: list[float], target: int, top: int | None) -> dict:
    """``advice.as_dict`` with ``target``, each option's ``p_target``, ranked by it (``best`` is the first)."""
    out = advice.as_dict(rs)
    by_move = {id(o): d for o, d in zip(advice.options, out["options"], strict=True)}
    options = [{**by_move[id(o)], "p_target": p} for o, p in ranked(advice, probabilities)]
    out["target"] = target
    out["best"] = options[0]
    out["options"] = options if top is None else options[:top]
    return out


def advice_text(advice, rs: rules.RuleSet, probabilities: list[float], target: int, top: int) -> str:
    """The options ranked for the target, with the probability beside the expected final score."""
    from pentadice.game.moves import Keep

    needed = target - advice.score_so_far
    lines = [
        advice.situation.describe(rs),
        f"Target: {target} points ({max(needed, 0)} more needed); options ranked by the chance of reaching it",
        f"{'':3} {'option':<28} {'P(>= target)':>13} {'expected':>10}",
    ]
    for i, (o, p) in enumerate(ranked(advice, probabilities)[:top], start=1):
        if isinstance(o.move, Keep):
            what = "keep " + (" ".join(map(str, o.move.dice)) or "nothing") + ", reroll"
        else:
            what = f"score {rs.box_name(o.move.box)} ({o.points + o.penta_bonus + o.upper_bonus})"
        lines.append(f"{i:>2}. {what:<28} {100 * p:>12.4f}% {o.value:>10.2f}")
    lines.append(f"(probabilities to within {100 * targets.PRECISION:.4f} percentage points: the table stores 16 bits)")
    return "\n".join(lines)
